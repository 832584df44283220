// The warp-level SM (sm/warp/warp_sm.h, issue 10 item 4) on its own: one WarpSm, a real memory
// controller, a listener that records completions and saves, and a script thread that starts
// thread blocks and context switches. Programs are built in code. Every figure below is worked out
// by hand in the comments.
//
// Configuration, chosen so every time is a whole number of nanoseconds:
//   core clock 1000 MHz: cycle c begins at c ns. A thread block started at 0 ns issues from cycle 1.
//   2 warp schedulers, one instruction every 2 cycles each, staggered: scheduler 0 (even warp
//   slots) issues in even cycles, scheduler 1 (odd slots) in odd cycles.
//   ALU: 32 lanes (one warp instruction per cycle), latency 4. SFU: 4 lanes (8 cycles per warp),
//   latency 8. Load/store: 32 units, latency 2. Shared memory: 10 cycles. Segments of 128 B.
//   Memory: 128 GB/s (128 B take 1 ns), 100 ns latency. One SM: context traffic at the full
//   bandwidth, in 4 KB bursts.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

#include "common/test_support.h"
#include "config/gpu_loader.h"
#include "core/error.h"
#include "core/kernel_desc.h"
#include "core/processes.h"
#include "core/tlm_quantum.h"
#include "mem/memory_controller.h"
#include "sm/occupancy.h"
#include "sm/warp/wakeups.h"
#include "sm/warp/warp_sm.h"
#include "sm/warp_scheduler/registry.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

using program::Access;
using program::Instruction;
using program::Op;
using program::Program;
using program::Reg;

constexpr TimePs kNs = 1000;

GpuConfig test_gpu() {
  GpuConfig gpu;
  gpu.name = "warp-test";
  gpu.num_sms = 1;
  gpu.core_clock_mhz = 1000;
  gpu.warp_size = 32;
  gpu.sm.registers = 32768;
  gpu.sm.max_threads = 1536;
  gpu.sm.max_thread_blocks = 8;
  gpu.sm.max_warps = 48;
  gpu.sm.shared_memory_configs = {49152};
  gpu.sm.max_resident_kernels = 8;
  gpu.memory.bandwidth_gb_per_s = 128.0;
  gpu.memory.latency_ns = 100.0;
  gpu.context_switch.per_sm_share = true;
  gpu.context_switch.burst_bytes = 4096;
  // Whole 4 KB bursts, so the times below can be worked out by hand (the shipped files cut a save
  // into at least 64 pieces: Validation.ConcurrentSavesOfEverySmEachTakeTanasicTable1Time).
  gpu.context_switch.min_transactions = 1;
  gpu.sm_model = SmModel::kWarp;
  gpu.warp.schedulers = 2;
  gpu.warp.issue_interval_cycles = 2;
  gpu.warp.ready_queue_size = 6;
  gpu.warp.alu = {32, 4};
  gpu.warp.sfu = {4, 8};
  gpu.warp.load_store = {32, 2};
  gpu.warp.shared_memory_latency_cycles = 10;
  gpu.warp.memory_segment_bytes = 128;
  return gpu;
}

// ---- Programs built in code ---------------------------------------------------------------------

Instruction alu(Reg write, std::vector<Reg> reads = {}) {
  Instruction i;
  i.op = Op::kAlu;
  i.write = write;
  i.reads = std::move(reads);
  return i;
}

Instruction sfu(Reg write, std::vector<Reg> reads = {}) {
  Instruction i = alu(write, std::move(reads));
  i.op = Op::kSfu;
  return i;
}

Instruction global_load(Reg write, std::uint32_t bytes, Access access = Access::kCoalesced) {
  Instruction i;
  i.op = Op::kGlobalLoad;
  i.write = write;
  i.bytes = bytes;
  i.access = access;
  return i;
}

Instruction global_store(Reg data, std::uint32_t bytes, Access access = Access::kCoalesced) {
  Instruction i;
  i.op = Op::kGlobalStore;
  i.reads = {data};
  i.bytes = bytes;
  i.access = access;
  return i;
}

Instruction barrier() {
  Instruction i;
  i.op = Op::kBarrier;
  return i;
}

Instruction loop_back(std::uint32_t target, std::vector<std::uint32_t> trips, std::uint8_t depth = 0) {
  Instruction i;
  i.op = Op::kLoopBack;
  i.target = target;
  i.depth = depth;
  i.trip_counts = std::move(trips);
  return i;
}

std::shared_ptr<const Program> make_program(std::vector<Instruction> code) {
  auto p = std::make_shared<Program>();
  p->code = std::move(code);
  p->source = "warp_sm_test";
  for (const Instruction& i : p->code) {
    for (const Reg r : i.reads) p->registers = std::max<std::uint32_t>(p->registers, r + 1U);
    if (i.write != program::kNoReg) p->registers = std::max<std::uint32_t>(p->registers, i.write + 1U);
    if (i.op == Op::kLoopBack) p->loop_depth = std::max<std::uint32_t>(p->loop_depth, i.depth + 1U);
  }
  return p;
}

std::shared_ptr<KernelDesc> kernel(const std::string& name, std::uint32_t warps,
                                   std::shared_ptr<const Program> program) {
  auto k = std::make_shared<KernelDesc>();
  k->name = name;
  k->library = "test";
  k->thread_blocks = 16;
  k->threads_per_tb = warps * 32;
  k->registers_per_tb = warps * 32 * 16;  // 16 registers per thread
  k->shared_memory_per_tb = 1024;
  k->program = std::move(program);
  return k;
}

TbLaunch launch_of(const KernelDesc& k, std::uint32_t tb) {
  TbLaunch l;
  l.kernel = KernelId{0};
  l.desc = &k;
  l.tb = tb;
  l.footprint = footprint_of(k, 32);
  l.shared_memory_config = 49152;
  return l;
}

// ---- A trivial warp scheduler (oldest ready warp first), standing in for the registry's ---------

struct SchedulerLog {
  std::uint64_t waits = 0;
  std::uint64_t dones = 0;
};

class OldestFirst final : public WarpScheduler {
 public:
  OldestFirst(const WarpSchedulerSetup& setup, SchedulerLog& log)
      : resident_(setup.capacity, 0), age_(setup.capacity, 0), log_(log) {}
  [[nodiscard]] std::string name() const override { return "test-oldest-first"; }
  void add_warp(WarpSlot w, std::uint64_t age, const WarpQuery& /*query*/) override {
    if (resident_.at(w) != 0) throw std::logic_error("add_warp: slot already resident");
    resident_[w] = 1;
    age_[w] = age;
  }
  void remove_warp(WarpSlot w) override {
    require(w);
    resident_[w] = 0;
  }
  void long_latency_wait(WarpSlot w) override {
    require(w);
    ++log_.waits;
  }
  void long_latency_done(WarpSlot w, const WarpQuery& /*query*/) override {
    require(w);
    ++log_.dones;
  }
  [[nodiscard]] std::optional<WarpSlot> select(const WarpQuery& query) override {
    std::optional<WarpSlot> best;
    for (WarpSlot w = 0; w < resident_.size(); ++w) {
      if (resident_[w] == 0 || !query.can_issue(w)) continue;
      if (!best || age_[w] < age_[*best]) best = w;
    }
    return best;
  }
  void issued(WarpSlot w) override { require(w); }

 private:
  void require(WarpSlot w) const {
    if (resident_.at(w) == 0) throw std::logic_error("warp slot not resident");
  }
  std::vector<std::uint8_t> resident_;
  std::vector<std::uint64_t> age_;
  SchedulerLog& log_;
};

// ---- The testbench --------------------------------------------------------------------------------

/// Records completions and saves with their times; the script waits on its events.
class Recorder final : public TbCompletionListener {
 public:
  void on_tb_complete(SmId /*sm*/, KernelId /*kernel*/, std::uint32_t tb, TimePs start_ps) override {
    events["done tb" + std::to_string(tb)] = now() / kNs;
    events["start tb" + std::to_string(tb)] = start_ps / kNs;
    ++completions;
    changed.notify(sc_core::SC_ZERO_TIME);
  }
  void on_context_saved(SmId /*sm*/, const std::vector<PreemptedTb>& tbs, const ContextSave& save) override {
    events["saved"] = now() / kNs;
    events["saved bytes"] = save.bytes;
    events["save drained"] = save.drain_ps / kNs;
    events["save writes"] = save.write_start_ps / kNs;
    saved = tbs;
    ++saves;
    changed.notify(sc_core::SC_ZERO_TIME);
  }
  void wait_for_completions(std::uint32_t n) const {
    while (completions < n) sc_core::wait(changed);
  }
  void wait_for_save() const {
    while (saves == 0) sc_core::wait(changed);
  }

  nlohmann::json events = nlohmann::json::object();
  std::vector<PreemptedTb> saved;
  std::uint32_t completions = 0;
  std::uint32_t saves = 0;
  sc_core::sc_event changed;

 private:
  static TimePs now() { return sc_core::sc_time_stamp().value(); }
};

void wait_until(TimePs at_ps) {
  sc_core::wait(sc_core::sc_time::from_value(at_ps - sc_core::sc_time_stamp().value()));
}

nlohmann::json resume_json(const std::vector<PreemptedTb>& saved) {
  nlohmann::json out = nlohmann::json::array();
  for (const PreemptedTb& p : saved) {
    nlohmann::json warps = nlohmann::json::array();
    for (const WarpResume& w : p.resume.warps) {
      warps.push_back(
          {{"pc", w.pc}, {"loops", w.loop_counters}, {"barriers", w.barriers_passed}, {"done", w.done}});
    }
    out.push_back({{"tb", p.tb}, {"warps", warps}});
  }
  return out;
}

using Script = std::function<void(WarpSm&, Recorder&, nlohmann::json&)>;

/// One elaboration: a WarpSm of `gpu` bound to a memory controller; `script` runs in a thread at
/// time zero. Returns events, statistics, the SM's usage at the end and the controller's figures,
/// or the error that stopped the simulation.
nlohmann::json run_scenario(const GpuConfig& gpu, const Script& script,
                            const std::string& registry_scheduler = "") {
  return run_in_child(
      [&] {
        sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
        set_global_quantum();
        Recorder recorder;
        SchedulerLog log;
        auto memory = std::make_unique<MemoryController>("memory", gpu.memory);
        nlohmann::json out;
        auto context_traffic =
            std::make_unique<ContextTraffic>("context_traffic", gpu.memory.model == MemoryModel::kSimple);
        std::unique_ptr<WarpSm> sm;
        try {
          WarpSm::SchedulerFactory factory = [&](const WarpSchedulerSetup& setup) {
            return std::make_unique<OldestFirst>(setup, log);
          };
          if (!registry_scheduler.empty()) {
            GpuConfig named = gpu;
            named.warp.scheduler = registry_scheduler;
            factory = WarpSm::schedulers_from_registry(named);
          }
          sm = std::make_unique<WarpSm>("sm_0", SmId{0}, gpu, recorder, factory, *context_traffic);
        } catch (const std::exception& e) {
          out["error"] = e.what();
          return out;
        }
        sm->memory_socket.bind(memory->socket);
        spawn_thread("script", [&] { script(*sm, recorder, out); });
        sc_core::sc_start();
        test::record_process_failure(out);
        const WarpSmStats s = sm->warp_stats();
        out["events"] = recorder.events;
        out["saved"] = resume_json(recorder.saved);
        out["stats"] = {{"instructions", s.instructions},
                        {"cycles", s.cycles},
                        {"scheduler_cycles", s.scheduler_cycles},
                        {"idle_memory", s.idle_memory},
                        {"idle_barrier", s.idle_barrier},
                        {"idle_no_warp", s.idle_no_warp},
                        {"idle_other", s.idle_other},
                        {"alu_busy_cycles", s.alu_busy_cycles},
                        {"memory_unit_busy_cycles", s.memory_unit_busy_cycles},
                        {"memory_requests", s.memory_requests},
                        {"l1_sector_hits", s.l1_sector_hits},
                        {"l1_sector_misses", s.l1_sector_misses},
                        {"l1_sector_merges", s.l1_sector_merges}};
        out["usage_empty"] = sm->usage().empty();
        out["resident_tbs"] = sm->resident_tbs();
        out["active_warps"] = sm->active_warps();
        out["tbs_completed"] = sm->tbs_completed();
        out["busy_ns"] = sm->busy_ps() / kNs;
        out["transactions"] = memory->transactions();
        out["memory_bytes"] = memory->channel().bytes();
        out["instructions_by_kernel"] = *sm->instructions_by_kernel();
        out["scheduler_waits"] = log.waits;
        out["scheduler_dones"] = log.dones;
        return out;
      },
      120);
}

/// Runs `k`'s thread block 0 alone from 0 ns to its completion.
nlohmann::json run_alone(const std::shared_ptr<KernelDesc>& k, const GpuConfig& gpu = test_gpu()) {
  return run_scenario(gpu, [k](WarpSm& sm, Recorder& rec, nlohmann::json& /*out*/) {
    sm.start_tb(launch_of(*k, 0));
    rec.wait_for_completions(1);
  });
}

/// What every run must satisfy: no error, every issue slot counted once, resources back to zero.
void expect_clean(const nlohmann::json& r) {
  ASSERT_FALSE(r.contains("error")) << r["error"];
  const auto& s = r["stats"];
  EXPECT_EQ(s["scheduler_cycles"].get<std::uint64_t>(),
            s["instructions"].get<std::uint64_t>() + s["idle_memory"].get<std::uint64_t>() +
                s["idle_barrier"].get<std::uint64_t>() + s["idle_no_warp"].get<std::uint64_t>() +
                s["idle_other"].get<std::uint64_t>())
      << s;
  EXPECT_TRUE(r["usage_empty"].get<bool>());
  EXPECT_EQ(r["resident_tbs"], 0);
  EXPECT_EQ(r["active_warps"], 0);
  if (r["saved"].empty()) {
    EXPECT_EQ(r["scheduler_waits"], r["scheduler_dones"]) << "every long-latency wait ended";
  } else {  // a context save removes waiting warps from their scheduler instead
    EXPECT_GE(r["scheduler_waits"].get<std::uint64_t>(), r["scheduler_dones"].get<std::uint64_t>());
  }
}

std::vector<Instruction> independent_alus(std::uint32_t n) {
  std::vector<Instruction> code;
  for (std::uint32_t i = 0; i < n; ++i) code.push_back(alu(static_cast<Reg>(i % 20)));
  return code;
}

// ---- Issue and the scoreboard ---------------------------------------------------------------------

// One warp (slot 0, scheduler 0) issues 50 independent ALU instructions in even cycles 2, 4, .., 100
// (one every issue interval); the last result is ready at 100 + 4 = 104 ns. Scheduler 1 has no warp:
// its slots are idle for lack of warps.
TEST(WarpSm, PureAluWarpIssuesOnceEveryIssueInterval) {
  const nlohmann::json r = run_alone(kernel("alu", 1, make_program(independent_alus(50))));
  expect_clean(r);
  EXPECT_EQ(r["events"]["done tb0"], 104);
  EXPECT_EQ(r["stats"]["instructions"], 50);
  EXPECT_EQ(r["stats"]["alu_busy_cycles"], 50);
  EXPECT_GT(r["stats"]["idle_no_warp"].get<std::uint64_t>(), 40U);
  EXPECT_EQ(r["stats"]["idle_memory"], 0);
  EXPECT_EQ(r["tbs_completed"], 1);
  EXPECT_EQ(r["busy_ns"], 104);
}

// Four warps, two per scheduler: the SM issues one instruction per cycle. Scheduler 1 issues its
// 100 instructions in odd cycles 1 .. 199, scheduler 0 in even cycles 2 .. 200; done at 204 ns.
TEST(WarpSm, TwoStaggeredSchedulersIssueOneInstructionPerCycle) {
  const nlohmann::json r = run_alone(kernel("alu4", 4, make_program(independent_alus(50))));
  expect_clean(r);
  EXPECT_EQ(r["events"]["done tb0"], 204);
  EXPECT_EQ(r["stats"]["instructions"], 200);
  // Every slot from the first issue on was used: only cycle 0's slot (the TB arrived at 0 ns and
  // issues from cycle 1) and the slots while the last results drain are idle.
  EXPECT_LE(r["stats"]["idle_other"].get<std::uint64_t>(), 5U);
}

// A chain of 20 dependent ALU instructions is latency-bound: instruction i issues at 2 + 4 i (its
// operand is ready 4 cycles after the previous one issued, an even cycle, scheduler 0's grid); the
// last result is ready at 2 + 4 * 19 + 4 = 82 ns.
TEST(WarpSm, DependentChainWaitsForEachResult) {
  std::vector<Instruction> code = {alu(0)};
  for (Reg i = 1; i < 20; ++i) code.push_back(alu(static_cast<Reg>(i % 2), {static_cast<Reg>((i - 1) % 2)}));
  const nlohmann::json r = run_alone(kernel("chain", 1, make_program(code)));
  expect_clean(r);
  EXPECT_EQ(r["events"]["done tb0"], 82);
  EXPECT_EQ(r["stats"]["instructions"], 20);
  // Scheduler 0's slots 0 .. 78 (40) while the warp is active, 20 of them issuing; the other 20
  // lost to operands not ready. Scheduler 1 has no warp.
  EXPECT_EQ(r["stats"]["idle_other"], 20);
  EXPECT_EQ(r["stats"]["idle_no_warp"], 39);
}

// Four SFU instructions, independent: the 4 SFUs take a warp in 8 cycles, so they issue at 2, 10,
// 18, 26; the last result is ready at 26 + 8 = 34 ns.
TEST(WarpSm, NarrowUnitLimitsIssue) {
  const nlohmann::json r = run_alone(kernel("sfu", 1, make_program({sfu(0), sfu(1), sfu(2), sfu(3)})));
  expect_clean(r);
  EXPECT_EQ(r["events"]["done tb0"], 34);
}

// ---- Global memory --------------------------------------------------------------------------------

// A load at cycle 2 (2 ns): 128 B served 2-3 ns, data back 100 ns later at 103 ns. The dependent ALU
// instruction issues in scheduler 0's first slot from there, 104, and its result is ready at 108.
// Meanwhile scheduler 0's slots are lost waiting on memory, and the scheduler was told.
TEST(WarpSm, DependentInstructionWaitsForTheLoad) {
  const nlohmann::json r = run_alone(kernel("load", 1, make_program({global_load(0, 128), alu(1, {0})})));
  expect_clean(r);
  EXPECT_EQ(r["events"]["done tb0"], 108);
  EXPECT_EQ(r["transactions"], 1);
  EXPECT_EQ(r["memory_bytes"], 128);
  EXPECT_EQ(r["stats"]["memory_requests"], 1);
  EXPECT_GE(r["stats"]["idle_memory"].get<std::uint64_t>(), 49U);  // even cycles 4 .. 102
  EXPECT_EQ(r["scheduler_waits"], 1);
}

// Coalesced bytes are rounded up to 128-byte segments (130 B -> 256 B: 2 ns of service, data at
// 2 + 2 + 100 = 104, ALU at 104, done 108); a scattered access moves one segment per thread
// (32 x 128 B = 4 KB: 32 ns, data at 134, ALU at 134, done 138).
TEST(WarpSm, CoalescedAndScatteredAccessesMoveWholeSegments) {
  const nlohmann::json coalesced =
      run_alone(kernel("coalesced", 1, make_program({global_load(0, 130), alu(1, {0})})));
  expect_clean(coalesced);
  EXPECT_EQ(coalesced["memory_bytes"], 256);
  EXPECT_EQ(coalesced["events"]["done tb0"], 108);
  const nlohmann::json scattered =
      run_alone(kernel("scattered", 1, make_program({global_load(0, 128, Access::kScattered), alu(1, {0})})));
  expect_clean(scattered);
  EXPECT_EQ(scattered["memory_bytes"], 4096);
  EXPECT_EQ(scattered["events"]["done tb0"], 138);
}

// Two warps overlap their memory latency. Warp 1 (scheduler 1) loads at cycle 1 (served 1-2 ns, data
// at 102), warp 0 at cycle 2 (served 2-3, data at 103). Warp 1's ALU issues at 103 (odd), warp 0's
// at 104; done at 108 - the single warp's time, not twice it.
TEST(WarpSm, TwoWarpsOverlapMemoryLatency) {
  const nlohmann::json r = run_alone(kernel("load2", 2, make_program({global_load(0, 128), alu(1, {0})})));
  expect_clean(r);
  EXPECT_EQ(r["events"]["done tb0"], 108);
  EXPECT_EQ(r["transactions"], 2);
}

// ---- The per-SM L1 (memory.l1) and broadcast loads ---------------------------------------------------

/// The test GPU with a 16 KB L1: 4 ways, 128 B lines of 32 B sectors, hits in 20 cycles (20 ns).
GpuConfig gpu_with_l1() {
  GpuConfig gpu = test_gpu();
  gpu.memory.l1.cache.capacity_bytes = std::uint64_t{16} * 1024;
  gpu.memory.l1.cache.associativity = 4;
  gpu.memory.l1.cache.line_bytes = 128;
  gpu.memory.l1.cache.sector_bytes = 32;
  gpu.memory.l1.cache.write_back = false;
  gpu.memory.l1.cache.write_through_invalidates = true;
  gpu.memory.l1.hit_latency_cycles = 20;
  return gpu;
}

// A broadcast load: both warps of the thread block read the same 128 B. Without an L1 each warp asks
// the memory (two transactions, the times of TwoWarpsOverlapMemoryLatency: done 108). With one, warp 1
// (cycle 1) misses its four sectors and fetches them (served 1-2 ns, back at 102); warp 0 (cycle 2)
// finds them being fetched, with a known time, and waits for that fill: its data is back at 102 too,
// so its ALU issues at 102 (even) and warp 1's at 103 (odd): done 107, one transaction.
TEST(WarpSm, BroadcastLoadOfAThreadBlockIsFetchedOnceThroughTheL1) {
  const auto k = kernel("bcast", 2, make_program({global_load(0, 128, Access::kBroadcast), alu(1, {0})}));
  const nlohmann::json without = run_alone(k);
  expect_clean(without);
  EXPECT_EQ(without["transactions"], 2);
  EXPECT_EQ(without["events"]["done tb0"], 108);
  EXPECT_EQ(without["stats"]["l1_sector_misses"], 0);
  const nlohmann::json with = run_alone(k, gpu_with_l1());
  expect_clean(with);
  EXPECT_EQ(with["transactions"], 1);
  EXPECT_EQ(with["memory_bytes"], 128);
  EXPECT_EQ(with["events"]["done tb0"], 107);
  EXPECT_EQ(with["stats"]["l1_sector_misses"], 4);
  EXPECT_EQ(with["stats"]["l1_sector_merges"], 4);
  EXPECT_EQ(with["stats"]["l1_sector_hits"], 0);
  // Coalesced loads of the two warps are different elements: the L1 fetches both.
  const nlohmann::json coalesced =
      run_alone(kernel("coal", 2, make_program({global_load(0, 128), alu(1, {0})})), gpu_with_l1());
  expect_clean(coalesced);
  EXPECT_EQ(coalesced["transactions"], 2);
  EXPECT_EQ(coalesced["stats"]["l1_sector_misses"], 8);
}

// A hit once the fill has landed: warp 0 loops once, loads at cycle 6 (served 6-7, back at 107); warp 1
// loops 100 times (200 instructions in odd cycles 1 .. 399), so its load issues at 401, finds the
// line valid and has its data 20 cycles later, at 421; its ALU issues at 421 (odd) and ends at 425.
TEST(WarpSm, AL1HitAfterTheFillHasLandedTakesTheHitLatency) {
  const auto k = kernel(
      "late", 2,
      make_program({alu(2), loop_back(0, {1, 100}), global_load(0, 128, Access::kBroadcast), alu(1, {0})}));
  const nlohmann::json r = run_alone(k, gpu_with_l1());
  expect_clean(r);
  EXPECT_EQ(r["transactions"], 1);
  EXPECT_EQ(r["stats"]["l1_sector_hits"], 4);
  EXPECT_EQ(r["stats"]["l1_sector_misses"], 4);
  EXPECT_EQ(r["events"]["done tb0"], 425);
}

// Under the dram memory a miss is answered late (its time is unknown when the next warp asks), so the
// L1 holds the other warps' loads of the line until the fetch's answer (an MSHR): one thread block of 8
// warps reading 128 B broadcast on the K20c fetches 4 sectors once; the L2 sees those 4 misses and no
// merges (without the L1 it sees 4 misses and 28 merges), and every warp's load completes.
TEST(WarpSm, TheL1HoldsLoadsOfALineBeingFetchedUntilItsLateAnswer) {
  GpuConfig gpu = load_gpu_config(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/kepler-k20c.yaml");
  gpu.sm_model = SmModel::kWarp;
  gpu.memory.model = MemoryModel::kDram;
  gpu.warp.scheduler = "gto";  // the programs built here have no phase annotation (phase-aware needs it)
  auto k = kernel("table", 8, make_program({global_load(0, 128, Access::kBroadcast), alu(1, {0})}));
  k->thread_blocks = 1;
  k->tb_time.mean_ps = 1'000'000;  // the TB level's time: unused at the warp level, but a kernel has one
  const RunResult without = simulate(test::alone_fixed(gpu, k));
  EXPECT_EQ(without.memory.dram.at("l2").at("sector_misses"), 4);
  EXPECT_EQ(without.memory.dram.at("l2").at("sector_merges"), 28);
  gpu.memory.l1 = gpu_with_l1().memory.l1;
  const RunResult with = simulate(test::alone_fixed(gpu, k));
  EXPECT_EQ(with.memory.dram.at("l2").at("sector_misses"), 4);
  EXPECT_EQ(with.memory.dram.at("l2").at("sector_merges"), 0);
  std::uint64_t misses = 0;
  std::uint64_t merges = 0;
  for (const SmRecord& sm : with.sms) {
    misses += sm.warp.l1_sector_misses;
    merges += sm.warp.l1_sector_merges;
  }
  EXPECT_EQ(misses, 4U);
  EXPECT_EQ(merges, 28U);
  ASSERT_EQ(with.kernels.size(), 1U);
  EXPECT_LE(with.kernels[0].end_ps - with.kernels[0].start_ps,
            without.kernels[0].end_ps - without.kernels[0].start_ps);
}

// Stores are posted: the store issues at 6 (its data r0 is ready 2 + 4 cycles after the first ALU
// instruction), the warp goes on (ALU at 8, result at 12), but the thread block completes only when
// the store's 4 KB (scattered) have been taken by the channel: 6 + 32 = 38 ns.
TEST(WarpSm, ThreadBlockWaitsForItsStores) {
  const nlohmann::json r =
      run_alone(kernel("store", 1, make_program({alu(0), global_store(0, 128, Access::kScattered), alu(1)})));
  expect_clean(r);
  EXPECT_EQ(r["events"]["done tb0"], 38);
  EXPECT_EQ(r["memory_bytes"], 4096);
}

// ---- Barriers and thread-block completion -----------------------------------------------------------

// Warp 0 loops 10 times over {alu r0; loop-back}, warp 1 once, then both meet at a barrier and run
// one ALU instruction reading r0.
//   Warp 1 (odd cycles): alu at 1, loop-back at 3, arrives at the barrier and waits.
//   Warp 0 (even cycles): alu at 2 + 4i (WAW on r0, latency 4), loop-back at 4 + 4i, i = 0..9; the
//   last loop-back at 40, arrival at 40: both released, ready at 41.
//   Barrier issues: warp 1 at 41, warp 0 at 42; the ALUs: warp 1 at 43, warp 0 at 44 (r0 of its
//   last alu at 38 is ready at 42). Done: 44 + 4 = 48 ns. Instructions: 22 + 4 = 26.
std::shared_ptr<KernelDesc> barrier_kernel() {
  return kernel("barrier", 2, make_program({alu(0), loop_back(0, {10, 1}), barrier(), alu(1, {0})}));
}

TEST(WarpSm, BarrierHoldsWarpsUntilAllArrive) {
  const nlohmann::json r = run_alone(barrier_kernel());
  expect_clean(r);
  EXPECT_EQ(r["events"]["done tb0"], 48);
  EXPECT_EQ(r["stats"]["instructions"], 26);
  // Scheduler 1's slots 5 .. 39 (18 of them) while warp 1 waits at the barrier.
  EXPECT_EQ(r["stats"]["idle_barrier"], 18);
}

// Without the barrier, warp 1 finishes at cycle 5 (loop-back at 3 plus its alu's result at 1 + 4)
// but the thread block completes only with warp 0: last alu at 38, result at 42. In between one
// warp is active.
TEST(WarpSm, ThreadBlockCompletesWhenItsLastWarpIsDone) {
  const auto k = kernel("tail", 2, make_program({alu(0), loop_back(0, {10, 1})}));
  const nlohmann::json r = run_scenario(test_gpu(), [k](WarpSm& sm, Recorder& rec, nlohmann::json& out) {
    sm.start_tb(launch_of(*k, 0));
    out["active_at_0"] = sm.active_warps();
    wait_until(20 * kNs);
    out["active_at_20"] = sm.active_warps();
    out["resident_at_20"] = sm.resident_tbs();
    rec.wait_for_completions(1);
  });
  expect_clean(r);
  EXPECT_EQ(r["active_at_0"], 2);
  EXPECT_EQ(r["active_at_20"], 1);
  EXPECT_EQ(r["resident_at_20"], 1);
  EXPECT_EQ(r["events"]["done tb0"], 42);
  EXPECT_EQ(r["stats"]["instructions"], 22);
}

// Two thread blocks; a third starts when the first completes and fits in the freed slots.
TEST(WarpSm, ResourcesReturnToZero) {
  const auto k = kernel("many", 8, make_program({global_load(0, 256), alu(1, {0}), global_store(1, 256)}));
  const nlohmann::json r = run_scenario(test_gpu(), [k](WarpSm& sm, Recorder& rec, nlohmann::json& out) {
    sm.start_tb(launch_of(*k, 0));
    sm.start_tb(launch_of(*k, 1));
    out["usage_warps"] = sm.usage().warps;
    rec.wait_for_completions(1);
    sm.start_tb(launch_of(*k, 2));
    rec.wait_for_completions(3);
  });
  expect_clean(r);
  EXPECT_EQ(r["usage_warps"], 16);
  EXPECT_EQ(r["tbs_completed"], 3);
  EXPECT_EQ(r["stats"]["instructions"], 3 * 8 * 3);
  EXPECT_EQ(r["instructions_by_kernel"], nlohmann::json::array({3 * 8 * 3}));
  EXPECT_EQ(r["transactions"], 3 * 8 * 2);
}

// Every registered warp scheduler runs a mixed program (loads, a per-warp loop, a barrier, stores)
// on several thread blocks to the end: the same instructions and memory requests whatever the order
// of issue, resources back to zero. Times differ by scheduler; each is deterministic.
TEST(WarpSm, EveryRegisteredSchedulerRunsProgramsToCompletion) {
  const auto k = kernel("mixed", 6,
                        make_program({global_load(0, 128), alu(1, {0}), alu(2, {1}), loop_back(1, {3, 1, 2}),
                                      barrier(), sfu(3, {2}), global_store(3, 256), alu(4, {3})}));
  // Per warp: 1 load + (2 ALU + loop-back) x trips + barrier + SFU + store + ALU; trips 3, 1, 2, 3, 1, 2.
  const std::uint64_t per_tb = 6 * 5 + 3 * (3 + 1 + 2 + 3 + 1 + 2);
  for (const std::string& name : warp_scheduler_names()) {
    SCOPED_TRACE(name);
    const auto script = [k](WarpSm& sm, Recorder& rec, nlohmann::json& /*out*/) {
      for (std::uint32_t tb = 0; tb < 4; ++tb) sm.start_tb(launch_of(*k, tb));
      rec.wait_for_completions(4);
    };
    const nlohmann::json r = run_scenario(test_gpu(), script, name);
    ASSERT_FALSE(r.contains("error")) << r["error"];
    EXPECT_EQ(r["stats"]["instructions"], 4 * per_tb);
    EXPECT_EQ(r["transactions"], 4 * 6 * 2);
    EXPECT_EQ(r["tbs_completed"], 4);
    EXPECT_TRUE(r["usage_empty"].get<bool>());
    const auto& s = r["stats"];
    EXPECT_EQ(s["scheduler_cycles"].get<std::uint64_t>(),
              s["instructions"].get<std::uint64_t>() + s["idle_memory"].get<std::uint64_t>() +
                  s["idle_barrier"].get<std::uint64_t>() + s["idle_no_warp"].get<std::uint64_t>() +
                  s["idle_other"].get<std::uint64_t>());
    EXPECT_EQ(run_scenario(test_gpu(), script, name)["events"], r["events"]) << "deterministic";
  }
}

// ---- Context switch ---------------------------------------------------------------------------------

// A loop of 50 x {alu r0; alu r1 <- r0; loop-back} in two warps: 150 instructions each. A save at
// 100 ns stops both mid-loop; the context (2 warps x 32 threads x 16 registers x 4 B + 1 KB shared)
// goes to memory; the thread block is re-issued with its WarpResume, restores its context and runs
// only what it had left: 300 instructions in all.
TEST(WarpSm, ContextSaveAndResumeConserveInstructions) {
  const auto k = kernel("loop", 2, make_program({alu(0), alu(1, {0}), loop_back(0, {50})}));
  const nlohmann::json r = run_scenario(test_gpu(), [k](WarpSm& sm, Recorder& rec, nlohmann::json& out) {
    sm.start_tb(launch_of(*k, 0));
    wait_until(100 * kNs);
    sm.save_context();
    out["fits_while_saving"] = sm.fits(footprint_of(*k, 32), 49152);
    rec.wait_for_save();
    out["instructions_at_save"] = sm.warp_stats().instructions;
    out["usage_after_save_empty"] = sm.usage().empty();
    TbLaunch again = launch_of(*k, 0);
    again.resumed = true;
    again.resume = rec.saved.at(0).resume;
    again.restore_bytes = context_bytes(again.footprint);
    sm.start_tb(again);
    rec.wait_for_completions(1);
  });
  expect_clean(r);
  EXPECT_FALSE(r["fits_while_saving"].get<bool>());
  EXPECT_TRUE(r["usage_after_save_empty"].get<bool>());
  EXPECT_EQ(r["events"]["saved bytes"], 2 * 32 * 16 * 4 + 1024);
  ASSERT_EQ(r["saved"].size(), 1U);
  const auto& warps = r["saved"][0]["warps"];
  ASSERT_EQ(warps.size(), 2U);
  for (const auto& w : warps) {
    EXPECT_FALSE(w["done"].get<bool>());
    EXPECT_GT(w["loops"][0].get<std::uint32_t>(), 10U) << w;  // ~100 cycles of 3 instructions per 8
    EXPECT_LT(w["loops"][0].get<std::uint32_t>(), 50U) << w;
  }
  const auto at_save = r["instructions_at_save"].get<std::uint64_t>();
  EXPECT_GT(at_save, 50U);
  EXPECT_LT(at_save, 300U);
  EXPECT_EQ(r["stats"]["instructions"], 300) << "the resumed warps ran only what was left";
  EXPECT_EQ(r["instructions_by_kernel"], nlohmann::json::array({300}));
  EXPECT_GT(r["events"]["done tb0"].get<std::uint64_t>(), r["events"]["saved"].get<std::uint64_t>());
}

// The save waits for a load in flight: the scattered 4 KB load issued at 2 ns (served 2-34 ns) has
// its data back at 134 ns; only then is the 3 KB context (32 threads x 16 registers x 4 B + 1 KB
// shared) written: one burst, sent once the SM's share (all 128 GB/s here) has carried it, at
// 134 + 24 = 158 ns, taken by the channel at 182 ns. The resumed warp continues at its ALU
// instruction (pc 1) and does not load again.
TEST(WarpSm, SaveWaitsForMemoryInFlight) {
  const auto k = kernel("inflight", 1, make_program({global_load(0, 128, Access::kScattered), alu(1, {0})}));
  const nlohmann::json r = run_scenario(test_gpu(), [k](WarpSm& sm, Recorder& rec, nlohmann::json& /*out*/) {
    sm.start_tb(launch_of(*k, 0));
    wait_until(5 * kNs);
    sm.save_context();
    rec.wait_for_save();
    TbLaunch again = launch_of(*k, 0);
    again.resumed = true;
    again.resume = rec.saved.at(0).resume;
    again.restore_bytes = 1024;
    sm.start_tb(again);
    rec.wait_for_completions(1);
  });
  expect_clean(r);
  EXPECT_EQ(r["events"]["saved"], 182);
  EXPECT_EQ(r["events"]["saved bytes"], 3072);
  EXPECT_EQ(r["saved"][0]["warps"][0]["pc"], 1);
  EXPECT_EQ(r["stats"]["instructions"], 2);
  EXPECT_EQ(r["stats"]["memory_requests"], 1);
}

// Preemption latencies at the warp level (issue 11 item 4): the same load in flight with a 40-cycle
// setup and a 30-cycle trap routine. The thread block, the SM's first after a preemption (as the
// driver marks it), waits 40 ns for the SM's setup (start_tb says so); the save, requested at 45 ns, waits
// for the load (the drain, what was in flight, not a configured time), then for the trap routine, then writes
// as before (one burst: 24 ns to carry, 24 ns on the channel). The restored thread block is of the kernel the
// SM is set up for: no setup.
TEST(WarpSm, SaveRunsTheTrapRoutineAfterTheDrainAndANewKernelWaitsForTheSetup) {
  const auto k = kernel("inflight", 1, make_program({global_load(0, 128, Access::kScattered), alu(1, {0})}));
  GpuConfig gpu = test_gpu();
  gpu.context_switch.trap_cycles = 30;
  gpu.context_switch.setup_cycles = 40;
  gpu.context_switch.drain_cycles = 1000;  // TB level only: the warp-level SM drains what is in flight
  const nlohmann::json r = run_scenario(gpu, [k](WarpSm& sm, Recorder& rec, nlohmann::json& out) {
    TbLaunch first = launch_of(*k, 0);
    first.after_preemption = true;
    out["setup_wait_ns"] = sm.start_tb(first) / kNs;
    wait_until(45 * kNs);
    sm.save_context();
    rec.wait_for_save();
    TbLaunch again = launch_of(*k, 0);
    again.resumed = true;
    again.resume = rec.saved.at(0).resume;
    again.restore_bytes = 1024;
    again.after_preemption = true;
    out["restore_setup_wait_ns"] = sm.start_tb(again) / kNs;
    rec.wait_for_completions(1);
  });
  expect_clean(r);
  EXPECT_EQ(r["setup_wait_ns"], 40);
  EXPECT_EQ(r["restore_setup_wait_ns"], 0);
  const auto drained = r["events"]["save drained"].get<std::uint64_t>();
  EXPECT_GT(drained, 0U);     // the load was in flight at 45 ns
  EXPECT_LT(drained, 1000U);  // and drain_cycles is not used
  EXPECT_EQ(r["events"]["save writes"], 45 + drained + 30);
  EXPECT_EQ(r["events"]["saved"], 45 + drained + 30 + 48);
  EXPECT_EQ(r["saved"][0]["warps"][0]["pc"], 1);
}

// A save while warp 1 waits at the barrier and warp 0 loops (20 ns): warp 1 is saved at the barrier
// (pc 2, no barrier passed); after the restore both meet there again and the run ends with the same
// 26 instructions as without the switch.
TEST(WarpSm, SaveAtABarrierResumesAtIt) {
  const auto k = barrier_kernel();
  const nlohmann::json r = run_scenario(test_gpu(), [k](WarpSm& sm, Recorder& rec, nlohmann::json& /*out*/) {
    sm.start_tb(launch_of(*k, 0));
    wait_until(20 * kNs);
    sm.save_context();
    rec.wait_for_save();
    TbLaunch again = launch_of(*k, 0);
    again.resumed = true;
    again.resume = rec.saved.at(0).resume;
    again.restore_bytes = 4096;
    sm.start_tb(again);
    rec.wait_for_completions(1);
  });
  expect_clean(r);
  const auto& warp1 = r["saved"][0]["warps"][1];
  EXPECT_EQ(warp1["pc"], 2);
  EXPECT_EQ(warp1["barriers"], 0);
  EXPECT_EQ(r["stats"]["instructions"], 26);
}

// ---- The shared wake-up process (sm/warp/wakeups.h) -------------------------------------------------

TEST(WarpWakeups, ServesTheLatestRequestPerSmInTimeThenCreationOrder) {
  // 130 targets (three words of SM bits). Requests at 0 ns: SM 129, 3 and 70 at 10 ns, SM 5 at 20 ns
  // then again at 10 ns (the 20 ns request is withdrawn), SM 64 at 30 ns. At 10 ns SM 70 asks for
  // SM 1 now (below the SMs served so far: next) and for itself at 15 ns; SM 129 moves SM 64 from
  // 30 ns to now. Expected, as (ns, SM, generation): (10,3,1) (10,5,2) (10,70,1) (10,1,1) (10,129,1)
  // (10,64,2) (15,70,2); nothing at 20 or 30 ns.
  const nlohmann::json r = run_in_child([] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    WarpWakeups& wakeups = WarpWakeups::instance();
    nlohmann::json log = nlohmann::json::array();
    for (std::uint32_t order = 0; order < 130; ++order) {
      const std::uint32_t added = wakeups.add([&wakeups, &log, order](std::uint64_t generation) {
        const TimePs now = sc_core::sc_time_stamp().value();
        log.push_back({now / kNs, order, generation});
        if (order == 70 && generation == 1) {
          wakeups.request(1, now, 1);
          wakeups.request(70, now + 5 * kNs, 2);
        }
        if (order == 129) wakeups.request(64, now, 2);
      });
      EXPECT_EQ(added, order);
    }
    spawn_thread("script", [&wakeups] {
      wakeups.request(129, 10 * kNs, 1);
      wakeups.request(3, 10 * kNs, 1);
      wakeups.request(70, 10 * kNs, 1);
      wakeups.request(5, 20 * kNs, 1);
      wakeups.request(5, 10 * kNs, 2);
      wakeups.request(64, 30 * kNs, 1);
    });
    sc_core::sc_start();
    return nlohmann::json{{"log", log}};
  });
  const nlohmann::json expected =
      nlohmann::json::parse("[[10,3,1],[10,5,2],[10,70,1],[10,1,1],[10,129,1],[10,64,2],[15,70,2]]");
  EXPECT_EQ(r.at("log"), expected) << r;
}

// ---- Errors ---------------------------------------------------------------------------------------

TEST(WarpSm, KernelWithoutProgramIsAnInputError) {
  auto k = kernel("no_program_kernel", 1, nullptr);
  k->where = SourceLocation{"kernels.yaml", 12, 5};
  const nlohmann::json r = run_scenario(test_gpu(), [k](WarpSm& sm, Recorder& /*rec*/, nlohmann::json& out) {
    try {
      sm.start_tb(launch_of(*k, 0));
    } catch (const InputError& e) {
      out["input_error"] = e.what();
    }
  });
  ASSERT_TRUE(r.contains("input_error")) << r;
  const std::string message = r["input_error"];
  EXPECT_NE(message.find("kernels.yaml:12:5"), std::string::npos) << message;
  EXPECT_NE(message.find("no_program_kernel"), std::string::npos) << message;
  EXPECT_NE(message.find("program"), std::string::npos) << message;
}

TEST(WarpSm, UnitWithoutLanesIsAnInputError) {
  GpuConfig gpu = test_gpu();
  gpu.warp.sfu.count = 0;
  const nlohmann::json r = run_scenario(gpu, [](WarpSm&, Recorder&, nlohmann::json&) {});
  ASSERT_TRUE(r.contains("error"));
  EXPECT_NE(r["error"].get<std::string>().find("sm.warp.sfu.count"), std::string::npos) << r["error"];
}

}  // namespace
}  // namespace gpumux
