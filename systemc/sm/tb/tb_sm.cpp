#include "sm/tb/tb_sm.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/processes.h"

namespace gpumux {

TbSm::TbSm(const sc_core::sc_module_name& name, SmId id, const GpuConfig& gpu, TbDurationMode duration_mode,
           std::uint64_t seed, TbCompletionListener& listener, BandwidthPenalty* penalty)
    : SmModule(name),
      memory_socket("memory_socket"),
      id_(id),
      penalty_(penalty),
      limits_(gpu.sm),
      listener_(listener),
      durations_(duration_mode, seed),
      setup_(gpu.cycles_to_ps(gpu.context_switch.setup_cycles), gpu.sm.max_resident_kernels),
      drain_ps_(gpu.cycles_to_ps(gpu.context_switch.drain_cycles)),
      trap_ps_(gpu.cycles_to_ps(gpu.context_switch.trap_cycles)),
      memory_(memory_socket, std::string(basename()), gpu.context_switch.burst_bytes),
      mover_(memory_, gpu, id) {
  spawn_method("complete_due", wake_, [this] { complete_due(); });
  spawn_method("finish_save", save_done_, [this] { finish_save(); });
  if (penalty_ != nullptr) penalty_->add_listener(this);
}

std::uint64_t TbSm::demand_of(const KernelDesc* kernel) const {
  if (penalty_ == nullptr || kernel == nullptr || kernel->tb_time.mean_ps == 0) return 0;
  // Its kernel's DRAM bytes per thread block over its mean thread-block time alone (Liang's B_i,
  // per thread block): what it asks while it runs, whatever its own drawn duration.
  const double per_s =
      kernel->memory.dram_bytes_per_tb() / static_cast<double>(kernel->tb_time.mean_ps) * 1e12;
  return static_cast<std::uint64_t>(std::llround(per_s));
}

void TbSm::retime(TimePs now) {
  const TimePs at = any_running() ? std::max(now, time_of(first_running().end_work)) : kNever;
  if (at == wake_at_ps_) return;
  wake_.cancel();
  wake_at_ps_ = at;
  if (at != kNever) wake_.notify(sc_core::sc_time::from_value(at - now));
}

void TbSm::on_progress_rate_changed(TimePs now) { retime(now); }

TimePs TbSm::now_ps() { return sc_core::sc_time_stamp().value(); }

bool TbSm::fits(const TbFootprint& f, std::uint32_t shared_memory_config) const {
  // Not while stopped for a context save.
  return !saving_ && usage_.admits(limits_, f, shared_memory_config, shared_memory_capacity_);
}

TimePs TbSm::start_tb(const TbLaunch& launch) {
  const TimePs duration_ps = durations_.duration_of(launch);
  const TimePs now = now_ps();
  const TimePs begin = setup_.begin(launch.kernel, now, launch.after_preemption);
  if (usage_.thread_blocks == 0) {
    shared_memory_capacity_ = launch.shared_memory_config;
    busy_since_ps_ = now;
  }
  usage_.add(launch.footprint);

  // With interference, a thread block still waiting for the SM's setup is taken to start on the work clock
  // as it reads at its start at today's rate (and to ask its bandwidth from now on).
  const Running record{0,
                       next_sequence_++,
                       begin,
                       work_at(begin),
                       launch.kernel,
                       launch.tb,
                       launch.footprint,
                       demand_of(launch.desc)};
  if (launch.restore_bytes > 0) {
    // A preempted TB first reads its context back (Tanasic 3.2), then runs what it had left.
    const std::uint64_t number = next_restore_++;
    restores_.emplace(number, Restore{record, duration_ps, false});
    mover_.request(false, launch.restore_bytes, begin,
                   [this, number](TimePs done_ps) { restore_done(number, done_ps); });
    return begin - now;
  }
  Running running = record;
  running.end_work = record.start_work + duration_ps;
  push_running(running, now);
  return begin - now;
}

void TbSm::push_running(const Running& tb, TimePs now) {
  if (running_head_ == running_.size()) {
    running_.clear();
    running_head_ = 0;
  } else if (running_head_ >= 64 && 2 * running_head_ >= running_.size()) {
    // Completed entries at the front: drop them (amortised: at most 64 of them, or as many as
    // there are running thread blocks, are kept).
    running_.erase(running_.begin(), running_.begin() + static_cast<std::ptrdiff_t>(running_head_));
    running_head_ = 0;
  }
  // Insertion from the back: a new thread block usually completes last, or nearly.
  running_.push_back(tb);
  std::size_t i = running_.size() - 1;
  while (i > running_head_ && tb.before(running_[i - 1])) {
    running_[i] = running_[i - 1];
    --i;
  }
  running_[i] = tb;
  if (penalty_ != nullptr) {
    if (tb.demand > 0) penalty_->add_demand(tb.demand, now);  // may re-time every SM
    retime(now);
    return;
  }
  if (tb.end_work < wake_at_ps_) {
    wake_at_ps_ = tb.end_work;
    wake_.notify(sc_core::sc_time::from_value(tb.end_work - now));
  }
}

TbSm::Running TbSm::pop_running() { return running_[running_head_++]; }

void TbSm::release(const TbFootprint& f) { usage_.remove(f); }

void TbSm::complete_due() {
  const TimePs now = now_ps();
  wake_at_ps_ = kNever;
  while (any_running() && time_of(first_running().end_work) <= now) {
    const Running done = pop_running();
    if (done.demand > 0) penalty_->remove_demand(done.demand, now);
    release(done.footprint);
    ++tbs_completed_;
    if (usage_.thread_blocks == 0) busy_total_ps_ += now - busy_since_ps_;
    // The driver may start new thread blocks from inside this call; they end in the future.
    listener_.on_tb_complete(id_, done.kernel, done.tb, done.start_ps);
  }
  if (penalty_ != nullptr) {
    retime(now);
    return;
  }
  if (any_running() && first_running().end_work < wake_at_ps_) {
    wake_at_ps_ = first_running().end_work;
    wake_.notify(sc_core::sc_time::from_value(wake_at_ps_ - now));
  }
}

TimePs TbSm::busy_ps() const {
  return busy_total_ps_ + (usage_.thread_blocks > 0 ? now_ps() - busy_since_ps_ : 0);
}

void TbSm::restore_done(std::uint64_t number, TimePs done_ps) {
  const auto it = restores_.find(number);
  const Restore restore = it->second;
  restores_.erase(it);
  Running tb = restore.tb;
  // It runs from done_ps on (a future time, when the restore answered early: the work clock read at
  // today's rate); a save before then finds all of it left.
  tb.start_work = work_at(std::max(now_ps(), tb.start_ps));
  tb.end_work = work_at(done_ps) + restore.duration_ps;
  listener_.on_tb_restored(id_, tb.kernel, tb.tb, tb.start_ps, done_ps);
  if (!restore.saved) {
    push_running(tb, now_ps());
    return;
  }
  // Restored for a save that stopped the SM meanwhile: it never ran, so all of it is left to run.
  saved_.push_back({{tb.kernel,
                     tb.tb,
                     {restore.duration_ps, {}},
                     std::min(tb.start_ps, save_requested_ps_),
                     save_requested_ps_},
                    tb.footprint,
                    tb.end_work,
                    tb.sequence});
  save_ready_ps_ = std::max(save_ready_ps_, done_ps);
  --restores_to_save_;
  maybe_finish_save();
}

void TbSm::save_written(TimePs done_ps) {
  save_sent_ = true;
  save_ready_ps_ = std::max(save_ready_ps_, done_ps);
  maybe_finish_save();
}

void TbSm::maybe_finish_save() {
  if (!save_sent_ || restores_to_save_ > 0) return;
  save_done_.notify(sc_core::sc_time::from_value(save_ready_ps_ - now_ps()));
}

void TbSm::save_context() {
  const TimePs now = now_ps();
  saved_.clear();
  save_ = ContextSave{};
  save_requested_ps_ = now;
  restores_to_save_ = 0;
  const TimePs work_now = work_at(now);
  while (any_running()) {
    // Issue stops now: what a thread block had left is its end less now, or all of it if it was
    // still waiting for the SM's setup (in alone-speed work, which is what it runs when resumed).
    const Running r = pop_running();
    if (r.demand > 0) penalty_->remove_demand(r.demand, now);
    const TimePs left = r.end_work - std::min(r.end_work, std::max(work_now, r.start_work));
    const TimePs resident = std::min(now, r.start_ps);
    saved_.push_back({{r.kernel, r.tb, {left, {}}, resident, now}, r.footprint, r.end_work, r.sequence});
    save_.bytes += context_bytes(r.footprint);
  }
  for (auto& [number, restore] : restores_) {
    restore.saved = true;
    ++restores_to_save_;
    save_.bytes += context_bytes(restore.tb.footprint);
  }
  wake_at_ps_ = kNever;
  wake_.cancel();
  if (saved_.empty() && restores_to_save_ == 0) return;
  saving_ = true;
  save_sent_ = false;
  save_ready_ps_ = now;
  // The pipeline drains and the trap routine starts before the first context write (Tanasic 3.2).
  save_.drain_ps = drain_ps_;
  save_.trap_ps = trap_ps_;
  save_.write_start_ps = now + drain_ps_ + trap_ps_;
  mover_.request(true, save_.bytes, save_.write_start_ps, [this](TimePs done_ps) { save_written(done_ps); });
}

void TbSm::finish_save() {
  const TimePs now = now_ps();
  // In the order the thread blocks would have completed (as they were stopped).
  std::sort(saved_.begin(), saved_.end(), [](const SavedTb& a, const SavedTb& b) {
    return a.end_work != b.end_work ? a.end_work < b.end_work : a.sequence < b.sequence;
  });
  std::vector<PreemptedTb> saved;
  saved.reserve(saved_.size());
  for (const SavedTb& s : saved_) {
    release(s.footprint);
    saved.push_back(s.tb);
  }
  busy_total_ps_ += now - busy_since_ps_;
  saved_.clear();
  saving_ = false;
  listener_.on_context_saved(id_, saved, save_);
}

}  // namespace gpumux
