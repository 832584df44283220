#include "sm/warp_scheduler/two_level.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpumux {

TwoLevelScheduler::TwoLevelScheduler(Priority priority, Inner inner, const WarpSchedulerSetup& setup)
    : priority_(priority),
      inner_(inner),
      ready_size_(setup.ready_queue_size),
      warps_(setup.capacity),
      queue_(setup.capacity, Queue::kNone),
      phase_length_(setup.capacity, 0) {
  if (ready_size_ == 0) {
    throw std::invalid_argument("two-level warp scheduler: ready queue size must be >= 1");
  }
  ready_.reserve(std::min(ready_size_, setup.capacity));
  active_.reserve(setup.capacity);
  pending_.reserve(setup.capacity);
}

std::string TwoLevelScheduler::name() const {
  switch (priority_) {
    case Priority::kRoundRobin:
      return "two-level-lrr";
    case Priority::kOldest:
      return "two-level-gto";
    case Priority::kShortestPhase:
      return "two-level-phase-aware";
  }
  return "two-level";
}

void TwoLevelScheduler::add_warp(WarpSlot warp, std::uint64_t age, const WarpQuery& query) {
  warps_.add(warp, age);
  enter_active(warp, query);
  fill_ready();
}

void TwoLevelScheduler::remove_warp(WarpSlot warp) {
  warps_.remove(warp);
  switch (queue_[warp]) {
    case Queue::kReady:
      erase(ready_, warp);
      if (last_ == warp) last_.reset();
      fill_ready();
      break;
    case Queue::kActive:
      erase(active_, warp);
      break;
    case Queue::kPending:
      erase(pending_, warp);
      break;
    case Queue::kNone:
      break;
  }
  queue_[warp] = Queue::kNone;
}

void TwoLevelScheduler::long_latency_wait(WarpSlot warp) {
  warps_.require(warp, "long_latency_wait");
  switch (queue_[warp]) {
    case Queue::kReady:
      // Fig. 3.6: the waiting warp goes to the pending queue and the active head replaces it.
      erase(ready_, warp);
      if (last_ == warp) last_.reset();
      fill_ready();
      break;
    case Queue::kActive:
      erase(active_, warp);
      break;
    case Queue::kPending:
    case Queue::kNone:
      return;
  }
  queue_[warp] = Queue::kPending;
  pending_.push_back(warp);
}

void TwoLevelScheduler::long_latency_done(WarpSlot warp, const WarpQuery& query) {
  warps_.require(warp, "long_latency_done");
  if (queue_[warp] != Queue::kPending) return;
  erase(pending_, warp);
  enter_active(warp, query);
  fill_ready();
}

std::optional<WarpSlot> TwoLevelScheduler::select(const WarpQuery& query) {
  if (inner_ == Inner::kLrr) {
    // ready_ is kept in rotation order (issued() rotates it), so the first that can issue wins.
    for (const WarpSlot w : ready_) {
      if (query.can_issue(w)) return w;
    }
    return std::nullopt;
  }
  if (last_ && query.can_issue(*last_)) return last_;
  std::optional<WarpSlot> oldest;
  for (const WarpSlot w : ready_) {
    if (w != last_ && (!oldest || warps_.age(w) < warps_.age(*oldest)) && query.can_issue(w)) oldest = w;
  }
  return oldest;
}

void TwoLevelScheduler::issued(WarpSlot warp) {
  const auto at = std::find(ready_.begin(), ready_.end(), warp);
  if (at == ready_.end()) {
    throw std::logic_error("two-level warp scheduler: issued() for slot " + std::to_string(warp) +
                           ", which is not in the ready queue");
  }
  if (inner_ == Inner::kLrr) {
    // The warp that issued gets the lowest priority; the one after it the highest (as GPGPU-Sim's
    // order_lrr over the active set).
    std::rotate(ready_.begin(), at + 1, ready_.end());
  } else {
    last_ = warp;
  }
}

void TwoLevelScheduler::enter_active(WarpSlot warp, const WarpQuery& query) {
  queue_[warp] = Queue::kActive;
  if (priority_ == Priority::kRoundRobin) {
    active_.push_back(warp);
    return;
  }
  // The phase length is read once, as the warp enters the phase (3.4.2.2); a warp in the active
  // queue does not issue, so its next phase does not change while it waits there.
  if (priority_ == Priority::kShortestPhase) phase_length_[warp] = query.phase_length(warp);
  const auto at = std::upper_bound(active_.begin(), active_.end(), warp,
                                   [this](WarpSlot a, WarpSlot b) { return before(a, b); });
  active_.insert(at, warp);  // within the reserved capacity: no allocation
}

void TwoLevelScheduler::fill_ready() {
  while (ready_.size() < ready_size_ && !active_.empty()) {
    const WarpSlot head = active_.front();
    active_.erase(active_.begin());
    ready_.push_back(head);  // lowest priority in the rotation, as GPGPU-Sim's promoted warps
    queue_[head] = Queue::kReady;
  }
}

void TwoLevelScheduler::erase(std::vector<WarpSlot>& queue, WarpSlot warp) {
  queue.erase(std::find(queue.begin(), queue.end(), warp));
}

bool TwoLevelScheduler::before(WarpSlot a, WarpSlot b) const {
  if (priority_ == Priority::kShortestPhase && phase_length_[a] != phase_length_[b]) {
    return phase_length_[a] < phase_length_[b];
  }
  return warps_.age(a) < warps_.age(b);
}

}  // namespace gpumux
