// The TB-level memory-interference clocks (sm/tb/bandwidth_penalty.h): Liang Eq. 3 and Bubble-Up
// sensitivity as per-kernel progress rates, work and time, and who is told when a rate moves.

#include <gtest/gtest.h>

#include <vector>

#include "common/test_support.h"
#include "core/error.h"
#include "sm/tb/bandwidth_penalty.h"

namespace gpumux {
namespace {

constexpr double kPeak = 200e9;  // bytes per second
constexpr KernelId kA{1};
constexpr KernelId kB{2};

class Recorder final : public ProgressRateListener {
 public:
  void on_progress_rate_changed(TimePs now) override { calls.push_back(now); }
  std::vector<TimePs> calls;
};

TbTraffic demand(std::uint64_t bytes_per_s) { return {bytes_per_s, 0}; }
TbTraffic pressure(double gb_per_s) { return {0, static_cast<std::uint64_t>(gb_per_s * 1e9)}; }

KernelDesc plain() { return KernelDesc{}; }

/// A kernel slowed 2x beside 100 GB/s of bubble, 3x beside 150.
KernelDesc sensitive() {
  KernelDesc k;
  k.interference.sensitivity = {{100.0, 2.0}, {150.0, 3.0}};
  return k;
}

TEST(BandwidthPenalty, BelowThePeakWorkIsTime) {
  BandwidthPenalty penalty(kPeak, test::k20c());
  Recorder recorder;
  penalty.add_listener(&recorder);
  const KernelDesc k = plain();
  penalty.add(kA, k, demand(120'000'000'000), 1000);
  penalty.add(kB, k, demand(80'000'000'000), 2000);  // exactly the peak: not oversubscribed
  EXPECT_EQ(penalty.oversubscription_rate(), 1.0);
  ASSERT_NE(penalty.clock(kA), nullptr);
  EXPECT_EQ(penalty.clock(kA)->work_at(123'456'789), 123'456'789U);
  EXPECT_EQ(penalty.clock(kB)->time_of(987'654'321), 987'654'321U);
  EXPECT_TRUE(recorder.calls.empty()) << "no rate moved";
  EXPECT_EQ(penalty.oversubscribed_ps(5000), 0U);
  EXPECT_EQ(penalty.lost_ps(5000), 0U);
}

TEST(BandwidthPenalty, OversubscriptionSlowsEveryoneByTheExcessDemand) {
  BandwidthPenalty penalty(kPeak, test::k20c());
  Recorder recorder;
  penalty.add_listener(&recorder);
  const KernelDesc k = plain();
  penalty.add(kA, k, demand(300'000'000'000), 1'000'000);  // 1.5 x the peak from 1 us
  ASSERT_EQ(recorder.calls, std::vector<TimePs>{1'000'000});
  EXPECT_DOUBLE_EQ(penalty.oversubscription_rate(), 200.0 / 300.0);  // Eq. 3: penalty = demand / Pb
  const WorkClock& a = *penalty.clock(kA);
  // 3 us later two thirds of it is done: work 1 us + 2 us.
  EXPECT_EQ(a.work_at(4'000'000), 3'000'000U);
  // 1 us of alone-speed work from there takes 1.5 us.
  EXPECT_EQ(a.time_of(4'000'000), 5'500'000U);
  // Another kernel at 4 us: 400 GB/s, both at rate 1/2; its clock starts reading work = time.
  penalty.add(kB, k, demand(100'000'000'000), 4'000'000);
  EXPECT_DOUBLE_EQ(a.rate(), 0.5);
  EXPECT_DOUBLE_EQ(penalty.clock(kB)->rate(), 0.5);
  EXPECT_EQ(penalty.clock(kB)->work_at(6'000'000), 5'000'000U);
  penalty.remove(kA, demand(300'000'000'000), 6'000'000);
  EXPECT_EQ(penalty.clock(kA), nullptr) << "the clock goes with the kernel's last thread block";
  EXPECT_EQ(penalty.clock(kB)->rate(), 1.0);
  EXPECT_EQ(recorder.calls, (std::vector<TimePs>{1'000'000, 4'000'000, 6'000'000}));
  EXPECT_EQ(penalty.oversubscribed_ps(9'000'000), 5'000'000U);
  // A lost 6 - 4 us of its 5 us; B lost 1 us of its first 2.
  EXPECT_EQ(penalty.lost_ps(9'000'000), 2'000'000U + 1'000'000U);
  penalty.remove(kB, demand(100'000'000'000), 9'000'000);
  EXPECT_EQ(penalty.lost_ps(12'000'000), 3'000'000U) << "kept after the clocks went";
  EXPECT_EQ(penalty.peak_demand_bytes_per_s(), 400'000'000'000U);
  EXPECT_EQ(penalty.demand_bytes_per_s(), 0U) << "integer demands return to exactly zero";
}

TEST(BandwidthPenalty, ASensitiveKernelSlowsByItsCurveAtTheOthersPressure) {
  BandwidthPenalty penalty(kPeak, test::k20c());
  const KernelDesc a = sensitive();
  const KernelDesc b = plain();
  penalty.add(kA, a, pressure(80.0), 0);
  EXPECT_EQ(penalty.clock(kA)->rate(), 1.0) << "its own pressure does not slow it";
  penalty.add(kB, b, pressure(50.0), 0);
  // Halfway from (0, 1) to (100, 2): 1.5x.
  EXPECT_DOUBLE_EQ(penalty.clock(kA)->rate(), 1.0 / 1.5);
  EXPECT_EQ(penalty.clock(kB)->rate(), 1.0) << "no curve: insensitive, whatever A presses";
  penalty.add(kB, b, pressure(75.0), 0);  // 125 GB/s: halfway from (100, 2) to (150, 3)
  EXPECT_DOUBLE_EQ(penalty.clock(kA)->rate(), 1.0 / 2.5);
  penalty.add(kB, b, pressure(175.0), 0);  // 300 GB/s: beyond the curve, 3 x 300 / 150
  EXPECT_DOUBLE_EQ(penalty.clock(kA)->rate(), 1.0 / 6.0);
  EXPECT_EQ(penalty.peak_pressure_bytes_per_s(), 380'000'000'000U);
}

TEST(BandwidthPenalty, TheSlowerOfTheTwoRulesHolds) {
  BandwidthPenalty penalty(kPeak, test::k20c());
  const KernelDesc a = sensitive();
  const KernelDesc b = plain();
  penalty.add(kA, a, {0, 0}, 0);
  penalty.add(kB, b, {500'000'000'000, 20'000'000'000}, 0);  // Eq. 3: 2/5; sensitivity: 1/1.2
  EXPECT_DOUBLE_EQ(penalty.clock(kA)->rate(), 0.4);
  penalty.remove(kB, {500'000'000'000, 20'000'000'000}, 10);
  penalty.add(kB, b, {100'000'000'000, 150'000'000'000}, 10);  // Eq. 3: 1; sensitivity: 1/3
  EXPECT_DOUBLE_EQ(penalty.clock(kA)->rate(), 1.0 / 3.0);
}

TEST(BandwidthPenalty, SensitivityCurveInterpolates) {
  TbInterferenceProfile m;
  EXPECT_EQ(sensitivity_slowdown(m, 123.0), 1.0) << "no curve";
  m.sensitivity = {{20.0, 1.2}, {60.0, 2.0}};
  EXPECT_EQ(sensitivity_slowdown(m, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(sensitivity_slowdown(m, 10.0), 1.1);
  EXPECT_DOUBLE_EQ(sensitivity_slowdown(m, 20.0), 1.2);
  EXPECT_DOUBLE_EQ(sensitivity_slowdown(m, 40.0), 1.6);
  EXPECT_DOUBLE_EQ(sensitivity_slowdown(m, 90.0), 3.0);
  m.sensitivity = {{0.0, 1.0}, {10.0, 0.98}};  // measured noise below 1 is kept as measured
  EXPECT_DOUBLE_EQ(sensitivity_slowdown(m, 5.0), 0.99);
}

TEST(BandwidthPenalty, PressureIsGivenPerSmAndSharedByTheThreadBlocksThatFillIt) {
  BandwidthPenalty penalty(kPeak, test::k20c());
  // 256 threads and 8192 registers: 8 per K20c SM (65536 registers); 16 KB per TB over 10 us.
  auto k = test::kernel("k", 100, 10.0);
  k->memory.bytes_per_tb = 16'384;
  k->memory.l2_hit_percent = 25;
  k->interference.pressure_per_sm_gb_per_s = 20.0;
  const TbTraffic t = penalty.traffic_of(*k);
  EXPECT_EQ(t.demand, 1'228'800'000U);  // 12288 DRAM bytes / 10 us
  EXPECT_EQ(t.pressure, 2'500'000'000U);
}

TEST(BandwidthPenalty, TimeOfAWorkValueIsWhenTheClockFirstReachesIt) {
  WorkClock clock(0);
  clock.set_rate(2.0 / 7.0, 0);  // not a round number of picoseconds
  for (TimePs work = 1; work < 100'000; work += 997) {
    const TimePs at = clock.time_of(work);
    EXPECT_GE(clock.work_at(at), work) << work;
    EXPECT_LT(clock.work_at(at - 1), work) << work;
  }
}

TEST(BandwidthPenalty, DeferredListenersHearOnlyOfANetChange) {
  BandwidthPenalty penalty(kPeak, test::k20c());
  Recorder recorder;
  penalty.add_listener(&recorder);
  int hooks = 0;
  penalty.set_deferral([&hooks] { ++hooks; });
  const KernelDesc k = plain();
  penalty.add(kA, k, demand(300'000'000'000), 1000);  // oversubscribed: the hook asks for a flush
  EXPECT_EQ(hooks, 1);
  EXPECT_TRUE(recorder.calls.empty());
  EXPECT_DOUBLE_EQ(penalty.clock(kA)->rate(), 200.0 / 300.0) << "the work clock changes at once";
  penalty.flush(1000);
  EXPECT_EQ(recorder.calls, std::vector<TimePs>{1000});
  // A thread block ends and the next starts in one instant: the rate moves and comes back.
  penalty.add(kA, k, demand(100'000'000'000), 5000);
  penalty.remove(kA, demand(100'000'000'000), 5000);
  EXPECT_EQ(hooks, 2) << "one flush asked for, however many changes";
  penalty.flush(5000);
  EXPECT_EQ(recorder.calls.size(), 1U) << "nothing to move";
}

TEST(BandwidthPenalty, RefusesWhatCannotHappen) {
  EXPECT_THROW(BandwidthPenalty(0.0, test::k20c()), InvariantViolation);
  BandwidthPenalty penalty(kPeak, test::k20c());
  const KernelDesc k = plain();
  EXPECT_THROW(penalty.remove(kA, demand(1), 0), InvariantViolation) << "never started";
  penalty.add(kA, k, demand(10), 0);
  EXPECT_THROW(penalty.remove(kA, demand(11), 0), InvariantViolation);
  penalty.add(kA, k, demand(200'000'000'000), 100);  // oversubscribed from 100
  EXPECT_THROW(penalty.add(kA, k, demand(1'000'000'000'000), 50), InvariantViolation)
      << "a change in the past";
}

}  // namespace
}  // namespace gpumux
