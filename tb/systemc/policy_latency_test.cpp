// Policies with their hardware's latency charged in simulated time (policy option latency=hardware,
// issue 21). DSS (policy/dss.h): the model is clocked at the GPU's core clock, so on an idle 13-SM K20c
// the first SM is given to an arriving kernel one serial scan (N + 1 = 14 cycles, Tanasic 3.4) after the
// kernel arrived, and the last of 13 SMs 13 scans after it; with latency=instant both happen at the
// arrival. The leaky bucket (policy/leaky_bucket.h) hands out at most one thread block per cycle, so one
// wave of 104 blocks takes at least 104 cycles to dispatch. Runs with the latency charged keep every
// invariant (the property tests run random workloads with it too) and are deterministic.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "common/test_support.h"
#include "config/gpu_loader.h"
#include "config/workload_loader.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

/// One cycle of the K20c's 706 MHz core clock, in picoseconds.
constexpr double kCyclePs = 1e6 / 706.0;

/// One kernel of exactly one wave on the K20c (8 blocks per SM by threads and registers, 13 SMs),
/// fixed 10 us blocks, under dss with `latency`.
RunResult one_wave(const std::string& latency, const std::string& policy = "dss") {
  SimulationSpec spec = test::alone_fixed(test::k20c(), test::kernel("wave", 13 * 8, 10.0));
  spec.policy = policy;
  spec.policy_options = {{"latency", latency}};
  return simulate(spec);
}

TEST(DssLatency, TheFirstSmTakesOneScanAndTheLastThirteen) {
  const RunResult instant = one_wave("instant");
  const RunResult hardware = one_wave("hardware");
  ASSERT_EQ(instant.kernels.size(), 1U);
  ASSERT_EQ(hardware.kernels.size(), 1U);
  const KernelRecord& a = instant.kernels[0];
  const KernelRecord& b = hardware.kernels[0];
  EXPECT_EQ(a.launch_ps, b.launch_ps);
  // The kernel arrives at a.start_ps (instant: its first block issues then). The event enters the model
  // at the next clock edge, within a cycle; 13 scan cycles and the decision cycle follow.
  const auto first = static_cast<double>(b.start_ps - a.start_ps);
  EXPECT_GE(first, 14 * kCyclePs - 1)
      << "first assignment " << first / kCyclePs << " cycles after the arrival";
  EXPECT_LT(first, 15 * kCyclePs + 1)
      << "first assignment " << first / kCyclePs << " cycles after the arrival";
  // One wave: the kernel ends when the last SM, given out by the 13th decision, ends its blocks.
  const auto last = static_cast<double>(b.end_ps - a.end_ps);
  EXPECT_GE(last, 13 * 14 * kCyclePs - 1) << "last assignment " << last / kCyclePs << " cycles late";
  EXPECT_LT(last, 13 * 14 * kCyclePs + kCyclePs + 1)
      << "last assignment " << last / kCyclePs << " cycles late";
  EXPECT_EQ(a.thread_blocks, b.thread_blocks);
  EXPECT_EQ(hardware.tbs_completed, 13U * 8U);
}

TEST(LeakyBucketLatency, OneThreadBlockPerCycle) {
  const RunResult instant = one_wave("instant", "leaky-bucket");
  const RunResult hardware = one_wave("hardware", "leaky-bucket");
  ASSERT_EQ(hardware.kernels.size(), 1U);
  // Instant: every block of the wave starts at the arrival and ends 10 us later.
  EXPECT_EQ(instant.kernels[0].end_ps - instant.kernels[0].start_ps, 10'000'000U);
  // Hardware: the 104th grant comes out at least 103 cycles after the first (a bucket configured and
  // the first interleaving cycles come before it), so the wave ends that much later.
  const auto late = static_cast<double>(hardware.kernels[0].end_ps - instant.kernels[0].end_ps);
  EXPECT_GE(late, 103 * kCyclePs) << late / kCyclePs << " cycles";
  EXPECT_LT(late, 2 * 104 * kCyclePs) << late / kCyclePs << " cycles";
  EXPECT_EQ(hardware.tbs_completed, 13U * 8U);
}

TEST(DssLatency, TheDemoUnderBothMechanismsKeepsEveryInvariantAndRepeats) {
  const std::string configs = std::string(GPUMUX_SOURCE_DIR) + "/configs";
  SimulationSpec spec;
  spec.gpu = load_gpu_config(configs + "/gpus/kepler-k20c.yaml");
  spec.workload = load_workload(configs + "/workloads/demo-parboil-4proc.yaml", spec.gpu);
  spec.policy = "dss";
  std::vector<SimulationSpec> specs;
  for (const PreemptionMechanism m : {PreemptionMechanism::kContextSwitch, PreemptionMechanism::kDrain}) {
    for (const std::string latency : {"instant", "hardware", "hardware"}) {
      spec.preemption = m;
      spec.policy_options = {{"latency", latency}};
      specs.push_back(spec);
    }
  }
  const std::vector<RunResult> results = simulate_all(specs, 2);  // throws on any invariant violation
  for (std::size_t i = 0; i < results.size(); i += 3) {
    nlohmann::json once = results[i + 1];
    nlohmann::json again = results[i + 2];
    once.erase("wall_seconds");
    again.erase("wall_seconds");
    EXPECT_TRUE(once == again) << "two runs with latency=hardware differ";
    EXPECT_EQ(results[i + 1].tbs_completed, results[i].tbs_completed);
    EXPECT_FALSE(results[i + 1].preemptions.empty());
    // The decisions come later: the same schedule at once would mean the latency was not charged.
    nlohmann::json instant = results[i];
    instant.erase("wall_seconds");
    EXPECT_FALSE(instant == once);
  }
}

}  // namespace
}  // namespace gpumux
