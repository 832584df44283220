// End-to-end behaviour of the SystemC model with the fcfs policy: staircase timing, dispatcher
// rules, replay, determinism and invariants. Every simulation runs in a forked child.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/test_support.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

using test::k20c;

SimulationSpec spec_for(Workload w, const std::string& policy = "fcfs") {
  SimulationSpec spec;
  spec.gpu = k20c();
  spec.workload = std::move(w);
  spec.policy = policy;
  return spec;
}

Workload one_process(std::vector<StreamSpec> streams, std::uint32_t repeat = 1) {
  Workload w;
  w.name = "t";
  w.tb_duration = TbDurationMode::kFixed;
  w.processes.push_back(test::process("p", std::move(streams), 0, repeat));
  return w;
}

// Pai Eq. 1: with fixed TB time t and R resident TBs per SM, B TBs take ceil(B / (N_SM * R)) waves.
TEST(Model, SingleKernelFollowsTheStaircase) {
  auto k = test::kernel("k", 1000, 10.0, 256, 8192);  // 8 TBs/SM by registers
  const RunResult r = simulate(spec_for(one_process({StreamSpec{{test::launch(k)}}})));
  ASSERT_EQ(r.kernels.size(), 1U);
  const double waves = std::ceil(1000.0 / (13 * 8));
  const double runtime_us = static_cast<double>(r.kernels[0].end_ps - r.kernels[0].start_ps) / 1e6;
  EXPECT_DOUBLE_EQ(runtime_us, waves * 10.0);
  EXPECT_EQ(r.kernels[0].tbs_per_sm, 8U);
  EXPECT_EQ(r.tbs_issued, 1000U);
  EXPECT_EQ(r.tbs_completed, 1000U);
  std::uint64_t per_sm = 0;
  for (const auto& sm : r.sms) per_sm += sm.thread_blocks;
  EXPECT_EQ(per_sm, 1000U);
}

TEST(Model, CommandsOfOneStreamRunInOrder) {
  auto k = test::kernel("k", 100, 5.0);
  const RunResult r = simulate(
      spec_for(one_process({StreamSpec{{test::copy(CommandKind::kHostToDevice, 1 << 20), test::launch(k),
                                        test::copy(CommandKind::kDeviceToHost, 1 << 20)}}})));
  ASSERT_EQ(r.commands.size(), 3U);
  EXPECT_EQ(r.commands[0].kind, static_cast<std::uint8_t>(CommandKind::kHostToDevice));
  EXPECT_EQ(r.commands[1].kind, static_cast<std::uint8_t>(CommandKind::kKernel));
  EXPECT_EQ(r.commands[2].kind, static_cast<std::uint8_t>(CommandKind::kDeviceToHost));
  EXPECT_GE(r.commands[1].issued_ps, r.commands[0].done_ps);
  EXPECT_GE(r.commands[2].issued_ps, r.commands[1].done_ps);
  EXPECT_GE(r.kernels[0].start_ps, r.commands[0].done_ps);
  // 1 MiB over an 8 GB/s link takes about 131 us.
  const double copy_us = static_cast<double>(r.commands[0].done_ps - r.commands[0].issued_ps) / 1e6;
  EXPECT_NEAR(copy_us, 1048576.0 / 8e9 * 1e6, 2.0);
}

TEST(Model, DifferentQueuesAndEnginesRunConcurrently) {
  auto k = test::kernel("long", 13 * 8 * 4, 50.0);  // 200 us of compute
  const RunResult r = simulate(spec_for(one_process(
      {StreamSpec{{test::launch(k)}}, StreamSpec{{test::copy(CommandKind::kHostToDevice, 1 << 20)}}})));
  ASSERT_EQ(r.commands.size(), 2U);
  const auto kernel_cmd = std::find_if(r.commands.begin(), r.commands.end(), [](const CommandTrace& c) {
    return c.kind == static_cast<std::uint8_t>(CommandKind::kKernel);
  });
  const auto copy_cmd = std::find_if(r.commands.begin(), r.commands.end(), [](const CommandTrace& c) {
    return c.kind == static_cast<std::uint8_t>(CommandKind::kHostToDevice);
  });
  EXPECT_NE(kernel_cmd->queue, copy_cmd->queue);
  // The copy ran while the kernel ran.
  EXPECT_LT(copy_cmd->issued_ps, kernel_cmd->done_ps);
  EXPECT_LT(kernel_cmd->issued_ps, copy_cmd->done_ps);
}

TEST(Model, StreamsSharingOneQueueAreSerialized) {
  auto k = test::kernel("long", 13 * 8 * 4, 50.0);
  SimulationSpec spec = spec_for(one_process(
      {StreamSpec{{test::launch(k)}}, StreamSpec{{test::copy(CommandKind::kHostToDevice, 1 << 20)}}}));
  spec.gpu.frontend.command_queues = 1;
  const RunResult r = simulate(spec);
  ASSERT_EQ(r.commands.size(), 2U);
  EXPECT_EQ(r.commands[0].queue, r.commands[1].queue);
  EXPECT_GE(r.commands[1].issued_ps, r.commands[0].done_ps);
}

TEST(Model, FcfsRunsKernelsOfDifferentProcessesOneAfterTheOther) {
  auto a = test::kernel("a", 13 * 8 * 2, 20.0);
  auto b = test::kernel("b", 13 * 8 * 2, 20.0);
  Workload w;
  w.name = "two";
  w.tb_duration = TbDurationMode::kFixed;
  w.processes.push_back(test::process("pa", {StreamSpec{{test::launch(a)}}}, 0));
  w.processes.push_back(test::process("pb", {StreamSpec{{test::launch(b)}}}, 1));
  const RunResult r = simulate(spec_for(w));
  ASSERT_EQ(r.kernels.size(), 2U);
  // Tanasic 2.3: no two contexts on the engine at once.
  EXPECT_GE(r.kernels[1].start_ps, r.kernels[0].end_ps);
}

TEST(Model, FifoLetsTheNextKernelShareSms) {
  auto a = test::kernel("a", 13 * 8 + 5, 20.0);  // last wave leaves most SMs free
  auto b = test::kernel("b", 13 * 8, 20.0);
  Workload w;
  w.name = "two";
  w.tb_duration = TbDurationMode::kFixed;
  w.processes.push_back(test::process("pa", {StreamSpec{{test::launch(a)}}}, 0));
  w.processes.push_back(test::process("pb", {StreamSpec{{test::launch(b)}}}, 1));
  SimulationSpec spec = spec_for(w, "fifo");
  spec.gpu.sm.max_resident_kernels = 8;
  const RunResult r = simulate(spec);
  ASSERT_EQ(r.kernels.size(), 2U);
  EXPECT_LT(r.kernels[1].start_ps, r.kernels[0].end_ps);
}

TEST(Model, ProcessesReplayAndReportEveryRun) {
  auto k = test::kernel("k", 50, 5.0);
  const RunResult r = simulate(spec_for(one_process({StreamSpec{{test::launch(k, 3), test::cpu(10)}}}, 4)));
  ASSERT_EQ(r.processes.size(), 1U);
  ASSERT_EQ(r.processes[0].runs.size(), 4U);
  EXPECT_EQ(r.kernels.size(), 12U);
  for (std::size_t i = 1; i < r.processes[0].runs.size(); ++i) {
    EXPECT_EQ(r.processes[0].runs[i].start_ps, r.processes[0].runs[i - 1].end_ps);
  }
}

TEST(Model, ReplayUntilAllDoneKeepsShortProcessesBusy) {
  auto short_k = test::kernel("s", 13, 5.0);
  auto long_k = test::kernel("l", 13 * 8 * 10, 50.0);
  Workload w;
  w.name = "replay";
  w.replay = ReplayMode::kUntilAllDone;
  w.processes.push_back(test::process("short", {StreamSpec{{test::launch(short_k), test::cpu(20)}}}, 0, 3));
  // The long process leaves the GPU free during its CPU phases; the short one replays meanwhile.
  w.processes.push_back(test::process("long", {StreamSpec{{test::launch(long_k), test::cpu(300)}}}, 0, 3));
  const RunResult r = simulate(spec_for(w, "fifo"));
  EXPECT_GE(r.processes[1].runs.size(), 3U);
  EXPECT_GT(r.processes[0].runs.size(), 3U);
}

TEST(Model, SameSeedGivesIdenticalResults) {
  auto k = test::kernel("k", 3000, 4.0, 256, 8192, 0, 20.0);
  Workload w = one_process({StreamSpec{{test::launch(k, 2)}}});
  w.tb_duration = TbDurationMode::kProfile;
  SimulationSpec spec = spec_for(w);
  spec.seed = 7;
  RunResult a = simulate(spec);
  RunResult b = simulate(spec);
  a.wall_seconds = b.wall_seconds = 0;
  EXPECT_EQ(nlohmann::json(a).dump(), nlohmann::json(b).dump());
  spec.seed = 8;
  RunResult c = simulate(spec);
  c.wall_seconds = 0;
  EXPECT_NE(nlohmann::json(a).dump(), nlohmann::json(c).dump());
}

TEST(Model, LognormalDurationsKeepTheMean) {
  auto k = test::kernel("k", 13 * 8 * 50, 10.0, 256, 8192, 0, 30.0);
  Workload w = one_process({StreamSpec{{test::launch(k)}}});
  w.tb_duration = TbDurationMode::kProfile;
  const RunResult r = simulate(spec_for(w));
  double busy = 0;
  for (const auto& sm : r.sms) busy += static_cast<double>(sm.busy_ps);
  // Each SM stays full until the tail, so mean TB time ~ busy * 8 / TBs.
  const double mean_us = busy * 8.0 / (13.0 * 8 * 50) / 1e6;
  EXPECT_NEAR(mean_us, 10.0, 0.5);
}

TEST(Model, TbRsdOverrideSpreadsAKernelThatHasNone) {
  // One full wave (13 SMs x 8 TBs) of 10 us blocks: with no spread the kernel lasts exactly 10 us;
  // with 30% RSD imposed by tb_rsd_percent it lasts as long as its slowest of 104 lognormal blocks.
  auto k = test::kernel("k", 13 * 8, 10.0, 256, 8192, 0, 0.0);
  Workload plain = one_process({StreamSpec{{test::launch(k)}}});
  plain.tb_duration = TbDurationMode::kProfile;
  Workload spread = plain;
  override_tb_rsd(spread, 30.0);
  EXPECT_DOUBLE_EQ(k->tb_time.rsd_percent, 0.0);  // the shared kernel is not modified

  const auto span_us = [](const RunResult& r) {
    const KernelRecord& kr = r.kernels.at(0);
    return static_cast<double>(kr.end_ps - kr.start_ps) / 1e6;
  };
  EXPECT_DOUBLE_EQ(span_us(simulate(spec_for(plain))), 10.0);
  const double spread_us = span_us(simulate(spec_for(spread)));
  EXPECT_GT(spread_us, 13.0);  // the expected maximum of 104 draws at 30% RSD is about 18 us
  EXPECT_LT(spread_us, 40.0);
}

}  // namespace
}  // namespace gpumux
