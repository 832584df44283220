#include "sm/warp/warp_sm.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/kernel_desc.h"
#include "core/processes.h"
#include "sm/warp/wakeups.h"
#include "sm/warp_scheduler/registry.h"

namespace gpumux {

namespace {

/// A slot of `pool` for a new entry: a freed one (from `free`), else one more at the end.
template <typename T>
std::uint32_t take_slot(std::vector<T>& pool, std::vector<std::uint32_t>& free) {
  if (free.empty()) {
    pool.emplace_back();
    return static_cast<std::uint32_t>(pool.size() - 1);
  }
  const std::uint32_t slot = free.back();
  free.pop_back();
  return slot;
}

constexpr std::uint64_t kNoCycle = ~std::uint64_t{0};

/// Checks what the warp-level SM relies on (the program loader guarantees it for files; programs
/// built in code, by tests, get the same check): registers within Program::registers, loops within
/// loop_depth, loop targets backwards with positive trip counts.
void check_program(const program::Program& p, const std::string& kernel) {
  const auto fail = [&](std::size_t pc, const std::string& what) {
    throw InvariantViolation("program of kernel '" + kernel + "', instruction " + std::to_string(pc) + ": " +
                             what);
  };
  for (std::size_t pc = 0; pc < p.code.size(); ++pc) {
    const program::Instruction& inst = p.code[pc];
    for (const program::Reg r : inst.reads) {
      if (r >= p.registers) fail(pc, "reads r" + std::to_string(r) + " beyond its registers");
    }
    if (inst.write != program::kNoReg && inst.write >= p.registers) {
      fail(pc, "writes r" + std::to_string(inst.write) + " beyond its registers");
    }
    if (inst.op == program::Op::kLoopBack) {
      if (inst.depth >= p.loop_depth) fail(pc, "loop depth beyond the program's loop_depth");
      if (inst.target > pc) fail(pc, "loop target after the loop-back");
      if (inst.trip_counts.empty()) fail(pc, "loop without a trip count");
      for (const std::uint32_t n : inst.trip_counts) {
        if (n == 0) fail(pc, "loop trip count 0");
      }
    }
    if (!p.phases.empty() && inst.phase >= p.phases.size()) fail(pc, "phase index beyond the phases");
  }
}

}  // namespace

// ---- The scheduler's view ------------------------------------------------------------------------

std::size_t WarpSm::SchedulerView::slot(WarpSlot warp) const {
  return warp < sm_.capacity_ ? static_cast<std::size_t>(scheduler_) * sm_.capacity_ + warp : sm_.hot_.size();
}

bool WarpSm::SchedulerView::can_issue(WarpSlot warp) const {
  const std::size_t s = slot(warp);
  return s < sm_.hot_.size() && sm_.can_issue(sm_.hot_[s], sm_.decision_cycle_);
}

const program::Instruction* WarpSm::SchedulerView::next_instruction(WarpSlot warp) const {
  const std::size_t s = slot(warp);
  if (s >= sm_.hot_.size() || sm_.hot_[s].state == WarpState::kFree) return nullptr;
  const Warp& w = sm_.warps_[s];
  if (w.program == nullptr || w.pc >= w.program->code.size()) return nullptr;
  return &w.program->code[w.pc];
}

std::uint32_t WarpSm::SchedulerView::phase_distance(WarpSlot warp) const {
  const program::Instruction* inst = next_instruction(warp);
  return inst == nullptr ? 0 : inst->phase_distance;
}

std::uint32_t WarpSm::SchedulerView::phase_length(WarpSlot warp) const {
  const program::Instruction* inst = next_instruction(warp);
  if (inst == nullptr) return 0;
  const auto& phases = sm_.warps_[slot(warp)].program->phases;
  return inst->phase < phases.size() ? phases[inst->phase].length : 0;
}

// ---- Construction --------------------------------------------------------------------------------

WarpSm::SchedulerFactory WarpSm::schedulers_from_registry(const GpuConfig& gpu) {
  return [name = gpu.warp.scheduler, options = gpu.warp.scheduler_options](const WarpSchedulerSetup& setup) {
    return create_warp_scheduler(name, options, setup);
  };
}

WarpSm::WarpSm(const sc_core::sc_module_name& name, SmId id, const GpuConfig& gpu,
               TbCompletionListener& listener, const SchedulerFactory& make_scheduler,
               ContextTraffic& context_traffic)
    : SmModule(name),
      memory_socket("memory_socket"),
      id_(id),
      limits_(gpu.sm),
      listener_(listener),
      clock_(gpu.core_clock_mhz),
      warp_size_(gpu.warp_size),
      num_schedulers_(gpu.warp.schedulers),
      issue_interval_(gpu.warp.issue_interval_cycles),
      shared_latency_(gpu.warp.shared_memory_latency_cycles),
      segment_bytes_(gpu.warp.memory_segment_bytes),
      memory_(memory_socket, std::string(basename()),
              std::max(gpu.context_switch.burst_bytes, gpu.warp_size * gpu.warp.memory_segment_bytes)),
      split_accesses_(gpu.memory.model == MemoryModel::kDram),
      setup_(gpu.cycles_to_ps(gpu.context_switch.setup_cycles), gpu.sm.max_resident_kernels),
      trap_ps_(gpu.cycles_to_ps(gpu.context_switch.trap_cycles)),
      mover_(memory_, gpu, id, context_traffic) {
  const SourceLocation where{gpu.source_file, 0, 0};
  if (gpu.warp.alu.count == 0 && gpu.warp.sfu.count == 0 && gpu.warp.load_store.count == 0) {
    throw InputError(where, "sm.warp",
                     "GPU '" + gpu.name +
                         "' has no sm.warp section, which the warp-level SM (sm.model: warp) needs: its "
                         "warp schedulers and execution units (docs/config.md)");
  }
  // The loader checks these ranges for files (docs/config.md); a GpuConfig built in code gets the
  // same refusal instead of a division by zero.
  const auto require = [&](bool ok, const char* key) {
    if (!ok) throw InputError(where, key, "must be positive for the warp-level SM (GPU '" + gpu.name + "')");
  };
  require(gpu.warp_size > 0, "warp_size");
  require(num_schedulers_ > 0, "sm.warp.schedulers");
  require(issue_interval_ > 0, "sm.warp.issue_interval_cycles");
  require(segment_bytes_ > 0, "sm.warp.memory_segment_bytes");
  require(gpu.warp.alu.count > 0, "sm.warp.alu.count");
  require(gpu.warp.sfu.count > 0, "sm.warp.sfu.count");
  require(gpu.warp.load_store.count > 0, "sm.warp.load_store.count");
  if (gpu.memory.l1.cache.capacity_bytes > 0) {
    l1_.emplace(gpu.memory.l1.cache);
    l1_hit_ps_ = gpu.cycles_to_ps(gpu.memory.l1.hit_latency_cycles);
  }
  units_.emplace_back(gpu.warp.alu, warp_size_);
  units_.emplace_back(gpu.warp.sfu, warp_size_);
  units_.emplace_back(gpu.warp.load_store, warp_size_);

  capacity_ = (limits_.max_warps + num_schedulers_ - 1) / num_schedulers_;
  for (std::uint32_t s = 0; s < num_schedulers_; ++s) {
    WarpSchedulerSetup setup;
    setup.capacity = capacity_;
    setup.ready_queue_size = gpu.warp.ready_queue_size;
    schedulers_.push_back(make_scheduler(setup));
    views_.emplace_back(*this, s);
  }
  scheduler_states_.resize(num_schedulers_);
  // Slots are stored scheduler by scheduler (a scheduler's warps side by side: its scans touch few
  // cache lines) and handed out round robin over the schedulers: the k-th slot allocated belongs to
  // scheduler k mod N.
  const std::size_t slots = static_cast<std::size_t>(capacity_) * num_schedulers_;
  hot_.resize(slots);
  warps_.resize(slots);
  for (std::uint32_t k = 0; k < limits_.max_warps; ++k) {
    allocation_order_.push_back((k % num_schedulers_) * capacity_ + k / num_schedulers_);
  }
  // scheduler_of() divides by capacity_ with a multiply and a shift: exact while slot * capacity_ <
  // 2^32 (checked here for every slot).
  scheduler_magic_ = ((std::uint64_t{1} << 32U) + capacity_ - 1) / capacity_;
  for (std::size_t slot = 0; slot < slots; ++slot) {
    if (scheduler_of(static_cast<std::uint32_t>(slot)) != slot / capacity_) {
      throw InvariantViolation("SM " + std::to_string(index(id)) + ": " + std::to_string(slots) +
                               " warp slots are too many for the slot-to-scheduler division");
    }
  }
  tbs_.resize(limits_.max_thread_blocks);
  wake_order_ = WarpWakeups::instance().add([this](std::uint64_t generation) {
    if (generation == wake_generation_) activate();  // else superseded by a later request
  });
  spawn_method("save_write", save_write_, [this] { start_save_write(); });
  spawn_method("finish_save", save_done_, [this] { finish_save(); });
}

TimePs WarpSm::now_ps() { return sc_core::sc_time_stamp().value(); }

// ---- SmPort --------------------------------------------------------------------------------------

bool WarpSm::fits(const TbFootprint& f, std::uint32_t shared_memory_config) const {
  // Not while stopped for a context save.
  return !saving_ && usage_.admits(limits_, f, shared_memory_config, shared_memory_capacity_);
}

TimePs WarpSm::start_tb(const TbLaunch& launch) {
  const KernelDesc* desc = launch.desc;
  if (desc == nullptr || !desc->program) {
    throw InputError(desc != nullptr ? desc->where : SourceLocation{}, "program",
                     "kernel '" + (desc != nullptr ? desc->name : std::string("?")) +
                         "' has no program, which a warp-level SM (sm.model: warp) executes; give it a "
                         "`program:` (docs/config.md \"Kernel programs\") or use sm.model: tb");
  }
  catch_up_trace();
  const TimePs now = now_ps();
  if (saving_) {
    throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now)) + " ns on SM " +
                             std::to_string(index(id_)) + ": kernel '" + desc->name +
                             "' started a thread block while the SM saves its context");
  }
  const program::Program& program = *desc->program;
  if (std::find(checked_programs_.begin(), checked_programs_.end(), &program) == checked_programs_.end()) {
    check_program(program, desc->name);
    checked_programs_.push_back(&program);
    (void)loops_of(program);
  }
  if (!in_activation_) account_to(clock_.cycle_at_or_after(now));

  const auto free_tb =
      std::find_if(tbs_.begin(), tbs_.end(), [](const ResidentTb& t) { return t.state == TbState::kFree; });
  const std::uint32_t num_warps = launch.footprint.warps;
  std::uint32_t free_warps = 0;
  for (const HotWarp& h : hot_) free_warps += h.state == WarpState::kFree ? 1U : 0U;
  if (free_tb == tbs_.end() || free_warps < num_warps || num_warps == 0) {
    throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now)) + " ns on SM " +
                             std::to_string(index(id_)) + ": a thread block of kernel '" + desc->name +
                             "' with " + std::to_string(num_warps) + " warps does not fit (" +
                             std::to_string(free_warps) + " warp slots free)");
  }
  if (launch.resumed && !launch.resume.warps.empty() && launch.resume.warps.size() != num_warps) {
    throw InvariantViolation("SM " + std::to_string(index(id_)) + ": thread block " +
                             std::to_string(launch.tb) + " of kernel '" + desc->name + "' resumes " +
                             std::to_string(launch.resume.warps.size()) + " warps, it has " +
                             std::to_string(num_warps));
  }

  if (usage_.thread_blocks == 0) {
    shared_memory_capacity_ = launch.shared_memory_config;
    busy_since_ps_ = now;
  }
  usage_.add(launch.footprint);

  const auto tb_index = static_cast<std::uint32_t>(free_tb - tbs_.begin());
  ResidentTb& tb = *free_tb;
  tb.kernel = launch.kernel;
  tb.tb = launch.tb;
  tb.footprint = launch.footprint;
  tb.start_ps = now;
  tb.sequence = next_sequence_++;
  tb.instructions = 0;
  tb.warps.clear();
  tb.running_warps = 0;
  tb.done_cycle = 0;
  tb.memory_done_ps = now;
  tb.outstanding = 0;
  tb.complete_cycle = kNoCycle;
  tb.restored_cycle = kNoCycle;
  tb.restore_saved = false;
  auto next_free = allocation_order_.begin();
  for (std::uint32_t k = 0; k < num_warps; ++k) {
    while (hot_[*next_free].state != WarpState::kFree) ++next_free;
    const std::uint32_t slot = *next_free;
    Warp& w = warps_[slot];
    w.start(program, tb_index, k, next_age_++);
    w.grid_warp = static_cast<std::uint64_t>(launch.tb) * num_warps + k;
    w.grid_warps = std::max<std::uint64_t>(static_cast<std::uint64_t>(desc->thread_blocks) * num_warps, 1);
    w.tb_warps = std::max<std::uint32_t>(num_warps, 1);
    HotWarp& h = hot_[slot];
    h = HotWarp{};
    h.state = WarpState::kRestoring;  // not issuing until activated
    if (launch.resumed && !launch.resume.warps.empty() && !w.resume_from(launch.resume.warps[k])) {
      h.state = WarpState::kDone;
    }
    tb.warps.push_back(slot);
  }

  const TimePs begin = setup_.begin(launch.kernel, now, launch.after_preemption);
  if (launch.restore_bytes > 0) {
    // A preempted TB first reads its context back (Tanasic 3.2), then continues where it stopped.
    tb.state = TbState::kRestoring;
    tb.restore_start_ps = begin;
    const std::uint64_t sequence = tb.sequence;
    mover_.request(false, launch.restore_bytes, begin,
                   [this, tb_index, sequence](TimePs done_ps) { restore_done(tb_index, sequence, done_ps); });
  } else if (begin > now) {
    // Waits for the SM's setup as a restoring thread block waits for its context.
    tb.state = TbState::kRestoring;
    tb.restored_cycle = std::max(clock_.cycle_at_or_after(begin), clock_.cycle_after(now));
    tb_events_dirty_ = true;
  } else {
    activate_warps(tb_index, clock_.cycle_after(now));
  }
  if (!in_activation_) rearm_now();
  return begin - now;
}

void WarpSm::save_context() {
  catch_up_trace();
  const TimePs now = now_ps();
  if (saving_) {
    throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now)) + " ns on SM " +
                             std::to_string(index(id_)) + ": a context save requested during a context save");
  }
  if (!in_activation_) account_to(clock_.cycle_at_or_after(now));
  bool any = false;
  save_ = ContextSave{};
  restores_to_save_ = 0;
  save_ready_ps_ = now;
  save_requested_ps_ = now;
  outstanding_to_save_ = 0;
  for (ResidentTb& tb : tbs_) {
    if (tb.state == TbState::kFree) continue;
    any = true;
    save_.bytes += context_bytes(tb.footprint);
    if (tb.state == TbState::kRestoring) {
      // Saved as it was restored (it never ran): once its context is on chip (or, for a thread block
      // waiting for the SM's setup, once the setup is done).
      if (tb.restored_cycle == kNoCycle) {
        tb.restore_saved = true;
        ++restores_to_save_;
      } else {
        save_ready_ps_ = std::max(save_ready_ps_, clock_.ps_of(tb.restored_cycle));
      }
      continue;
    }
    // Issue stops now; what is in flight completes first (memory requests, results).
    save_ready_ps_ = std::max(save_ready_ps_, tb.memory_done_ps);
    outstanding_to_save_ += tb.outstanding;
    for (const std::uint32_t slot : tb.warps) {
      save_ready_ps_ = std::max(save_ready_ps_, clock_.ps_of(warps_[slot].drain_cycle));
    }
  }
  if (!any) return;
  saving_ = true;
  set_active_warps(0);
  report_issued(0, 0);
  wake_cycle_ = kNoCycle;
  ++wake_generation_;  // the pending activation, if any, is void
  while (!wait_ends_.empty()) wait_ends_.pop();
  if (restores_to_save_ == 0 && outstanding_to_save_ == 0) {
    save_write_.notify(sc_core::sc_time::from_value(save_ready_ps_ - now));
  }
}

TimePs WarpSm::busy_ps() const {
  return busy_total_ps_ + (usage_.thread_blocks > 0 ? now_ps() - busy_since_ps_ : 0);
}

// ---- The issue process ---------------------------------------------------------------------------

void WarpSm::activate() {
  catch_up_trace();
  const std::uint64_t cycle = wake_cycle_;
  wake_cycle_ = kNoCycle;
  const TimePs now = now_ps();
  if (saving_ || cycle == kNoCycle || clock_.ps_of(cycle) != now || cycle < first_unprocessed_) {
    if (!saving_) rearm_now();  // not the activation scheduled: only re-plan
    return;
  }
  in_activation_ = true;
  decision_cycle_ = cycle;
  account_to(cycle);
  if (next_tb_event() <= cycle) {
    complete_due(cycle);  // the listener may start thread blocks or a context save from here
    if (!saving_) activate_restored(cycle);
  }
  if (!saving_) {
    deliver_wait_ends(cycle);
    const bool busy = active_warps_ > 0;
    const std::uint64_t instructions = stats_.instructions;
    issued_units_ = 0;
    if (busy) {
      ++stats_.cycles;
      const std::uint64_t phase = issue_interval_ == 1 ? 0 : cycle % issue_interval_;
      for (std::uint32_t s = 0; s < num_schedulers_; ++s) {
        if (issue_interval_ == 1 || s % issue_interval_ == phase) issue_slot(s, cycle);
      }
    }
    report_issued(static_cast<std::uint32_t>(stats_.instructions - instructions), issued_units_);
  }
  first_unprocessed_ = cycle + 1;
  first_unaccounted_ = std::max(first_unaccounted_, cycle + 1);
  in_activation_ = false;
  if (!saving_) rearm(cycle + 1);
}

void WarpSm::complete_due(std::uint64_t cycle) {
  const TimePs now = now_ps();
  while (!saving_) {
    // The thread block due first (ties: started first).
    ResidentTb* due = nullptr;
    for (ResidentTb& tb : tbs_) {
      if (tb.state != TbState::kFinishing || tb.complete_cycle > cycle) continue;
      if (due == nullptr || tb.complete_cycle < due->complete_cycle ||
          (tb.complete_cycle == due->complete_cycle && tb.sequence < due->sequence)) {
        due = &tb;
      }
    }
    if (due == nullptr) return;
    const KernelId kernel = due->kernel;
    const std::uint32_t tb = due->tb;
    const TimePs start_ps = due->start_ps;
    release_tb(static_cast<std::uint32_t>(due - tbs_.data()));
    ++tbs_completed_;
    if (usage_.thread_blocks == 0) busy_total_ps_ += now - busy_since_ps_;
    // The driver may start new thread blocks from inside this call; they issue from the next cycle.
    listener_.on_tb_complete(id_, kernel, tb, start_ps);
  }
}

void WarpSm::activate_restored(std::uint64_t cycle) {
  while (true) {
    ResidentTb* due = nullptr;
    for (ResidentTb& tb : tbs_) {
      if (tb.state != TbState::kRestoring || tb.restored_cycle > cycle) continue;
      if (due == nullptr || tb.sequence < due->sequence) due = &tb;
    }
    if (due == nullptr) return;
    // Context back: its warps may issue in this very cycle.
    activate_warps(static_cast<std::uint32_t>(due - tbs_.data()), cycle);
  }
}

std::uint64_t WarpSm::next_tb_event() {
  if (tb_events_dirty_) {
    next_tb_event_ = kNoCycle;
    for (const ResidentTb& tb : tbs_) {
      if (tb.state == TbState::kFinishing) next_tb_event_ = std::min(next_tb_event_, tb.complete_cycle);
      if (tb.state == TbState::kRestoring) next_tb_event_ = std::min(next_tb_event_, tb.restored_cycle);
    }
    tb_events_dirty_ = false;
  }
  return next_tb_event_;
}

void WarpSm::deliver_wait_ends(std::uint64_t cycle) {
  while (!wait_ends_.empty() && wait_ends_.top().cycle <= cycle) {
    const WaitEnd end = wait_ends_.top();
    wait_ends_.pop();
    HotWarp& h = hot_[end.slot];
    // Stale entries (the warp left, or its wait ended otherwise) are skipped.
    if (warps_[end.slot].age != end.age || h.state != WarpState::kReady || h.long_wait != LongWait::kMemory) {
      continue;
    }
    h.long_wait = LongWait::kNone;
    touch(end.slot);
    const std::uint32_t s = scheduler_of(end.slot);
    schedulers_[s]->long_latency_done(local_slot(end.slot), views_[s]);
  }
}

void WarpSm::issue_slot(std::uint32_t scheduler, std::uint64_t cycle) {
  ++stats_.scheduler_cycles;
  // The scheduler is asked only when one of its warps can issue: select() has no side effects
  // (warp_scheduler.h), and with many warps waiting on memory most slots have nothing to choose.
  if (earliest_issue(scheduler) > cycle) {
    add_idle(refresh(scheduler).cause, 1);
    return;
  }
  const std::optional<WarpSlot> choice = schedulers_[scheduler]->select(views_[scheduler]);
  if (!choice) {
    add_idle(refresh(scheduler).cause, 1);
    return;
  }
  const std::uint64_t slot = static_cast<std::uint64_t>(scheduler) * capacity_ + *choice;
  if (*choice >= capacity_ || !can_issue(hot_[slot], cycle)) {
    throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now_ps())) + " ns on SM " +
                             std::to_string(index(id_)) + ": warp scheduler '" +
                             schedulers_[scheduler]->name() + "' chose warp slot " + std::to_string(*choice) +
                             ", which cannot issue");
  }
  const auto sm_slot = static_cast<std::uint32_t>(slot);
  issue(sm_slot, cycle);
  schedulers_[scheduler]->issued(*choice);
  ++stats_.instructions;
  ++tbs_[warps_[sm_slot].tb].instructions;
  prepare_next(sm_slot, cycle);
}

void WarpSm::issue(std::uint32_t slot, std::uint64_t cycle) {
  Warp& w = warps_[slot];
  ResidentTb& tb = tbs_[w.tb];
  const program::Instruction& inst = w.program->code[w.pc];
  if (activity_ != nullptr) issued_units_ |= 1U << static_cast<unsigned>(unit_of(inst.op));
  std::uint64_t result = 0;
  bool has_result = false;
  bool from_memory = false;
  std::uint32_t next_pc = w.pc + 1;
  switch (inst.op) {
    case program::Op::kAlu:
    case program::Op::kSfu: {
      ExecutionUnit& u = unit(unit_of(inst.op));
      u.occupy(cycle);
      if (inst.op == program::Op::kAlu) {
        stats_.alu_busy_cycles += u.interval();
        ++op_counts_.alu;
      } else {
        ++op_counts_.sfu;
      }
      result = cycle + u.latency();
      has_result = true;
      break;
    }
    case program::Op::kSharedLoad:
    case program::Op::kSharedStore: {
      ExecutionUnit& u = unit(UnitKind::kLoadStore);
      u.occupy(cycle);
      stats_.memory_unit_busy_cycles += u.interval();
      ++op_counts_.shared;
      result = cycle + shared_latency_;
      has_result = inst.op == program::Op::kSharedLoad;
      break;
    }
    case program::Op::kGlobalLoad:
    case program::Op::kGlobalStore: {
      ExecutionUnit& u = unit(UnitKind::kLoadStore);
      u.occupy(cycle);
      stats_.memory_unit_busy_cycles += u.interval();
      ++op_counts_.global;
      const bool is_store = inst.op == program::Op::kGlobalStore;
      pieces_.clear();
      warp_access(inst, tb.kernel, w.pc, access_element(w), warp_size_, segment_bytes_, !split_accesses_,
                  pieces_);
      const std::uint32_t tag = take_slot(in_flight_, free_in_flight_);
      TimePs done_ps = 0;
      std::uint32_t pending = 0;
      for (const AccessPiece& piece : pieces_) {
        pending += send_piece(is_store, piece, tag, index(tb.kernel), done_ps);
      }
      ++stats_.memory_requests;
      tb.memory_done_ps = std::max(tb.memory_done_ps, done_ps);
      if (pending > 0) {
        // Answered later (memory_done): the result, the thread block's end and a save wait for it.
        InFlightAccess& a = in_flight_[tag];
        a.slot = slot;
        a.age = w.age;
        a.tb_index = w.tb;
        a.reg = inst.write;
        a.is_store = is_store;
        a.min_ready = cycle + u.latency();
        a.pieces = pending;
        a.done_ps = done_ps;
        ++tb.outstanding;
        if (!is_store && inst.write != program::kNoReg) {
          w.scoreboard[inst.write] = PendingWrite{kUnansweredCycle, true};
        }
        break;
      }
      free_in_flight_.push_back(tag);
      if (!is_store) {
        // The data is back when the request completes, and never before the unit's pipeline.
        result = std::max(clock_.cycle_at_or_after(done_ps), cycle + u.latency());
        has_result = true;
        from_memory = true;
      }
      break;
    }
    case program::Op::kBarrier:
      w.barrier_released = false;
      break;
    case program::Op::kLoopBack: {
      ExecutionUnit& u = unit(UnitKind::kAlu);
      u.occupy(cycle);
      stats_.alu_busy_cycles += u.interval();
      std::uint32_t& passes = w.loop_counters[inst.depth];
      ++passes;
      if (passes < w.trip_count(inst)) {
        next_pc = inst.target;
      } else {
        passes = 0;  // an enclosing loop may enter it again
      }
      break;
    }
  }
  if (has_result && inst.write != program::kNoReg) {
    w.scoreboard[inst.write] = PendingWrite{result, from_memory};
  }
  if (has_result) w.drain_cycle = std::max(w.drain_cycle, result);
  w.pc = next_pc;
}

void WarpSm::prepare_next(std::uint32_t slot, std::uint64_t cycle) {
  Warp& w = warps_[slot];
  HotWarp& h = hot_[slot];
  touch(slot);
  if (w.pc >= w.program->code.size()) {
    finish_warp(slot, cycle);
    return;
  }
  const program::Instruction& inst = w.program->code[w.pc];
  h.unit = unit_of(inst.op);
  if (inst.op == program::Op::kBarrier && !w.barrier_released) {
    h.operands_ready = cycle + 1;
    arrive_at_barrier(slot, cycle);
    return;
  }
  bool on_memory = false;
  const std::uint64_t ready = operands_ready(w, inst, cycle + 1, on_memory);
  h.operands_ready = ready;
  if (on_memory) {
    h.long_wait = LongWait::kMemory;
    schedulers_[scheduler_of(slot)]->long_latency_wait(local_slot(slot));
    // A load not answered yet: the wait's end is queued when the answer comes (memory_done).
    if (ready != kNoCycle) wait_ends_.push({ready, w.age, slot});
  }
}

std::uint64_t WarpSm::operands_ready(const Warp& w, const program::Instruction& inst, std::uint64_t from,
                                     bool& on_memory) const {
  // The scoreboard: every register read, and the one written (WAW), without a pending write.
  std::uint64_t ready = from;
  const auto depend = [&](program::Reg r) {
    const PendingWrite pending = w.scoreboard[r];
    const std::uint64_t at = pending.ready_cycle;
    if (at <= from) return;
    ready = at == kUnansweredCycle ? kNoCycle : std::max(ready, at);
    on_memory = on_memory || pending.from_memory != 0;
  };
  for (const program::Reg r : inst.reads) depend(r);
  if (inst.write != program::kNoReg) depend(inst.write);
  return ready;
}

// ---- The memory side -----------------------------------------------------------------------------

const WarpSm::ProgramLoops& WarpSm::loops_of(const program::Program& p) {
  for (const ProgramLoops& l : program_loops_) {
    if (l.program == &p) return l;
  }
  ProgramLoops l;
  l.program = &p;
  l.by_pc.resize(p.code.size());
  // A loop-back at pc b with target t encloses t .. b; nested loops end inside the outer one, so
  // collecting them from the last loop-back to the first lists each pc's loops outermost first.
  for (std::size_t b = p.code.size(); b-- > 0;) {
    const program::Instruction& inst = p.code[b];
    if (inst.op != program::Op::kLoopBack) continue;
    for (std::size_t pc = inst.target; pc < b; ++pc) l.by_pc[pc].push_back(static_cast<std::uint32_t>(b));
  }
  for (auto& loops : l.by_pc) {
    std::sort(loops.begin(), loops.end(),
              [&](std::uint32_t a, std::uint32_t b) { return p.code[a].depth < p.code[b].depth; });
  }
  program_loops_.push_back(std::move(l));
  return program_loops_.back();
}

std::uint64_t WarpSm::access_element(const Warp& w) const {
  const program::Program& p = *w.program;
  std::uint64_t pass = 0;
  for (const ProgramLoops& l : program_loops_) {
    if (l.program != &p) continue;
    for (const std::uint32_t back : l.by_pc[w.pc]) {
      const program::Instruction& loop = p.code[back];
      pass = pass * w.trip_count(loop) + w.loop_counters[loop.depth];
    }
    break;
  }
  if (w.program->code[w.pc].access == program::Access::kBroadcast) {
    // Every warp of the thread block reads the same element: pass x B + b (memory_requests.h).
    return pass * (w.grid_warps / w.tb_warps) + w.grid_warp / w.tb_warps;
  }
  return pass * w.grid_warps + w.grid_warp;
}

std::uint32_t WarpSm::send_piece(bool is_store, const AccessPiece& piece, std::uint32_t tag,
                                 std::uint32_t kernel, TimePs& done_ps) {
  const auto send = [&](std::uint64_t address, std::uint32_t bytes, std::uint64_t request_tag) {
    const TimePs t = memory_.send(is_store, address, bytes, *this, request_tag, kernel);
    if (t != kPending) done_ps = std::max(done_ps, t);
    return t;
  };
  if (!l1_) return send(piece.address, piece.bytes, tag) == kPending ? 1 : 0;
  const TimePs now = now_ps();
  land_l1_fills(now);
  std::uint32_t pending = 0;
  const std::uint64_t line_bytes = l1_->config().line_bytes;
  const std::uint64_t sector_bytes = l1_->config().sector_bytes;
  const std::uint64_t end = piece.address + piece.bytes;
  // Line by line: the L1 answers for one line at a time.
  for (std::uint64_t address = piece.address; address < end;) {
    const std::uint64_t line = l1_->line_address(address);
    const std::uint64_t next = std::min(end, line + line_bytes);
    const auto bytes = static_cast<std::uint32_t>(next - address);
    const cache::AccessResult r = l1_->access(address, bytes, is_store);
    if (is_store) {
      // Write-through: the L1 dropped the sectors written (write-evict); the store goes on.
      pending += send(address, bytes, tag) == kPending ? 1 : 0;
      address = next;
      continue;
    }
    stats_.l1_sector_hits += static_cast<std::uint64_t>(__builtin_popcount(r.hit_sectors));
    stats_.l1_sector_misses += static_cast<std::uint64_t>(__builtin_popcount(r.miss_sectors));
    stats_.l1_sector_merges += static_cast<std::uint64_t>(__builtin_popcount(r.merged_sectors));
    if (r.hit_sectors != 0) done_ps = std::max(done_ps, now + l1_hit_ps_);
    std::uint32_t fetch = r.miss_sectors;
    if (r.merged_sectors != 0) {
      const TimePs ready = l1_->fill_time_ps(address, r.merged_sectors);
      if (ready == kNever) {
        // An earlier fetch's answer has not come (its time is unknown): wait for it, as an MSHR holds
        // a second miss to a line being fetched. Every pending sector is one of this SM's fetches.
        std::uint32_t covered = 0;
        for (L1Fetch& f : l1_fetches_) {
          if (!f.live || f.line != line || (f.mask & r.merged_sectors) == 0) continue;
          f.waiters.push_back(tag);
          covered |= f.mask;
          ++pending;
        }
        if ((r.merged_sectors & ~covered) != 0) {
          throw InvariantViolation("L1 of SM " + std::to_string(index(id_)) +
                                   ": sectors being fetched with no fetch in flight");
        }
      } else {
        done_ps = std::max(done_ps, std::max(ready, now + l1_hit_ps_));
      }
    }
    // Each run of consecutive missing sectors is one request; its data fills them when it is back.
    for (std::uint32_t s = 0; fetch >> s != 0;) {
      if (((fetch >> s) & 1U) == 0) {
        ++s;
        continue;
      }
      std::uint32_t run = 0;
      while (((fetch >> (s + run)) & 1U) != 0) ++run;
      const std::uint32_t mask = ((run == 32 ? 0U : (1U << run)) - 1U) << s;
      const std::uint32_t slot = take_slot(l1_fetches_, free_l1_fetches_);
      const std::uint64_t request_tag = tag | (static_cast<std::uint64_t>(slot) + 1) << 32U;
      const TimePs t =
          send(line + s * sector_bytes, static_cast<std::uint32_t>(run * sector_bytes), request_tag);
      if (t == kPending) {
        L1Fetch& f = l1_fetches_[slot];
        f.line = line;
        f.mask = mask;
        f.live = true;
        f.waiters.clear();
        ++pending;
      } else {
        free_l1_fetches_.push_back(slot);
        schedule_l1_fill(line, mask, t);
      }
      s += run;
    }
    address = next;
  }
  return pending;
}

void WarpSm::schedule_l1_fill(std::uint64_t line, std::uint32_t mask, TimePs ready_ps) {
  l1_->set_fill_time(line, mask, ready_ps);
  l1_fills_.emplace(ready_ps, line, mask);
}

void WarpSm::land_l1_fills(TimePs now) {
  while (!l1_fills_.empty() && std::get<0>(l1_fills_.top()) <= now) {
    const auto [ready, line, mask] = l1_fills_.top();
    l1_fills_.pop();
    l1_->fill(line, mask);
  }
}

void WarpSm::memory_done(std::uint64_t request_tag, TimePs done_ps) {
  if (const std::uint64_t fetch = request_tag >> 32U; fetch != 0) {
    // An L1 fetch: its sectors turn valid when the data is back.
    const auto slot = static_cast<std::uint32_t>(fetch - 1);
    L1Fetch& f = l1_fetches_.at(slot);
    f.live = false;
    free_l1_fetches_.push_back(slot);
    schedule_l1_fill(f.line, f.mask, done_ps);
    // The loads that waited for it have their data now too. Completing them sends nothing (answers
    // only update the warps), so the entry stays as it is meanwhile.
    for (const std::uint32_t waiter : f.waiters) access_piece_done(waiter, done_ps);
    f.waiters.clear();
  }
  access_piece_done(static_cast<std::uint32_t>(request_tag & 0xFFFF'FFFFU), done_ps);
}

void WarpSm::access_piece_done(std::uint32_t tag, TimePs done_ps) {
  InFlightAccess& a = in_flight_.at(tag);
  a.done_ps = std::max(a.done_ps, done_ps);
  if (--a.pieces > 0) return;
  catch_up_trace();
  const TimePs now = now_ps();
  if (!in_activation_) account_to(clock_.cycle_at_or_after(now));
  ResidentTb& tb = tbs_[a.tb_index];
  Warp& w = warps_[a.slot];
  if (tb.outstanding == 0 || w.age != a.age) {
    throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now)) + " ns on SM " +
                             std::to_string(index(id_)) + ": a memory answer for a warp that is gone");
  }
  tb.memory_done_ps = std::max(tb.memory_done_ps, a.done_ps);
  std::uint64_t ready = 0;
  if (!a.is_store) {
    // The data is back when the request completes, and never before the unit's pipeline.
    ready = std::max(clock_.cycle_at_or_after(a.done_ps), a.min_ready);
    if (a.reg != program::kNoReg) w.scoreboard[a.reg] = PendingWrite{ready, true};
    w.drain_cycle = std::max(w.drain_cycle, ready);
    tb.done_cycle = std::max(tb.done_cycle, ready);
  }
  --tb.outstanding;
  const std::uint32_t slot = a.slot;
  free_in_flight_.push_back(static_cast<std::uint32_t>(tag));
  if (saving_) {
    // The save waits until every access in flight is back.
    save_ready_ps_ = std::max({save_ready_ps_, tb.memory_done_ps, clock_.ps_of(ready)});
    if (--outstanding_to_save_ == 0 && restores_to_save_ == 0) {
      save_write_.notify(sc_core::sc_time::from_value(save_ready_ps_ - now));
    }
    return;
  }
  HotWarp& h = hot_[slot];
  if (h.state == WarpState::kReady && h.operands_ready == kNoCycle && w.pc < w.program->code.size()) {
    // The warp waited for this answer (or another one still missing).
    bool on_memory = false;
    const std::uint64_t at = operands_ready(w, w.program->code[w.pc], first_unprocessed_, on_memory);
    h.operands_ready = at;
    touch(slot);
    if (at != kNoCycle && h.long_wait == LongWait::kMemory) wait_ends_.push({at, w.age, slot});
  }
  if (tb.state == TbState::kFinishing && tb.outstanding == 0) {
    tb.complete_cycle = std::max(tb.done_cycle, clock_.cycle_at_or_after(tb.memory_done_ps));
    tb_events_dirty_ = true;
  }
  rearm_now();
}

void WarpSm::arrive_at_barrier(std::uint32_t slot, std::uint64_t cycle) {
  HotWarp& h = hot_[slot];
  h.state = WarpState::kBarrier;
  touch(slot);
  check_barrier(warps_[slot].tb, warps_[slot].barriers_passed + 1, cycle);
  if (h.state == WarpState::kBarrier) {
    h.long_wait = LongWait::kBarrier;
    schedulers_[scheduler_of(slot)]->long_latency_wait(local_slot(slot));
  }
}

void WarpSm::check_barrier(std::uint32_t tb_index, std::uint32_t barrier, std::uint64_t cycle) {
  const ResidentTb& tb = tbs_[tb_index];
  // Every warp that has not finished must have arrived at this barrier or passed it.
  for (const std::uint32_t slot : tb.warps) {
    const WarpState state = hot_[slot].state;
    const std::uint32_t passed = warps_[slot].barriers_passed;
    if (state == WarpState::kDone || passed >= barrier) continue;
    if (state == WarpState::kBarrier && passed + 1 == barrier) continue;
    return;
  }
  for (const std::uint32_t slot : tb.warps) {
    HotWarp& h = hot_[slot];
    Warp& o = warps_[slot];
    if (h.state != WarpState::kBarrier || o.barriers_passed + 1 != barrier) continue;
    h.state = WarpState::kReady;
    h.operands_ready = cycle + 1;
    h.unit = UnitKind::kNone;
    ++o.barriers_passed;
    o.barrier_released = true;
    touch(slot);
    if (h.long_wait == LongWait::kBarrier) {
      h.long_wait = LongWait::kNone;
      const std::uint32_t s = scheduler_of(slot);
      schedulers_[s]->long_latency_done(local_slot(slot), views_[s]);
    }
  }
}

void WarpSm::finish_warp(std::uint32_t slot, std::uint64_t cycle) {
  Warp& w = warps_[slot];
  HotWarp& h = hot_[slot];
  ResidentTb& tb = tbs_[w.tb];
  h.state = WarpState::kDone;
  h.long_wait = LongWait::kNone;
  touch(slot);
  tb.done_cycle = std::max({tb.done_cycle, cycle + 1, w.drain_cycle});
  if (w.in_scheduler) {
    schedulers_[scheduler_of(slot)]->remove_warp(local_slot(slot));
    w.in_scheduler = false;
  }
  set_active_warps(active_warps_ - 1);
  --tb.running_warps;
  if (tb.running_warps == 0) {
    // Completes when its last result is written and its last memory request is back.
    tb.state = TbState::kFinishing;
    // With accesses not answered yet, memory_done sets the completion when the last answer comes.
    tb.complete_cycle =
        tb.outstanding > 0 ? kNoCycle : std::max(tb.done_cycle, clock_.cycle_at_or_after(tb.memory_done_ps));
    tb_events_dirty_ = true;
    return;
  }
  // Warps waiting at a barrier no longer wait for this one.
  for (const std::uint32_t other : tb.warps) {
    if (hot_[other].state == WarpState::kBarrier) {
      check_barrier(w.tb, warps_[other].barriers_passed + 1, cycle);
      break;
    }
  }
}

void WarpSm::activate_warps(std::uint32_t tb_index, std::uint64_t first_cycle) {
  ResidentTb& tb = tbs_[tb_index];
  tb.state = TbState::kRunning;
  tb.restored_cycle = kNoCycle;
  tb.running_warps = 0;
  tb.done_cycle = first_cycle;
  tb_events_dirty_ = true;
  const std::uint64_t saved_decision_cycle = decision_cycle_;
  decision_cycle_ = first_cycle;
  for (const std::uint32_t slot : tb.warps) {
    if (hot_[slot].state == WarpState::kDone) continue;
    hot_[slot].state = WarpState::kReady;
    touch(slot);
    ++tb.running_warps;
    const std::uint32_t s = scheduler_of(slot);
    schedulers_[s]->add_warp(local_slot(slot), warps_[slot].age, views_[s]);
    warps_[slot].in_scheduler = true;
  }
  set_active_warps(active_warps_ + static_cast<int>(tb.running_warps));
  for (const std::uint32_t slot : tb.warps) {
    // Registers are all ready (fresh, or just restored): the first instruction waits for nothing.
    if (hot_[slot].state == WarpState::kReady) prepare_next(slot, first_cycle - 1);
  }
  decision_cycle_ = saved_decision_cycle;
  if (tb.running_warps == 0) {  // every warp had finished before it was saved
    tb.state = TbState::kFinishing;
    tb.complete_cycle = first_cycle;
  }
}

void WarpSm::release_tb(std::uint32_t tb_index) {
  ResidentTb& tb = tbs_[tb_index];
  if (tb.outstanding > 0) {
    throw InvariantViolation("invariant violated on SM " + std::to_string(index(id_)) + ": thread block " +
                             std::to_string(tb.tb) + " leaves with memory accesses in flight");
  }
  for (const std::uint32_t slot : tb.warps) {
    Warp& w = warps_[slot];
    if (w.in_scheduler) {
      schedulers_[scheduler_of(slot)]->remove_warp(local_slot(slot));
      w.in_scheduler = false;
    }
    hot_[slot] = HotWarp{};
    touch(slot);
  }
  usage_.remove(tb.footprint);
  const std::size_t kernel = index(tb.kernel);
  if (kernel >= instructions_by_kernel_.size()) instructions_by_kernel_.resize(kernel + 1, 0);
  instructions_by_kernel_[kernel] += tb.instructions;
  tb.state = TbState::kFree;
  tb_events_dirty_ = true;
}

void WarpSm::restore_done(std::uint32_t tb_index, std::uint64_t sequence, TimePs done_ps) {
  ResidentTb& tb = tbs_[tb_index];
  if (tb.state != TbState::kRestoring || tb.sequence != sequence) {
    throw InvariantViolation("SM " + std::to_string(index(id_)) +
                             ": a context restore finished for thread block " + std::to_string(tb.tb) +
                             ", which is not being restored");
  }
  catch_up_trace();
  const TimePs now = now_ps();
  listener_.on_tb_restored(id_, tb.kernel, tb.tb, tb.restore_start_ps, done_ps);
  if (saving_) {
    // A save stopped the SM meanwhile: the thread block goes to the save as it was restored.
    save_ready_ps_ = std::max(save_ready_ps_, done_ps);
    tb.restore_saved = false;
    tb.restored_cycle = clock_.cycle_at_or_after(done_ps);
    if (--restores_to_save_ == 0 && outstanding_to_save_ == 0) {
      save_write_.notify(sc_core::sc_time::from_value(save_ready_ps_ - now));
    }
    return;
  }
  // The warps start in the activation of the cycle the context is back in.
  tb.restored_cycle = std::max(clock_.cycle_at_or_after(done_ps), clock_.cycle_after(now));
  tb_events_dirty_ = true;
  rearm_now();
}

void WarpSm::start_save_write() {
  // Drained: what was in flight is back (and any restore under way has landed). The trap routine
  // runs, then the context is written (Tanasic 3.2).
  const TimePs now = now_ps();
  save_.drain_ps = now - save_requested_ps_;
  save_.trap_ps = trap_ps_;
  save_.write_start_ps = now + trap_ps_;
  if (save_.bytes == 0) {
    save_done_.notify(sc_core::sc_time::from_value(trap_ps_));
    return;
  }
  mover_.request(true, save_.bytes, save_.write_start_ps, [this](TimePs done_ps) {
    save_done_.notify(sc_core::sc_time::from_value(done_ps - now_ps()));
  });
}

void WarpSm::finish_save() {
  catch_up_trace();
  const TimePs now = now_ps();
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < tbs_.size(); ++i) {
    if (tbs_[i].state != TbState::kFree) order.push_back(i);
  }
  // In the order they started.
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return tbs_[a].sequence < tbs_[b].sequence; });
  std::vector<PreemptedTb> saved;
  saved.reserve(order.size());
  for (const std::uint32_t i : order) {
    const ResidentTb& tb = tbs_[i];
    PreemptedTb p;
    p.kernel = tb.kernel;
    p.tb = tb.tb;
    p.resident_ps = std::min(tb.start_ps, save_requested_ps_);
    p.stopped_ps = save_requested_ps_;
    p.resume.warps.reserve(tb.warps.size());
    for (const std::uint32_t slot : tb.warps) {
      p.resume.warps.push_back(warps_[slot].saved(hot_[slot].state == WarpState::kDone));
    }
    saved.push_back(std::move(p));
    release_tb(i);
  }
  busy_total_ps_ += now - busy_since_ps_;
  first_unaccounted_ = std::max(first_unaccounted_, clock_.cycle_at_or_after(now));
  saving_ = false;
  listener_.on_context_saved(id_, saved, save_);
}

// ---- The phase trace ----------------------------------------------------------------------------

void WarpSm::add_phase_counts(std::uint64_t cycle, PhaseSample& sample) const {
  int counted = 0;
  for (std::size_t slot = 0; slot < hot_.size(); ++slot) {
    const WarpState state = hot_[slot].state;
    if (state == WarpState::kFree || state == WarpState::kRestoring) continue;
    const Warp& w = warps_[slot];
    // Results still in flight at the start of `cycle`, finished warps included (they drain).
    for (const PendingWrite& pending : w.scoreboard) {
      if (pending.ready_cycle <= cycle) continue;
      if (pending.from_memory != 0) {
        ++sample.loads_in_flight;
      } else {
        ++sample.alu_in_flight;
      }
    }
    // Active warps (as the VCD's active_warps): ready or at a barrier, not stopped by a context save.
    if (saving_ || (state != WarpState::kReady && state != WarpState::kBarrier)) continue;
    const program::Program& p = *w.program;
    if (w.pc >= p.code.size()) continue;  // cannot happen (such a warp is done): the check below says so
    sample.add_warp(index(tbs_[w.tb].kernel), p.code[w.pc].phase, std::max<std::size_t>(p.phases.size(), 1));
    ++counted;
  }
  if (counted != active_warps_) {
    throw InvariantViolation("invariant violated on SM " + std::to_string(index(id_)) +
                             ": the phase trace counts " + std::to_string(counted) +
                             " active warps at cycle " + std::to_string(cycle) + ", the SM " +
                             std::to_string(active_warps_));
  }
}

// ---- Waking and accounting -----------------------------------------------------------------------

std::uint64_t WarpSm::slot_at_or_after(std::uint32_t scheduler, std::uint64_t cycle) const {
  if (issue_interval_ == 1) return cycle;  // every cycle (Kepler on): no division on the hot path
  const std::uint64_t offset = scheduler % issue_interval_;
  if (cycle <= offset) return offset;
  return cycle + (issue_interval_ - (cycle - offset) % issue_interval_) % issue_interval_;
}

std::uint64_t WarpSm::slots_before(std::uint32_t scheduler, std::uint64_t cycle) const {
  if (issue_interval_ == 1) return cycle;
  const std::uint64_t offset = scheduler % issue_interval_;
  return cycle <= offset ? 0 : (cycle - offset + issue_interval_ - 1) / issue_interval_;
}

void WarpSm::add_idle(IdleCause cause, std::uint64_t slots) {
  switch (cause) {
    case kIdleNoWarp:
      stats_.idle_no_warp += slots;
      break;
    case kIdleOther:
      stats_.idle_other += slots;
      break;
    case kIdleMemory:
      stats_.idle_memory += slots;
      break;
    case kIdleBarrier:
      stats_.idle_barrier += slots;
      break;
  }
}

const WarpSm::SchedulerState& WarpSm::refresh(std::uint32_t scheduler) {
  SchedulerState& st = scheduler_states_[scheduler];
  if (!st.dirty) return st;
  st.min_ready.fill(kNoCycle);
  bool any = false;
  bool memory = false;
  bool other = false;
  const std::size_t first = static_cast<std::size_t>(scheduler) * capacity_;
  for (std::size_t slot = first; slot < first + capacity_; ++slot) {
    const HotWarp& h = hot_[slot];
    if (h.state == WarpState::kBarrier) {
      any = true;
    } else if (h.state == WarpState::kReady) {
      any = true;
      // A warp waiting on memory until its wait ends (delivered in that cycle's activation), any
      // other ready warp waits at most for a short result or a unit - or could issue.
      if (h.long_wait == LongWait::kMemory) {
        memory = true;
      } else {
        other = true;
      }
      std::uint64_t& m = st.min_ready[static_cast<std::size_t>(h.unit)];
      m = std::min(m, h.operands_ready);
    }
  }
  st.cause = !any ? kIdleNoWarp : other ? kIdleOther : memory ? kIdleMemory : kIdleBarrier;
  st.dirty = false;
  return st;
}

StallReading WarpSm::stall_reading() {
  // Skipped cycles are counted in bulk at the next activation: count them up to now (as start_tb does).
  if (!in_activation_) account_to(clock_.cycle_at_or_after(now_ps()));
  // The thesis's stalled cycles (4.3.1.3) are scoreboard stalls (a warp waits for the result of a previous
  // ALU or memory instruction) plus pipeline stalls (a warp is ready but its unit is busy); its idle stalls
  // (no warp to issue) and active cycles are not. idle_memory is the memory scoreboard stall; idle_other
  // the ALU scoreboard stall and the pipeline stall; idle_no_warp and idle_barrier (every warp at a
  // barrier: none has an instruction to issue, GPGPU-Sim's idle) are idle stalls.
  return {stats_.idle_memory + stats_.idle_other, stats_.instructions, stats_.cycles};
}

void WarpSm::account_to(std::uint64_t cycle) {
  if (cycle <= first_unaccounted_) return;
  if (active_warps_ > 0) {
    stats_.cycles += cycle - first_unaccounted_;
    for (std::uint32_t s = 0; s < num_schedulers_; ++s) {
      const std::uint64_t slots = slots_before(s, cycle) - slots_before(s, first_unaccounted_);
      stats_.scheduler_cycles += slots;
      add_idle(refresh(s).cause, slots);
    }
  }
  first_unaccounted_ = cycle;
}

void WarpSm::rearm_now() {
  if (saving_) return;
  rearm(std::max(first_unprocessed_, clock_.cycle_at_or_after(now_ps())));
}

std::uint64_t WarpSm::earliest_issue(std::uint32_t scheduler) {
  // Over the units its ready warps wait for: the earliest cycle both operands and unit are ready.
  // Twice per scheduler and activation, so without branches: a unit no ready warp waits for has
  // min_ready kNoCycle, and max(kNoCycle, free) = kNoCycle leaves the minimum alone; kNone (a
  // barrier's) is never busy.
  const SchedulerState& st = refresh(scheduler);
  const auto at = [&](UnitKind kind) {
    return std::max(st.min_ready[static_cast<std::size_t>(kind)], unit(kind).free_cycle());
  };
  return std::min({at(UnitKind::kAlu), at(UnitKind::kSfu), at(UnitKind::kLoadStore),
                   st.min_ready[static_cast<std::size_t>(UnitKind::kNone)]});
}

void WarpSm::rearm(std::uint64_t from) {
  std::uint64_t next = std::max(next_tb_event(), from);
  if (!wait_ends_.empty()) next = std::min(next, std::max(wait_ends_.top().cycle, from));
  for (std::uint32_t s = 0; s < num_schedulers_; ++s) {
    const std::uint64_t earliest = earliest_issue(s);
    if (earliest != kNoCycle) next = std::min(next, slot_at_or_after(s, std::max(earliest, from)));
  }
  if (next == wake_cycle_) return;
  wake_cycle_ = next;
  ++wake_generation_;
  if (next != kNoCycle) WarpWakeups::instance().request(wake_order_, clock_.ps_of(next), wake_generation_);
}

void WarpSm::set_active_warps(int n) {
  if (activity_ != nullptr && n != active_warps_) {
    activity_->on_warp_activity(id_, now_ps(), static_cast<std::uint32_t>(n), last_issued_, last_units_);
  }
  active_warps_ = n;
}

void WarpSm::report_issued(std::uint32_t issued, std::uint32_t units) {
  if (activity_ != nullptr && (issued != last_issued_ || units != last_units_)) {
    activity_->on_warp_activity(id_, now_ps(), static_cast<std::uint32_t>(active_warps_), issued, units);
  }
  last_issued_ = issued;
  last_units_ = units;
}

}  // namespace gpumux
