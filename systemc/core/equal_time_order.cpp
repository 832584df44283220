#include "core/equal_time_order.h"

#include <algorithm>

#include "core/processes.h"

namespace gpumux {

EqualTimeOrder::EqualTimeOrder(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
  spawn_thread("run", [this] { run(); });
}

void EqualTimeTurn::take() {
  if (order_ != nullptr) {
    order_->take(*this);
  } else {
    held_in_delta_ = sc_core::sc_delta_count();
  }
}

void EqualTimeOrder::take(EqualTimeTurn& turn) {
  const std::uint64_t delta = sc_core::sc_delta_count();
  if (turn.held_in_delta_ == delta) return;  // it has not waited since its turn began
  if (sc_core::sc_pending_activity_at_current_time()) {
    ++waited_;
    turn.released_ = false;
    waiting_.push_back(&turn);
    requested_.notify(sc_core::SC_ZERO_TIME);
    while (!turn.released_) sc_core::wait(turn.released_event_);
  }
  turn.held_in_delta_ = sc_core::sc_delta_count();
}

void EqualTimeOrder::run() {
  for (;;) {
    while (waiting_.empty()) sc_core::wait(requested_);
    // Everything else at this instant first, its delta cycles too. This is the one process that waits
    // for the instant to settle, so two such waits can never hold each other up.
    while (sc_core::sc_pending_activity_at_current_time()) sc_core::wait(sc_core::SC_ZERO_TIME);
    const auto next =
        std::min_element(waiting_.begin(), waiting_.end(),
                         [](const EqualTimeTurn* a, const EqualTimeTurn* b) { return a->rank_ < b->rank_; });
    EqualTimeTurn* turn = *next;
    waiting_.erase(next);
    turn->released_ = true;
    turn->released_event_.notify();  // it runs in this evaluation phase, after this thread waits
  }
}

}  // namespace gpumux
