// Tanasic's front end (2.1-2.3, 3.3): asynchronous kernel launches, `sync` steps and the per-context
// command buffers between the command dispatcher and the active queue. Every simulation runs in a
// forked child.

#include <gtest/gtest.h>

#include <algorithm>

#include "common/test_support.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

SimulationSpec spec_for(Workload w) {
  SimulationSpec spec;
  spec.gpu = test::k20c();
  spec.workload = std::move(w);
  spec.policy = "fifo";
  return spec;
}

Workload one_process(std::vector<StreamSpec> streams, KernelLaunchMode mode) {
  Workload w;
  w.name = "t";
  w.tb_duration = TbDurationMode::kFixed;
  w.kernel_launch = mode;
  w.processes.push_back(test::process("p", std::move(streams), 0, 1));
  return w;
}

CommandSpec sync_step() {
  CommandSpec c;
  c.kind = CommandKind::kSync;
  return c;
}

const CommandTrace& kernel_command(const RunResult& r, std::size_t n) {
  std::size_t seen = 0;
  for (const CommandTrace& c : r.commands) {
    if (c.kind == static_cast<std::uint8_t>(CommandKind::kKernel) && seen++ == n) return c;
  }
  throw std::logic_error("no such kernel command");
}

// A: 2 waves of 100 us; then 50 us of CPU work; then B.
std::vector<StreamSpec> kernel_cpu_kernel(const std::vector<CommandSpec>& between) {
  auto a = test::kernel("a", 13 * 8 * 2, 100.0, 256, 8192);
  auto b = test::kernel("b", 13 * 8, 10.0, 256, 8192);
  std::vector<CommandSpec> commands{test::launch(a)};
  commands.insert(commands.end(), between.begin(), between.end());
  commands.push_back(test::cpu(50.0));
  commands.push_back(test::launch(b));
  return {StreamSpec{commands}};
}

TEST(FrontEnd, SynchronousLaunchesWaitForEachKernel) {
  const RunResult r = simulate(spec_for(one_process(kernel_cpu_kernel({}), KernelLaunchMode::kSynchronous)));
  ASSERT_EQ(r.kernels.size(), 2U);
  // B is launched after A completed and the CPU phase ran.
  EXPECT_GE(kernel_command(r, 1).queued_ps, r.kernels[0].end_ps + ps_from_ns(50'000));
}

// Tanasic 2.1: commands are sent "as soon as possible": the CPU phase overlaps A, and B waits in the
// stream's hardware queue (in-stream order is kept) instead of at the host.
TEST(FrontEnd, AsynchronousLaunchesOverlapTheHostWithTheGpu) {
  const RunResult r = simulate(spec_for(one_process(kernel_cpu_kernel({}), KernelLaunchMode::kAsynchronous)));
  ASSERT_EQ(r.kernels.size(), 2U);
  EXPECT_LT(kernel_command(r, 1).queued_ps, r.kernels[0].end_ps);
  EXPECT_GE(r.kernels[1].start_ps, r.kernels[0].end_ps);  // one queue: in order
  // The run ends when B does: the stream's end waits for its last launch.
  ASSERT_EQ(r.processes.at(0).runs.size(), 1U);
  EXPECT_EQ(r.processes[0].runs[0].end_ps, r.kernels[1].end_ps);
  EXPECT_LT(r.kernels[1].end_ps, r.kernels[0].end_ps + ps_from_ns(50'000));
}

TEST(FrontEnd, SyncStepWaitsForTheStreamsLaunches) {
  const RunResult r =
      simulate(spec_for(one_process(kernel_cpu_kernel({sync_step()}), KernelLaunchMode::kAsynchronous)));
  ASSERT_EQ(r.kernels.size(), 2U);
  EXPECT_GE(kernel_command(r, 1).queued_ps, r.kernels[0].end_ps + ps_from_ns(50'000));
}

// Tanasic 3.3: one command buffer per context, each storing one command. With one active-queue
// entry, a context's second launch waits in its command buffer and its third at the head of its
// hardware queue: the dispatcher issues it only once the buffer empties (when A ends and B enters the
// active queue). The three launches come from three streams of one context.
TEST(FrontEnd, AContextsCommandBufferHoldsOneLaunch) {
  auto k = test::kernel("k", 13 * 8, 20.0, 256, 8192);
  SimulationSpec spec = spec_for(one_process(
      {StreamSpec{{test::launch(k)}}, StreamSpec{{test::launch(k)}}, StreamSpec{{test::launch(k)}}},
      KernelLaunchMode::kAsynchronous));
  spec.gpu.active_kernels = 1;
  const RunResult r = simulate(spec);
  ASSERT_EQ(r.kernels.size(), 3U);
  std::vector<TimePs> issued;
  for (std::size_t n = 0; n < 3; ++n) issued.push_back(kernel_command(r, n).issued_ps);
  std::sort(issued.begin(), issued.end());
  EXPECT_LT(issued[1], r.kernels[0].end_ps);  // the second went into the buffer at once
  EXPECT_GE(issued[2], r.kernels[0].end_ps);  // the third waited for the buffer to empty
  EXPECT_GE(r.kernels[1].start_ps, r.kernels[0].end_ps);
  EXPECT_GE(r.kernels[2].start_ps, r.kernels[1].end_ps);
}

// Independent kernels of one context (different streams) may be active together (Tanasic 2.3).
TEST(FrontEnd, KernelsOfOneContextRunTogether) {
  auto k = test::kernel("k", 13 * 4, 50.0, 256, 8192);  // half the GPU's thread-block slots
  const RunResult r = simulate(spec_for(one_process(
      {StreamSpec{{test::launch(k)}}, StreamSpec{{test::launch(k)}}}, KernelLaunchMode::kAsynchronous)));
  ASSERT_EQ(r.kernels.size(), 2U);
  EXPECT_LT(std::max(r.kernels[0].start_ps, r.kernels[1].start_ps),
            std::min(r.kernels[0].end_ps, r.kernels[1].end_ps));
}

CommandSpec join_step() {
  CommandSpec c;
  c.kind = CommandKind::kJoin;
  return c;
}

const CommandTrace& command_of_kind(const RunResult& r, CommandKind kind) {
  for (const CommandTrace& c : r.commands) {
    if (c.kind == static_cast<std::uint8_t>(kind)) return c;
  }
  throw std::logic_error("no such command");
}

// A join holds every stream of the process until all of them reach it with nothing outstanding: the
// second stream's kernel is launched only after the first stream's 2-wave kernel has completed.
TEST(FrontEnd, JoinHoldsEveryStreamUntilAllArrive) {
  auto a = test::kernel("a", 13 * 8 * 2, 100.0, 256, 8192);
  auto b = test::kernel("b", 13 * 8, 10.0, 256, 8192);
  for (const KernelLaunchMode mode : {KernelLaunchMode::kSynchronous, KernelLaunchMode::kAsynchronous}) {
    const RunResult r = simulate(spec_for(one_process(
        {StreamSpec{{test::launch(a), join_step()}}, StreamSpec{{join_step(), test::launch(b)}}}, mode)));
    ASSERT_EQ(r.kernels.size(), 2U);
    EXPECT_GE(kernel_command(r, 1).queued_ps, r.kernels[0].end_ps) << to_string(mode);
    EXPECT_EQ(r.processes.at(0).runs.at(0).end_ps, r.kernels[1].end_ps) << to_string(mode);
  }
}

// streams_per_application (docs/validation.md section 10): h2d, A, B, d2h in one stream becomes A and B
// in two streams, running together, between the copies.
TEST(FrontEnd, KernelsDealtOverStreamsRunTogetherBetweenTheCopies) {
  auto a = test::kernel("a", 13 * 4, 50.0, 256, 8192);  // half the GPU's thread-block slots each
  auto b = test::kernel("b", 13 * 4, 50.0, 256, 8192);
  Workload w = one_process({StreamSpec{{test::copy(CommandKind::kHostToDevice, 1 << 20), test::launch(a),
                                        test::launch(b), test::copy(CommandKind::kDeviceToHost, 1 << 20)}}},
                           KernelLaunchMode::kSynchronous);
  const RunResult serial = simulate(spec_for(w));
  ASSERT_EQ(split_kernels_over_streams(w, 2), "");
  ASSERT_EQ(w.processes.at(0).streams.size(), 2U);
  const RunResult split = simulate(spec_for(w));
  ASSERT_EQ(serial.kernels.size(), 2U);
  ASSERT_EQ(split.kernels.size(), 2U);
  EXPECT_GE(serial.kernels[1].start_ps, serial.kernels[0].end_ps);
  EXPECT_LT(std::max(split.kernels[0].start_ps, split.kernels[1].start_ps),
            std::min(split.kernels[0].end_ps, split.kernels[1].end_ps));
  const CommandTrace& h2d = command_of_kind(split, CommandKind::kHostToDevice);
  const CommandTrace& d2h = command_of_kind(split, CommandKind::kDeviceToHost);
  for (const auto& k : split.kernels) {
    EXPECT_GE(k.start_ps, h2d.done_ps);
    EXPECT_GE(d2h.queued_ps, k.end_ps);
  }
  EXPECT_LT(split.processes.at(0).runs.at(0).end_ps, serial.processes.at(0).runs.at(0).end_ps);
}

}  // namespace
}  // namespace gpumux
