#include "sm/tb/tb_sm.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/processes.h"

namespace gpumux {

TbSm::TbSm(const sc_core::sc_module_name& name, SmId id, const GpuConfig& gpu, TbDurationMode duration_mode,
           std::uint64_t seed, TbCompletionListener& listener, TbCalendar& calendar,
           ContextTraffic& context_traffic, BandwidthPenalty* penalty)
    : SmModule(name),
      memory_socket("memory_socket"),
      id_(id),
      calendar_(calendar),
      calendar_slot_(calendar.add(*this)),
      penalty_(penalty),
      limits_(gpu.sm),
      listener_(listener),
      durations_(duration_mode, seed),
      setup_(gpu.cycles_to_ps(gpu.context_switch.setup_cycles), gpu.sm.max_resident_kernels),
      drain_ps_(gpu.cycles_to_ps(gpu.context_switch.drain_cycles)),
      trap_ps_(gpu.cycles_to_ps(gpu.context_switch.trap_cycles)),
      memory_(memory_socket, std::string(basename()), gpu.context_switch.burst_bytes),
      mover_(memory_, gpu, id, context_traffic) {
  spawn_method("finish_save", save_done_, [this] { finish_save(); });
  if (penalty_ != nullptr) penalty_->add_listener(this);
}

TimePs TbSm::penalised_work_at(KernelId kernel, TimePs at) {
  return penalty_->clock_for(kernel, now_ps()).work_at(at);
}

TbSm::Group* TbSm::earliest_group() {
  if (penalty_ == nullptr) {
    // One group, on the time clock (interference off; its completions take complete_due_on_time()).
    return groups_.empty() || groups_.front().empty() ? nullptr : &groups_.front();
  }
  Group* best = nullptr;
  TimePs best_at = kNever;
  for (Group& g : groups_) {
    if (g.empty()) continue;
    const TimePs at = g.time_of(g.first().end_work);
    if (best == nullptr || at < best_at || (at == best_at && g.first().sequence < best->first().sequence)) {
      best = &g;
      best_at = at;
    }
  }
  return best;
}

void TbSm::retime(TimePs now) {
  const Group* first = earliest_group();
  const TimePs at = first != nullptr ? std::max(now, first->time_of(first->first().end_work)) : kNever;
  wake_at(at);
}

void TbSm::wake_at(TimePs at) {
  if (at == wake_at_ps_) return;
  wake_at_ps_ = at;
  calendar_.schedule(calendar_slot_, at);
}

void TbSm::on_progress_rate_changed(TimePs now) { retime(now); }

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
  const TbTraffic traffic =
      penalty_ != nullptr && launch.desc != nullptr ? penalty_->traffic_of(*launch.desc) : TbTraffic{};
  Running record{0, next_sequence_++, begin, 0, launch.kernel, launch.tb, launch.footprint, traffic};
  if (launch.restore_bytes > 0) {
    // A preempted TB first reads its context back (Tanasic 3.2), then runs what it had left.
    const std::uint64_t number = next_restore_++;
    restores_.emplace(number, Restore{record, duration_ps, false, launch.desc});
    calendar_.sync();  // its reads reach the memory system
    mover_.request(false, launch.restore_bytes, begin,
                   [this, number](TimePs done_ps) { restore_done(number, done_ps); });
    return begin - now;
  }
  if (penalty_ != nullptr && launch.desc != nullptr) {
    penalty_->add(launch.kernel, *launch.desc, traffic, now);  // may re-time every SM
  }
  record.start_work = work_at(launch.kernel, begin);
  record.end_work = record.start_work + duration_ps;
  push_running(record, now);
  return begin - now;
}

TbSm::Group& TbSm::group_for(KernelId kernel, TimePs now) {
  if (penalty_ == nullptr) {
    if (groups_.empty()) groups_.emplace_back();
    return groups_.front();
  }
  for (Group& g : groups_) {
    if (g.kernel == kernel) return g;
  }
  Group g;
  g.kernel = kernel;
  g.clock = &penalty_->clock_for(kernel, now);
  return groups_.emplace_back(std::move(g));
}

void TbSm::push_running(const Running& tb, TimePs now) {
  Group& g = group_for(tb.kernel, now);
  if (g.empty()) {
    g.tbs.clear();
    g.head = 0;
  } else if (g.head >= 64 && 2 * g.head >= g.tbs.size()) {
    // Completed entries at the front: drop them (amortised: at most 64 of them, or as many as
    // there are running thread blocks, are kept).
    g.tbs.erase(g.tbs.begin(), g.tbs.begin() + static_cast<std::ptrdiff_t>(g.head));
    g.head = 0;
  }
  // Its place found from the back: a new thread block usually completes last, or nearly.
  std::size_t i = g.tbs.size();
  while (i > g.head && tb.before(g.tbs[i - 1])) --i;
  if (i == g.tbs.size()) {
    g.tbs.push_back(tb);
  } else {
    g.tbs.insert(g.tbs.begin() + static_cast<std::ptrdiff_t>(i), tb);
  }
  if (penalty_ != nullptr) {
    retime(now);
    return;
  }
  if (tb.end_work < wake_at_ps_) wake_at(tb.end_work);
}

TbSm::Running TbSm::pop_first(Group& group) {
  const Running tb = group.tbs[group.head++];
  if (penalty_ != nullptr) {
    penalty_->remove(tb.kernel, tb.traffic, now_ps());  // may drop the kernel's clock
    if (group.empty()) {
      // Its clock may be gone: the group goes too (the last one alone moves into its place).
      const auto at = static_cast<std::size_t>(&group - groups_.data());
      if (at + 1 != groups_.size()) groups_[at] = std::move(groups_.back());
      groups_.pop_back();
    }
  }
  return tb;
}

void TbSm::release(const TbFootprint& f) { usage_.remove(f); }

void TbSm::complete_due(TimePs now) {
  wake_at_ps_ = kNever;  // the calendar dropped its entry
  if (penalty_ == nullptr) {
    complete_due_on_time(now);
    return;
  }
  // With interference: one group per kernel, each on its kernel's work clock.
  for (Group* g = earliest_group(); g != nullptr && g->time_of(g->first().end_work) <= now;
       g = earliest_group()) {
    const Running done = pop_first(*g);
    release(done.footprint);
    ++tbs_completed_;
    if (usage_.thread_blocks == 0) busy_total_ps_ += now - busy_since_ps_;
    // The driver may start new thread blocks from inside this call; they end in the future.
    listener_.on_tb_complete(id_, done.kernel, done.tb, done.start_ps);
  }
  retime(now);
}

void TbSm::complete_due_on_time(TimePs now) {
  // complete_due() without interference: one group, its ends in time, never dropped (the hot path of
  // every completion; the generic loop's group search and clock reads were about 3% of a thread block's
  // instructions). The group is looked up again after each completion: the driver may start thread
  // blocks on this SM, or save its context, from inside the call.
  while (!groups_.empty()) {
    Group& g = groups_.front();
    if (g.empty() || g.first().end_work > now) break;
    const Running& first = g.tbs[g.head++];
    const KernelId kernel = first.kernel;
    const std::uint32_t tb = first.tb;
    const TimePs start_ps = first.start_ps;
    release(first.footprint);
    ++tbs_completed_;
    if (usage_.thread_blocks == 0) busy_total_ps_ += now - busy_since_ps_;
    listener_.on_tb_complete(id_, kernel, tb, start_ps);
  }
  if (!groups_.empty() && !groups_.front().empty() && groups_.front().first().end_work < wake_at_ps_) {
    wake_at(groups_.front().first().end_work);
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
  listener_.on_tb_restored(id_, tb.kernel, tb.tb, tb.start_ps, done_ps);
  if (!restore.saved) {
    // It runs from done_ps on (a future time, when the restore answered early: the work clock read at
    // today's rate); a save before then finds all of it left.
    const TimePs now = now_ps();
    if (penalty_ != nullptr && restore.desc != nullptr) {
      penalty_->add(tb.kernel, *restore.desc, tb.traffic, now);
    }
    tb.start_work = work_at(tb.kernel, std::max(now, tb.start_ps));
    tb.end_work = work_at(tb.kernel, done_ps) + restore.duration_ps;
    push_running(tb, now);
    return;
  }
  // Restored for a save that stopped the SM meanwhile: it never ran, so all of it is left to run.
  saved_.push_back({{tb.kernel,
                     tb.tb,
                     {restore.duration_ps, {}},
                     std::min(tb.start_ps, save_requested_ps_),
                     save_requested_ps_},
                    tb.footprint,
                    done_ps + restore.duration_ps,
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
  while (Group* g = earliest_group()) {
    // Issue stops now: what a thread block had left is its end less now, or all of it if it was
    // still waiting for the SM's setup (in alone-speed work, which is what it runs when resumed).
    const TimePs work_now = g->work_at(now);
    const TimePs end_ps = g->time_of(g->first().end_work);
    const Running r = pop_first(*g);
    const TimePs left = r.end_work - std::min(r.end_work, std::max(work_now, r.start_work));
    const TimePs resident = std::min(now, r.start_ps);
    saved_.push_back({{r.kernel, r.tb, {left, {}}, resident, now}, r.footprint, end_ps, r.sequence});
    save_.bytes += context_bytes(r.footprint);
  }
  for (auto& [number, restore] : restores_) {
    restore.saved = true;
    ++restores_to_save_;
    save_.bytes += context_bytes(restore.tb.footprint);
  }
  wake_at(kNever);
  if (saved_.empty() && restores_to_save_ == 0) return;
  saving_ = true;
  save_sent_ = false;
  save_ready_ps_ = now;
  // The pipeline drains and the trap routine starts before the first context write (Tanasic 3.2).
  save_.drain_ps = drain_ps_;
  save_.trap_ps = trap_ps_;
  save_.write_start_ps = now + drain_ps_ + trap_ps_;
  calendar_.sync();  // its writes reach the memory system
  mover_.request(true, save_.bytes, save_.write_start_ps, [this](TimePs done_ps) { save_written(done_ps); });
}

void TbSm::finish_save() {
  const TimePs now = now_ps();
  // In the order the thread blocks would have completed (as they were stopped).
  std::sort(saved_.begin(), saved_.end(), [](const SavedTb& a, const SavedTb& b) {
    return a.end_ps != b.end_ps ? a.end_ps < b.end_ps : a.sequence < b.sequence;
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
