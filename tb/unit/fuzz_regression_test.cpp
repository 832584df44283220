// Inputs with which the fuzz harnesses (tb/fuzz/, docs/fuzzing.md) made a config loader crash, hang or
// throw something other than an InputError. Each must now be bad input reported as such: an InputError
// naming file, line and what is wrong. The inputs are kept in tb/fuzz/regressions/<harness>/, which
// scripts/fuzz and ctest (label `fuzz`) also replay through the harnesses.

#include <gtest/gtest.h>

#include <string>

#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "core/error.h"

namespace gpumux {
namespace {

const std::string kRegressions = std::string(GPUMUX_TB_DIR) + "/fuzz/regressions";
const std::string kConfigDir = std::string(GPUMUX_SOURCE_DIR) + "/configs";

/// The message of the InputError `load` throws ("" and a test failure when it throws none).
template <typename Load>
std::string input_error(const Load& load) {
  try {
    load();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

// yaml-cpp 0.7's LoadAll never returned on a flow indicator outside a flow collection: the parser
// reported an empty document at the same position forever, each one kept (a timeout with 700 MB after
// 10 s). The fuzzer found it as a stray ", " line in configs/kernels/ercbench.yaml; minimized: "  ,".
TEST(FuzzRegression, StrayFlowIndicatorIsMalformedYamlNotAHang) {
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  const std::string minimized = kRegressions + "/kernel_library/yaml-stray-comma-hang.yaml";
  EXPECT_EQ(input_error([&] { (void)load_kernel_library(minimized, gpu); }),
            minimized + ":1:3: malformed YAML: unexpected ','");

  const std::string found = kRegressions + "/kernel_library/timeout-f4486184132928dfced87d8798c48ce12189017e";
  EXPECT_EQ(input_error([&] { (void)load_kernel_library(found, gpu); }),
            found + ":35:3: malformed YAML: unexpected ','");
  // The same file as a GPU: every loader reads through the same YAML layer.
  EXPECT_EQ(input_error([&] { (void)load_gpu_config(minimized); }),
            minimized + ":1:3: malformed YAML: unexpected ','");
}

}  // namespace
}  // namespace gpumux
