// Multiprogram metrics (Eyerman and Eeckhout; Tanasic 4.1; Pai 6).

#include <gtest/gtest.h>

#include <stdexcept>

#include "metrics/multiprogram_metrics.h"
#include "metrics/run_result.h"

namespace gpumux {
namespace {

TEST(Metrics, AloneEveryoneIsAtOne) {
  const MultiprogramMetrics m = compute_metrics({{100, 100}, {50, 50}});
  EXPECT_DOUBLE_EQ(m.antt, 1.0);
  EXPECT_DOUBLE_EQ(m.stp, 2.0);
  EXPECT_DOUBLE_EQ(m.fairness, 1.0);
}

TEST(Metrics, WorkedExample) {
  // A slowed 2x, B slowed 4x: NTT 2 and 4, ANTT 3, STP 1/2 + 1/4, fairness 2/4.
  const MultiprogramMetrics m = compute_metrics({{10, 20}, {30, 120}});
  ASSERT_EQ(m.ntt.size(), 2U);
  EXPECT_DOUBLE_EQ(m.ntt[0], 2.0);
  EXPECT_DOUBLE_EQ(m.ntt[1], 4.0);
  EXPECT_DOUBLE_EQ(m.antt, 3.0);
  EXPECT_DOUBLE_EQ(m.stp, 0.75);
  EXPECT_DOUBLE_EQ(m.fairness, 0.5);
}

TEST(Metrics, RejectsEmptyAndNonPositiveTimes) {
  EXPECT_THROW((void)compute_metrics({}), std::invalid_argument);
  EXPECT_THROW((void)compute_metrics({{0, 10}}), std::invalid_argument);
  EXPECT_THROW((void)compute_metrics({{10, -1}}), std::invalid_argument);
}

TEST(Metrics, MeanTurnaroundAveragesCompletedRuns) {
  ProcessResult p{"x", {{0, 10}, {10, 40}}};
  EXPECT_DOUBLE_EQ(mean_turnaround_ps(p), 20.0);
  EXPECT_DOUBLE_EQ(mean_turnaround_ps(ProcessResult{"y", {}}), 0.0);
}

TEST(RunResult, JsonRoundTrip) {
  RunResult r;
  r.policy = "fcfs";
  r.seed = 3;
  r.end_ps = 123456789;
  r.tbs_issued = r.tbs_completed = 42;
  r.processes = {{"a", {{1, 2}, {3, 4}}}};
  r.kernels = {{"k", 0, 1, 2, 3, 42, 8, 2}};
  r.preemptions = {{1, 0, 1, 10, 20, 4096}};
  r.tbs_reissued = 5;
  r.commands = {{3, 0, 1, 2, 4096, 5, 6, 7}};
  r.sms = {{0, 99, 42}};
  r.memory = {1, 2, 3, 4, 5};
  const RunResult back = nlohmann::json(r).get<RunResult>();
  EXPECT_EQ(nlohmann::json(back).dump(), nlohmann::json(r).dump());
}

}  // namespace
}  // namespace gpumux
