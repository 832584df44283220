// `gpumux run --dump-config FILE` (app/run_record.h write_config_dump): the file is the run's effective
// configuration with every default filled in, and its "gpu" member is a GPU file in its own right: for
// every shipped GPU, at both SM fidelities and under every warp scheduler, loading it back gives the same
// GPU (gpu_config_document, which the isolated-baseline cache key and config_sha1 hash, is unchanged).
// Whatever the loader defaults is written out, so the file omits nothing.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "app/baseline_key.h"
#include "app/run_record.h"
#include "common/test_support.h"
#include "config/gpu_loader.h"
#include "config/workload_loader.h"
#include "core/error.h"
#include "policy/registry.h"
#include "sm/warp_scheduler/registry.h"

namespace gpumux {
namespace {

namespace fs = std::filesystem;
const std::string kConfigDir = std::string(GPUMUX_SOURCE_DIR) + "/configs";

/// A scratch folder removed at the end of the test.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("gpumux-dump-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(ConfigDump, TheGpuMemberOfTheDumpLoadsBackAsTheSameGpu) {
  const Scratch scratch;
  const Workload workload = load_workload(kConfigDir + "/workloads/sgemm-3x.yaml",
                                          load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml"));
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kConfigDir + "/gpus")) {
    const GpuConfig shipped = load_gpu_config(entry.path().string());
    for (const SmModel model : {SmModel::kThreadBlock, SmModel::kWarp}) {
      for (const std::string& scheduler : warp_scheduler_names()) {
        SCOPED_TRACE(entry.path().filename().string() + " " + (model == SmModel::kWarp ? "warp " : "tb ") +
                     scheduler);
        GpuConfig gpu = shipped;
        apply_sm_settings(gpu, model, scheduler);
        const fs::path dump = scratch.dir / "dump.json";
        write_config_dump(dump.string(),
                          effective_config(gpu, workload, "fcfs", nlohmann::json::object(),
                                           PreemptionMechanism::kContextSwitch, CopyPolicy::kFcfs, 7));
        const nlohmann::json written = read_json(dump);
        EXPECT_EQ(written.at("seed"), 7);
        EXPECT_EQ(written.at("policy"), "fcfs");
        EXPECT_TRUE(written.at("gpu").at("sm").at("warp").at("scheduler_options").is_object());
        // The "gpu" member alone, as a GPU file (JSON is YAML).
        const fs::path gpu_file = scratch.dir / "gpu.yaml";
        std::ofstream(gpu_file) << written.at("gpu").dump(2) << '\n';
        const GpuConfig loaded = load_gpu_config(gpu_file.string());
        EXPECT_TRUE(gpu_config_document(loaded) == gpu_config_document(gpu))
            << "written:\n"
            << written.at("gpu").dump(2) << "\nreloaded:\n"
            << gpu_config_document(loaded).dump(2);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 4 * 2 * 2);
}

TEST(ConfigDump, HoldsTheWholeEffectiveConfigurationTheHashReads) {
  const Scratch scratch;
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  const Workload workload = load_workload(kConfigDir + "/workloads/demo-parboil-4proc.yaml", gpu);
  const nlohmann::json options = effective_policy_options("dss", {});
  const nlohmann::json config =
      effective_config(gpu, workload, "dss", options, PreemptionMechanism::kDrain, CopyPolicy::kNpq, 3);
  const fs::path dump = scratch.dir / "dump.json";
  write_config_dump(dump.string(), config);
  nlohmann::json written = read_json(dump);
  // Every policy option with its default, the workload with every process and kernel.
  EXPECT_EQ(written.at("policy_options"), options);
  EXPECT_FALSE(options.empty());
  EXPECT_EQ(written.at("preemption"), "drain");
  EXPECT_EQ(written.at("copy_policy"), "npq");
  EXPECT_EQ(written.at("workload").at("processes").size(), workload.processes.size());
  // Apart from the scheduler options' form and the memory sections the K20c does not have (left out, not
  // zeros), it is the document config_sha1 hashes.
  nlohmann::json& sched = written.at("gpu").at("sm").at("warp").at("scheduler_options");
  sched = sched.dump();
  const nlohmann::json& memory = config.at("gpu").at("memory");
  for (const char* section : {"l1", "l2", "dram"}) {
    if (!written.at("gpu").at("memory").contains(section)) {
      const nlohmann::json& zeros = memory.at(section);
      EXPECT_EQ(zeros.at(section[0] == 'd' ? "channels" : "capacity_kb"), 0)
          << section << " left out but present";
      written["gpu"]["memory"][section] = zeros;
    }
  }
  EXPECT_TRUE(written == config);
  const ConfigHashes hashes =
      config_hashes(gpu, workload, "dss", options, PreemptionMechanism::kDrain, CopyPolicy::kNpq, 3);
  EXPECT_EQ(hashes.config_sha1, sha1_hex(config.dump()));
}

TEST(ConfigDump, AnUnwritablePathIsAnInputError) {
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  const Workload workload = load_workload(kConfigDir + "/workloads/sgemm-3x.yaml", gpu);
  EXPECT_THROW(write_config_dump("/nonexistent-dir/dump.json",
                                 effective_config(gpu, workload, "fcfs", nlohmann::json::object(),
                                                  PreemptionMechanism::kContextSwitch, CopyPolicy::kFcfs, 1)),
               InputError);
}

}  // namespace
}  // namespace gpumux
