#include "sm/warp/wakeups.h"

#include <algorithm>
#include <utility>

#include "core/processes.h"

namespace gpumux {

namespace {
constexpr std::size_t kWordBits = 64;
}  // namespace

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
  pending_at_.push_back(kNever);
  pending_generation_.push_back(0);
  return static_cast<std::uint32_t>(targets_.size() - 1);
}

void WarpWakeups::withdraw(std::uint32_t order) {
  const auto it = due_.find(pending_at_[order]);
  pending_at_[order] = kNever;
  if (it == due_.end()) return;
  Due& due = it->second;
  due.bits[order / kWordBits] &= ~(std::uint64_t{1} << (order % kWordBits));
  --due.count;
  // The bucket being fired stays until fire() is done with it.
  const bool being_fired = firing_ && it->first <= sc_core::sc_time_stamp().value();
  if (due.count == 0 && !being_fired) {
    spare_bits_.push_back(std::move(due.bits));
    due_.erase(it);
  }
}

void WarpWakeups::request(std::uint32_t order, TimePs at_ps, std::uint64_t generation) {
  if (pending_at_[order] != kNever) withdraw(order);  // superseded: only the latest request counts
  const auto [it, added] = due_.try_emplace(at_ps);
  Due& due = it->second;
  if (added) {
    if (!spare_bits_.empty()) {  // all zero
      due.bits = std::move(spare_bits_.back());
      spare_bits_.pop_back();
    }
    due.bits.resize((targets_.size() + kWordBits - 1) / kWordBits, 0);
    due.first_word = due.bits.size();
  }
  const std::size_t word = order / kWordBits;
  due.bits[word] |= std::uint64_t{1} << (order % kWordBits);
  due.first_word = std::min(due.first_word, word);
  ++due.count;
  pending_at_[order] = at_ps;
  pending_generation_[order] = generation;
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
  while (!due_.empty() && due_.begin()->first <= now) {
    // std::map nodes stay put: the activations below may add SMs to this bucket (a request for
    // now) or to others.
    Due& due = due_.begin()->second;
    while (due.count > 0) {
      // The lowest-numbered SM due (a request made during an activation may be below the last one).
      while (due.bits[due.first_word] == 0) ++due.first_word;
      const std::uint64_t word = due.bits[due.first_word];
      const auto order = static_cast<std::uint32_t>(due.first_word * kWordBits +
                                                    static_cast<std::size_t>(__builtin_ctzll(word)));
      due.bits[due.first_word] = word & (word - 1);
      --due.count;
      pending_at_[order] = kNever;
      targets_[order](pending_generation_[order]);
    }
    spare_bits_.push_back(std::move(due.bits));
    due_.erase(due_.begin());
  }
  firing_ = false;
  if (!due_.empty()) {
    notified_ps_ = due_.begin()->first;
    event_.notify(sc_core::sc_time::from_value(notified_ps_ - now));
  }
}

}  // namespace gpumux
