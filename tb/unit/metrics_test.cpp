// Multiprogram metrics (Eyerman and Eeckhout; Tanasic 4.1; Pai 6).

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

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

// field_count (core/field_count.h) pins each record to its JSON field list; it must count strings,
// vectors and nested aggregates as one field each.
struct Mixed {
  int a = 0;
  std::string b;
  std::vector<int> c;
  MemoryRecord d;
  double e = 0;
};
static_assert(field_count<Mixed>() == 5);
static_assert(field_count<ProcessRun>() == 2);

RunResult every_field_distinct() {
  RunResult r;
  r.policy = "fcfs";
  r.seed = 3;
  r.copy_policy = "npq";
  r.sm_model = "warp";
  r.warp_scheduler = "gto";
  r.end_ps = 123456789;
  r.tbs_issued = 42;
  r.tbs_completed = 41;
  r.commands_completed = 17;
  r.tbs_reissued = 5;
  r.processes = {{"a", {{1, 2}, {3, 4}}}};
  r.kernels = {{"k", 6, 11, 12, 13, 14, 8, 2, 77}};
  r.preemptions = {{21, 22, 1, 23, 24, 4096}};
  r.commands = {{3, 31, 32, 33, 4097, 35, 36, 37}};
  r.sms = {{51, 99, 52, {71, 72, 73, 74, 75, 76, 77, 78, 79, 80}}};
  r.memory = {61,
              62,
              63,
              64,
              65,
              nlohmann::json{{"model", "dram"}, {"requests", 66}},
              nlohmann::json{{"lost_ns", 67.5}}};
  r.perf_sat = PerfSatResult{
      81, 82, {{83, 84, 85, 86, 87, 88, 89, true, 90, "toggles", {{91, 92, 93, 94, 95, 96, "S_up"}}}}};
  r.wall_seconds = 0.25;
  return r;
}

TEST(RunResult, JsonRoundTrip) {
  const RunResult r = every_field_distinct();
  const RunResult back = nlohmann::json(r).get<RunResult>();
  EXPECT_EQ(nlohmann::json(back).dump(), nlohmann::json(r).dump());
  EXPECT_EQ(back.kernels.at(0).tbs_per_sm, 8U);
  EXPECT_EQ(back.memory.pcie_up_bytes, 65U);
  EXPECT_EQ(back.commands_completed, 17U);
  ASSERT_TRUE(back.perf_sat.has_value());
  EXPECT_EQ(back.perf_sat->records.at(0).samples.at(0).stalled, 93U);
  // Off, Perf-Sat travels as null and comes back absent.
  RunResult off = r;
  off.perf_sat.reset();
  const nlohmann::json j = off;
  EXPECT_TRUE(j.at("perf_sat").is_null());
  EXPECT_FALSE(j.get<RunResult>().perf_sat.has_value());
}

TEST(RunResult, RecordsAreSerialisedByName) {
  const nlohmann::json j = every_field_distinct();
  EXPECT_EQ(j.at("schema_version").get<int>(), kRunResultSchemaVersion);
  EXPECT_EQ(j.at("kernels").at(0).at("tbs_per_sm").get<int>(), 8);
  EXPECT_EQ(j.at("kernels").at(0).at("process").get<int>(), 6);
  EXPECT_EQ(j.at("preemptions").at(0).at("bytes").get<int>(), 4096);
  EXPECT_EQ(j.at("commands").at(0).at("done_ps").get<int>(), 37);
  EXPECT_EQ(j.at("sms").at(0).at("thread_blocks").get<int>(), 52);
  EXPECT_EQ(j.at("memory").at("pcie_down_bytes").get<int>(), 64);
  EXPECT_EQ(j.at("processes").at(0).at("runs").at(1).at("end_ps").get<int>(), 4);
  EXPECT_EQ(j.at("kernels").at(0).at("instructions").get<int>(), 77);
  EXPECT_EQ(j.at("sms").at(0).at("warp").at("idle_barrier").get<int>(), 75);
  EXPECT_EQ(j.at("sms").at(0).at("warp").at("memory_requests").get<int>(), 80);
  EXPECT_EQ(j.at("warp_scheduler").get<std::string>(), "gto");
  EXPECT_EQ(j.at("copy_policy").get<std::string>(), "npq");
  EXPECT_EQ(j.at("perf_sat").at("max_toggles").get<int>(), 82);
  EXPECT_EQ(j.at("perf_sat").at("records").at(0).at("detected").get<int>(), 89);
  EXPECT_EQ(j.at("perf_sat").at("records").at(0).at("settled_by").get<std::string>(), "toggles");
  EXPECT_EQ(j.at("perf_sat").at("records").at(0).at("samples").at(0).at("next").get<int>(), 96);
  EXPECT_EQ(j.at("perf_sat").at("records").at(0).at("samples").at(0).at("state").get<std::string>(), "S_up");
}

TEST(RunResult, MissingFieldOrOtherVersionIsRejected) {
  nlohmann::json missing = every_field_distinct();
  missing["kernels"][0].erase("tbs_per_sm");
  EXPECT_THROW((void)missing.get<RunResult>(), nlohmann::json::exception);
  nlohmann::json old = every_field_distinct();
  old["schema_version"] = kRunResultSchemaVersion + 1;
  EXPECT_THROW((void)old.get<RunResult>(), std::runtime_error);
  nlohmann::json positional = every_field_distinct();
  positional["sms"][0] = {51, 99, 52};  // the pre-schema positional form
  EXPECT_THROW((void)positional.get<RunResult>(), nlohmann::json::exception);
  nlohmann::json no_samples = every_field_distinct();
  no_samples["perf_sat"]["records"][0].erase("samples");
  EXPECT_THROW((void)no_samples.get<RunResult>(), nlohmann::json::exception);
}

}  // namespace
}  // namespace gpumux
