#include "sm/tb/bandwidth_penalty.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "sm/occupancy.h"

namespace gpumux {

TimePs WorkClock::work_at(TimePs at) const {
  const TimePs elapsed = at - anchor_time_;
  if (rate_ == 1.0) return anchor_work_ + elapsed;
  return anchor_work_ + static_cast<TimePs>(std::floor(static_cast<double>(elapsed) * rate_));
}

TimePs WorkClock::time_of(TimePs work) const {
  if (work <= anchor_work_) return anchor_time_;
  const TimePs left = work - anchor_work_;
  if (rate_ == 1.0) return anchor_time_ + left;
  return anchor_time_ + static_cast<TimePs>(std::ceil(static_cast<double>(left) / rate_));
}

bool WorkClock::set_rate(double rate, TimePs now) {
  if (rate == rate_) return false;
  if (now < anchor_time_) throw InvariantViolation("work clock: rate changed in the past");
  anchor_work_ = work_at(now);
  anchor_time_ = now;
  rate_ = rate;
  return true;
}

double sensitivity_slowdown(const TbInterferenceProfile& profile, double pressure_gb_per_s) {
  const auto& curve = profile.sensitivity;
  if (curve.empty() || pressure_gb_per_s <= 0) return 1.0;
  double x0 = 0;
  double y0 = 1;
  for (const auto& point : curve) {
    if (pressure_gb_per_s <= point.gb_per_s) {
      if (point.gb_per_s == x0) return point.slowdown;
      return y0 + (point.slowdown - y0) * (pressure_gb_per_s - x0) / (point.gb_per_s - x0);
    }
    x0 = point.gb_per_s;
    y0 = point.slowdown;
  }
  // Beyond the measured range the slowdown grows in proportion to the pressure, as Eq. 3's penalty grows
  // with the demand (the bubble's highest level is a streaming kernel at full occupancy, about what the
  // co-runners of the shipped kernels reach on the split SMs it was measured on).
  return x0 > 0 ? y0 * pressure_gb_per_s / x0 : y0;
}

BandwidthPenalty::BandwidthPenalty(double peak_bytes_per_s, const GpuConfig& gpu)
    : gpu_(gpu), peak_(static_cast<std::uint64_t>(std::llround(peak_bytes_per_s))) {
  if (!(peak_bytes_per_s >= 1.0)) {
    throw InvariantViolation("bandwidth penalty: peak bandwidth must be positive");
  }
}

TbTraffic BandwidthPenalty::traffic_of(const KernelDesc& kernel) {
  const auto known = traffic_.find(&kernel);
  if (known != traffic_.end()) return known->second;
  TbTraffic traffic;
  if (kernel.tb_time.mean_ps > 0) {
    // Its kernel's DRAM bytes per thread block over its mean thread-block time alone (Liang's B_i, per
    // thread block): what it asks while it runs, whatever its own drawn duration.
    const double per_s =
        kernel.memory.dram_bytes_per_tb() / static_cast<double>(kernel.tb_time.mean_ps) * 1e12;
    traffic.demand = static_cast<std::uint64_t>(std::llround(per_s));
  }
  if (kernel.interference.pressure_per_sm_gb_per_s > 0) {
    // Given per SM at full occupancy: each of the thread blocks that fill an SM presses a share.
    const std::uint32_t per_sm = compute_occupancy(kernel, gpu_).tbs_per_sm;
    if (per_sm > 0) {
      traffic.pressure = static_cast<std::uint64_t>(
          std::llround(kernel.interference.pressure_per_sm_gb_per_s * 1e9 / static_cast<double>(per_sm)));
    }
  }
  traffic_.emplace(&kernel, traffic);
  return traffic;
}

const WorkClock* BandwidthPenalty::clock(KernelId kernel) const {
  const auto it = running_.find(kernel);
  return it == running_.end() ? nullptr : &it->second.clock;
}

BandwidthPenalty::Running& BandwidthPenalty::running_for(KernelId kernel, TimePs now) {
  auto it = running_.find(kernel);
  if (it == running_.end()) it = running_.emplace(kernel, Running{nullptr, WorkClock(now), 0, 0}).first;
  return it->second;
}

const WorkClock& BandwidthPenalty::clock_for(KernelId kernel, TimePs now) {
  return running_for(kernel, now).clock;
}

double BandwidthPenalty::oversubscription_rate() const {
  // Liang Eq. 3: penalty = demand / Pb when the demand exceeds Pb, else 1; progress is its inverse.
  return demand_ > peak_ ? static_cast<double>(peak_) / static_cast<double>(demand_) : 1.0;
}

double BandwidthPenalty::rate_of(const Running& kernel) const {
  const double others_gb_per_s = static_cast<double>(pressure_ - kernel.pressure) / 1e9;
  const double slowdown =
      kernel.desc == nullptr ? 1.0 : sensitivity_slowdown(kernel.desc->interference, others_gb_per_s);
  return std::min(oversubscription_rate(), 1.0 / slowdown);
}

void BandwidthPenalty::add(KernelId kernel, const KernelDesc& desc, const TbTraffic& traffic, TimePs now) {
  Running& r = running_for(kernel, now);
  r.desc = &desc;
  ++r.tbs;
  r.pressure += traffic.pressure;
  if (demand_ <= peak_ && demand_ + traffic.demand > peak_) oversubscribed_since_ = now;
  demand_ += traffic.demand;
  pressure_ += traffic.pressure;
  max_demand_ = std::max(max_demand_, demand_);
  max_pressure_ = std::max(max_pressure_, pressure_);
  // A kernel's first thread block needs its rate even when it adds nothing itself.
  if (traffic.any() || r.tbs == 1) update_rates(now);
}

void BandwidthPenalty::remove(KernelId kernel, const TbTraffic& traffic, TimePs now) {
  const auto it = running_.find(kernel);
  if (it == running_.end() || it->second.tbs == 0 || traffic.demand > demand_ ||
      traffic.pressure > it->second.pressure) {
    throw InvariantViolation("bandwidth penalty: a thread block stopped that never started");
  }
  Running& r = it->second;
  if (demand_ > peak_ && demand_ - traffic.demand <= peak_) {
    oversubscribed_before_ += now - oversubscribed_since_;
  }
  demand_ -= traffic.demand;
  pressure_ -= traffic.pressure;
  r.pressure -= traffic.pressure;
  if (--r.tbs == 0) {
    lost_before_ += lost_by(r, now);
    running_.erase(it);
  }
  if (traffic.any()) update_rates(now);
}

void BandwidthPenalty::update_rates(TimePs now) {
  bool moved = false;
  for (auto& [id, kernel] : running_) {
    if (kernel.tbs > 0 && kernel.clock.set_rate(rate_of(kernel), now)) moved = true;
  }
  if (!moved) return;
  if (!hook_) {
    flush(now);
  } else if (!flush_pending_) {
    flush_pending_ = true;
    hook_();
  }
}

void BandwidthPenalty::flush(TimePs now) {
  flush_pending_ = false;
  bool moved = false;
  for (auto& [id, kernel] : running_) {
    if (kernel.clock.rate() != kernel.told_rate) {
      kernel.told_rate = kernel.clock.rate();
      moved = true;
    }
  }
  if (!moved) return;
  for (ProgressRateListener* listener : listeners_) listener->on_progress_rate_changed(now);
}

TimePs BandwidthPenalty::oversubscribed_ps(TimePs now) const {
  return oversubscribed_before_ + (demand_ > peak_ ? now - oversubscribed_since_ : 0);
}

TimePs BandwidthPenalty::lost_ps(TimePs now) const {
  TimePs lost = lost_before_;
  for (const auto& [id, kernel] : running_) {
    if (kernel.tbs > 0) lost += lost_by(kernel, now);
  }
  return lost;
}

}  // namespace gpumux
