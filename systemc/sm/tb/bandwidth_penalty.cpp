#include "sm/tb/bandwidth_penalty.h"

#include <cmath>

#include "core/error.h"

namespace gpumux {

BandwidthPenalty::BandwidthPenalty(double peak_bytes_per_s)
    : peak_(static_cast<std::uint64_t>(std::llround(peak_bytes_per_s))) {
  if (!(peak_bytes_per_s >= 1.0)) {
    throw InvariantViolation("bandwidth penalty: peak bandwidth must be positive");
  }
}

TimePs BandwidthPenalty::work_at(TimePs at) const {
  const TimePs elapsed = at - anchor_time_;
  if (rate_ == 1.0) return anchor_work_ + elapsed;
  return anchor_work_ + static_cast<TimePs>(std::floor(static_cast<double>(elapsed) * rate_));
}

TimePs BandwidthPenalty::time_of(TimePs work) const {
  if (work <= anchor_work_) return anchor_time_;
  const TimePs left = work - anchor_work_;
  if (rate_ == 1.0) return anchor_time_ + left;
  return anchor_time_ + static_cast<TimePs>(std::ceil(static_cast<double>(left) / rate_));
}

TimePs BandwidthPenalty::oversubscribed_ps(TimePs now) const {
  return oversubscribed_before_ + (rate_ < 1.0 ? now - anchor_time_ : 0);
}

void BandwidthPenalty::add_demand(std::uint64_t bytes_per_s, TimePs now) {
  set_demand(demand_ + bytes_per_s, now);
}

void BandwidthPenalty::remove_demand(std::uint64_t bytes_per_s, TimePs now) {
  if (bytes_per_s > demand_) throw InvariantViolation("bandwidth penalty: more demand removed than added");
  set_demand(demand_ - bytes_per_s, now);
}

void BandwidthPenalty::set_demand(std::uint64_t demand, TimePs now) {
  demand_ = demand;
  if (demand > max_demand_) max_demand_ = demand;
  // Liang Eq. 3: penalty = demand / Pb when the demand exceeds Pb, else 1; progress is its inverse.
  const double rate = demand > peak_ ? static_cast<double>(peak_) / static_cast<double>(demand) : 1.0;
  if (rate == rate_) return;
  if (now < anchor_time_) throw InvariantViolation("bandwidth penalty: demand changed in the past");
  anchor_work_ = work_at(now);
  if (rate_ < 1.0) oversubscribed_before_ += now - anchor_time_;
  anchor_time_ = now;
  rate_ = rate;
  if (!hook_) {
    flush(now);
  } else if (!flush_pending_) {
    flush_pending_ = true;
    hook_();
  }
}

void BandwidthPenalty::flush(TimePs now) {
  flush_pending_ = false;
  if (rate_ == told_rate_) return;
  told_rate_ = rate_;
  for (ProgressRateListener* listener : listeners_) listener->on_progress_rate_changed(now);
}

}  // namespace gpumux
