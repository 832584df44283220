// The `perf_sat` keys of a GPU file (docs/config.md "Perf-Sat"): the thesis's defaults, bad values naming
// the key, and Perf-Sat on TB-level SMs as an error naming the file, the line and the key.

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/scratch_file.h"
#include "config/gpu_loader.h"
#include "core/error.h"

namespace gpumux {
namespace {

/// configs/gpus/tesla-m2090.yaml with `extra` appended, as a temporary file.
std::string m2090_with(const std::string& extra) {
  std::ifstream in(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/tesla-m2090.yaml");
  std::stringstream text;
  text << in.rdbuf() << extra;
  static int files = 0;
  std::string path = test::scratch_path("perf_sat_" + std::to_string(files++) + ".yaml");
  std::ofstream(path) << text.str();
  return path;
}

/// The line of `key:` at the start of a line in `path` (1-based; 0: none).
int line_of(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.rfind(key, 0) == 0) return n;
  }
  return 0;
}

TEST(PerfSatConfig, DefaultsAreTheThesisAndOff) {
  const GpuConfig gpu = load_gpu_config(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/tesla-m2090.yaml");
  EXPECT_FALSE(gpu.perf_sat.enabled);
  EXPECT_EQ(gpu.perf_sat.sample_period_cycles, 0U);  // One_TB_cycles x N_max (4.3.2.2)
  EXPECT_EQ(gpu.perf_sat.max_toggles, 3U);           // "more than three times" (4.3.2.2)
  const GpuConfig on = load_gpu_config(
      m2090_with("perf_sat:\n  enabled: on\n  sample_period_cycles: 5000\n  max_toggles: 2\n"));
  EXPECT_TRUE(on.perf_sat.enabled);
  EXPECT_EQ(on.perf_sat.sample_period_cycles, 5000U);
  EXPECT_EQ(on.perf_sat.max_toggles, 2U);
}

TEST(PerfSatConfig, TbLevelSmsAreAnErrorNamingFileLineAndKey) {
  const std::string path = m2090_with("perf_sat:\n  enabled: on\n");
  GpuConfig gpu = load_gpu_config(path);  // sm.model tb: the SM model may still be overridden
  try {
    apply_sm_settings(gpu, std::nullopt, "");
    FAIL() << "Perf-Sat on TB-level SMs was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path + ":" + std::to_string(line_of(path, "  enabled:"))), std::string::npos) << what;
    EXPECT_NE(what.find("'perf_sat.enabled'"), std::string::npos) << what;
    EXPECT_NE(what.find("warp"), std::string::npos) << what;
  }
  GpuConfig warp = load_gpu_config(path);
  EXPECT_NO_THROW(apply_sm_settings(warp, SmModel::kWarp, ""));  // --sm-model warp
  EXPECT_EQ(warp.sm_model, SmModel::kWarp);
}

TEST(PerfSatConfig, BadValuesNameTheKey) {
  for (const auto& [text, key] : std::vector<std::pair<std::string, std::string>>{
           {"perf_sat:\n  enabled: yes\n", "perf_sat.enabled"},
           {"perf_sat:\n  max_toggles: -1\n", "perf_sat.max_toggles"},
           {"perf_sat:\n  sample_period_cycles: 2000000000\n", "perf_sat.sample_period_cycles"},
           {"perf_sat:\n  sample_period: 10\n", "perf_sat.sample_period"}}) {
    SCOPED_TRACE(text);
    const std::string path = m2090_with(text);
    try {
      (void)load_gpu_config(path);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path + ":"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpumux
