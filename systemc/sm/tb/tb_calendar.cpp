#include "sm/tb/tb_calendar.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/processes.h"
#include "core/tlm_quantum.h"

namespace gpumux {

TbCalendar::TbCalendar(const sc_core::sc_module_name& name, bool run_ahead)
    : sc_core::sc_module(name), run_ahead_(run_ahead) {
  narrow_tree_.assign({kNarrowNever});  // no slot yet: nothing due
  spawn_thread("run", [this] { run(); });
}

std::uint32_t TbCalendar::add(TbCalendarClient& client) {
  const auto slot = static_cast<std::uint32_t>(clients_.size());
  // Rebuilt at elaboration, as the SMs register: the slots so far keep their due times, and narrow keys
  // get the bits the slots now need.
  std::vector<TimePs> dues = due_times();
  dues.push_back(kNever);
  clients_.push_back(&client);
  slot_bits_ = 0;
  while ((std::uint64_t{1} << slot_bits_) < clients_.size()) ++slot_bits_;
  slot_mask_ = (Narrow{1} << slot_bits_) - 1;
  // The largest due time whose key stays below kNarrowNever whatever the slot.
  narrow_limit_ = (kNarrowNever >> slot_bits_) - 1;
  const bool fits_narrow = std::all_of(dues.begin(), dues.end(),
                                       [this](TimePs due) { return due <= narrow_limit_ || due == kNever; });
  if (wide_ || !fits_narrow) {
    assign_wide(dues);
    return slot;
  }
  std::vector<Narrow> keys;
  for (std::uint32_t s = 0; s < dues.size(); ++s) keys.push_back(narrow_key(dues[s], s));
  narrow_tree_.assign(keys);
  return slot;
}

std::vector<TimePs> TbCalendar::due_times() const {
  std::vector<TimePs> dues;
  for (std::uint32_t s = 0; s < clients_.size(); ++s) dues.push_back(due_of(s));
  return dues;
}

void TbCalendar::assign_wide(const std::vector<TimePs>& dues) {
  std::vector<Wide> keys;
  for (std::uint32_t s = 0; s < dues.size(); ++s) keys.push_back(wide_key(dues[s], s));
  wide_tree_.assign(keys);
  wide_ = true;
}

void TbCalendar::schedule_other(std::uint32_t slot, TimePs at) {
  if (due_of(slot) == at) return;
  update(slot, at);
  // Called from another process while the thread waits for a later instant: wake it to look again.
  if (!running_ && at < waiting_until_) changed_.notify(sc_core::SC_ZERO_TIME);
}

void TbCalendar::update_wide(std::uint32_t slot, TimePs at) {
  // A due time beyond narrow keys (rare: a run past 20 simulated hours at 132 SMs): wide keys from here
  // on, for every slot.
  if (!wide_) assign_wide(due_times());
  wide_tree_.set(slot, wide_key(at, slot));
}

void TbCalendar::catch_up() {
  ahead_ = false;
  horizon_.forget();
  wait(sc_core::sc_time::from_value(ahead_ps_ - sc_core::sc_time_stamp().value()));
}

void TbCalendar::run() {
  running_ = true;
  // SystemC's time as of the end of the last instant, while that instant ran ahead to its end: nothing
  // waited meanwhile (every way from the engine to a wait goes through sync(), which ends running ahead),
  // so the clock has not moved. kNever: read it.
  TimePs unmoved_sc_now = kNever;
  for (;;) {
    const TimePs sc_now = unmoved_sc_now != kNever ? unmoved_sc_now : sc_core::sc_time_stamp().value();
    unmoved_sc_now = kNever;
    if (top_due() == kNever) {
      horizon_.forget();
      running_ = false;
      waiting_until_ = kNever;
      wait(changed_);
      running_ = true;
      continue;
    }
    const TimePs at = top_due();
    if (at < sc_now) {
      throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(sc_now)) +
                               " ns: a thread-block completion was scheduled in the past, at " +
                               std::to_string(ns_from_ps(at)) + " ns (SM " + std::to_string(top_slot()) +
                               ")");
    }
    if (at > sc_now) {
      // Ahead of SystemC's clock only while nothing else is pending before `at` (strictly: another
      // process's activity at `at` itself keeps SystemC's order between the two).
      // The horizon stays put while the thread runs ahead without a sync: nothing else runs, and the
      // TB-level engine syncs before it notifies anything.
      const bool decouple = run_ahead_ && horizon_.before(at);
      if (!decouple) {
        horizon_.forget();
        running_ = false;
        waiting_until_ = at;
        wait(sc_core::sc_time::from_value(at - sc_now), changed_);
        waiting_until_ = kNever;
        running_ = true;
        continue;  // due now, or woken by an earlier completion: look again
      }
      ahead_ = true;
      ++instants_ahead_;
    } else {
      // Another process's activity at this instant goes first, all of it (its delta cycles too): an
      // order both ways of reaching the instant give, whatever order SystemC gives equal-time events.
      horizon_.forget();  // what this instant's completions notify needs no sync
      if (turn_.attached()) {
        running_ = false;
        waiting_until_ = at;
        turn_.take();
        waiting_until_ = kNever;
        running_ = true;
        // What ran meanwhile may have moved SMs to later instants; the turn lasts until the next wait.
        if (top_due() != at) continue;
      } else if (sc_core::sc_pending_activity_at_current_time()) {
        running_ = false;
        waiting_until_ = at;
        wait(sc_core::SC_ZERO_TIME);
        waiting_until_ = kNever;
        running_ = true;
        continue;
      }
      ++instants_waited_;
    }
    ahead_ps_ = at;
    in_instant_ = true;
    // Every SM due at `at`, in slot order; one may make another due at `at` too.
    while (top_due() == at) {
      const std::uint32_t slot = top_slot();
      dispatching_ = slot;
      rescheduled_ = kNever;  // what it schedules while it completes, if anything
      clients_[slot]->complete_due(at);
      dispatching_ = kNone;
      update(slot, rescheduled_);
    }
    if (end_requested_) {
      // May make SMs due at `at` again (a rate change re-times them): the next round handles them.
      end_requested_ = false;
      end_of_instant_(at);
    }
    in_instant_ = false;
    if (ahead_) unmoved_sc_now = sc_now;
    ahead_ = false;
  }
}

}  // namespace gpumux
