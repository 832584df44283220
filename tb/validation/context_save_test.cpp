// Validation (issue "Preemptive multiprogramming", Tanasic Table 1 "Save Time"): for each Parboil
// kernel at full residency on an SM of the K20c, the modelled context save time is within 5% of
// Table 1's Save Time, which assumes the preempted SM gets 1/13 of the 208 GB/s memory bandwidth.
// The save is a real TLM-2.0 write stream from the SM into the memory controller.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

const std::string kConfigs = std::string(GPUMUX_SOURCE_DIR) + "/configs";

TEST(Validation, ContextSaveTimesMatchTanasicTable1) {
  const GpuConfig gpu = load_gpu_config(kConfigs + "/gpus/kepler-k20c.yaml");
  const auto kernels = load_kernel_library(kConfigs + "/kernels/parboil.yaml", gpu);
  ASSERT_EQ(kernels.size(), 24U);
  auto urgent = std::make_shared<KernelDesc>(*kernels.front());
  urgent->name = "urgent";
  urgent->thread_blocks = 1;

  std::vector<SimulationSpec> specs;
  for (const auto& k : kernels) {
    // Every SM full of the kernel's TBs, long enough that none finishes before the preemption.
    auto victim = std::make_shared<KernelDesc>(*k);
    victim->thread_blocks = gpu.num_sms * static_cast<std::uint32_t>(k->reference.at("tbs_per_sm"));
    victim->tb_time.mean_ps = ps_from_ns(10e6);
    SimulationSpec spec;
    spec.gpu = gpu;
    spec.policy = "ppq";
    spec.preemption = PreemptionMechanism::kContextSwitch;
    spec.workload.name = k->name;
    spec.workload.tb_duration = TbDurationMode::kFixed;
    ProcessSpec low;
    low.name = "low";
    CommandSpec run_victim;
    run_victim.kind = CommandKind::kKernel;
    run_victim.kernel = victim;
    low.streams.push_back(StreamSpec{{run_victim}});
    ProcessSpec high = low;
    high.name = "high";
    high.priority = 1;
    high.arrival_ps = ps_from_ns(10'000);
    high.streams[0].commands[0].kernel = urgent;
    spec.workload.processes = {low, high};
    specs.push_back(std::move(spec));
  }
  const std::vector<RunResult> results = simulate_all(specs, 2);

  std::printf(
      "| kernel | TBs/SM | context bytes | model save (us) | Table 1 Save Time (us) | difference |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const KernelDesc& k = *kernels[i];
    ASSERT_FALSE(results[i].preemptions.empty()) << k.name;
    const PreemptionTrace& p = results[i].preemptions.front();
    const double model_us = static_cast<double>(p.done_ps - p.requested_ps) / 1e6;
    const double paper_us = k.reference.at("save_time_us");
    const double diff = (model_us - paper_us) / paper_us;
    std::printf("| %s | %.0f | %llu | %.2f | %.2f | %+.2f%% |\n", k.name.c_str(),
                k.reference.at("tbs_per_sm"), static_cast<unsigned long long>(p.bytes), model_us, paper_us,
                100.0 * diff);
    EXPECT_LE(std::abs(diff), 0.05) << k.name << ": model " << model_us << " us, Table 1 " << paper_us
                                    << " us";
  }
}

}  // namespace
}  // namespace gpumux
