// docs/validation.md section 1: the staircase model. With every thread block taking the mean
// t of Pai Table 3, the isolated runtime of each ERCBench kernel on the Fermi config (Pai Table 4)
// must be within 7% of Pai Table 3's simulator Runtime. Pai Eq. 1: T = ceil(N / R) * t.
// The table this test prints is the one in docs/validation.md.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "common/test_support.h"
#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

const std::string kConfigs = std::string(GPUMUX_SOURCE_DIR) + "/configs";

TEST(Validation, ErcbenchIsolatedRuntimesMatchPaiTable3) {
  const GpuConfig gpu = load_gpu_config(kConfigs + "/gpus/fermi-gtx480.yaml");
  const auto kernels = load_kernel_library(kConfigs + "/kernels/ercbench.yaml", gpu);
  ASSERT_EQ(kernels.size(), 8U);

  std::vector<SimulationSpec> specs;
  for (const auto& k : kernels) {
    specs.push_back(test::alone_fixed(gpu, k));
  }
  const std::vector<RunResult> results = simulate_all(specs, 2);

  std::printf(
      "| kernel | R | blocks | mean t (cycles) | model runtime (cycles) | Pai Table 3 runtime | difference "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const KernelDesc& k = *kernels[i];
    ASSERT_EQ(results[i].kernels.size(), 1U);
    const KernelRecord& rec = results[i].kernels[0];
    const double model = gpu.ps_to_cycles(rec.end_ps - rec.start_ps);
    ASSERT_TRUE(k.reference.count("runtime_cycles")) << k.name;
    const double paper = k.reference.at("runtime_cycles");
    const double diff = (model - paper) / paper;
    std::printf("| %s | %u | %u | %.0f | %.0f | %.0f | %+.2f%% |\n", k.name.c_str(), rec.tbs_per_sm,
                k.thread_blocks, gpu.ps_to_cycles(k.tb_time.mean_ps), model, paper, 100.0 * diff);
    EXPECT_LE(std::abs(diff), 0.07) << k.name << ": model " << model << " cycles, paper " << paper;
    ASSERT_TRUE(k.reference.count("residency")) << k.name;
    EXPECT_EQ(rec.tbs_per_sm, static_cast<std::uint32_t>(k.reference.at("residency"))) << k.name;
  }
}

}  // namespace
}  // namespace gpumux
