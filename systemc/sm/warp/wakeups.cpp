#include "sm/warp/wakeups.h"

#include <utility>

#include "core/processes.h"

namespace gpumux {

WarpWakeups& WarpWakeups::instance() {
  // Never destroyed: SM modules call it until the process exits, after which no event may be touched.
  static WarpWakeups* const wakeups = new WarpWakeups();
  return *wakeups;
}

WarpWakeups::WarpWakeups() {
  spawn_method("warp_sm_wakeups", event_, [this] { fire(); });
}

std::uint32_t WarpWakeups::add(Activate activate) {
  targets_.push_back(std::move(activate));
  return static_cast<std::uint32_t>(targets_.size() - 1);
}

void WarpWakeups::request(std::uint32_t order, TimePs at_ps, std::uint64_t generation) {
  due_.push({at_ps, order, generation});
  if (firing_ || at_ps >= notified_ps_) return;  // fire() serves it, or an earlier firing is due
  const TimePs now = sc_core::sc_time_stamp().value();
  event_.cancel();
  notified_ps_ = at_ps;
  event_.notify(sc_core::sc_time::from_value(at_ps - now));
}

void WarpWakeups::fire() {
  const TimePs now = sc_core::sc_time_stamp().value();
  notified_ps_ = kNever;
  firing_ = true;
  while (!due_.empty() && due_.top().at_ps <= now) {
    const Entry e = due_.top();
    due_.pop();
    targets_[e.order](e.generation);
  }
  firing_ = false;
  if (!due_.empty()) {
    notified_ps_ = due_.top().at_ps;
    event_.notify(sc_core::sc_time::from_value(notified_ps_ - now));
  }
}

}  // namespace gpumux
