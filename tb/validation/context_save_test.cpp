// Validation (Tanasic Table 1 "Save Time"): for each Parboil kernel at full residency on an SM of the
// K20c, the modelled context save time is within 5% of Table 1's Save Time, which assumes the
// preempted SM gets 1/13 of the 208 GB/s memory bandwidth. The save is a real TLM-2.0 write stream
// from the SM into the memory controller. Two cases: one SM preempted alone (it streams at its share
// while the other twelve run), and every SM preempted at once (issue 11 item 6: thirteen saves share
// the controller, each at its 1/13 share, the situation Table 1's projection describes).
//
// The time compared is the save's write stream: from the first write (after the pipeline drain and
// the trap routine, Tanasic 3.2) to the controller taking the last one. The drain and the trap are
// the GPU file's context_switch latencies, checked apart.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

const std::string kConfigs = std::string(GPUMUX_SOURCE_DIR) + "/configs";

/// One run per Parboil kernel: every SM full of the kernel's thread blocks, long enough that none
/// finishes before the preemption; at 10 us a high-priority kernel with `urgent_tbs` thread blocks
/// arrives and ppq preempts as many SMs as it needs, by context switch.
std::vector<RunResult> preempt_each_kernel(const GpuConfig& gpu,
                                           const std::vector<std::shared_ptr<const KernelDesc>>& kernels,
                                           std::uint32_t urgent_tbs) {
  auto urgent = std::make_shared<KernelDesc>(*kernels.front());
  urgent->name = "urgent";
  urgent->thread_blocks = urgent_tbs;
  std::vector<SimulationSpec> specs;
  for (const auto& k : kernels) {
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
  return simulate_all(specs, 2);
}

double us(TimePs ps) { return static_cast<double>(ps) / 1e6; }

/// The drain and the trap each preemption record shows are the GPU file's (Tanasic 3.2).
void expect_latencies(const GpuConfig& gpu, const PreemptionTrace& p, const std::string& kernel) {
  EXPECT_EQ(p.drain_ps, gpu.cycles_to_ps(gpu.context_switch.drain_cycles)) << kernel;
  EXPECT_EQ(p.trap_ps, gpu.cycles_to_ps(gpu.context_switch.trap_cycles)) << kernel;
  EXPECT_EQ(p.save_start_ps, p.requested_ps + p.drain_ps + p.trap_ps) << kernel;
}

TEST(Validation, ContextSaveTimesMatchTanasicTable1) {
  const GpuConfig gpu = load_gpu_config(kConfigs + "/gpus/kepler-k20c.yaml");
  const auto kernels = load_kernel_library(kConfigs + "/kernels/parboil.yaml", gpu);
  ASSERT_EQ(kernels.size(), 24U);
  const std::vector<RunResult> results = preempt_each_kernel(gpu, kernels, 1);

  std::printf(
      "| kernel | TBs/SM | context bytes | model save (us) | Table 1 Save Time (us) | difference |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const KernelDesc& k = *kernels[i];
    ASSERT_EQ(results[i].preemptions.size(), 1U) << k.name;
    const PreemptionTrace& p = results[i].preemptions.front();
    expect_latencies(gpu, p, k.name);
    const double model_us = us(p.done_ps - p.save_start_ps);
    const double paper_us = k.reference.at("save_time_us");
    const double diff = (model_us - paper_us) / paper_us;
    std::printf("| %s | %.0f | %llu | %.2f | %.2f | %+.2f%% |\n", k.name.c_str(),
                k.reference.at("tbs_per_sm"), static_cast<unsigned long long>(p.bytes), model_us, paper_us,
                100.0 * diff);
    EXPECT_LE(std::abs(diff), 0.05) << k.name << ": model " << model_us << " us, Table 1 " << paper_us
                                    << " us";
  }
}

TEST(Validation, ConcurrentSavesOfEverySmEachTakeTanasicTable1Time) {
  const GpuConfig gpu = load_gpu_config(kConfigs + "/gpus/kepler-k20c.yaml");
  const auto kernels = load_kernel_library(kConfigs + "/kernels/parboil.yaml", gpu);
  ASSERT_EQ(kernels.size(), 24U);
  // Enough urgent thread blocks to need every SM: ppq reserves all thirteen in one decision.
  const std::vector<RunResult> results = preempt_each_kernel(gpu, kernels, gpu.num_sms * 64);

  std::printf(
      "| kernel | SMs saving at once | fastest save (us) | median (us) | slowest (us) | Table 1 (us) "
      "| slowest vs Table 1 |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const KernelDesc& k = *kernels[i];
    const auto& preemptions = results[i].preemptions;
    ASSERT_EQ(preemptions.size(), gpu.num_sms) << k.name;
    std::vector<double> saves;
    for (const PreemptionTrace& p : preemptions) {
      // All at once: the same request time on every SM.
      EXPECT_EQ(p.requested_ps, preemptions.front().requested_ps) << k.name << " SM " << p.sm;
      expect_latencies(gpu, p, k.name);
      saves.push_back(us(p.done_ps - p.save_start_ps));
    }
    std::sort(saves.begin(), saves.end());
    const double paper_us = k.reference.at("save_time_us");
    std::printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f | %+.2f%% |\n", k.name.c_str(), saves.size(),
                saves.front(), saves[saves.size() / 2], saves.back(), paper_us,
                100.0 * (saves.back() - paper_us) / paper_us);
    for (const double save : saves) {
      EXPECT_LE(std::abs(save - paper_us) / paper_us, 0.05)
          << k.name << ": a save of " << save << " us with every SM saving, Table 1 " << paper_us << " us";
    }
  }
}

}  // namespace
}  // namespace gpumux
