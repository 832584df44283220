// The copy policy of the DMA engines (frontend/copy_policy.h, Tanasic 4.2 / 4.4), end to end through
// host, command queues, dispatcher and DMA engines. Three processes copy host to device on one engine:
// a low-priority bulk copy that starts at once, then a low-priority and a high-priority copy that wait
// for it. fcfs starts the waiting copies in arrival order, npq the high-priority one first; the copy in
// progress is never interrupted, under either policy.
//
// Test K20c (tb/common/test_support.h): PCIe 500 MHz x 32 lanes x 4 bits = 8 GB/s, no latency, so a
// 1 MiB copy takes 131.072 us and the 8 MiB bulk copy 1048.576 us.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/test_support.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

constexpr TimePs kUs = 1'000'000;
constexpr std::uint64_t kMiB = 1U << 20U;
constexpr TimePs kMiBCopyPs = 131'072'000;  // 1 MiB at 8 GB/s: 131.072 us

enum Process : std::size_t { kBulk, kLow, kHigh };

/// bulk (priority 0) at 0 us: 8 MiB; low (priority 0) at 10 us and high (priority `high_priority`)
/// at 20 us: 1 MiB each, host to device (or `kind`).
SimulationSpec scenario(CopyPolicy policy, int high_priority = 1,
                        CommandKind kind = CommandKind::kHostToDevice, std::uint32_t copy_engines = 2) {
  SimulationSpec spec;
  spec.gpu = test::k20c();
  spec.gpu.frontend.copy_engines = copy_engines;
  spec.copy_policy = policy;
  spec.workload.name = "copies";
  spec.workload.tb_duration = TbDurationMode::kFixed;
  ProcessSpec bulk = test::process("bulk", {StreamSpec{{test::copy(CommandKind::kHostToDevice, 8 * kMiB)}}});
  ProcessSpec low = test::process("low", {StreamSpec{{test::copy(kind, kMiB)}}}, 10.0);
  ProcessSpec high = test::process("high", {StreamSpec{{test::copy(kind, kMiB)}}}, 20.0);
  high.priority = high_priority;
  spec.workload.processes = {bulk, low, high};
  return spec;
}

/// The one command of `process`.
const CommandTrace& command_of(const RunResult& r, Process process) {
  for (const CommandTrace& c : r.commands) {
    if (c.process == process) return c;
  }
  throw std::runtime_error("no command of process " + std::to_string(process));
}

TEST(CopyPolicy, NpqStartsTheHighPriorityCopyFirstFcfsInArrivalOrder) {
  const std::vector<RunResult> r = simulate_all({scenario(CopyPolicy::kFcfs), scenario(CopyPolicy::kNpq)}, 2);
  const RunResult& fcfs = r[0];
  const RunResult& npq = r[1];
  EXPECT_EQ(fcfs.copy_policy, "fcfs");
  EXPECT_EQ(npq.copy_policy, "npq");
  for (const RunResult* run : {&fcfs, &npq}) {
    ASSERT_EQ(run->commands.size(), 3U);
    const CommandTrace& bulk = command_of(*run, kBulk);
    const CommandTrace& low = command_of(*run, kLow);
    const CommandTrace& high = command_of(*run, kHigh);
    // Both waiting copies were issued by the dispatcher to the busy engine within their first
    // microseconds (they wait in its DMA queue, not in the command queues).
    EXPECT_LT(low.issued_ps, 11 * kUs);
    EXPECT_LT(high.issued_ps, 21 * kUs);
    EXPECT_GT(bulk.done_ps, 1048 * kUs);
    EXPECT_LT(bulk.done_ps, 1050 * kUs);
  }
  // The copy in progress is never interrupted: the bulk copy ends at the same time under both policies
  // although a higher-priority copy waited for it under npq.
  EXPECT_EQ(command_of(fcfs, kBulk).done_ps, command_of(npq, kBulk).done_ps);
  const TimePs bulk_done = command_of(npq, kBulk).done_ps;
  // fcfs: low (arrived first), then high.
  EXPECT_LT(command_of(fcfs, kLow).done_ps, command_of(fcfs, kHigh).done_ps);
  EXPECT_NEAR(static_cast<double>(command_of(fcfs, kLow).done_ps - bulk_done), kMiBCopyPs, 1e-3 * kMiBCopyPs);
  EXPECT_NEAR(static_cast<double>(command_of(fcfs, kHigh).done_ps - bulk_done), 2.0 * kMiBCopyPs,
              2e-3 * kMiBCopyPs);
  // npq: high first, though it arrived 10 us after low; low takes high's place.
  EXPECT_LT(command_of(npq, kHigh).done_ps, command_of(npq, kLow).done_ps);
  EXPECT_EQ(command_of(npq, kHigh).done_ps, command_of(fcfs, kLow).done_ps);
  EXPECT_EQ(command_of(npq, kLow).done_ps, command_of(fcfs, kHigh).done_ps);
  // The high-priority process's turnaround shrinks by one copy, the low one's grows by as much.
  const auto turnaround = [](const RunResult& run, Process p) {
    return run.processes.at(p).runs.at(0).end_ps - run.processes.at(p).runs.at(0).start_ps;
  };
  EXPECT_EQ(turnaround(fcfs, kHigh) - turnaround(npq, kHigh), turnaround(npq, kLow) - turnaround(fcfs, kLow));
  EXPECT_GT(turnaround(fcfs, kHigh) - turnaround(npq, kHigh), kMiBCopyPs * 99 / 100);
}

TEST(CopyPolicy, NpqWithEqualPrioritiesIsFcfs) {
  // One priority: npq's ties go in arrival order, so every number equals fcfs's.
  const std::vector<RunResult> r =
      simulate_all({scenario(CopyPolicy::kFcfs, 0), scenario(CopyPolicy::kNpq, 0)}, 2);
  nlohmann::json fcfs = r[0];
  nlohmann::json npq = r[1];
  for (nlohmann::json* j : {&fcfs, &npq}) {
    j->erase("copy_policy");
    j->erase("wall_seconds");
  }
  EXPECT_EQ(fcfs.dump(), npq.dump());
}

TEST(CopyPolicy, OneCopyEngineOrdersBothDirections) {
  // With one copy engine (copy_engines: 1) device-to-host copies wait in the same DMA queue as the
  // bulk host-to-device copy, and npq orders them the same way.
  const std::vector<RunResult> r =
      simulate_all({scenario(CopyPolicy::kFcfs, 1, CommandKind::kDeviceToHost, 1),
                    scenario(CopyPolicy::kNpq, 1, CommandKind::kDeviceToHost, 1)},
                   2);
  EXPECT_LT(command_of(r[0], kLow).done_ps, command_of(r[0], kHigh).done_ps);
  EXPECT_LT(command_of(r[1], kHigh).done_ps, command_of(r[1], kLow).done_ps);
  EXPECT_EQ(command_of(r[0], kBulk).done_ps, command_of(r[1], kBulk).done_ps);
  EXPECT_GT(command_of(r[1], kHigh).done_ps, command_of(r[1], kBulk).done_ps + kMiBCopyPs * 99 / 100);
}

}  // namespace
}  // namespace gpumux
