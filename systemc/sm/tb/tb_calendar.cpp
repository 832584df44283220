#include "sm/tb/tb_calendar.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/processes.h"
#include "core/tlm_quantum.h"

namespace gpumux {

TbCalendar::TbCalendar(const sc_core::sc_module_name& name, bool run_ahead)
    : sc_core::sc_module(name), run_ahead_(run_ahead) {
  spawn_thread("run", [this] { run(); });
}

std::uint32_t TbCalendar::add(TbCalendarClient& client) {
  clients_.push_back(&client);
  due_.push_back(kNever);
  pos_.push_back(kNone);
  return static_cast<std::uint32_t>(clients_.size() - 1);
}

void TbCalendar::schedule(std::uint32_t slot, TimePs at) {
  if (slot == dispatching_) {
    rescheduled_ = at;
    return;
  }
  if (due_[slot] == at) return;
  due_[slot] = at;
  fix(slot);
  // Called from another process while the thread waits for a later instant: wake it to look again.
  if (!running_ && at < waiting_until_) changed_.notify(sc_core::SC_ZERO_TIME);
}

void TbCalendar::fix(std::uint32_t slot) {
  std::size_t i = pos_[slot];
  if (due_[slot] == kNever) {
    if (i == kNone) return;
    // Out: the last slot takes its place and moves whichever way it must.
    const std::uint32_t last = heap_.back();
    heap_.pop_back();
    pos_[slot] = kNone;
    if (last == slot) return;
    place(i, last);
    sift_up(i);
    sift_down(pos_[last]);
    return;
  }
  if (i == kNone) {
    i = heap_.size();
    heap_.push_back(slot);
    pos_[slot] = static_cast<std::uint32_t>(i);
  }
  sift_up(i);
  sift_down(pos_[slot]);
}

void TbCalendar::sift_up(std::size_t i) {
  const std::uint32_t slot = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!before(slot, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, slot);
}

void TbCalendar::sift_down(std::size_t i) {
  const std::uint32_t slot = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    const std::size_t first = kArity * i + 1;
    if (first >= n) break;
    std::size_t child = first;
    const std::size_t end = std::min(first + kArity, n);
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[child])) child = c;
    }
    if (!before(heap_[child], slot)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, slot);
}

void TbCalendar::catch_up() {
  ahead_ = false;
  horizon_valid_ = false;
  wait(sc_core::sc_time::from_value(local_ps_ - sc_core::sc_time_stamp().value()));
}

void TbCalendar::run() {
  running_ = true;
  for (;;) {
    const TimePs sc_now = sc_core::sc_time_stamp().value();
    if (heap_.empty()) {
      horizon_valid_ = false;
      running_ = false;
      waiting_until_ = kNever;
      wait(changed_);
      running_ = true;
      continue;
    }
    const TimePs at = due_[heap_.front()];
    if (at < sc_now) {
      throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(sc_now)) +
                               " ns: a thread-block completion was scheduled in the past, at " +
                               std::to_string(ns_from_ps(at)) + " ns (SM " + std::to_string(heap_.front()) +
                               ")");
    }
    if (at > sc_now) {
      // Ahead of SystemC's clock only while nothing else is pending before `at` (strictly: another
      // process's activity at `at` itself keeps SystemC's order between the two).
      if (!horizon_valid_) {
        // The next activity elsewhere. It stays put while the thread runs ahead without a sync: nothing
        // else runs, and the TB-level engine syncs before it notifies anything.
        horizon_ps_ = next_pending_activity_ps();
        horizon_valid_ = true;
      }
      const bool decouple = run_ahead_ && at < horizon_ps_;
      if (!decouple) {
        horizon_valid_ = false;
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
      horizon_valid_ = false;  // what this instant's completions notify needs no sync
      if (sc_core::sc_pending_activity_at_current_time()) {
        running_ = false;
        waiting_until_ = at;
        wait(sc_core::SC_ZERO_TIME);
        waiting_until_ = kNever;
        running_ = true;
        continue;
      }
      ++instants_waited_;
    }
    local_ps_ = at;
    in_instant_ = true;
    // Every SM due at `at`, in slot order; one may make another due at `at` too.
    while (!heap_.empty() && due_[heap_.front()] == at) {
      const std::uint32_t slot = heap_.front();
      dispatching_ = slot;
      rescheduled_ = kNever;  // what it schedules while it completes, if anything
      clients_[slot]->complete_due(at);
      dispatching_ = kNone;
      due_[slot] = rescheduled_;
      fix(slot);
    }
    if (end_requested_) {
      // May make SMs due at `at` again (a rate change re-times them): the next round handles them.
      end_requested_ = false;
      end_of_instant_(at);
    }
    in_instant_ = false;
    ahead_ = false;
  }
}

}  // namespace gpumux
