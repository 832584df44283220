// Policy leaky-bucket (Liang 4.1, Figs. 4-5) end to end: two kernels whose thread blocks each fill an
// SM share 12 SMs; the SMs each kernel holds over time (from the timeline) must follow the asked
// shares within one SM after start-up, and rate compensation must restore that when the kernels'
// thread blocks take different times.

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_support.h"
#include "core/error.h"
#include "policy/registry.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

constexpr std::uint32_t kSms = 12;

struct Held {
  double mean[2] = {0, 0};           ///< time-weighted SMs held per kernel in the window
  double max_deviation[2] = {0, 0};  ///< largest |held - target| at any time in the window
  double window_us = 0;
};

std::string temp_path(const std::string& tag) {
  return "/tmp/gpumux_leaky_bucket_" + tag + "_" + std::to_string(getpid()) + ".json";
}

/// Two processes, one kernel each (A, B), arriving together; every thread block needs a whole SM.
SimulationSpec scenario(const std::string& shares, const std::string& compensate, double tb_a_us,
                        double tb_b_us, const std::string& timeline) {
  SimulationSpec spec;
  spec.gpu = test::k20c();
  spec.gpu.num_sms = kSms;
  spec.gpu.active_kernels = kSms;
  spec.policy = "leaky-bucket";
  spec.policy_options = {{"shares", shares}, {"compensate", compensate}};
  spec.workload.name = "leaky-bucket";
  spec.workload.tb_duration = TbDurationMode::kFixed;
  auto a = test::kernel("A", 1200, tb_a_us, 2048, 8192);
  auto b = test::kernel("B", 1200, tb_b_us, 2048, 8192);
  spec.workload.processes = {test::process("pa", {StreamSpec{{test::launch(a)}}}),
                             test::process("pb", {StreamSpec{{test::launch(b)}}})};
  spec.timeline_path = timeline;
  return spec;
}

/// SMs held by kernels A and B over [start-up, first kernel out of thread blocks], from the timeline.
Held held_from_timeline(const std::string& path, double startup_us, const double target[2]) {
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  struct Edge {
    double t;
    int delta;
    int kernel;
  };
  std::vector<Edge> edges;
  double last_start[2] = {0, 0};
  for (const auto& e : trace.at("traceEvents")) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "thread block") continue;
    const std::string name = e.at("name");
    const int k = name == "A" ? 0 : 1;
    // Whole nanoseconds: the trace's microsecond doubles would otherwise leave sub-picosecond gaps
    // and overlaps where one thread block ends and the next starts.
    const double ts = std::round(e.at("ts").get<double>() * 1000.0) / 1000.0;
    const double end = std::round((e.at("ts").get<double>() + e.at("dur").get<double>()) * 1000.0) / 1000.0;
    edges.push_back({ts, +1, k});
    edges.push_back({end, -1, k});
    last_start[k] = std::max(last_start[k], ts);
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
    return x.t != y.t ? x.t < y.t : x.delta < y.delta;  // ends before starts at the same instant
  });
  const double t0 = startup_us;
  const double t1 = std::min(last_start[0], last_start[1]);
  Held h;
  h.window_us = t1 - t0;
  int held[2] = {0, 0};
  double prev = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const double t = edges[i].t;
    const double lo = std::max(prev, t0);
    const double hi = std::min(t, t1);
    if (hi > lo) {
      for (int k = 0; k < 2; ++k) {
        h.mean[k] += held[k] * (hi - lo);
        h.max_deviation[k] = std::max(h.max_deviation[k], std::abs(held[k] - target[k]));
      }
    }
    held[edges[i].kernel] += edges[i].delta;
    prev = t;
  }
  for (double& m : h.mean) m /= h.window_us;
  return h;
}

Held run(const std::string& tag, const std::string& shares, const std::string& compensate, double tb_a,
         double tb_b, const double target[2]) {
  const std::string path = temp_path(tag);
  const RunResult r = simulate(scenario(shares, compensate, tb_a, tb_b, path));
  EXPECT_EQ(r.tbs_completed, 2400U);
  // Start-up: the first two waves of the longer thread blocks.
  const Held h = held_from_timeline(path, 2 * std::max(tb_a, tb_b), target);
  std::remove(path.c_str());
  std::printf(
      "leaky-bucket %-6s shares %s, TB %.0f/%.0f us: SMs held A %.2f (target %.0f, worst %+.0f), B %.2f "
      "(target %.0f, worst %+.0f)\n",
      tag.c_str(), shares.c_str(), tb_a, tb_b, h.mean[0], target[0], h.max_deviation[0], h.mean[1], target[1],
      h.max_deviation[1]);
  EXPECT_GT(h.window_us, 20 * std::max(tb_a, tb_b)) << tag;
  return h;
}

TEST(LeakyBucket, EqualThreadBlockTimesHoldTheAskedShareWithinOneSm) {
  for (const auto& [shares, a, b] : std::vector<std::tuple<std::string, double, double>>{
           {"1:1", 6, 6}, {"3:1", 9, 3}, {"2:1", 8, 4}, {"1:2", 4, 8}}) {
    const double target[2] = {a, b};
    const Held h = run("equal", shares, "on", 10.0, 10.0, target);
    for (int k = 0; k < 2; ++k) {
      EXPECT_LE(h.max_deviation[k], 1.0) << "shares " << shares << " kernel " << k << " mean " << h.mean[k];
      EXPECT_NEAR(h.mean[k], target[k], 1.0) << "shares " << shares << " kernel " << k;
    }
  }
}

TEST(LeakyBucket, RateCompensationRestoresTheShareForUnequalThreadBlockTimes) {
  // A's thread blocks take twice as long as B's. Without compensation equal issue rates give A two
  // thirds of the SMs (Little's law); compensation halves A's fill rate.
  const double target[2] = {6, 6};
  const Held off = run("off", "1:1", "off", 20.0, 10.0, target);
  EXPECT_GT(off.mean[0], target[0] + 1.0) << "without compensation A holds " << off.mean[0];
  const Held on = run("on", "1:1", "on", 20.0, 10.0, target);
  for (int k = 0; k < 2; ++k) {
    EXPECT_NEAR(on.mean[k], target[k], 1.0) << "kernel " << k;
    EXPECT_LE(on.max_deviation[k], 1.0) << "kernel " << k << " mean " << on.mean[k];
  }
}

TEST(LeakyBucket, RejectsBadOptions) {
  EXPECT_THROW((void)create_policy("leaky-bucket", {{"shares", "1:0"}}), InputError);
  EXPECT_THROW((void)create_policy("leaky-bucket", {{"shares", "1:"}}), InputError);
  EXPECT_THROW((void)create_policy("leaky-bucket", {{"shares", "a"}}), InputError);
  EXPECT_THROW((void)create_policy("leaky-bucket", {{"compensate", "maybe"}}), InputError);
  EXPECT_THROW((void)create_policy("leaky-bucket", {{"share", "1:1"}}), InputError);
  EXPECT_NO_THROW((void)create_policy("leaky-bucket", {{"shares", "3:1"}, {"compensate", "off"}}));
}

}  // namespace
}  // namespace gpumux
