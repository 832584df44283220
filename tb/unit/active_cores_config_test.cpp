// The `active_cores` and `power` keys of a GPU file (docs/config.md "Active cores", "Power"): the thesis's
// defaults, bad values naming file, line and key, a detector or the power model on TB-level SMs and a
// detector under a policy other than fcfs or fifo as errors naming the file, the line and the key.

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/scratch_file.h"
#include "config/gpu_loader.h"
#include "core/error.h"

namespace gpumux {
namespace {

/// configs/gpus/tesla-m2090.yaml (TB-level SMs) with `extra` appended, as a temporary file.
std::string m2090_with(const std::string& extra) {
  std::ifstream in(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/tesla-m2090.yaml");
  std::stringstream text;
  text << in.rdbuf() << extra;
  static int files = 0;
  std::string path = test::scratch_path("active_cores_" + std::to_string(files++) + ".yaml");
  std::ofstream(path) << text.str();
  return path;
}

/// The line of `key` at the start of a line in `path`, counting from the end (1-based; 0: none).
int last_line_of(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  int found = 0;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.rfind(key, 0) == 0) found = n;
  }
  return found;
}

void expect_names(const InputError& e, const std::string& path, int line, const std::string& key) {
  const std::string what = e.what();
  EXPECT_NE(what.find(path + ":" + std::to_string(line)), std::string::npos) << what;
  EXPECT_NE(what.find("'" + key + "'"), std::string::npos) << what;
}

TEST(ActiveCoresConfig, DefaultsAreTheThesisAndOff) {
  const GpuConfig gpu = load_gpu_config(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/tesla-m2090.yaml");
  EXPECT_EQ(gpu.active_cores.detector, ActiveCoreDetectorKind::kNone);
  EXPECT_EQ(gpu.active_cores.sampling_period_waves, 4U);  // 4.4.2.4
  EXPECT_DOUBLE_EQ(gpu.active_cores.tolerance, 0.02);     // 4.4.1.1
  EXPECT_FALSE(gpu.power.enabled);
  const GpuConfig on = load_gpu_config(
      m2090_with("active_cores:\n  detector: seq-det\n  sampling_period_waves: 2\n  tolerance: 0.05\n"
                 "power:\n  enabled: on\n  core_static_w: 2.5\n  dram_pj_per_bit: 10\n"));
  EXPECT_EQ(on.active_cores.detector, ActiveCoreDetectorKind::kSeqDet);
  EXPECT_EQ(on.active_cores.sampling_period_waves, 2U);
  EXPECT_DOUBLE_EQ(on.active_cores.tolerance, 0.05);
  EXPECT_TRUE(on.power.enabled);
  EXPECT_DOUBLE_EQ(on.power.core_static_w, 2.5);
  EXPECT_DOUBLE_EQ(on.power.dram_pj_per_bit, 10.0);
  EXPECT_DOUBLE_EQ(on.power.alu_nj, PowerConfig{}.alu_nj);
}

TEST(ActiveCoresConfig, Table43GpuLoadsAsTheTable) {
  const GpuConfig gpu = load_gpu_config(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/onac-32core.yaml");
  EXPECT_EQ(gpu.num_sms, 32U);
  EXPECT_DOUBLE_EQ(gpu.core_clock_mhz, 1300.0);
  EXPECT_EQ(gpu.sm.max_warps, 48U);
  EXPECT_EQ(gpu.sm.max_thread_blocks, 8U);
  EXPECT_EQ(gpu.sm.registers, 32768U);
  EXPECT_EQ(gpu.sm_model, SmModel::kWarp);
  EXPECT_EQ(gpu.memory.dram.channels, 12U);
  EXPECT_NEAR(gpu.memory.bandwidth_gb_per_s, 177.4, 0.05);
  EXPECT_FALSE(gpu.power.enabled);  // scripts/onac turns it on
  EXPECT_EQ(gpu.active_cores.detector, ActiveCoreDetectorKind::kNone);
}

TEST(ActiveCoresConfig, TbLevelSmsAreAnErrorNamingFileLineAndKey) {
  for (const auto& [text, key, line_key] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"active_cores:\n  detector: onac\n", "active_cores.detector", "  detector:"},
           {"power:\n  enabled: on\n", "power.enabled", "  enabled:"}}) {
    SCOPED_TRACE(text);
    const std::string path = m2090_with(text);
    GpuConfig gpu = load_gpu_config(path);  // sm.model tb: the SM model may still be overridden
    try {
      apply_sm_settings(gpu, std::nullopt, "");
      ADD_FAILURE() << "accepted on TB-level SMs";
    } catch (const InputError& e) {
      expect_names(e, path, last_line_of(path, line_key), key);
      EXPECT_NE(std::string(e.what()).find("warp"), std::string::npos) << e.what();
    }
    GpuConfig warp = load_gpu_config(path);
    EXPECT_NO_THROW(apply_sm_settings(warp, SmModel::kWarp, ""));  // --sm-model warp
  }
}

TEST(ActiveCoresConfig, PoliciesOtherThanFcfsAndFifoAreAnError) {
  const std::string path = m2090_with("active_cores:\n  detector: onac\n");
  const GpuConfig gpu = load_gpu_config(path);
  EXPECT_NO_THROW(check_active_cores_policy(gpu, "fcfs"));
  EXPECT_NO_THROW(check_active_cores_policy(gpu, "fifo"));
  for (const char* policy : {"dss", "spatial", "mpmax", "srtf"}) {
    try {
      check_active_cores_policy(gpu, policy);
      ADD_FAILURE() << policy << " accepted";
    } catch (const InputError& e) {
      expect_names(e, path, last_line_of(path, "  detector:"), "active_cores.detector");
      EXPECT_NE(std::string(e.what()).find(policy), std::string::npos) << e.what();
    }
  }
  const GpuConfig off = load_gpu_config(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/tesla-m2090.yaml");
  EXPECT_NO_THROW(check_active_cores_policy(off, "dss"));  // no detector: every policy
}

TEST(ActiveCoresConfig, BadValuesNameFileLineAndKey) {
  for (const auto& [text, key] : std::vector<std::pair<std::string, std::string>>{
           {"active_cores:\n  detector: onac2\n", "active_cores.detector"},
           {"active_cores:\n  sampling_period_waves: 0\n", "active_cores.sampling_period_waves"},
           {"active_cores:\n  tolerance: 0.9\n", "active_cores.tolerance"},
           {"active_cores:\n  tolerence: 0.1\n", "active_cores.tolerence"},
           {"power:\n  enabled: yes\n", "power.enabled"},
           {"power:\n  alu_nj: -1\n", "power.alu_nj"},
           {"power:\n  core_static_w: 5000\n", "power.core_static_w"}}) {
    SCOPED_TRACE(text);
    const std::string path = m2090_with(text);
    try {
      (void)load_gpu_config(path);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(key), std::string::npos) << what;
      EXPECT_NE(what.find(path + ":"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace gpumux
