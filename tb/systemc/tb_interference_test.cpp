// Memory interference at the thread-block level (memory.tb_interference, sm/tb/bandwidth_penalty.h) and
// the spatial policy it is checked with: exact times where Liang Eq. 3 gives them, nothing moves below the
// peak, compute-bound co-runners leave a kernel alone, preemption under interference loses nothing.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/test_support.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

constexpr TimePs kUs = 1'000'000;

/// One TB per SM (2048 threads), 10 us each, moving `bytes` per TB.
std::shared_ptr<KernelDesc> kernel(const std::string& name, std::uint32_t tbs, double bytes) {
  auto k = test::kernel(name, tbs, 10.0, 2048, 8192);
  k->memory.bytes_per_tb = bytes;
  return k;
}

/// Processes, one kernel each, arriving together, on the 13-SM K20c (208 GB/s) with interference on.
SimulationSpec spec_of(const std::vector<std::shared_ptr<KernelDesc>>& kernels, const std::string& policy,
                       const PolicyOptions& options = {}, bool interference = true) {
  SimulationSpec spec;
  spec.gpu = test::k20c();
  spec.gpu.memory.tb_interference = interference;
  spec.policy = policy;
  spec.policy_options = options;
  spec.workload.name = "interference";
  spec.workload.tb_duration = TbDurationMode::kFixed;
  for (const auto& k : kernels) {
    spec.workload.processes.push_back(test::process(k->name, {StreamSpec{{test::launch(k)}}}));
  }
  return spec;
}

const KernelRecord& record(const RunResult& r, const std::string& name) {
  for (const KernelRecord& k : r.kernels) {
    if (k.name == name) return k;
  }
  throw std::runtime_error("no kernel " + name);
}
TimePs kernel_time(const RunResult& r, std::size_t i) {
  return r.kernels.at(i).end_ps - r.kernels.at(i).start_ps;
}
TimePs kernel_time(const RunResult& r, const std::string& name) {
  return record(r, name).end_ps - record(r, name).start_ps;
}

// 32 GB/s per thread block (320 kB in 10 us): 13 running ask 416 GB/s, twice the peak.
constexpr double kTwiceThePeakOn13 = 320'000;

TEST(TbInterference, OversubscriptionStretchesThreadBlocksByTheExcessDemand) {
  // 26 thread blocks, two waves of 13: each wave at rate 208 / 416 takes 20 us instead of 10.
  const RunResult on = simulate(spec_of({kernel("M", 26, kTwiceThePeakOn13)}, "fcfs"));
  EXPECT_EQ(kernel_time(on, 0), 40 * kUs);
  const RunResult off = simulate(spec_of({kernel("M", 26, kTwiceThePeakOn13)}, "fcfs", {}, false));
  EXPECT_EQ(kernel_time(off, 0), 20 * kUs);
  // A quarter of the demand (104 GB/s) stays under the peak: no change.
  const RunResult under = simulate(spec_of({kernel("M", 26, kTwiceThePeakOn13 / 4)}, "fcfs"));
  EXPECT_EQ(kernel_time(under, 0), 20 * kUs);
  // L2 hits take their share off the DRAM demand: half of 416 GB/s is the peak exactly.
  auto filtered = kernel("M", 26, kTwiceThePeakOn13);
  filtered->memory.l2_hit_percent = 50;
  EXPECT_EQ(kernel_time(simulate(spec_of({filtered}, "fcfs")), 0), 20 * kUs);
}

TEST(TbInterference, SpatialPolicyKeepsEachProcessOnItsSms) {
  // 4 SMs for A, 9 for B: A's 40 thread blocks run in 10 waves, B's 90 in 10.
  const RunResult r =
      simulate(spec_of({kernel("A", 40, 0), kernel("B", 90, 0)}, "spatial", {{"sms", "4:9"}}, false));
  for (std::uint32_t s = 0; s < 13; ++s) {
    EXPECT_EQ(r.sms.at(s).thread_blocks, 10U) << "SM " << s;
  }
  EXPECT_EQ(kernel_time(r, 0), 100 * kUs);
  EXPECT_EQ(kernel_time(r, 1), 100 * kUs);
}

TEST(TbInterference, AMemoryHeavyCoRunnerSlowsAKernelAComputeHeavyOneDoesNot) {
  // Pai 3.4.4's shape at the TB level. C computes (no traffic) on 5 SMs, one wave of 5 thread blocks.
  // Beside M on 8 SMs asking 8 x 52 = 416 GB/s, everything runs at half speed: 20 us.
  const double heavy = 520'000;
  // The two launches reach the SMs a few nanoseconds apart (eps, the front end's work), M first; M is
  // oversubscribed on its own, so it runs at half speed throughout (20 us), and C at half speed until
  // M leaves, eps / 2 of its work left for full speed after: 20 us - eps / 2.
  const RunResult with_memory =
      simulate(spec_of({kernel("C", 5, 0), kernel("M", 8, heavy)}, "spatial", {{"sms", "5:8"}}));
  ASSERT_GE(record(with_memory, "C").start_ps, record(with_memory, "M").start_ps);
  const TimePs eps = record(with_memory, "C").start_ps - record(with_memory, "M").start_ps;
  EXPECT_LT(eps, kUs / 100);
  EXPECT_EQ(kernel_time(with_memory, "M"), 20 * kUs);
  EXPECT_EQ(kernel_time(with_memory, "C"), 20 * kUs - eps / 2);
  // Beside another compute kernel: 10 us.
  const RunResult with_compute =
      simulate(spec_of({kernel("C", 5, 0), kernel("D", 8, 0)}, "spatial", {{"sms", "5:8"}}));
  EXPECT_EQ(kernel_time(with_compute, "C"), 10 * kUs);
  EXPECT_EQ(kernel_time(with_compute, "D"), 10 * kUs);
  // The stats say how long the memory was oversubscribed and what it cost.
  ASSERT_FALSE(with_memory.memory.tb_interference.is_null());
  EXPECT_DOUBLE_EQ(with_memory.memory.tb_interference.at("oversubscribed_ns").get<double>(), 20'000.0);
  // Kernel time lost: M 20 us for 10 us of work, C 20 us - eps / 2 for its 10 us.
  EXPECT_NEAR(with_memory.memory.tb_interference.at("lost_ns").get<double>(),
              20'000.0 - static_cast<double>(eps) / 2e3, 1e-3);
  EXPECT_TRUE(with_compute.memory.tb_interference.at("oversubscribed_ns").get<double>() == 0.0);
}

TEST(TbInterference, ADemandEndingMidWayGivesTheRestBackAtFullSpeed) {
  // M (8 TBs, 5 us alone, 52 GB/s each) leaves after 10 us at half speed; C, starting eps later, does
  // (10 us - eps) / 2 of its work meanwhile and the rest at full speed: 15 us - eps / 2.
  auto m = test::kernel("M", 8, 5.0, 2048, 8192);
  m->memory.bytes_per_tb = 260'000;
  const RunResult r = simulate(spec_of({kernel("C", 5, 0), m}, "spatial", {{"sms", "5:8"}}));
  ASSERT_GE(record(r, "C").start_ps, record(r, "M").start_ps);
  const TimePs eps = record(r, "C").start_ps - record(r, "M").start_ps;
  EXPECT_EQ(kernel_time(r, "M"), 10 * kUs);
  EXPECT_EQ(kernel_time(r, "C"), 15 * kUs - eps / 2);
}

TEST(TbInterference, ASensitiveKernelSlowsByItsCurveWhileAPressingCoRunnerRuns) {
  // Bubble-Up's rule: S (5 SMs) is slowed 2x beside 100 GB/s of bubble-equivalent pressure. P on the
  // other 8 SMs presses 12.5 GB/s per SM (one thread block each: 100 GB/s) and asks no DRAM bandwidth,
  // so Eq. 3 never fires. P leaves after its 10 us; S, starting eps later, does (10 us - eps) / 2 of its
  // work meanwhile and the rest at full speed: 15 us - eps / 2. Beside a P that presses nothing, 10 us.
  const auto sensitive = [] {
    auto k = kernel("S", 5, 0);
    k->interference.sensitivity = {{50.0, 1.5}, {100.0, 2.0}};
    return k;
  };
  auto pressing = kernel("P", 8, 0);
  pressing->interference.pressure_per_sm_gb_per_s = 12.5;
  const RunResult r = simulate(spec_of({sensitive(), pressing}, "spatial", {{"sms", "5:8"}}));
  const TimePs eps = record(r, "S").start_ps - record(r, "P").start_ps;
  ASSERT_LT(eps, kUs / 100);
  EXPECT_EQ(kernel_time(r, "P"), 10 * kUs) << "P has no curve: S's pressure does not slow it";
  EXPECT_EQ(kernel_time(r, "S"), 15 * kUs - eps / 2);
  EXPECT_DOUBLE_EQ(r.memory.tb_interference.at("max_pressure_gb_per_s").get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(r.memory.tb_interference.at("oversubscribed_ns").get<double>(), 0.0);
  const RunResult quiet = simulate(spec_of({sensitive(), kernel("P", 8, 0)}, "spatial", {{"sms", "5:8"}}));
  EXPECT_EQ(kernel_time(quiet, "S"), 10 * kUs);
  // Off, the profiles are ignored.
  const RunResult off = simulate(spec_of({sensitive(), pressing}, "spatial", {{"sms", "5:8"}}, false));
  EXPECT_EQ(kernel_time(off, "S"), 10 * kUs);
}

TEST(TbInterference, PreemptionUnderInterferenceLosesNothingAndRepeats) {
  // A low-priority memory-heavy kernel preempted by a high-priority one (ppq, context switch): every
  // thread block runs once (the run's invariants) and the same inputs give the same times.
  auto low = kernel("low", 60, kTwiceThePeakOn13);
  auto high = kernel("high", 13, kTwiceThePeakOn13 / 2);
  SimulationSpec spec = spec_of({low}, "ppq");
  ProcessSpec urgent = test::process("high", {StreamSpec{{test::launch(high)}}}, 15.0);
  urgent.priority = 1;
  spec.workload.processes.push_back(urgent);
  const RunResult a = simulate(spec);
  const RunResult b = simulate(spec);
  EXPECT_EQ(a.tbs_completed, 73U);
  EXPECT_GT(a.preemptions.size(), 0U);
  EXPECT_EQ(a.end_ps, b.end_ps);
  EXPECT_EQ(kernel_time(a, 1), kernel_time(b, 1));
  // Interference makes it slower than the same run without.
  spec.gpu.memory.tb_interference = false;
  EXPECT_GT(a.end_ps, simulate(spec).end_ps);
}

TEST(TbInterference, SpatialPolicyRefusesAllocationsThatCannotBe) {
  const auto expect_refused = [](const SimulationSpec& spec, const std::string& words) {
    try {
      (void)simulate(spec);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_refused(spec_of({kernel("A", 4, 0), kernel("B", 4, 0)}, "spatial", {{"sms", "4:10"}}),
                 "sms asks for 14 SMs, the GPU has 13");
  expect_refused(spec_of({kernel("A", 4, 0), kernel("B", 4, 0)}, "spatial", {{"sms", "4"}}),
                 "sms lists 1 processes, the workload has 2");
}

}  // namespace
}  // namespace gpumux
