// The isolated-baseline cache key (app/baseline_key.h) covers the whole effective configuration: every
// key a GPU file or a kernel library may hold - enumerated from the loaders' own key lists
// (gpu_config_keys, kernel_library_keys), not from a list here - is changed in turn to another value the
// loader accepts, and the key must change. Identical input gives the identical key, and the GPU's
// document holds exactly the loader's keys.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/baseline_key.h"
#include "common/scratch_file.h"
#include "common/test_support.h"
#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "core/error.h"

namespace gpumux {
namespace {

const std::string kConfigDir = std::string(GPUMUX_SOURCE_DIR) + "/configs";

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
    parts.push_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(path.substr(start));
  return parts;
}

/// The map holding the last part of `path` in `root` (lists are entered at their first item), created
/// where missing.
YAML::Node parent_map(const YAML::Node& root, const std::vector<std::string>& parts) {
  // A YAML::Node is a handle: operator= writes through to the node referred to, reset() re-points it.
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node child = node[parts[i]];
    if (child.IsSequence()) child.reset(child[0]);
    if (!child.IsDefined() || child.IsNull()) {
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
      child.reset(node[parts[i]]);
    }
    node.reset(child);
  }
  return node;
}

/// Values to try for a key currently holding `current` (undefined when the file omits it): a few
/// neighbours of a number, other names and choices for a string, other lists, a map.
std::vector<YAML::Node> candidates(const YAML::Node& current) {
  std::vector<YAML::Node> values;
  const auto scalar = [&](const std::string& text) { values.emplace_back(text); };
  if (current.IsDefined() && current.IsScalar()) {
    double x = 0;
    if (YAML::convert<double>::decode(current, x)) {
      const bool integer = current.Scalar().find_first_of(".eE") == std::string::npos;
      for (const double v : {x + 1, x * 2, x - 1, x / 2}) {
        scalar(integer ? std::to_string(static_cast<long long>(v)) : std::to_string(v));
      }
    }
  }
  for (const char* text :
       {"1",    "2",  "3",   "7",   "64",      "100",  "1000",   "0.5", "full", "per_sm", "other-name",
        "warp", "tb", "lrr", "gto", "largest", "dram", "simple", "on",  "off",  "rotate", "onac"}) {
    scalar(text);
  }
  YAML::Node one(YAML::NodeType::Sequence);
  one.push_back("8");
  values.push_back(one);
  YAML::Node two(YAML::NodeType::Sequence);
  two.push_back("16");
  two.push_back("64");
  values.push_back(two);
  YAML::Node mapping(YAML::NodeType::Sequence);  // a DRAM address mapping (memory.dram.address_mapping)
  for (const char* field : {"row", "channel", "bank", "column"}) mapping.push_back(field);
  values.push_back(mapping);
  YAML::Node map(YAML::NodeType::Map);
  map["other"] = "1";
  values.push_back(map);
  YAML::Node option(YAML::NodeType::Map);  // a warp scheduler's option (sm.warp.scheduler_options)
  option["inner"] = "gto";
  values.push_back(option);
  // A kernel program (kernels.program): a list of instruction strings.
  YAML::Node program(YAML::NodeType::Sequence);
  program.push_back("alu r2 <- r0");
  values.push_back(program);
  return values;
}

std::string write_temp(const YAML::Node& node, const std::string& stem) {
  std::string path = test::scratch_path("gpumux-cache-key-" + stem);
  std::ofstream(path) << YAML::Dump(node) << "\n";
  return path;
}

struct Change {
  bool any_valid = false;  ///< some candidate loaded
  std::optional<std::string> changed_by;
};

/// memory.bandwidth_gb_per_s must equal the peak memory.dram gives (the loader checks it): a change to a
/// DRAM key that moves the peak moves the bandwidth with it, as a user would.
void keep_dram_peak(YAML::Node& doc) {
  const YAML::Node dram = doc["memory"]["dram"];
  if (!dram.IsDefined() || !dram.IsMap()) return;
  try {
    const double peak =
        dram["channels"].as<double>() * dram["bus_bytes"].as<double>() *
        dram["timing"]["burst_length"].as<double>() * dram["command_clock_mhz"].as<double>() * 1e6 /
        (dram["timing"]["burst_length"].as<double>() / dram["timing"]["beats_per_clock"].as<double>()) / 1e9;
    doc["memory"]["bandwidth_gb_per_s"] = std::to_string(peak);
  } catch (const YAML::Exception&) {
    // A candidate that is not a number: the loader rejects it anyway.
  }
}

/// Changes `path` of `base` to each candidate in turn (alone, or with one of its siblings removed, for
/// keys that exclude each other such as mean_us / mean_ns) until the loader accepts a file whose key
/// differs from `base_key`. `key_of` loads a file and returns its key, or nullopt on an InputError.
Change change_each_value(const YAML::Node& base, const std::string& path, const std::string& base_key,
                         const std::function<std::optional<std::string>(const YAML::Node&)>& key_of) {
  Change result;
  const std::vector<std::string> parts = split_path(path);
  YAML::Node base_parent = parent_map(YAML::Clone(base), parts);
  std::vector<std::string> siblings = {""};
  for (const auto& entry : base_parent) {
    if (entry.first.Scalar() != parts.back()) siblings.push_back(entry.first.Scalar());
  }
  for (const YAML::Node& value : candidates(base_parent[parts.back()])) {
    for (const std::string& removed : siblings) {
      YAML::Node doc = YAML::Clone(base);
      YAML::Node parent = parent_map(doc, parts);
      parent[parts.back()] = YAML::Clone(value);
      if (!removed.empty()) parent.remove(removed);
      if (path.rfind("memory.dram.", 0) == 0) keep_dram_peak(doc);
      const std::optional<std::string> key = key_of(doc);
      if (!key) continue;
      result.any_valid = true;
      if (*key != base_key) {
        result.changed_by = YAML::Dump(value);
        return result;
      }
    }
  }
  return result;
}

/// `base` with the sibling values `path` needs before another of its values is valid: a warp
/// scheduler's options exist only for a scheduler that declares them (two-level: `inner`).
YAML::Node with_prerequisites(const YAML::Node& base, const std::string& path) {
  YAML::Node doc = YAML::Clone(base);
  if (path == "sm.warp.scheduler_options") doc["sm"]["warp"]["scheduler"] = "two-level-lrr";
  // The K20c has no L1: its keys are changed on a whole one (16 KB, 4 ways, 128 B lines of 32 B sectors).
  if (path.rfind("memory.l1.", 0) == 0 && !doc["memory"]["l1"].IsDefined()) {
    doc["memory"]["l1"] = YAML::Load(
        "{capacity_kb: 16, associativity: 4, line_bytes: 128, sector_bytes: 32, hit_latency_cycles: 20}");
  }
  return doc;
}

/// One process launching `kernel` once: what an isolated baseline simulates.
Workload alone_with(const std::shared_ptr<const KernelDesc>& kernel) {
  Workload w;
  w.name = "w";
  CommandSpec c;
  c.kind = CommandKind::kKernel;
  c.kernel = kernel;
  w.processes = {test::process("p", {StreamSpec{{c}}})};
  return w;
}

std::optional<std::string> gpu_key(const YAML::Node& doc, const Workload& alone) {
  try {
    return baseline_cache_key(load_gpu_config(write_temp(doc, "gpu.yaml")), alone, 1, CopyPolicy::kFcfs);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

void flatten(const nlohmann::json& j, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      flatten(value, path, out);
    } else {
      out.insert(path);
    }
  }
}

TEST(BaselineCacheKey, ChangesWithEveryGpuConfigKey) {
  const YAML::Node base = YAML::LoadFile(kConfigDir + "/gpus/kepler-k20c.yaml");
  const Workload alone = alone_with(test::kernel("k", 100, 5.0));
  const std::optional<std::string> base_key = gpu_key(base, alone);
  ASSERT_TRUE(base_key.has_value());
  EXPECT_EQ(base_key, gpu_key(base, alone)) << "same file, same key";
  const std::vector<std::string> keys = gpu_config_keys();
  ASSERT_GE(keys.size(), 20U);
  std::cout << "binary identity: " << binary_identity() << "\nkepler-k20c.yaml key " << *base_key << "\n";
  for (const std::string& path : keys) {
    const YAML::Node start = with_prerequisites(base, path);
    const std::optional<std::string> start_key = gpu_key(start, alone);
    ASSERT_TRUE(start_key.has_value()) << path;
    const Change change = change_each_value(start, path, *start_key,
                                            [&](const YAML::Node& doc) { return gpu_key(doc, alone); });
    EXPECT_TRUE(change.any_valid) << path << ": no candidate value is accepted by the loader";
    EXPECT_TRUE(change.changed_by.has_value())
        << path << ": the loader accepts other values but the cache key ignores them "
        << "(add the key to gpu_config_document in config/gpu_loader.cpp)";
    if (change.changed_by) std::cout << "  gpu " << path << " = " << *change.changed_by << ": key changes\n";
  }
}

TEST(BaselineCacheKey, GpuDocumentHoldsExactlyTheLoaderKeys) {
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  std::set<std::string> documented;
  flatten(gpu_config_document(gpu), "", documented);
  const std::vector<std::string> keys = gpu_config_keys();
  EXPECT_EQ(documented, std::set<std::string>(keys.begin(), keys.end()));
  // Defaults are filled in: a file that omits an optional map equals one that spells out its defaults.
  YAML::Node spelled = YAML::LoadFile(kConfigDir + "/gpus/kepler-k20c.yaml");
  spelled["context_switch"]["bandwidth_share"] = "per_sm";
  spelled["context_switch"]["burst_bytes"] = "4096";
  const Workload alone = alone_with(test::kernel("k", 100, 5.0));
  EXPECT_EQ(gpu_key(spelled, alone), gpu_key(YAML::LoadFile(kConfigDir + "/gpus/kepler-k20c.yaml"), alone));
}

TEST(BaselineCacheKey, ChangesWithEveryKernelLibraryKey) {
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  YAML::Node base = YAML::LoadFile(kConfigDir + "/kernels/parboil.yaml");
  YAML::Node first(YAML::NodeType::Sequence);
  first.push_back(YAML::Clone(base["kernels"][0]));
  base["kernels"] = first;
  // A list of maps is entered at its first item (parent_map): give the kernel a sensitivity curve if the
  // library has none for it, so its points' keys have a place to change.
  if (!base["kernels"][0]["interference"].IsDefined()) {
    YAML::Node interference =
        YAML::Load("{pressure_per_sm_gb_per_s: 5, sensitivity: [{gb_per_s: 50, slowdown: 1.5}]}");
    base["kernels"][0]["interference"] = interference;
  }
  const auto key_of = [&](const YAML::Node& doc) -> std::optional<std::string> {
    try {
      const auto kernels = load_kernel_library(write_temp(doc, "kernels.yaml"), gpu);
      return baseline_cache_key(gpu, alone_with(kernels.at(0)), 1, CopyPolicy::kFcfs);
    } catch (const InputError&) {
      return std::nullopt;
    }
  };
  const std::optional<std::string> base_key = key_of(base);
  ASSERT_TRUE(base_key.has_value());
  EXPECT_EQ(base_key, key_of(base)) << "same file, same key";
  std::cout << "parboil.yaml (first kernel) key " << *base_key << "\n";
  const std::vector<std::string> keys = kernel_library_keys();
  ASSERT_GE(keys.size(), 14U);
  for (const std::string& path : keys) {
    const Change change = change_each_value(base, path, *base_key, key_of);
    EXPECT_TRUE(change.any_valid) << path << ": no candidate value is accepted by the loader";
    EXPECT_TRUE(change.changed_by.has_value())
        << path << ": the loader accepts other values but the cache key ignores them "
        << "(add the key to kernel_document in config/kernel_library_loader.cpp)";
    if (change.changed_by) {
      std::cout << "  kernels " << path << " = " << *change.changed_by << ": key changes\n";
    }
  }
}

TEST(BaselineCacheKey, ChangesWithTheSmModelAndWarpSchedulerARunSets) {
  // As `gpumux run --sm-model/--warp-scheduler` and an experiment run's sm_model / warp_scheduler
  // override the GPU file (apply_sm_settings): each must reach the key.
  const GpuConfig file = load_gpu_config(kConfigDir + "/gpus/tesla-m2090.yaml");
  ASSERT_EQ(file.sm_model, SmModel::kThreadBlock);
  ASSERT_EQ(file.warp.scheduler, "two-level-lrr");
  const Workload alone = alone_with(test::kernel("k", 100, 5.0));
  const auto key = [&](std::optional<SmModel> model, const std::string& scheduler) {
    GpuConfig gpu = file;
    apply_sm_settings(gpu, model, scheduler);
    return baseline_cache_key(gpu, alone, 1, CopyPolicy::kFcfs);
  };
  const std::string tb = key(std::nullopt, "");
  EXPECT_EQ(tb, key(SmModel::kThreadBlock, "")) << "the file's own model";
  const std::string warp = key(SmModel::kWarp, "");
  EXPECT_NE(warp, tb) << "sm_model changes the key";
  EXPECT_EQ(warp, key(SmModel::kWarp, "two-level-lrr")) << "the file's own scheduler";
  std::set<std::string> keys = {tb, warp};
  for (const char* scheduler : {"lrr", "gto", "phase-aware", "two-level-gto", "two-level-phase-aware"}) {
    EXPECT_TRUE(keys.insert(key(SmModel::kWarp, scheduler)).second)
        << scheduler << ": warp_scheduler changes the key";
  }
}

TEST(BaselineCacheKey, CoversSeedCopyPolicyProcessAndBinary) {
  const GpuConfig gpu = test::k20c();
  const Workload alone = alone_with(test::kernel("k", 100, 5.0));
  const std::string key = baseline_cache_key(gpu, alone, 1, CopyPolicy::kFcfs);
  EXPECT_EQ(key.size(), 40U);
  EXPECT_EQ(key, baseline_cache_key(gpu, alone, 1, CopyPolicy::kFcfs));
  EXPECT_NE(key, baseline_cache_key(gpu, alone, 2, CopyPolicy::kFcfs));
  EXPECT_NE(key, baseline_cache_key(gpu, alone, 1, CopyPolicy::kNpq)) << "the copy policy is part of the key";
  Workload repeated = alone;
  repeated.processes[0].repeat = 2;
  EXPECT_NE(key, baseline_cache_key(gpu, repeated, 1, CopyPolicy::kFcfs));
  Workload fixed = alone;
  fixed.tb_duration = TbDurationMode::kFixed;
  EXPECT_NE(key, baseline_cache_key(gpu, fixed, 1, CopyPolicy::kFcfs));
  Workload renamed = alone;
  renamed.name = "another workload";  // equal processes of different workloads share a baseline
  EXPECT_EQ(key, baseline_cache_key(gpu, renamed, 1, CopyPolicy::kFcfs));
  EXPECT_NE(binary_identity().find(GPUMUX_VERSION), std::string::npos);
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");  // FIPS 180-1 test vector
}

}  // namespace
}  // namespace gpumux
