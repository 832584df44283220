// Nothing is lost under preemption: seeded random workloads through every registered policy and
// both preemption mechanisms. Each simulation checks its invariants itself (every thread block
// issued once and completed exactly once, preempted ones resumed rather than restarted; SM
// resources back to zero; no SM left reserved or busy; tokens conserved for token policies; a run
// whose events run out before the workload finishes fails, naming the stuck streams and SMs); this
// test adds the end-to-end counts. GPUMUX_PROPERTY_WORKLOADS sets how many workloads (default 150;
// each runs under every policy variant and mechanism). A failure prints the seed to reproduce it.
//
// The same property at warp level (issue 10 item 6): smaller random workloads whose kernels carry
// random programs (global loads and stores, coalesced or scattered, ALU and SFU work, barriers with
// shared memory, per-warp trip counts) run on warp-level SMs under every warp scheduler x every policy
// variant x both mechanisms. Besides the counts: every kernel launch issued exactly the warp
// instructions its program asks for (thread blocks x the sum over a block's warps of the warp's
// unrolled instruction count, so no instruction is lost or repeated across context switches and
// drains), the SMs' instructions add up to the kernels', and each SM's issue slots add up
// (instructions + idle slots by cause). GPUMUX_PROPERTY_WARP_WORKLOADS sets how many (default 1: 156
// simulations).
//
// Perf-Sat (Awatramani 4.3) under every policy and mechanism: the same counts and warp statistics with
// the SM driver throttling, and each SM's Perf-Sat samples replay through the state machine.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/scratch_file.h"
#include "common/test_support.h"
#include "config/gpu_loader.h"
#include "config/workload_loader.h"
#include "core/rng.h"
#include "engine/active_cores/onac.h"
#include "engine/active_cores/seq_det.h"
#include "engine/perf_sat.h"
#include "kernelet/characterisation.h"
#include "policy/dss.h"
#include "policy/registry.h"
#include "program/phase_analysis.h"
#include "program/program_parser.h"
#include "sm/occupancy.h"
#include "sm/warp_scheduler/registry.h"
#include "stm/kernel_profile.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

struct Generated {
  SimulationSpec spec;
  /// Warp level: per kernel name, the warp instructions one launch issues.
  std::map<std::string, std::uint64_t> instructions_per_launch;
};

/// The warp-level SM of the K20c (configs/gpus/kepler-k20c.yaml's sm.warp section).
void make_warp_level(GpuConfig& gpu) {
  gpu.sm_model = SmModel::kWarp;
  gpu.warp.schedulers = 4;
  gpu.warp.issue_interval_cycles = 1;
  gpu.warp.ready_queue_size = 6;
  gpu.warp.alu = {192, 4};
  gpu.warp.sfu = {32, 20};
  gpu.warp.load_store = {32, 24};
  gpu.warp.shared_memory_latency_cycles = 24;
  gpu.warp.memory_segment_bytes = 32;
  gpu.memory.latency_ns = 100;
}

program::Instruction parsed(const std::string& text) {
  program::ParsedInstruction p = program::parse_instruction(text);
  EXPECT_TRUE(p.error.empty()) << text << ": " << p.error;
  return p.instruction;
}

/// A random program for a thread block of `warps` warps: an address, a loop (a global load, ALU or
/// SFU work on it, optionally a shared-memory exchange between two barriers, a global store), an
/// epilogue. Returns the program (phases analysed for `gpu`) and adds each warp's unrolled
/// instruction count to `per_tb`.
std::shared_ptr<const program::Program> random_program(Rng& rng, std::uint32_t warps, const GpuConfig& gpu,
                                                       std::uint64_t& per_tb) {
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng.below(hi - lo + 1); };
  const bool barrier = rng.below(3) == 0;
  std::vector<std::string> text = {"alu r2 <- r0, r1"};
  text.push_back("ldg r3 <- r2 " + std::to_string(32 * pick(1, 16)) + "B " +
                 (rng.below(3) == 0 ? "scattered" : "coalesced"));
  text.emplace_back("alu r4 <- r3, r2");
  text.emplace_back(rng.below(2) == 0 ? "sfu r5 <- r4" : "alu r5 <- r4");
  if (barrier) {
    text.emplace_back("sts r5");
    text.emplace_back("bar");
    text.emplace_back("lds r5 <- r0");
    text.emplace_back("bar");
  }
  text.emplace_back("stg r5, r2 128B coalesced");
  auto p = std::make_shared<program::Program>();
  for (const std::string& t : text) p->code.push_back(parsed(t));
  const auto body = static_cast<std::uint32_t>(p->code.size() - 1);  // instructions 1 .. end
  program::Instruction back;
  back.op = program::Op::kLoopBack;
  back.target = 1;
  // Barriers need the same trip count in every warp (docs/config.md "Barriers").
  const std::uint64_t lists = barrier ? 1 : pick(1, 4);
  for (std::uint64_t i = 0; i < lists; ++i) {
    back.trip_counts.push_back(static_cast<std::uint32_t>(pick(1, 4)));
  }
  p->code.push_back(back);
  p->code.push_back(parsed("alu r6 <- r5"));
  p->registers = 7;
  p->loop_depth = 1;
  p->source = "property_test";
  for (std::uint32_t w = 0; w < warps; ++w) {
    const std::uint64_t trips = back.trip_counts[w % back.trip_counts.size()];
    per_tb += 2 + trips * (body + 1);  // prologue and epilogue; body and loop-back per trip
  }
  p->dynamic_instructions = 2 + std::uint64_t{back.trip_counts[0]} * (body + 1);
  program::analyze_phases(*p, program::instruction_latencies(gpu));
  return p;
}

Generated random_workload(std::uint64_t seed, bool warp_level = false) {
  Rng rng(seed, 0xBEEF);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng.below(hi - lo + 1); };
  Generated g;
  GpuConfig gpu = test::k20c();
  gpu.num_sms = static_cast<std::uint32_t>(pick(1, 16));
  gpu.active_kernels = gpu.num_sms;
  gpu.sm.max_resident_kernels = rng.below(3) == 0 ? 4 : 1;
  gpu.frontend.command_queues = static_cast<std::uint32_t>(pick(1, 8));
  if (warp_level) make_warp_level(gpu);
  // Two workloads in three run with TB-level memory interference (no draw from rng: the workloads are
  // those of earlier builds; the kernels' memory traffic comes from a stream of its own).
  gpu.memory.tb_interference = seed % 3 != 0;
  if (warp_level && seed % 2 == 0) {
    // Every other warp-level workload loads through a per-SM L1 (memory.l1); no draw from rng either.
    gpu.memory.l1.cache = {std::uint64_t{16} * 1024, 4, 128, 32, false, true, true};
    gpu.memory.l1.hit_latency_cycles = 28;
  }
  g.spec.gpu = gpu;
  Rng memory_rng(seed, 0x5EED);
  g.spec.seed = seed;
  g.spec.wall_timeout_s = 20;
  Rng program_rng(seed, 0x3A4B);  // its own stream: the TB-level workloads draw exactly as before

  std::vector<std::shared_ptr<KernelDesc>> pool;
  const auto kinds = pick(1, 5);
  for (std::uint64_t i = 0; i < kinds; ++i) {
    const auto threads = static_cast<std::uint32_t>(32 * pick(1, 32));
    const auto regs = static_cast<std::uint32_t>(threads * pick(8, 63));
    const auto smem = static_cast<std::uint32_t>(rng.below(2) == 0 ? 0 : 256 * pick(1, 64));
    pool.push_back(test::kernel("k" + std::to_string(i), static_cast<std::uint32_t>(pick(1, 300)),
                                static_cast<double>(pick(1, 60)), threads, std::min(regs, 65536U), smem,
                                static_cast<double>(rng.below(50))));
    // Up to 4 MB per thread block: a few such thread blocks oversubscribe the 208 GB/s.
    pool.back()->memory.bytes_per_tb =
        memory_rng.below(3) == 0 ? 0.0 : static_cast<double>(memory_rng.below(4U << 20U));
    pool.back()->memory.l2_hit_percent = static_cast<double>(memory_rng.below(101));
    // Bubble-Up profiles: up to 40 GB/s of pressure per SM, a rising or falling curve up to 3x.
    if (memory_rng.below(2) == 0) {
      TbInterferenceProfile& in = pool.back()->interference;
      in.pressure_per_sm_gb_per_s = static_cast<double>(memory_rng.below(41));
      for (int point = 1; point <= 3; ++point) {
        in.sensitivity.push_back({50.0 * point, 1.0 + static_cast<double>(memory_rng.below(201)) / 100.0});
      }
    }
    if (warp_level) {
      KernelDesc& k = *pool.back();
      k.thread_blocks = 1 + k.thread_blocks % 16;  // keep warp-level runs short
      std::uint64_t per_tb = 0;
      k.program = random_program(program_rng, (threads + gpu.warp_size - 1) / gpu.warp_size, gpu, per_tb);
      g.instructions_per_launch[k.name] = per_tb * k.thread_blocks;
    }
  }
  Workload& w = g.spec.workload;
  w.name = "random-" + std::to_string(seed);
  w.tb_duration = rng.below(2) == 0 ? TbDurationMode::kFixed : TbDurationMode::kProfile;
  w.replay = rng.below(4) == 0 ? ReplayMode::kUntilAllDone : ReplayMode::kFixed;
  w.replay_limit = 8;  // starvation under priority policies must still end
  // Every other workload launches asynchronously (Tanasic 2.1), so a context's streams put several
  // kernels in flight at once (command buffers, per-process DSS tokens); no draw from rng, so the
  // workloads themselves are those of earlier builds.
  w.kernel_launch = seed % 2 == 1 ? KernelLaunchMode::kAsynchronous : KernelLaunchMode::kSynchronous;
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

/// `base` under `policy` and preemption `mechanism`; spatial gives every process SMs of its own, so the GPU
/// gets at least as many SMs as processes.
/// A profile file for the stm policy covering every kernel of `spec`'s workload (Liang 3.2's R[m], B[m]),
/// from the kernels' own descriptions: ceil(TB / (m x TBs per SM)) rounds of the mean thread-block time,
/// and the library's bytes over that. The properties do not depend on how good the profiles are, only on
/// the policy running whatever they make it decide.
std::string stm_profiles_for(const SimulationSpec& spec) {
  static int files = 0;
  stm::ProfileSet set;
  set.gpu = spec.gpu.name;
  set.sms = spec.gpu.num_sms;
  set.peak_bandwidth_gb_per_s = spec.gpu.memory.bandwidth_gb_per_s;
  set.sm_model = spec.gpu.sm_model == SmModel::kWarp ? "warp" : "tb";
  set.memory_model = "simple";
  for (const ProcessSpec& p : spec.workload.processes) {
    for (const StreamSpec& stream : p.streams) {
      for (const CommandSpec& c : stream.commands) {
        if (c.kind != CommandKind::kKernel || set.find(c.kernel->name) != nullptr) continue;
        stm::KernelProfile k;
        k.kernel = c.kernel->name;
        k.thread_blocks = c.kernel->thread_blocks;
        k.tb_latency_ns = static_cast<double>(c.kernel->tb_time.mean_ps) / 1e3;
        const double per_sm = std::max(1U, compute_occupancy(*c.kernel, spec.gpu).tbs_per_sm);
        for (std::uint32_t m = 1; m <= set.sms; ++m) {
          const double rounds = std::ceil(c.kernel->thread_blocks / (m * per_sm));
          k.latency_ns.push_back(std::max(1.0, rounds * k.tb_latency_ns));
          k.bandwidth_gb_per_s.push_back(c.kernel->memory.dram_bytes_per_tb() * c.kernel->thread_blocks /
                                         k.latency_ns.back());
        }
        set.kernels.push_back(std::move(k));
      }
    }
  }
  if (set.kernels.empty()) {  // copies only: a file needs a kernel, which no launch will ask for
    set.kernels.push_back(
        {"unused", 1, 0, 1, std::vector<double>(set.sms, 1.0), std::vector<double>(set.sms, 0.0)});
  }
  // ctest runs the property tests as processes side by side: the pid keeps their files apart.
  std::string path = test::scratch_path("property_stm_" + std::to_string(files++) + ".yaml");
  stm::write_profile_file(path, set);
  return path;
}

/// A characterisation file for the kernelet policy covering every kernel of `spec`'s workload, with
/// made-up but varied figures (PUR, MUR and Rm differ between kernels, so pruning and the model's choices
/// differ, and every kernel is sliced in slices of one or two thread blocks per SM). As for stm: the
/// properties hold whatever the policy decides.
std::string kernelet_profiles_for(const SimulationSpec& spec) {
  static int files = 0;
  kernelet::Characterisation c;
  c.gpu = spec.gpu.name;
  c.sms = spec.gpu.num_sms;
  c.core_clock_mhz = spec.gpu.core_clock_mhz;
  c.sm_model = "warp";
  c.memory_model = "simple";
  c.model.warp_schedulers = 2;
  c.model.peak_ipc_per_sm = 1;
  c.model.latency_cycles = 300;
  c.model.requests_per_cycle = 2;
  c.model.latency_slope = 1;
  for (const ProcessSpec& p : spec.workload.processes) {
    for (const StreamSpec& stream : p.streams) {
      for (const CommandSpec& cmd : stream.commands) {
        if (cmd.kind != CommandKind::kKernel || c.find(cmd.kernel->name) != nullptr) continue;
        const Occupancy o = compute_occupancy(*cmd.kernel, spec.gpu);
        const auto i = static_cast<std::uint32_t>(c.kernels.size());
        kernelet::KernelCharacter k;
        k.kernel = cmd.kernel->name;
        k.thread_blocks = cmd.kernel->thread_blocks;
        k.threads_per_tb = cmd.kernel->threads_per_tb;
        k.registers_per_tb = cmd.kernel->registers_per_tb;
        k.shared_memory_per_tb = cmd.kernel->shared_memory_per_tb;
        k.warps_per_tb = std::max(1U, o.footprint.warps);
        k.tbs_per_sm = std::max(1U, o.tbs_per_sm);
        k.instructions_per_tb = 100 + 50 * i;
        k.memory_ratio = 0.02 + 0.1 * (i % 4);
        k.uncoalesced_share = 0.25 * (i % 3);
        k.ipc = 0.2 + 0.2 * (i % 4);
        k.pur = 0.1 + 0.3 * (i % 3);
        k.mur = 0.04 * (i % 5);
        k.min_slice_tbs = c.sms * (1 + i % 2);
        c.kernels.push_back(k);
      }
    }
  }
  if (c.kernels.empty()) {  // copies only: a file needs a kernel, which no launch will ask for
    kernelet::KernelCharacter k;
    k.kernel = "unused";
    k.thread_blocks = k.threads_per_tb = k.warps_per_tb = k.tbs_per_sm = 1;
    k.instructions_per_tb = 1;
    c.kernels.push_back(k);
  }
  std::string path = test::scratch_path("property_kernelet_" + std::to_string(files++) + ".yaml");
  kernelet::write_characterisation(path, c);
  return path;
}

SimulationSpec policy_variant(const SimulationSpec& base, const std::string& policy,
                              PreemptionMechanism mechanism) {
  SimulationSpec spec = base;
  if (policy == "stm") spec.policy_options["profiles"] = stm_profiles_for(spec);
  if (policy == "kernelet") spec.policy_options["profiles"] = kernelet_profiles_for(spec);
  if (policy == "spatial") {
    const auto processes = static_cast<std::uint32_t>(spec.workload.processes.size());
    spec.gpu.num_sms = std::max(spec.gpu.num_sms, processes);
    spec.gpu.active_kernels = spec.gpu.num_sms;
  }
  spec.policy = policy;
  spec.preemption = mechanism;
  return spec;
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
    if (info.name == "dss") {
      variants.push_back({"dss", {{"tokens", "kernel"}}});
      variants.push_back({"dss", {{"latency", "hardware"}}});  // decisions after the scan, on a timer
    }
    if (info.name == "leaky-bucket") variants.push_back({"leaky-bucket", {{"latency", "hardware"}}});
    if (info.name == "kernelet") variants.push_back({"kernelet", {{"choice", "random"}}});
  }
  std::vector<SimulationSpec> specs;
  std::vector<std::string> labels;
  for (std::uint64_t seed = 1; seed <= workloads; ++seed) {
    const Generated g = random_workload(seed);
    for (const Variant& v : variants) {
      for (PreemptionMechanism m : {PreemptionMechanism::kContextSwitch, PreemptionMechanism::kDrain}) {
        SimulationSpec spec = policy_variant(g.spec, v.policy, m);
        spec.policy_options.insert(v.options.begin(), v.options.end());
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

// Issue 20: the TB-level SMs' calendar and the context save and restore thread run ahead of SystemC's clock
// when nothing else is pending (sm/tb/tb_calendar.h, sm/context_traffic.h). That must change no result:
// random workloads under every policy and both mechanisms give byte-identical stats with it on and off.
// GPUMUX_RUN_AHEAD_WORKLOADS TB-level workloads with interference off (default 30: both threads run
// ahead), a third as many with interference as generated (the work clocks' flush then runs at the end of
// the calendar's instant), and a tenth as many at warp level (gto; the context thread alone). The context
// bursts of all SMs go through one thread in a defined order (sm/context_traffic.h): with a thread per SM,
// equal- time bursts of two SMs went in SystemC's order, which running ahead changed in 10 of the first 780
// pairs.
TEST(Property, RunningAheadOfSystemCChangesNoResult) {
  const char* env = std::getenv("GPUMUX_RUN_AHEAD_WORKLOADS");
  const std::uint64_t workloads = env != nullptr ? std::strtoull(env, nullptr, 10) : 30;
  std::vector<SimulationSpec> specs;
  std::vector<std::string> labels;
  // Every policy, and DSS with its decision latency charged (its timer wakes the engine between the
  // calendar's instants).
  std::vector<std::pair<std::string, PolicyOptions>> policies;
  for (const PolicyInfo& info : policy_registry()) policies.emplace_back(info.name, PolicyOptions{});
  policies.emplace_back("dss", PolicyOptions{{"latency", "hardware"}});
  policies.emplace_back("leaky-bucket", PolicyOptions{{"latency", "hardware"}});
  auto add_pairs = [&](const Generated& g, const std::string& what) {
    for (const auto& [policy, options] : policies) {
      for (PreemptionMechanism m : {PreemptionMechanism::kContextSwitch, PreemptionMechanism::kDrain}) {
        SimulationSpec spec = policy_variant(g.spec, policy, m);
        spec.policy_options.insert(options.begin(), options.end());
        for (bool ahead : {true, false}) {
          spec.run_ahead = ahead;
          specs.push_back(spec);
          labels.push_back(what + ", policy " + policy + (options.empty() ? "" : " (latency hardware)") +
                           (m == PreemptionMechanism::kContextSwitch ? ", context-switch" : ", drain"));
        }
      }
    }
  };
  for (std::uint64_t seed = 1; seed <= workloads; ++seed) {
    Generated g = random_workload(seed);
    g.spec.gpu.memory.tb_interference = false;
    add_pairs(g, "seed " + std::to_string(seed));
  }
  for (std::uint64_t seed = 1; seed <= workloads / 3; ++seed) {
    add_pairs(random_workload(seed), "seed " + std::to_string(seed) + " (interference as generated)");
  }
  for (std::uint64_t seed = 1; seed <= workloads / 10; ++seed) {
    Generated g = random_workload(seed, true);
    g.spec.gpu.warp.scheduler = "gto";
    add_pairs(g, "warp-level seed " + std::to_string(seed));
  }
  const std::vector<RunResult> results = simulate_all(specs, 2);
  std::size_t preempted = 0;
  std::size_t differing = 0;
  for (std::size_t i = 0; i < results.size(); i += 2) {
    nlohmann::json ahead = results[i];
    nlohmann::json in_step = results[i + 1];
    ahead.erase("wall_seconds");  // host time, never in stats.json
    in_step.erase("wall_seconds");
    if (!results[i].preemptions.empty()) ++preempted;
    if (ahead != in_step && ++differing <= 5) {
      const std::string patch = nlohmann::json::diff(in_step, ahead).dump();
      ADD_FAILURE() << labels[i] << ": running ahead moved " << patch.substr(0, 2000);
    }
  }
  EXPECT_EQ(differing, 0U);
  std::printf("%zu pairs of simulations, %zu with preemptions\n", results.size() / 2, preempted);
  EXPECT_GT(preempted, 0U);
}

// Two 8-process Tanasic mixes under DSS with context switch, once the known exceptions to the property
// above: running the context thread ahead changed which of two processes acting at the same picosecond
// went first (SystemC's order of equal-time events depends on the history of waits). In the first, two
// host processes' CPU phases end together and both ring doorbells; in the second, a copy burst and a
// context-save burst reach the memory pipe together. core/equal_time_order.h gives such ties a defined
// order; before it, both runs differed (an ANTT moved, a replay boundary by 19.7 ns).
TEST(Property, RunningAheadChangesNoResultWhenProcessesTie) {
  for (const char* mix : {"tanasic-8proc-mix.yaml", "tanasic-8proc-mix-copy-tie.yaml"}) {
    SimulationSpec spec;
    spec.gpu = load_gpu_config(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/kepler-k20c.yaml");
    spec.workload = load_workload(std::string(GPUMUX_SOURCE_DIR) + "/tb/systemc/data/" + mix, spec.gpu);
    spec.policy = "dss";
    spec.preemption = PreemptionMechanism::kContextSwitch;
    SimulationSpec in_step = spec;
    in_step.run_ahead = false;
    const std::vector<RunResult> results = simulate_all({spec, in_step}, 2);
    nlohmann::json ahead = results[0];
    nlohmann::json step = results[1];
    ahead.erase("wall_seconds");
    step.erase("wall_seconds");
    EXPECT_EQ(ahead, step) << mix << ": running ahead moved "
                           << nlohmann::json::diff(step, ahead).dump().substr(0, 2000);
  }
}

// Issue 20: DSS mirrors every slot's has_tbs on each thread-block completion, and skips the look while the
// engine's tbs_to_issue_epoch() stands still (policy/dss.cpp, sync_has_tbs). With the check on, every skip is
// compared with a full look, and a difference is an invariant violation (the run fails): random workloads
// (GPUMUX_DSS_SKIP_WORKLOADS, default 40) under process and kernel tokens and hardware latency, both
// mechanisms (preemptions fill the PTBQ and claims are made and released), and the 8-process Tanasic mix.
TEST(Property, DssSkipsNoChangeOfHasTbs) {
  const char* env = std::getenv("GPUMUX_DSS_SKIP_WORKLOADS");
  const std::uint64_t workloads = env != nullptr ? std::strtoull(env, nullptr, 10) : 40;
  set_dss_verify_skipped_has_tbs(true);  // the forked children inherit it
  const std::vector<PolicyOptions> variants = {{}, {{"tokens", "kernel"}}, {{"latency", "hardware"}}};
  std::vector<SimulationSpec> specs;
  std::vector<std::string> labels;
  SimulationSpec mix;
  mix.gpu = load_gpu_config(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/kepler-k20c.yaml");
  mix.workload =
      load_workload(std::string(GPUMUX_SOURCE_DIR) + "/tb/systemc/data/tanasic-8proc-mix.yaml", mix.gpu);
  for (std::uint64_t seed = 0; seed <= workloads; ++seed) {
    const SimulationSpec base = seed == 0 ? mix : random_workload(seed).spec;
    for (const PolicyOptions& options : variants) {
      for (PreemptionMechanism m : {PreemptionMechanism::kContextSwitch, PreemptionMechanism::kDrain}) {
        SimulationSpec spec = policy_variant(base, "dss", m);
        spec.policy_options.insert(options.begin(), options.end());
        specs.push_back(spec);
        labels.push_back((seed == 0 ? std::string("tanasic-8proc-mix") : "seed " + std::to_string(seed)) +
                         (options.empty() ? "" : " (" + options.begin()->second + ")") +
                         (m == PreemptionMechanism::kContextSwitch ? ", context-switch" : ", drain"));
      }
    }
  }
  std::size_t preempted_runs = 0;
  for (std::size_t i = 0; i < specs.size(); i += 2) {
    const std::vector<SimulationSpec> pair(
        specs.begin() + static_cast<std::ptrdiff_t>(i),
        specs.begin() + static_cast<std::ptrdiff_t>(std::min(i + 2, specs.size())));
    try {
      for (const RunResult& r : simulate_all(pair, 2)) preempted_runs += r.preemptions.empty() ? 0 : 1;
    } catch (const SimulationFailed& e) {
      ADD_FAILURE() << labels[i] << " or the run after it: " << e.what();
    }
  }
  set_dss_verify_skipped_has_tbs(false);
  std::printf("%zu DSS simulations with every skipped has_tbs look checked, %zu with preemptions\n",
              specs.size(), preempted_runs);
  EXPECT_GT(preempted_runs, specs.size() / 4);
}

/// Warp level: instructions per launch as the programs ask, SMs against kernels, issue slots.
void check_warp_stats(const Generated& g, const RunResult& r, const std::string& label) {
  EXPECT_EQ(r.sm_model, "warp") << label;
  std::uint64_t kernel_instructions = 0;
  for (const KernelRecord& k : r.kernels) {
    EXPECT_EQ(k.instructions, g.instructions_per_launch.at(k.name))
        << label << ": instructions of " << k.name;
    kernel_instructions += k.instructions;
  }
  std::uint64_t sm_instructions = 0;
  for (const SmRecord& sm : r.sms) {
    const WarpSmStats& w = sm.warp;
    sm_instructions += w.instructions;
    EXPECT_EQ(w.scheduler_cycles,
              w.instructions + w.idle_memory + w.idle_barrier + w.idle_no_warp + w.idle_other)
        << label << ": issue slots of SM " << sm.id;
  }
  EXPECT_EQ(sm_instructions, kernel_instructions) << label << ": SM instructions against kernel instructions";
}

TEST(Property, NothingIsLostAtWarpLevelUnderAnySchedulerPolicyAndMechanism) {
  const char* env = std::getenv("GPUMUX_PROPERTY_WARP_WORKLOADS");
  const std::uint64_t workloads = env != nullptr ? std::strtoull(env, nullptr, 10) : 1;
  std::vector<std::pair<std::string, PolicyOptions>> variants;
  for (const PolicyInfo& info : policy_registry()) {
    variants.emplace_back(info.name, PolicyOptions{});
    if (info.name == "ppq") variants.emplace_back("ppq", PolicyOptions{{"access", "exclusive"}});
    if (info.name == "dss") variants.emplace_back("dss", PolicyOptions{{"tokens", "kernel"}});
  }
  std::size_t simulations = 0;
  std::size_t preempted_runs = 0;
  for (std::uint64_t seed = 1; seed <= workloads; ++seed) {
    const Generated g = random_workload(seed, true);
    std::vector<SimulationSpec> batch;
    std::vector<std::string> labels;
    for (const WarpSchedulerInfo& scheduler : warp_scheduler_registry()) {
      for (const auto& [policy, options] : variants) {
        for (PreemptionMechanism m : {PreemptionMechanism::kContextSwitch, PreemptionMechanism::kDrain}) {
          SimulationSpec spec = policy_variant(g.spec, policy, m);
          spec.gpu.warp.scheduler = scheduler.name;
          spec.policy_options.insert(options.begin(), options.end());
          batch.push_back(spec);
          labels.push_back("warp seed " + std::to_string(seed) + ", scheduler " + scheduler.name +
                           ", policy " + policy +
                           (options.empty() ? "" : " (" + options.begin()->second + ")") +
                           (m == PreemptionMechanism::kContextSwitch ? ", context-switch" : ", drain"));
        }
      }
    }
    std::vector<RunResult> results;
    try {
      results = simulate_all(batch, 2);
    } catch (const SimulationFailed&) {
      for (std::size_t i = 0; i < batch.size(); ++i) {
        try {
          (void)simulate(batch[i]);
        } catch (const SimulationFailed& e) {
          ADD_FAILURE() << labels[i] << ": " << e.what();
        }
      }
      return;
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
      check_counts(batch[i].workload, results[i], labels[i]);
      check_warp_stats(g, results[i], labels[i]);
      EXPECT_EQ(results[i].warp_scheduler, batch[i].gpu.warp.scheduler) << labels[i];
      for (const PreemptionTrace& pre : results[i].preemptions) {
        EXPECT_GE(pre.done_ps, pre.requested_ps) << labels[i];
      }
      if (!results[i].preemptions.empty()) ++preempted_runs;
    }
    simulations += results.size();
  }
  std::printf(
      "warp level: %zu simulations (%llu workloads x %zu warp schedulers x %zu policy variants x 2 "
      "mechanisms), %zu with preemptions\n",
      simulations, static_cast<unsigned long long>(workloads), warp_scheduler_registry().size(),
      variants.size(), preempted_runs);
  EXPECT_GT(preempted_runs, 0U);
}

/// Perf-Sat's records of one run: each SM's samples replayed through a fresh state machine give the same
/// limits, states and detection, and every limit is within 1 .. N_max.
void check_perf_sat(const RunResult& r, const std::string& label, std::size_t& samples) {
  ASSERT_TRUE(r.perf_sat.has_value()) << label;
  for (const PerfSatTrace& rec : r.perf_sat->records) {
    ASSERT_LT(rec.launch, r.kernels.size()) << label;
    EXPECT_EQ(rec.n_max, std::max(1U, r.kernels[rec.launch].tbs_per_sm)) << label;
    PerfSat replay(rec.n_max, r.perf_sat->max_toggles);
    EXPECT_EQ(rec.start, replay.start()) << label;
    for (const PerfSatSampleTrace& smp : rec.samples) {
      EXPECT_EQ(smp.blocks, replay.limit()) << label;
      replay.sample(smp.stalled);
      EXPECT_EQ(smp.next, replay.limit()) << label;
      EXPECT_EQ(smp.state, to_string(replay.state())) << label;
      EXPECT_GE(replay.limit(), 1U) << label;
      EXPECT_LE(replay.limit(), rec.n_max) << label;
      ++samples;
    }
    EXPECT_EQ(rec.settled, replay.settled()) << label;
    EXPECT_EQ(rec.detected, replay.limit()) << label;
  }
}

// Perf-Sat (Awatramani 4.3) is a mode of the SM driver under every policy: the warp-level random
// workloads under every policy variant and both mechanisms with a short sample period, so limits move
// while thread blocks are issued, preempted and resumed. Nothing is lost, the warp statistics hold, the
// records replay, and the same run twice is the same.
TEST(Property, PerfSatUnderEveryPolicyAndMechanism) {
  std::vector<std::pair<std::string, PolicyOptions>> variants;
  for (const PolicyInfo& info : policy_registry()) variants.emplace_back(info.name, PolicyOptions{});
  const Generated g = random_workload(1, true);
  std::vector<SimulationSpec> batch;
  std::vector<std::string> labels;
  for (const auto& [policy, options] : variants) {
    for (PreemptionMechanism m : {PreemptionMechanism::kContextSwitch, PreemptionMechanism::kDrain}) {
      SimulationSpec spec = policy_variant(g.spec, policy, m);
      spec.gpu.warp.scheduler = "gto";
      spec.gpu.perf_sat.enabled = true;
      spec.gpu.perf_sat.sample_period_cycles = 300;
      batch.push_back(spec);
      labels.push_back("Perf-Sat, policy " + policy +
                       (m == PreemptionMechanism::kContextSwitch ? ", context-switch" : ", drain"));
    }
  }
  const std::vector<RunResult> results = simulate_all(batch, 2);
  std::size_t samples = 0;
  std::size_t moved = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    check_counts(batch[i].workload, results[i], labels[i]);
    check_warp_stats(g, results[i], labels[i]);
    check_perf_sat(results[i], labels[i], samples);
    if (!results[i].perf_sat) continue;
    for (const PerfSatTrace& rec : results[i].perf_sat->records) {
      for (const PerfSatSampleTrace& smp : rec.samples) moved += smp.next != smp.blocks ? 1 : 0;
    }
  }
  std::printf("Perf-Sat: %zu simulations, %zu samples, %zu limit changes\n", results.size(), samples, moved);
  EXPECT_GT(samples, 0U);
  EXPECT_GT(moved, 0U);
  // Deterministic: the first variant again, the same result (wall time aside).
  RunResult again = simulate(batch.front());
  RunResult first = results.front();
  again.wall_seconds = first.wall_seconds = 0;
  EXPECT_EQ(nlohmann::json(again).dump(), nlohmann::json(first).dump());
  // Off, the run has no Perf-Sat record.
  SimulationSpec off = batch.front();
  off.gpu.perf_sat.enabled = false;
  EXPECT_FALSE(simulate(off).perf_sat.has_value());
}

/// Every kernel of `w` with `factor` times its thread blocks (one copy per kernel, shared by its launches).
void scale_grids(Workload& w, std::uint32_t factor) {
  std::map<const KernelDesc*, std::shared_ptr<const KernelDesc>> scaled;
  for (ProcessSpec& p : w.processes) {
    for (StreamSpec& st : p.streams) {
      for (CommandSpec& c : st.commands) {
        if (c.kind != CommandKind::kKernel) continue;
        auto& copy = scaled[c.kernel.get()];
        if (!copy) {
          auto k = std::make_shared<KernelDesc>(*c.kernel);
          k->thread_blocks *= factor;
          copy = k;
        }
        c.kernel = copy;
      }
    }
  }
}

/// Active-core detection's records of one run: each record's samples replayed through a fresh detector
/// ask for the counts sampled and end as the record did; counts are within 1 .. N_max; the power report
/// adds up. Returns the samples checked.
std::size_t check_active_cores(const SimulationSpec& spec, const RunResult& r, const std::string& label) {
  std::size_t samples = 0;
  EXPECT_FALSE(r.active_cores.empty()) << label;
  for (const ActiveCoreRecord& rec : r.active_cores) {
    EXPECT_LT(rec.launch, r.kernels.size()) << label;
    EXPECT_EQ(rec.cores, spec.gpu.num_sms) << label;
    std::unique_ptr<ActiveCoreDetector> replay;
    if (rec.detector == "onac") {
      replay = std::make_unique<OnacDetector>(spec.gpu.active_cores.tolerance);
    } else {
      EXPECT_EQ(rec.detector, "seq-det") << label;
      replay = std::make_unique<SeqDetDetector>(spec.gpu.active_cores.tolerance);
    }
    ActiveCoreDecision decision = replay->start(rec.cores);
    for (const ActiveCoreSample& smp : rec.samples) {
      EXPECT_FALSE(decision.detected) << label << ": a sample after detection";
      EXPECT_EQ(smp.active_cores, decision.active_cores) << label;
      EXPECT_GE(smp.end_ps, smp.start_ps) << label;
      EXPECT_GE(smp.start_ps, rec.start_ps) << label;
      // A sample ends when its waves of the kernel's blocks completed on the active cores.
      EXPECT_GE(smp.thread_blocks, std::uint64_t{spec.gpu.active_cores.sampling_period_waves} *
                                       smp.active_cores * r.kernels[rec.launch].tbs_per_sm)
          << label;
      decision = replay->on_sample(smp.ipc);
      EXPECT_GE(decision.active_cores, 1U) << label;
      EXPECT_LE(decision.active_cores, rec.cores) << label;
      ++samples;
    }
    EXPECT_EQ(rec.detected, decision.detected) << label;
    EXPECT_EQ(rec.detected, rec.ended_by == "detected") << label;
    if (rec.detected) {
      EXPECT_EQ(rec.n_opt, decision.active_cores) << label;
      EXPECT_GE(rec.detected_ps, rec.start_ps) << label;
    }
    EXPECT_GE(rec.n_opt, 1U) << label;
    EXPECT_LE(rec.n_opt, rec.cores) << label;
  }
  EXPECT_TRUE(r.power.enabled) << label;
  EXPECT_EQ(r.power.sms.size(), spec.gpu.num_sms) << label;
  double static_j = 0;
  for (const SmEnergy& e : r.power.sms) {
    EXPECT_LE(e.gated_ns, r.power.time_ns) << label;
    static_j += e.static_j;
  }
  EXPECT_NEAR(static_j, r.power.core_static_j, 1e-12) << label;
  EXPECT_NEAR(r.power.total_j, r.power.static_j + r.power.dynamic_j, 1e-12) << label;
  EXPECT_GT(r.power.sm_dynamic_j, 0.0) << label;
  return samples;
}

// Active-core detection (Awatramani 4.4) as an SM-driver mode: the warp-level random workloads (several
// processes, kernels overlapping) under fcfs and fifo with each detector and a one-wave sample, so counts
// fall and rise while kernels start and finish. Every thread block runs once, resources return to zero
// (the driver's end-of-run checks, which also require every SM active and none gated at the end), the
// records replay, some SMs are gated, and the same run twice is the same.
TEST(Property, ActiveCoreDetectionUnderFcfsAndFifo) {
  std::vector<SimulationSpec> batch;
  std::vector<std::string> labels;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const Generated g = random_workload(seed, true);
    for (const char* policy : {"fcfs", "fifo"}) {
      for (const ActiveCoreDetectorKind kind :
           {ActiveCoreDetectorKind::kOnac, ActiveCoreDetectorKind::kSeqDet}) {
        SimulationSpec spec = policy_variant(g.spec, policy, PreemptionMechanism::kDrain);
        spec.gpu.warp.scheduler = "gto";
        // Four SMs, so counts move (the random GPU may have one, where both detect 1 at once), and grids
        // 24 times the random ones (at most 16 blocks at warp level), so samples of a wave fit in a kernel.
        spec.gpu.num_sms = 4;
        spec.gpu.active_kernels = 4;
        scale_grids(spec.workload, 24);
        spec.gpu.active_cores.detector = kind;
        spec.gpu.active_cores.sampling_period_waves = 1;
        spec.gpu.power.enabled = true;
        batch.push_back(spec);
        labels.push_back("seed " + std::to_string(seed) + ", " + std::string(policy) + ", " +
                         (kind == ActiveCoreDetectorKind::kOnac ? "onac" : "seq-det"));
      }
    }
  }
  const std::vector<RunResult> results = simulate_all(batch, 2);
  std::size_t samples = 0;
  std::size_t detected = 0;
  double gated_ns = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    check_counts(batch[i].workload, results[i], labels[i]);
    samples += check_active_cores(batch[i], results[i], labels[i]);
    for (const ActiveCoreRecord& rec : results[i].active_cores) detected += rec.detected ? 1 : 0;
    for (const SmEnergy& e : results[i].power.sms) gated_ns += e.gated_ns;
  }
  std::printf("active cores: %zu simulations, %zu samples, %zu detections, %.0f ns gated\n", results.size(),
              samples, detected, gated_ns);
  EXPECT_GT(samples, 0U);
  EXPECT_GT(detected, 0U);
  EXPECT_GT(gated_ns, 0.0);
  RunResult again = simulate(batch.front());
  RunResult first = results.front();
  again.wall_seconds = first.wall_seconds = 0;
  EXPECT_EQ(nlohmann::json(again).dump(), nlohmann::json(first).dump());
  // Off: no records, no power report, and the run is the run without the mode.
  SimulationSpec off = batch.front();
  off.gpu.active_cores.detector = ActiveCoreDetectorKind::kNone;
  off.gpu.power.enabled = false;
  const RunResult plain = simulate(off);
  EXPECT_TRUE(plain.active_cores.empty());
  EXPECT_FALSE(plain.power.enabled);
}

// Reproduces one failing variant in this process (no fork), for a debugger:
//   GPUMUX_REPRO_SEED=7 GPUMUX_REPRO_POLICY=ppq GPUMUX_REPRO_ACCESS=exclusive GPUMUX_REPRO_DRAIN=0
//     gdb --args gpumux_sim_tests --gtest_filter=Property.Reproduce
// GPUMUX_REPRO_WARP_SCHEDULER=NAME reproduces a warp-level case instead.
TEST(Property, Reproduce) {
  const char* seed = std::getenv("GPUMUX_REPRO_SEED");
  if (seed == nullptr) {
    GTEST_SKIP() << "set GPUMUX_REPRO_SEED (and _POLICY, _ACCESS, _DRAIN) to reproduce a case";
  }
  const char* scheduler = std::getenv("GPUMUX_REPRO_WARP_SCHEDULER");
  const Generated g = random_workload(std::strtoull(seed, nullptr, 10), scheduler != nullptr);
  SimulationSpec spec = g.spec;
  if (scheduler != nullptr) spec.gpu.warp.scheduler = scheduler;
  const char* policy = std::getenv("GPUMUX_REPRO_POLICY");
  spec.policy = policy != nullptr ? policy : "fcfs";
  if (const char* access = std::getenv("GPUMUX_REPRO_ACCESS")) spec.policy_options = {{"access", access}};
  const char* drain = std::getenv("GPUMUX_REPRO_DRAIN");
  spec.preemption = drain != nullptr && std::string(drain) == "1" ? PreemptionMechanism::kDrain
                                                                  : PreemptionMechanism::kContextSwitch;
  if (std::getenv("GPUMUX_REPRO_IN_STEP") != nullptr) spec.run_ahead = false;
  if (std::getenv("GPUMUX_REPRO_NO_INTERFERENCE") != nullptr) spec.gpu.memory.tb_interference = false;
  if (const char* t = std::getenv("GPUMUX_REPRO_TIMELINE")) spec.timeline_path = t;
  const RunResult r = simulate_in_this_process(spec);
  check_counts(spec.workload, r, "reproduced case");
  if (scheduler != nullptr) check_warp_stats(g, r, "reproduced case");
}

}  // namespace
}  // namespace gpumux
