#include "app/run_record.h"

#include <fstream>
#include <sstream>

#include "app/baseline_key.h"
#include "config/gpu_loader.h"
#include "core/error.h"

namespace gpumux {

nlohmann::json effective_config(const GpuConfig& gpu, const Workload& workload, const std::string& policy,
                                const nlohmann::json& effective_policy_options,
                                PreemptionMechanism preemption, CopyPolicy copy_policy, std::uint64_t seed) {
  return {{"gpu", gpu_config_document(gpu)},
          {"workload", workload_document(workload)},
          {"policy", policy},
          {"policy_options", effective_policy_options},
          {"preemption", to_string(preemption)},
          {"copy_policy", to_string(copy_policy)},
          {"seed", seed}};
}

ConfigHashes config_hashes(const GpuConfig& gpu, const Workload& workload, const std::string& policy,
                           const nlohmann::json& effective_policy_options, PreemptionMechanism preemption,
                           CopyPolicy copy_policy, std::uint64_t seed) {
  const nlohmann::json config =
      effective_config(gpu, workload, policy, effective_policy_options, preemption, copy_policy, seed);
  return {sha1_hex(config.at("gpu").dump()), sha1_hex(config.at("workload").dump()), sha1_hex(config.dump())};
}

void write_config_dump(const std::string& path, nlohmann::json config) {
  nlohmann::json& options = config.at("gpu").at("sm").at("warp").at("scheduler_options");
  options = nlohmann::json::parse(options.get<std::string>());
  // A memory section the GPU does not have is all zeros in the document; the file format says "none" by
  // leaving it out (a cache of capacity 0 or a DRAM of 0 channels is not a value it accepts).
  nlohmann::json& memory = config.at("gpu").at("memory");
  for (const char* cache : {"l1", "l2"}) {
    if (memory.at(cache).at("capacity_kb") == 0) memory.erase(cache);
  }
  if (memory.at("dram").at("channels") == 0) memory.erase("dram");
  std::ofstream out(path);
  if (!(out << config.dump(2) << '\n')) throw InputError("--dump-config: cannot write '" + path + "'");
}

namespace {

/// The value at dotted `key` of `root` (objects only), or InputError naming the file and the key.
const nlohmann::json& member(const std::string& path, const nlohmann::json& root, const std::string& key) {
  const nlohmann::json* node = &root;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(part)) {
      throw InputError(path + ": key '" + key +
                       "' missing: --replay needs the stats.json of a gpumux run that records its inputs "
                       "(keys 'inputs', 'preemption', 'copy_policy', 'config_sha1')");
    }
    node = &node->at(part);
    if (dot == std::string::npos) return *node;
    start = dot + 1;
  }
}

std::string string_member(const std::string& path, const nlohmann::json& root, const std::string& key) {
  const nlohmann::json& value = member(path, root, key);
  if (!value.is_string()) {
    throw InputError(path + ": key '" + key + "' must be a string, not " + value.dump());
  }
  return value.get<std::string>();
}

}  // namespace

RecordedRun read_recorded_run(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("--replay: cannot open '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json root = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    throw InputError(path + ": not a JSON document (gpumux run --replay reads a stats.json)");
  }
  RecordedRun r;
  r.gpu_file = string_member(path, root, "inputs.gpu_file");
  r.workload_file = string_member(path, root, "inputs.workload_file");
  r.hashes.gpu_sha1 = string_member(path, root, "inputs.gpu_sha1");
  r.hashes.workload_sha1 = string_member(path, root, "inputs.workload_sha1");
  r.hashes.config_sha1 = string_member(path, root, "config_sha1");
  r.policy = string_member(path, root, "policy");
  r.preemption = string_member(path, root, "preemption");
  r.copy_policy = string_member(path, root, "copy_policy");
  if (!copy_policy_named(r.copy_policy)) {
    throw InputError(path + ": key 'copy_policy' must be fcfs or npq, not '" + r.copy_policy + "'");
  }
  r.sm_model = string_member(path, root, "sm_model");
  if (r.sm_model == "warp") r.warp_scheduler = string_member(path, root, "warp_scheduler");
  r.memory_model = string_member(path, root, "memory_model");
  r.tb_interference = root.contains("tb_interference") ? string_member(path, root, "tb_interference") : "off";
  r.gpumux_version = string_member(path, root, "gpumux_version");
  const nlohmann::json& seed = member(path, root, "seed");
  if (!seed.is_number_unsigned()) throw InputError(path + ": key 'seed' must be an integer from 0 to 2^64-1");
  r.seed = seed.get<std::uint64_t>();
  const PolicyInfo* info = find_policy(r.policy);
  if (info == nullptr) {
    throw InputError(path + ": policy '" + r.policy +
                     "' is not registered in this gpumux (gpumux list policies)");
  }
  r.policy_options = option_text_from_json(path + ": policy " + r.policy, info->options,
                                           member(path, root, "policy_options"));
  return r;
}

void check_replay_hashes(const std::string& stats_path, const RecordedRun& recorded,
                         const ConfigHashes& now) {
  std::string differs;
  if (now.gpu_sha1 != recorded.hashes.gpu_sha1) {
    differs = "the GPU ('" + recorded.gpu_file + "': gpu_sha1 " + now.gpu_sha1 + ", recorded " +
              recorded.hashes.gpu_sha1 + ")";
  }
  if (now.workload_sha1 != recorded.hashes.workload_sha1) {
    differs += (differs.empty() ? "" : " and ") + std::string("the workload ('") + recorded.workload_file +
               "' or a kernel library it loads: workload_sha1 " + now.workload_sha1 + ", recorded " +
               recorded.hashes.workload_sha1 + ")";
  }
  if (differs.empty() && now.config_sha1 != recorded.hashes.config_sha1) {
    differs = "the policy, its options, the preemption mechanism, the copy policy or the seed (config_sha1 " +
              now.config_sha1 + ", recorded " + recorded.hashes.config_sha1 +
              "; a gpumux version whose policy defaults differ?)";
  }
  if (differs.empty()) return;
  throw InputError(stats_path + ": cannot replay: " + differs +
                   " is not what the run used; the run was made by gpumux " + recorded.gpumux_version +
                   " from the directory its input paths are relative to");
}

}  // namespace gpumux
