// Nothing is lost under preemption: seeded random workloads through every registered policy and
// both preemption mechanisms. Each simulation checks its invariants itself (every thread block
// issued once and completed exactly once, preempted ones resumed rather than restarted; SM
// resources back to zero; no SM left reserved or busy; tokens conserved for token policies; a run
// whose events run out before the workload finishes fails, naming the stuck streams and SMs); this
// test adds the end-to-end counts. GPUMUX_PROPERTY_WORKLOADS sets how many workloads (default 150;
// each runs under every policy variant and mechanism). A failure prints the seed to reproduce it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/test_support.h"
#include "core/rng.h"
#include "policy/registry.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

struct Generated {
  SimulationSpec spec;
};

Generated random_workload(std::uint64_t seed) {
  Rng rng(seed, 0xBEEF);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng.below(hi - lo + 1); };
  Generated g;
  GpuConfig gpu = test::k20c();
  gpu.num_sms = static_cast<std::uint32_t>(pick(1, 16));
  gpu.active_kernels = gpu.num_sms;
  gpu.sm.max_resident_kernels = rng.below(3) == 0 ? 4 : 1;
  gpu.frontend.command_queues = static_cast<std::uint32_t>(pick(1, 8));
  g.spec.gpu = gpu;
  g.spec.seed = seed;
  g.spec.wall_timeout_s = 20;

  std::vector<std::shared_ptr<KernelDesc>> pool;
  const auto kinds = pick(1, 5);
  for (std::uint64_t i = 0; i < kinds; ++i) {
    const auto threads = static_cast<std::uint32_t>(32 * pick(1, 32));
    const auto regs = static_cast<std::uint32_t>(threads * pick(8, 63));
    const auto smem = static_cast<std::uint32_t>(rng.below(2) == 0 ? 0 : 256 * pick(1, 64));
    pool.push_back(test::kernel("k" + std::to_string(i), static_cast<std::uint32_t>(pick(1, 300)),
                                static_cast<double>(pick(1, 60)), threads, std::min(regs, 65536U), smem,
                                static_cast<double>(rng.below(50))));
  }
  Workload& w = g.spec.workload;
  w.name = "random-" + std::to_string(seed);
  w.tb_duration = rng.below(2) == 0 ? TbDurationMode::kFixed : TbDurationMode::kProfile;
  w.replay = rng.below(4) == 0 ? ReplayMode::kUntilAllDone : ReplayMode::kFixed;
  w.replay_limit = 8;  // starvation under priority policies must still end
  const auto processes = pick(1, 5);
  for (std::uint64_t p = 0; p < processes; ++p) {
    std::vector<StreamSpec> streams(pick(1, 2));
    for (auto& stream : streams) {
      const auto commands = pick(1, 4);
      for (std::uint64_t c = 0; c < commands; ++c) {
        switch (rng.below(4)) {
          case 0:
            stream.commands.push_back(test::cpu(static_cast<double>(pick(1, 50))));
            break;
          case 1:
            stream.commands.push_back(
                test::copy(rng.below(2) == 0 ? CommandKind::kHostToDevice : CommandKind::kDeviceToHost,
                           4096 * pick(1, 64)));
            break;
          default: {
            const auto& k = pool[rng.below(pool.size())];
            stream.commands.push_back(test::launch(k, static_cast<std::uint32_t>(pick(1, 3))));
          }
        }
      }
    }
    ProcessSpec proc = test::process("p" + std::to_string(p), streams, static_cast<double>(rng.below(200)),
                                     static_cast<std::uint32_t>(pick(1, 2)));
    proc.priority = static_cast<int>(rng.below(3));
    if (rng.below(4) == 0) proc.tokens = static_cast<int>(pick(1, gpu.num_sms));
    w.processes.push_back(proc);
  }
  return g;
}

/// What the workload asks for, counted from the Workload itself (never from the run's record, so a
/// lost launch or thread block fails the counts): per process, kernel launches x grid sizes of one
/// run, times its runs.
struct Expected {
  std::uint64_t launches = 0;
  std::uint64_t thread_blocks = 0;
};

Expected per_run(const ProcessSpec& p) {
  Expected e;
  for (const StreamSpec& s : p.streams) {
    for (const CommandSpec& c : s.commands) {
      if (c.kind != CommandKind::kKernel) continue;
      e.launches += c.launches;
      e.thread_blocks += std::uint64_t{c.launches} * c.kernel->thread_blocks;
    }
  }
  return e;
}

/// Runs of each process: `repeat` (replay fixed); under until_all_done the number of replays depends
/// on the schedule, so it is the number of runs the record holds (every started run completes), which
/// `check_counts` bounds by [repeat, max(repeat, replay_limit)]; each run's launches and thread blocks
/// still come from the workload.
Expected expected_counts(const Workload& w, const RunResult& r) {
  Expected total;
  for (std::size_t p = 0; p < w.processes.size(); ++p) {
    const std::uint64_t runs =
        w.replay == ReplayMode::kFixed ? w.processes[p].repeat : r.processes.at(p).runs.size();
    const Expected one = per_run(w.processes[p]);
    total.launches += runs * one.launches;
    total.thread_blocks += runs * one.thread_blocks;
  }
  return total;
}

/// The end-to-end counts of one run against its workload.
void check_counts(const Workload& w, const RunResult& r, const std::string& label) {
  const Expected e = expected_counts(w, r);
  EXPECT_EQ(r.kernels.size(), e.launches) << label << ": kernel launches";
  EXPECT_EQ(r.tbs_issued, e.thread_blocks) << label << ": thread blocks issued";
  EXPECT_EQ(r.tbs_completed, e.thread_blocks) << label << ": thread blocks completed";
  ASSERT_EQ(r.processes.size(), w.processes.size()) << label;
  for (std::size_t p = 0; p < w.processes.size(); ++p) {
    const std::uint32_t repeat = w.processes[p].repeat;
    const std::size_t runs = r.processes[p].runs.size();
    if (w.replay == ReplayMode::kFixed) {
      EXPECT_EQ(runs, repeat) << label << ": runs of " << w.processes[p].name;
    } else {
      EXPECT_GE(runs, repeat) << label << ": runs of " << w.processes[p].name;
      EXPECT_LE(runs, std::max(repeat, w.replay_limit)) << label << ": runs of " << w.processes[p].name;
    }
  }
}

TEST(Property, NothingIsLostUnderAnyPolicyAndMechanism) {
  const char* env = std::getenv("GPUMUX_PROPERTY_WORKLOADS");
  const std::uint64_t workloads = env != nullptr ? std::strtoull(env, nullptr, 10) : 150;
  struct Variant {
    std::string policy;
    PolicyOptions options;
  };
  std::vector<Variant> variants;
  for (const PolicyInfo& info : policy_registry()) {
    variants.push_back({info.name, {}});
    if (info.name == "ppq") variants.push_back({"ppq", {{"access", "exclusive"}}});
  }
  std::vector<SimulationSpec> specs;
  std::vector<std::string> labels;
  for (std::uint64_t seed = 1; seed <= workloads; ++seed) {
    const Generated g = random_workload(seed);
    for (const Variant& v : variants) {
      for (PreemptionMechanism m : {PreemptionMechanism::kContextSwitch, PreemptionMechanism::kDrain}) {
        SimulationSpec spec = g.spec;
        spec.policy = v.policy;
        spec.policy_options = v.options;
        spec.preemption = m;
        specs.push_back(spec);
        labels.push_back("seed " + std::to_string(seed) + ", policy " + v.policy +
                         (v.options.empty() ? "" : " (" + v.options.begin()->second + ")") +
                         (m == PreemptionMechanism::kContextSwitch ? ", context-switch" : ", drain"));
      }
    }
  }
  std::size_t preempted_runs = 0;
  // One batch per workload so a failure names its seed; children run two at a time.
  const std::size_t per_workload = specs.size() / workloads;
  for (std::size_t start = 0; start < specs.size(); start += per_workload) {
    const std::vector<SimulationSpec> batch(
        specs.begin() + static_cast<std::ptrdiff_t>(start),
        specs.begin() + static_cast<std::ptrdiff_t>(start + per_workload));
    std::vector<RunResult> results;
    try {
      results = simulate_all(batch, 2);
    } catch (const SimulationFailed&) {
      // Name every variant that fails, one at a time.
      for (std::size_t i = 0; i < batch.size(); ++i) {
        try {
          (void)simulate(batch[i]);
        } catch (const SimulationFailed& e) {
          ADD_FAILURE() << labels[start + i] << ": " << e.what();
        }
      }
      return;
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
      const RunResult& r = results[i];
      const std::string& label = labels[start + i];
      check_counts(batch[i].workload, r, label);
      for (const PreemptionTrace& pre : r.preemptions) EXPECT_GE(pre.done_ps, pre.requested_ps) << label;
      if (!r.preemptions.empty()) ++preempted_runs;
    }
  }
  std::printf("%zu simulations (%llu workloads x %zu policy variants x 2 mechanisms), %zu with preemptions\n",
              specs.size(), static_cast<unsigned long long>(workloads), variants.size(), preempted_runs);
  EXPECT_GT(preempted_runs, 0U);
}

// Reproduces one failing variant in this process (no fork), for a debugger:
//   GPUMUX_REPRO_SEED=7 GPUMUX_REPRO_POLICY=ppq GPUMUX_REPRO_ACCESS=exclusive GPUMUX_REPRO_DRAIN=0
//     gdb --args gpumux_sim_tests --gtest_filter=Property.Reproduce
TEST(Property, Reproduce) {
  const char* seed = std::getenv("GPUMUX_REPRO_SEED");
  if (seed == nullptr) {
    GTEST_SKIP() << "set GPUMUX_REPRO_SEED (and _POLICY, _ACCESS, _DRAIN) to reproduce a case";
  }
  SimulationSpec spec = random_workload(std::strtoull(seed, nullptr, 10)).spec;
  const char* policy = std::getenv("GPUMUX_REPRO_POLICY");
  spec.policy = policy != nullptr ? policy : "fcfs";
  if (const char* access = std::getenv("GPUMUX_REPRO_ACCESS")) spec.policy_options = {{"access", access}};
  const char* drain = std::getenv("GPUMUX_REPRO_DRAIN");
  spec.preemption = drain != nullptr && std::string(drain) == "1" ? PreemptionMechanism::kDrain
                                                                  : PreemptionMechanism::kContextSwitch;
  const RunResult r = simulate_in_this_process(spec);
  check_counts(spec.workload, r, "reproduced case");
}

}  // namespace
}  // namespace gpumux
