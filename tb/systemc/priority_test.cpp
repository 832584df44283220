// Priority scheduling (Tanasic 4.2): npq, ppq with context switch and draining, shared and
// exclusive access, end to end in the SystemC model.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "common/test_support.h"
#include "systemc/priority_scenario.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

SimulationSpec scenario(const std::string& policy, PreemptionMechanism mechanism,
                        PolicyOptions options = {}) {
  return test::priority_scenario(policy, mechanism, std::move(options));
}

double turnaround_us(const RunResult& r, std::size_t process) {
  return static_cast<double>(r.processes[process].runs.at(0).end_ps -
                             r.processes[process].runs.at(0).start_ps) /
         1e6;
}

TEST(Priority, PreemptionShortensTheHighPriorityTurnaround) {
  const std::vector<RunResult> r = simulate_all(
      {scenario("fcfs", PreemptionMechanism::kContextSwitch),
       scenario("npq", PreemptionMechanism::kContextSwitch), scenario("ppq", PreemptionMechanism::kDrain),
       scenario("ppq", PreemptionMechanism::kContextSwitch)},
      2);
  const double fcfs = turnaround_us(r[0], 2);
  const double npq = turnaround_us(r[1], 2);
  const double drain = turnaround_us(r[2], 2);
  const double cs = turnaround_us(r[3], 2);
  // fcfs runs the queued kernel first (about 1.2 ms in all); npq puts the high-priority kernel ahead
  // of it but waits for the running kernel (Tanasic Fig. 2b).
  EXPECT_GT(fcfs, 1150.0);
  EXPECT_GT(npq, 500.0);
  EXPECT_LT(npq, 700.0);
  // Draining waits for the resident TBs of the preempted SMs (up to 200 us); context switch only
  // for the save (8 x 8192 x 4 B at 16 GB/s = 16.4 us) and then runs the 10 us kernel.
  EXPECT_LE(drain, npq);
  EXPECT_LT(cs, drain);
  EXPECT_LT(cs, 60.0);
  EXPECT_TRUE(r[1].preemptions.empty());
  EXPECT_FALSE(r[3].preemptions.empty());
  EXPECT_GT(r[3].tbs_reissued, 0U);
  for (const auto& run : r) EXPECT_EQ(run.tbs_completed, 2U * 13 * 8 * 3 + 16);
}

TEST(Priority, ExclusiveAccessPreemptsEverySmSharedOnlyWhatIsNeeded) {
  PolicyOptions exclusive{{"access", "exclusive"}};
  const std::vector<RunResult> r =
      simulate_all({scenario("ppq", PreemptionMechanism::kContextSwitch),
                    scenario("ppq", PreemptionMechanism::kContextSwitch, exclusive)},
                   2);
  // Shared: the short kernel needs 16 / 8 = 2 SMs. Exclusive: it holds the whole engine.
  EXPECT_EQ(r[0].preemptions.size(), 2U);
  EXPECT_EQ(r[1].preemptions.size(), 13U);
  EXPECT_GE(turnaround_us(r[1], 0), turnaround_us(r[0], 0));
}

// Preemption latencies (issue 11 item 4, Tanasic 3.1-3.2): a context switch drains the pipeline and
// runs the trap routine before the first context write, and the SM is set up for the high-priority
// kernel before its thread blocks run. Each shows in the preemption record, and the high-priority
// turnaround grows by exactly their sum (the save's writes and the thread blocks take as long as
// without them; setups without a preemption cost nothing: sm/sm_setup.h).
TEST(Priority, PreemptionLatenciesAreChargedAndRecorded) {
  SimulationSpec free = scenario("ppq", PreemptionMechanism::kContextSwitch);
  SimulationSpec charged = free;
  charged.gpu.context_switch.drain_cycles = 282;
  charged.gpu.context_switch.trap_cycles = 100;
  charged.gpu.context_switch.setup_cycles = 353;
  const std::vector<RunResult> r = simulate_all({free, charged}, 2);
  const GpuConfig& gpu = charged.gpu;
  const TimePs drain = gpu.cycles_to_ps(282);
  const TimePs trap = gpu.cycles_to_ps(100);
  const TimePs setup = gpu.cycles_to_ps(353);
  ASSERT_EQ(r[0].preemptions.size(), 2U);
  ASSERT_EQ(r[1].preemptions.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    const PreemptionTrace& none = r[0].preemptions[i];
    const PreemptionTrace& p = r[1].preemptions[i];
    EXPECT_EQ(none.drain_ps + none.trap_ps + none.setup_ps, 0);
    EXPECT_EQ(none.save_start_ps, none.requested_ps);
    EXPECT_EQ(p.drain_ps, drain);
    EXPECT_EQ(p.trap_ps, trap);
    EXPECT_EQ(p.save_start_ps, p.requested_ps + drain + trap);
    EXPECT_EQ(p.done_ps - p.save_start_ps, none.done_ps - none.save_start_ps);  // the same writes
    EXPECT_EQ(p.setup_ps, setup);  // set up for the high-priority kernel
  }
  const auto end_of_high = [](const RunResult& run) { return run.processes[2].runs.at(0).end_ps; };
  EXPECT_EQ(end_of_high(r[1]) - end_of_high(r[0]), drain + trap + setup);
  // Per SM: a charged setup on each of the two preempted SMs only.
  std::uint64_t setups = 0;
  for (const SmRecord& sm : r[1].sms) {
    EXPECT_EQ(sm.setup_ps, sm.setups * setup) << "SM " << sm.id;
    setups += sm.setups;
  }
  EXPECT_EQ(setups, 2U);
}

// The timeline keeps preempted work (issue 17 item 5): every stretch a thread block was resident is a
// slice (its run, after a context restore when it resumed), with its run number; preemptions are a
// request instant plus drain, trap routine and save slices carrying their stats.json id; setups are
// slices. Per SM, the slices cover exactly the time the SM was busy (stats.json busy_ns).
TEST(Priority, TimelineKeepsPreemptedWorkAndCoversEachSmsBusyTime) {
  for (const PreemptionMechanism mechanism :
       {PreemptionMechanism::kContextSwitch, PreemptionMechanism::kDrain}) {
    SCOPED_TRACE(to_string(mechanism));
    SimulationSpec spec = scenario("ppq", mechanism);
    spec.gpu.context_switch.drain_cycles = 282;
    spec.gpu.context_switch.trap_cycles = 100;
    spec.gpu.context_switch.setup_cycles = 353;
    spec.timeline_path = (std::filesystem::temp_directory_path() /
                          ("gpumux-priority-timeline-" + std::to_string(::getpid()) + ".json"))
                             .string();
    const RunResult r = simulate(spec);
    std::ifstream in(spec.timeline_path);
    const nlohmann::json trace = nlohmann::json::parse(in);
    std::filesystem::remove(spec.timeline_path);
    ASSERT_FALSE(r.preemptions.empty());

    const auto ps = [](double us) { return static_cast<TimePs>(std::llround(us * 1e6)); };
    std::map<std::uint32_t, std::vector<std::pair<TimePs, TimePs>>> covered;  // per SM
    std::set<std::uint64_t> requests;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::string>> runs;  // (launch, tb)
    std::size_t restores = 0;
    for (const auto& e : trace.at("traceEvents")) {
      if (e.value("pid", 0) != 1) continue;
      const auto sm = static_cast<std::uint32_t>(e.value("tid", std::uint64_t{0}) / 100000);
      if (e.at("ph") == "i") {
        EXPECT_EQ(e.at("name"), "preemption request");
        const auto id = e.at("args").at("preemption").get<std::uint64_t>();
        ASSERT_LT(id, r.preemptions.size());
        EXPECT_EQ(r.preemptions[id].sm, sm);
        EXPECT_EQ(ps(e.at("ts").get<double>()), r.preemptions[id].requested_ps);
        requests.insert(id);
        continue;
      }
      if (e.at("ph") != "X") continue;
      const TimePs start = ps(e.at("ts").get<double>());
      covered[sm].emplace_back(start, start + ps(e.at("dur").get<double>()));
      const std::string cat = e.at("cat");
      if (cat == "restore") ++restores;
      if (cat == "thread block") {
        const auto& a = e.at("args");
        auto& list = runs[{a.at("launch").get<std::uint32_t>(), a.at("tb").get<std::uint32_t>()}];
        EXPECT_EQ(a.at("run").get<std::size_t>(), list.size() + 1);
        list.push_back(a.at("ended"));
      }
    }
    EXPECT_EQ(requests.size(), r.preemptions.size());  // one request per stats.json record
    // Every thread block completes once, in its last run; a context switch stops some first.
    std::size_t preempted_runs = 0;
    for (const auto& [key, list] : runs) {
      ASSERT_FALSE(list.empty());
      EXPECT_EQ(list.back(), "completed");
      preempted_runs += list.size() - 1;
    }
    EXPECT_EQ(runs.size(), r.tbs_completed);
    if (mechanism == PreemptionMechanism::kContextSwitch) {
      EXPECT_EQ(preempted_runs, r.tbs_reissued);
      EXPECT_GT(preempted_runs, 0U);
      EXPECT_EQ(restores, r.tbs_reissued);
    } else {
      EXPECT_EQ(preempted_runs, 0U);
    }
    for (const SmRecord& sm : r.sms) {
      auto& spans = covered[sm.id];
      std::sort(spans.begin(), spans.end());
      TimePs total = 0;
      TimePs open_start = 0;
      TimePs open_end = 0;
      for (const auto& [from, to] : spans) {
        if (from > open_end) {
          total += open_end - open_start;
          open_start = from;
          open_end = to;
        } else {
          open_end = std::max(open_end, to);
        }
      }
      total += open_end - open_start;
      EXPECT_EQ(total, sm.busy_ps) << "SM " << sm.id;
    }
  }
}

TEST(Priority, PpqRejectsUnknownOptions) {
  EXPECT_THROW((void)create_policy("ppq", {{"acess", "shared"}}), InputError);
  EXPECT_THROW((void)create_policy("ppq", {{"access", "sometimes"}}), InputError);
  EXPECT_THROW((void)create_policy("fcfs", {{"access", "shared"}}), InputError);
  EXPECT_NO_THROW((void)create_policy("ppq", {{"access", "exclusive"}}));
}

}  // namespace
}  // namespace gpumux
