#pragma once
// A streaming multiprocessor at warp fidelity (`sm.model: warp`, Awatramani ch. 3): the warps of
// its resident thread blocks execute their kernel's program (program/program.h), issued by
// `sm.warp.schedulers` warp schedulers, through ALU, SFU and load/store units, with a scoreboard,
// barriers and global memory requests to the memory controller. Resources (registers, shared memory,
// threads, warps, TB slots, the shared-memory carve-out) are held exactly as at TB level
// (sm/tb/tb_sm.h), so every thread-block policy runs unchanged.
//
// Issue. Warps = ceil(threads_per_tb / warp_size) per thread block, each with its own PC. Warp slots are
// handed out round robin over the N schedulers (the k-th slot allocated, lowest free first, belongs to
// scheduler k mod N). Scheduler s issues at most one instruction in each of its issue cycles: the cycles c
// with c mod k = s mod k, k = issue_interval_cycles (Table 3.1: 2 schedulers, one instruction every 2 cycles;
// staggered, so the SM issues one instruction per cycle, what Fermi's 32 ALU lanes take). An instruction can
// issue when its registers, read and written (WAW), have no pending write and its unit takes a new
// instruction (sm/warp/execution_units.h). A scheduler's select() is called only in its issue cycles in which
// at least one of its warps can issue (select() has no side effects; skipping the calls while every warp
// waits keeps memory-bound phases cheap). Results: ALU and SFU after the unit's latency, shared loads after
// shared_memory_latency_cycles, global loads when their memory request completes (and not before
// load_store.latency_cycles, the unit's pipeline). Stores are posted: they occupy the load/store unit only.
// kLoopBack issues like an ALU instruction (ALU unit, no result); a barrier takes the issue slot only.
//
// Long-latency operations (Awatramani 3.3.1 footnote: memory and synchronisation). A warp whose next
// instruction waits for a global load, or that waits at a barrier, is reported to its scheduler
// with long_latency_wait, and with long_latency_done in the cycle the wait ends (two-level
// schedulers move it between their pending and active queues then).
//
// Completion. A warp is done when it has issued its last instruction and its results are written;
// a thread block completes when all its warps are done and all its memory requests (stores too)
// have completed, and only then are its resources released and TbCompletionListener told - so a
// warp that finished early holds its slot (the intra-block tail effect of Awatramani 3.5.5).
//
// Time. Event-driven: the SM is activated only in cycles where something can happen - a warp can
// issue (the earliest cycle over its operands and its unit, on its scheduler's issue grid), a
// long-latency wait ends, or a thread block completes or gets its context back. Cycles in between
// are skipped and their issue slots accounted in bulk. Activations come from WarpWakeups
// (sm/warp/wakeups.h), one SystemC process for all warp-level SMs, SMs due at the same time in
// creation order. An activation at cycle c handles exactly cycle c (never runs ahead of SystemC
// time: the driver may start a thread block at any time, and the memory controller must see
// requests in time order). A thread block started at time t issues from the first cycle after t,
// whatever the delta-cycle order of the processes at t.
//
// Context switch (Tanasic 3.2). save_context() stops issue at once, waits until every memory
// request and pending result of the resident warps is back (and any context restore in progress
// has finished) - the pipeline drain, as long as what was in flight, so context_switch.drain_cycles
// is not used here - then runs the trap routine (context_switch.trap_cycles), then writes the context
// of every resident thread block (registers * 4 + shared memory bytes) through the SM's ContextMover; when
// the write is served the SM reports each thread block with every warp's WarpResume (PC, loop counters,
// barriers passed, done) and releases its resources. A re-issued thread block first reads `restore_bytes`
// back, then its warps continue from their WarpResume with every register ready. After a preemption, a thread
// block of a kernel the SM is not set up for waits for the setup (context_switch.setup_cycles, sm/sm_setup.h)
// before it restores or issues, held like a thread block being restored.
//
// Statistics (WarpSmStats). Issue slots are counted while the SM has an active warp (not finished,
// not being restored, not stopped by a save); an idle slot of a scheduler is charged to one cause:
//   no_warp: the scheduler has no active warp;
//   other:   some warp waits only for an ALU/SFU/shared result or a busy unit (or could issue but
//            the scheduler did not consider it, e.g. outside a two-level ready queue);
//   memory:  otherwise, some warp waits for a global load (the rest at a barrier);
//   barrier: otherwise (every warp waits at a barrier).
// So scheduler_cycles = instructions + idle_memory + idle_barrier + idle_no_warp + idle_other.
// alu_busy_cycles / memory_unit_busy_cycles sum the initiation intervals of the instructions each
// unit took (pipe-cycles; divide by cycles x pipes for a load). Deterministic: ordered containers
// only, ties broken by scheduler index, slot and age.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "core/gpu_config.h"
#include "mem/cache/sector_cache.h"
#include "mem/memory_port.h"
#include "sm/context_mover.h"
#include "sm/sm_model.h"
#include "sm/warp/core_clock.h"
#include "sm/warp/execution_units.h"
#include "sm/warp/memory_requests.h"
#include "sm/warp/phase_trace.h"
#include "sm/warp/warp.h"
#include "sm/warp_scheduler/warp_scheduler.h"

namespace gpumux {

class WarpSm final : public SmModule, private MemoryClient {
 public:
  /// Builds one warp scheduler; the SM fills capacity and ready_queue_size of the setup. top/ passes
  /// one that creates sm.warp.scheduler from the registry (sm/warp_scheduler/registry.h).
  using SchedulerFactory = std::function<std::unique_ptr<WarpScheduler>(const WarpSchedulerSetup&)>;

  /// Global loads and stores, context save and restore traffic (mem/memory_port.h).
  MemoryPort::Socket memory_socket;

  /// What top/ passes: sm.warp.scheduler from the registry (sm/warp_scheduler/registry.h) with
  /// sm.warp.scheduler_options (InputError for an unknown name or option).
  [[nodiscard]] static SchedulerFactory schedulers_from_registry(const GpuConfig& gpu);

  /// InputError when the GPU's warp section cannot run (a unit without lanes, no scheduler).
  /// `context_traffic`: the GPU's context save and restore thread (sm/context_traffic.h).
  WarpSm(const sc_core::sc_module_name& name, SmId id, const GpuConfig& gpu, TbCompletionListener& listener,
         const SchedulerFactory& make_scheduler, ContextTraffic& context_traffic);

  // SmPort.
  [[nodiscard]] bool fits(const TbFootprint& footprint, std::uint32_t shared_memory_config) const override;
  /// InputError naming the kernel when it has no program.
  TimePs start_tb(const TbLaunch& launch) override;
  void save_context() override;
  [[nodiscard]] const SmUsage& usage() const override { return usage_; }
  /// Perf-Sat (Awatramani 4.3.1.3): stalled = idle_memory + idle_other issue slots, counted up to now.
  [[nodiscard]] StallReading stall_reading() override;

  // SmModule.
  [[nodiscard]] tlm::tlm_initiator_socket<>& memory_initiator() override { return memory_socket; }
  [[nodiscard]] SmId id() const override { return id_; }
  [[nodiscard]] TimePs busy_ps() const override;
  [[nodiscard]] std::uint64_t tbs_completed() const override { return tbs_completed_; }
  [[nodiscard]] std::uint32_t resident_tbs() const override { return usage_.thread_blocks; }
  [[nodiscard]] const SmSetup& setup() const override { return setup_; }
  /// Statistics up to the SM's latest activation.
  [[nodiscard]] WarpSmStats warp_stats() const override { return stats_; }
  [[nodiscard]] OpCounts op_counts() const override { return op_counts_; }

  /// Active warps (resident, not finished, not being restored): Awatramani Fig. 3.11.
  [[nodiscard]] std::uint32_t active_warps() const { return static_cast<std::uint32_t>(active_warps_); }
  /// Reports active warps and the instructions issued at each activation (the waveform's per-SM
  /// `active_warps` and `issued`, which hold their values over skipped cycles).
  void set_warp_activity_sink(WarpActivitySink* sink) override { activity_ = sink; }
  /// Warp instructions issued per kernel, indexed by index(KernelId) (absent kernels: 0 or beyond the
  /// end). A thread block's instructions are added when it completes or is saved by a context switch.
  [[nodiscard]] const std::vector<std::uint64_t>* instructions_by_kernel() const override {
    return &instructions_by_kernel_;
  }

  /// `--phase-trace`: the trace to bring up to date before each change to the warps (null: none).
  void set_phase_trace(PhaseTrace* trace) { phase_trace_ = trace; }
  /// Adds this SM's warps to a phase-trace sample taken at the start of `cycle` (phase_trace.h): each
  /// active warp to the phase of its next instruction, each pending register write to the ALU
  /// results or the global loads in flight. InvariantViolation when the warps counted differ from
  /// the active warps.
  void add_phase_counts(std::uint64_t cycle, PhaseSample& sample) const;

 private:
  enum class TbState : std::uint8_t {
    kFree,
    kRestoring,  ///< its context is being read back
    kRunning,    ///< some warp not done
    kFinishing,  ///< every warp done; completes at complete_cycle (memory requests draining)
  };
  struct ResidentTb {
    TbState state = TbState::kFree;
    KernelId kernel{};
    std::uint32_t tb = 0;
    TbFootprint footprint{};
    TimePs start_ps = 0;
    TimePs restore_start_ps = 0;       ///< when its context restore began (resumed thread blocks)
    std::uint64_t sequence = 0;        ///< start order: deterministic tie-break
    std::uint64_t instructions = 0;    ///< issued since it started (or resumed)
    std::vector<std::uint32_t> warps;  ///< SM warp slots, in warp order
    std::uint32_t running_warps = 0;   ///< not done
    std::uint64_t done_cycle = 0;      ///< latest done cycle of its warps
    TimePs memory_done_ps = 0;         ///< latest completion of its memory requests
    std::uint32_t outstanding = 0;     ///< warp accesses the memory has not answered yet (dram model)
    std::uint64_t complete_cycle = 0;  ///< kFinishing: when it completes
    std::uint64_t restored_cycle = 0;  ///< kRestoring: cycle its context is back (all ones: not yet known)
    bool restore_saved = false;        ///< kRestoring: a context save waits for this restore
  };
  /// A long-latency wait that ends at `cycle` (ordered by cycle, then warp age).
  struct WaitEnd {
    std::uint64_t cycle = 0;
    std::uint64_t age = 0;
    std::uint32_t slot = 0;
    bool operator>(const WaitEnd& o) const { return cycle != o.cycle ? cycle > o.cycle : age > o.age; }
  };
  enum IdleCause : std::uint8_t { kIdleNoWarp, kIdleOther, kIdleMemory, kIdleBarrier };
  /// Per scheduler, derived from its warps' HotWarp entries and recomputed only when one of them
  /// changed (`dirty`): the earliest operand-ready cycle of its ready warps per unit they need, and
  /// what its idle slots are charged to.
  struct SchedulerState {
    std::array<std::uint64_t, 4> min_ready{};  ///< by UnitKind (kNone last); all ones: no warp
    IdleCause cause = kIdleNoWarp;
    bool dirty = true;
  };

  /// The WarpQuery a scheduler sees: its own slots, at the cycle being decided.
  class SchedulerView final : public WarpQuery {
   public:
    SchedulerView(const WarpSm& sm, std::uint32_t scheduler) : sm_(sm), scheduler_(scheduler) {}
    [[nodiscard]] bool can_issue(WarpSlot warp) const override;
    [[nodiscard]] std::uint32_t phase_distance(WarpSlot warp) const override;
    [[nodiscard]] std::uint32_t phase_length(WarpSlot warp) const override;

   private:
    /// The SM warp slot, or the SM's warp count when the scheduler slot has no SM slot.
    [[nodiscard]] std::size_t slot(WarpSlot warp) const;
    [[nodiscard]] const program::Instruction* next_instruction(WarpSlot warp) const;
    const WarpSm& sm_;
    std::uint32_t scheduler_;
  };

  /// A warp access whose completion the memory reports later (mem/memory_port.h): its requests
  /// not answered yet, and what to do with the answer.
  struct InFlightAccess {
    std::uint32_t slot = 0;
    std::uint64_t age = 0;  ///< the warp's (a warp cannot leave while it has an access in flight)
    std::uint32_t tb_index = 0;
    program::Reg reg = program::kNoReg;  ///< a load's destination
    bool is_store = false;
    std::uint64_t min_ready = 0;  ///< a load's result never before the load/store pipeline's latency
    std::uint32_t pieces = 0;     ///< requests not answered yet
    TimePs done_ps = 0;           ///< latest completion of its requests so far
  };
  /// Loops enclosing each instruction of a program (loop-back pcs, outermost first): the element
  /// index of a memory access (memory_requests.h).
  struct ProgramLoops {
    const program::Program* program = nullptr;
    std::vector<std::vector<std::uint32_t>> by_pc;
  };

  // The memory side.
  void memory_done(std::uint64_t tag, TimePs done_ps) override;
  /// One request of in-flight access `tag` completed at `done_ps`.
  void access_piece_done(std::uint32_t tag, TimePs done_ps);
  /// Sends one piece of a warp's global access, through the L1 when there is one: raises `done_ps` to
  /// the completion of what is answered now and returns how many requests are answered later
  /// (memory_done). `tag`: the access's in-flight tag.
  std::uint32_t send_piece(bool is_store, const AccessPiece& piece, std::uint32_t tag, std::uint32_t kernel,
                           TimePs& done_ps);
  /// The L1 sectors `mask` of `line` are back at `ready_ps` (they turn valid once that time is reached).
  void schedule_l1_fill(std::uint64_t line, std::uint32_t mask, TimePs ready_ps);
  /// Validates the L1 sectors whose data is back by `now`.
  void land_l1_fills(TimePs now);
  /// The element index of warp `w`'s access at its pc (memory_requests.h).
  [[nodiscard]] std::uint64_t access_element(const Warp& w) const;
  [[nodiscard]] const ProgramLoops& loops_of(const program::Program& p);
  /// The cycle warp `w`'s instruction `inst` has its registers (read and written) ready, at least
  /// `from`; kNoCycle while a load it needs has not been answered. `on_memory`: a global load is
  /// among what it waits for.
  [[nodiscard]] std::uint64_t operands_ready(const Warp& w, const program::Instruction& inst,
                                             std::uint64_t from, bool& on_memory) const;

  // The activation and its parts.
  void activate();
  void complete_due(std::uint64_t cycle);
  void activate_restored(std::uint64_t cycle);
  void deliver_wait_ends(std::uint64_t cycle);
  void issue_slot(std::uint32_t scheduler, std::uint64_t cycle);
  void issue(std::uint32_t slot, std::uint64_t cycle);
  /// After an issue (or at start, resume, release): set up the warp's next instruction.
  void prepare_next(std::uint32_t slot, std::uint64_t cycle);
  void arrive_at_barrier(std::uint32_t slot, std::uint64_t cycle);
  void check_barrier(std::uint32_t tb_index, std::uint32_t barrier, std::uint64_t cycle);
  void finish_warp(std::uint32_t slot, std::uint64_t cycle);
  void activate_warps(std::uint32_t tb_index, std::uint64_t first_cycle);
  void release_tb(std::uint32_t tb_index);
  void restore_done(std::uint32_t tb_index, std::uint64_t sequence, TimePs done_ps);
  void start_save_write();
  void finish_save();
  /// Schedules the next activation (or none) at `from` or later.
  void rearm(std::uint64_t from);
  /// rearm() from outside an activation (the driver, the context mover): from the current time.
  void rearm_now();
  /// Counts the issue slots of cycles [first_unaccounted_, cycle) under the current idle causes.
  void account_to(std::uint64_t cycle);
  void add_idle(IdleCause cause, std::uint64_t slots);
  /// Brings a scheduler's SchedulerState up to date with its warps.
  const SchedulerState& refresh(std::uint32_t scheduler);
  /// The first cycle in which one of the scheduler's warps could issue (operands and unit ready), or
  /// all ones when none is ready to (waiting at a barrier, or no warp).
  [[nodiscard]] std::uint64_t earliest_issue(std::uint32_t scheduler);
  /// The earliest cycle in which a thread block completes or a restored one starts (all ones: none).
  [[nodiscard]] std::uint64_t next_tb_event();
  [[nodiscard]] bool can_issue(const HotWarp& w, std::uint64_t cycle) const {
    return w.state == WarpState::kReady && w.operands_ready <= cycle && unit_free(w.unit) <= cycle;
  }
  /// Marks the scheduler of `slot` for refresh (any change to hot_[slot]).
  void touch(std::uint32_t slot) { scheduler_states_[scheduler_of(slot)].dirty = true; }

  // Issue grid of scheduler s: cycles c with c mod k == s mod k.
  [[nodiscard]] std::uint64_t slot_at_or_after(std::uint32_t scheduler, std::uint64_t cycle) const;
  [[nodiscard]] std::uint64_t slots_before(std::uint32_t scheduler, std::uint64_t cycle) const;
  /// slot / capacity_ (scheduler s owns slots [s * capacity_, (s + 1) * capacity_)), without a
  /// division instruction or a lookup table (a cache line fewer per activation).
  [[nodiscard]] std::uint32_t scheduler_of(std::uint32_t slot) const {
    return static_cast<std::uint32_t>((slot * scheduler_magic_) >> 32U);
  }
  [[nodiscard]] WarpSlot local_slot(std::uint32_t slot) const {
    return slot - scheduler_of(slot) * capacity_;
  }
  [[nodiscard]] ExecutionUnit& unit(UnitKind kind) { return units_[static_cast<std::size_t>(kind)]; }
  [[nodiscard]] const ExecutionUnit& unit(UnitKind kind) const {
    return units_[static_cast<std::size_t>(kind)];
  }
  [[nodiscard]] std::uint64_t unit_free(UnitKind kind) const {
    return kind == UnitKind::kNone ? 0 : units_[static_cast<std::size_t>(kind)].free_cycle();
  }
  void set_active_warps(int n);
  void report_issued(std::uint32_t issued, std::uint32_t units);
  /// Before the warps change: the phase trace's samples due by now (phase_trace.h).
  void catch_up_trace() const {
    if (phase_trace_ != nullptr) phase_trace_->catch_up(now_ps());
  }
  [[nodiscard]] static TimePs now_ps();

  SmId id_;
  const SmResources& limits_;
  TbCompletionListener& listener_;
  CoreClock clock_;
  std::uint32_t warp_size_;
  std::uint32_t num_schedulers_;
  std::uint32_t issue_interval_;
  std::uint32_t shared_latency_;
  std::uint32_t segment_bytes_;
  std::vector<ExecutionUnit> units_;  ///< by UnitKind (kAlu, kSfu, kLoadStore)
  std::vector<std::unique_ptr<WarpScheduler>> schedulers_;
  std::vector<SchedulerView> views_;
  std::vector<SchedulerState> scheduler_states_;
  std::vector<const program::Program*> checked_programs_;
  std::vector<ProgramLoops> program_loops_;

  std::uint32_t capacity_ = 0;                   ///< warp slots per scheduler
  std::vector<std::uint32_t> allocation_order_;  ///< SM warp slots in the order they are handed out
  std::uint64_t scheduler_magic_ = 0;            ///< ceil(2^32 / capacity_), for scheduler_of()
  std::vector<HotWarp> hot_;     ///< by SM warp slot (scheduler s owns [s * capacity_, (s + 1) * capacity_))
  std::vector<Warp> warps_;      ///< by SM warp slot
  std::vector<ResidentTb> tbs_;  ///< by resident-TB index (max_thread_blocks entries)
  std::priority_queue<WaitEnd, std::vector<WaitEnd>, std::greater<>> wait_ends_;
  std::uint64_t next_tb_event_ = 0;  ///< cache of next_tb_event()
  bool tb_events_dirty_ = false;
  std::uint64_t next_age_ = 0;
  std::uint64_t next_sequence_ = 0;

  SmUsage usage_;
  std::uint32_t shared_memory_capacity_ = 0;  ///< carve-out chosen by the first resident TB
  int active_warps_ = 0;
  WarpActivitySink* activity_ = nullptr;
  std::uint32_t last_issued_ = 0;   ///< instructions issued at the latest activation (reported)
  std::uint32_t last_units_ = 0;    ///< the units they went to, a bit per UnitKind (reported)
  std::uint32_t issued_units_ = 0;  ///< the same, gathered by the current activation
  std::uint64_t tbs_completed_ = 0;
  std::vector<std::uint64_t> instructions_by_kernel_;
  TimePs busy_since_ps_ = 0;
  TimePs busy_total_ps_ = 0;
  WarpSmStats stats_;
  OpCounts op_counts_;  ///< the power model's instruction classes (issue())

  // Activation bookkeeping.
  std::uint32_t wake_order_ = 0;                  ///< place in WarpWakeups' activation order
  std::uint64_t wake_generation_ = 0;             ///< of the latest request to WarpWakeups
  std::uint64_t wake_cycle_ = ~std::uint64_t{0};  ///< pending activation (none: all ones)
  std::uint64_t first_unprocessed_ = 0;           ///< cycles before it have been handled
  std::uint64_t first_unaccounted_ = 0;           ///< issue slots before it have been counted
  bool in_activation_ = false;
  PhaseTrace* phase_trace_ = nullptr;
  std::uint64_t decision_cycle_ = 0;  ///< the cycle SchedulerView::can_issue answers for

  MemoryPort memory_;
  // The per-SM L1 for global loads (memory.l1; absent: none). A load's missing sectors are fetched from
  // the memory and turn valid when their data is back (l1_fills_); a load of sectors already being
  // fetched waits for them when their time is known, else asks the memory too.
  std::optional<cache::SectorCache> l1_;
  TimePs l1_hit_ps_ = 0;
  /// (data back, line, sectors), earliest first.
  std::priority_queue<std::tuple<TimePs, std::uint64_t, std::uint32_t>,
                      std::vector<std::tuple<TimePs, std::uint64_t, std::uint32_t>>, std::greater<>>
      l1_fills_;
  /// An L1 fetch answered later (MSHR entry): its line and sectors, and the accesses waiting for it
  /// besides its own (loads of those sectors made meanwhile). A request's tag carries slot + 1 above
  /// bit 32.
  struct L1Fetch {
    std::uint64_t line = 0;
    std::uint32_t mask = 0;
    bool live = false;
    std::vector<std::uint32_t> waiters;  ///< in-flight tags
  };
  std::vector<L1Fetch> l1_fetches_;
  std::vector<std::uint32_t> free_l1_fetches_;
  bool split_accesses_;                    ///< memory.model dram: a scattered access is a request per thread
  std::vector<AccessPiece> pieces_;        ///< scratch: the requests of one access
  std::vector<InFlightAccess> in_flight_;  ///< by tag
  std::vector<std::uint32_t> free_in_flight_;  ///< unused tags
  std::uint32_t outstanding_to_save_ = 0;      ///< a save waits for these accesses' answers
  SmSetup setup_;
  // Context switch.
  TimePs trap_ps_;  ///< GpuConfig context_switch.trap_cycles
  ContextMover mover_;
  bool saving_ = false;  ///< from save_context() to on_context_saved
  std::uint32_t restores_to_save_ = 0;
  TimePs save_ready_ps_ = 0;  ///< every request and result back, every restore in progress done
  TimePs save_requested_ps_ = 0;
  ContextSave save_;  ///< the save under way
  sc_core::sc_event save_write_;
  sc_core::sc_event save_done_;
};

}  // namespace gpumux
