// The TB-level memory-interference clock (sm/tb/bandwidth_penalty.h): Liang Eq. 3 as a progress rate,
// work and time, and who is told when the rate moves.

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "sm/tb/bandwidth_penalty.h"

namespace gpumux {
namespace {

constexpr double kPeak = 200e9;  // bytes per second

class Recorder final : public ProgressRateListener {
 public:
  void on_progress_rate_changed(TimePs now) override { calls.push_back(now); }
  std::vector<TimePs> calls;
};

TEST(BandwidthPenalty, BelowThePeakWorkIsTime) {
  BandwidthPenalty penalty(kPeak);
  Recorder recorder;
  penalty.add_listener(&recorder);
  penalty.add_demand(120'000'000'000, 1000);
  penalty.add_demand(80'000'000'000, 2000);  // exactly the peak: not oversubscribed
  EXPECT_EQ(penalty.rate(), 1.0);
  EXPECT_EQ(penalty.work_at(123'456'789), 123'456'789U);
  EXPECT_EQ(penalty.time_of(987'654'321), 987'654'321U);
  EXPECT_TRUE(recorder.calls.empty()) << "the rate never moved";
  EXPECT_EQ(penalty.oversubscribed_ps(5000), 0U);
}

TEST(BandwidthPenalty, OversubscriptionSlowsEveryoneByTheExcessDemand) {
  BandwidthPenalty penalty(kPeak);
  Recorder recorder;
  penalty.add_listener(&recorder);
  penalty.add_demand(300'000'000'000, 1'000'000);  // 1.5 x the peak from 1 us
  ASSERT_EQ(recorder.calls, std::vector<TimePs>{1'000'000});
  EXPECT_DOUBLE_EQ(penalty.rate(), 200.0 / 300.0);  // Eq. 3: penalty = demand / Pb
  // 3 us later two thirds of it is done: work 1 us + 2 us.
  EXPECT_EQ(penalty.work_at(4'000'000), 3'000'000U);
  // 1 us of alone-speed work from there takes 1.5 us.
  EXPECT_EQ(penalty.time_of(4'000'000), 5'500'000U);
  // Back under the peak at 4 us: rate 1, the clock continues from where it was.
  penalty.add_demand(100'000'000'000, 4'000'000);  // 400 GB/s: rate 1/2
  EXPECT_DOUBLE_EQ(penalty.rate(), 0.5);
  penalty.remove_demand(400'000'000'000, 6'000'000);
  EXPECT_EQ(penalty.rate(), 1.0);
  EXPECT_EQ(penalty.work_at(6'000'000), 3'000'000U + 1'000'000U);
  EXPECT_EQ(penalty.time_of(5'000'000), 7'000'000U);
  EXPECT_EQ(recorder.calls, (std::vector<TimePs>{1'000'000, 4'000'000, 6'000'000}));
  EXPECT_EQ(penalty.oversubscribed_ps(9'000'000), 5'000'000U);
  EXPECT_EQ(penalty.lost_ps(9'000'000), 2'000'000U);
  EXPECT_EQ(penalty.peak_demand_bytes_per_s(), 400'000'000'000U);
  EXPECT_EQ(penalty.demand_bytes_per_s(), 0U) << "integer demands return to exactly zero";
}

TEST(BandwidthPenalty, TimeOfAWorkValueIsWhenTheClockFirstReachesIt) {
  BandwidthPenalty penalty(kPeak);
  penalty.add_demand(700'000'000'000, 0);  // rate 2/7: not a round number of picoseconds
  for (TimePs work = 1; work < 100'000; work += 997) {
    const TimePs at = penalty.time_of(work);
    EXPECT_GE(penalty.work_at(at), work) << work;
    EXPECT_LT(penalty.work_at(at - 1), work) << work;
  }
}

TEST(BandwidthPenalty, DeferredListenersHearOnlyOfANetChange) {
  BandwidthPenalty penalty(kPeak);
  Recorder recorder;
  penalty.add_listener(&recorder);
  int hooks = 0;
  penalty.set_deferral([&hooks] { ++hooks; });
  penalty.add_demand(300'000'000'000, 1000);  // oversubscribed: the hook asks for a flush
  EXPECT_EQ(hooks, 1);
  EXPECT_TRUE(recorder.calls.empty());
  EXPECT_DOUBLE_EQ(penalty.rate(), 200.0 / 300.0) << "the work clock changes at once";
  penalty.flush(1000);
  EXPECT_EQ(recorder.calls, std::vector<TimePs>{1000});
  // A thread block ends and the next starts in one instant: the rate moves and comes back.
  penalty.remove_demand(100'000'000'000, 5000);
  penalty.add_demand(100'000'000'000, 5000);
  EXPECT_EQ(hooks, 2) << "one flush asked for, however many changes";
  penalty.flush(5000);
  EXPECT_EQ(recorder.calls.size(), 1U) << "nothing to move";
  EXPECT_EQ(penalty.work_at(5000), 1000U + 4000U * 2 / 3) << "the clock did not lose or gain work";
}

TEST(BandwidthPenalty, RefusesWhatCannotHappen) {
  EXPECT_THROW(BandwidthPenalty(0.0), InvariantViolation);
  BandwidthPenalty penalty(kPeak);
  penalty.add_demand(10, 0);
  EXPECT_THROW(penalty.remove_demand(11, 0), InvariantViolation);
  penalty.add_demand(200'000'000'000, 100);  // oversubscribed from 100
  EXPECT_THROW(penalty.add_demand(1'000'000'000'000, 50), InvariantViolation) << "a change in the past";
}

}  // namespace
}  // namespace gpumux
