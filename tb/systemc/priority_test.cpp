// Priority scheduling (Tanasic 4.2): npq, ppq with context switch and draining, shared and
// exclusive access, end to end in the SystemC model.

#include <gtest/gtest.h>

#include "common/test_support.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

// A low-priority process fills every SM with long thread blocks (13 SMs x 8 TBs, 3 waves of
// 200 us); a second low-priority process queues another such kernel at 20 us; at 50 us a
// high-priority process launches a short kernel needing 2 SMs.
SimulationSpec scenario(const std::string& policy, PreemptionMechanism mechanism,
                        PolicyOptions options = {}) {
  auto long_kernel = test::kernel("long", 13 * 8 * 3, 200.0, 256, 8192);
  auto short_kernel = test::kernel("short", 16, 10.0, 256, 8192);
  SimulationSpec spec;
  spec.gpu = test::k20c();
  spec.policy = policy;
  spec.policy_options = std::move(options);
  spec.preemption = mechanism;
  spec.workload.name = "priority";
  spec.workload.tb_duration = TbDurationMode::kFixed;
  ProcessSpec low = test::process("low", {StreamSpec{{test::launch(long_kernel)}}});
  ProcessSpec queued = test::process("queued", {StreamSpec{{test::launch(long_kernel)}}}, 20.0);
  ProcessSpec high = test::process("high", {StreamSpec{{test::launch(short_kernel)}}}, 50.0);
  high.priority = 1;
  spec.workload.processes = {low, queued, high};
  return spec;
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

TEST(Priority, PpqRejectsUnknownOptions) {
  EXPECT_THROW((void)create_policy("ppq", {{"acess", "shared"}}), InputError);
  EXPECT_THROW((void)create_policy("ppq", {{"access", "sometimes"}}), InputError);
  EXPECT_THROW((void)create_policy("fcfs", {{"access", "shared"}}), InputError);
  EXPECT_NO_THROW((void)create_policy("ppq", {{"access", "exclusive"}}));
}

}  // namespace
}  // namespace gpumux
