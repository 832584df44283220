#include "sm/context_traffic.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/processes.h"
#include "core/tlm_quantum.h"
#include "sm/context_mover.h"

namespace gpumux {

ContextTraffic::ContextTraffic(const sc_core::sc_module_name& name, bool run_ahead)
    : sc_core::sc_module(name), run_ahead_(run_ahead) {
  spawn_thread("run", [this] { run(); });
}

void ContextTraffic::has_bursts(ContextMover& mover) {
  if (!mover.listed_sending_) {
    mover.listed_sending_ = true;
    sending_.push_back(&mover);
  }
  wake();
}

void ContextTraffic::has_finished(ContextMover& mover) {
  if (!mover.listed_finishing_) {
    mover.listed_finishing_ = true;
    finishing_.push_back(&mover);
  }
  wake();
}

void ContextTraffic::wake() {
  if (!running_) work_.notify(sc_core::SC_ZERO_TIME);
}

void ContextTraffic::run() {
  running_ = true;
  quantum_keeper_.reset();
  std::vector<ContextMover*> finished;
  while (true) {
    // Transfers answered in full: their owners hear of it, in SM order (an owner may request more), at
    // the time of the last burst sent.
    while (!finishing_.empty()) {
      const TimePs now = sc_core::sc_time_stamp().value();
      if (local_ps_ > now) pause(sc_core::sc_time::from_value(local_ps_ - now));
      turn_.take();
      finished.swap(finishing_);
      std::sort(finished.begin(), finished.end(),
                [](const ContextMover* a, const ContextMover* b) { return a->sm_index() < b->sm_index(); });
      for (ContextMover* m : finished) {
        m->listed_finishing_ = false;
        m->finish_answered();
      }
      finished.clear();
      horizon_.forget();  // the owners may have notified anything
    }
    // The earliest burst of any SM (ties: the lower SM index; within an SM, the transfer requested first).
    ContextMover* next = nullptr;
    TimePs at = kNever;
    for (std::size_t i = 0; i < sending_.size();) {
      ContextMover* m = sending_[i];
      const TimePs t = m->next_burst_at();
      if (t == kNever) {
        // Nothing left to send: out of the list (the last one takes its place).
        m->listed_sending_ = false;
        sending_[i] = sending_.back();
        sending_.pop_back();
        continue;
      }
      if (t < at || (t == at && m->sm_index() < next->sm_index())) {
        at = t;
        next = m;
      }
      ++i;
    }
    if (next == nullptr) {
      pause_until(work_);
      quantum_keeper_.reset();
      continue;
    }
    const TimePs now = sc_core::sc_time_stamp().value();
    if (at < std::max(now, local_ps_)) {
      throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now)) + " ns on SM " +
                               std::to_string(next->sm_index()) + ": a context burst due at " +
                               std::to_string(ns_from_ps(at)) + " ns was not sent in time");
    }
    if (at > now && run_ahead_ && horizon_.before(at)) {
      // Nothing else runs before `at`: send it now, arriving at `at`.
      local_ps_ = at;
      next->send_burst(at - now);
      continue;
    }
    quantum_keeper_.set(sc_core::sc_time::from_value(at - now));
    if (at > now && quantum_keeper_.need_sync()) {
      // Synchronise (the quantum keeper's sync, woken early if a transfer requested meanwhile has an
      // earlier burst), then choose again.
      pause_until(quantum_keeper_.get_local_time(), work_);
      quantum_keeper_.reset();
      continue;
    }
    if (at == now && !turn_.held()) {
      // Others may act at this instant: take a turn, then choose again (they may have added bursts).
      turn_.take();
      continue;
    }
    local_ps_ = now;
    next->send_burst(0);
  }
}

void ContextTraffic::pause(const sc_core::sc_time& time) {
  running_ = false;
  sc_core::wait(time);
  running_ = true;
  horizon_.forget();
}

void ContextTraffic::pause_until(const sc_core::sc_event& event) {
  running_ = false;
  sc_core::wait(event);
  running_ = true;
  horizon_.forget();
}

void ContextTraffic::pause_until(const sc_core::sc_time& time, const sc_core::sc_event& event) {
  running_ = false;
  sc_core::wait(time, event);
  running_ = true;
  horizon_.forget();
}

}  // namespace gpumux
