#pragma once
// Memory interference at the thread-block level (memory.tb_interference: on; issue 12 item 4).
//
// Two rules, and a thread block progresses at the slower of the rates they give:
//
// 1. Oversubscription, Liang et al.'s Eq. 3, applied continuously: every running thread block demands its
//    kernel's DRAM bytes per thread block over its kernel's mean thread-block time (KernelDesc::memory,
//    measured alone), and while the demands of all running thread blocks add up to more than the peak
//    bandwidth Pb, "all kernels are uniformly slowed down in proportion to the excess demand": rate
//    Pb / demand instead of 1.
// 2. Sensitivity to co-runners, as Bubble-Up measures it (Mars et al., "Bubble-Up: Increasing Utilization
//    in Modern Warehouse Scale Computers via Sensible Co-locations", MICRO 2011): each kernel has a
//    pressure (what its running thread blocks do to others, in GB/s of a reference streaming "bubble"
//    kernel that slows a reporter kernel as much) and a sensitivity curve (its own slowdown beside the
//    bubble at each bubble bandwidth), both measured at the warp level by scripts/gen-kernel-sensitivity.
//    A kernel's thread blocks progress at 1 / sensitivity(pressure of the thread blocks
//    of every other kernel now running). Eq. 3 alone misses the slowdowns the warp level shows well
//    under the peak: two kernels' streams fighting over row buffers, and latency growing with load
//    (docs/validation.md section 16).
//
// Progress is kept as one work clock per running kernel: work(t), in picoseconds of alone-speed
// execution, advances at the kernel's current rate. A thread block that needs D picoseconds alone and
// starts at work w ends when its kernel's clock reaches w + D, whatever the rate does meanwhile, so the
// SMs keep each kernel's thread blocks ordered by that work value and only the mapping from work to time
// moves when the rates change. A clock is made when its kernel's first thread block starts (reading
// work = time) and dropped when its last one stops. With rate 1 throughout, work(t) = t exactly:
// interference off, or never slowed, gives the times of today.
//
// Demands and pressures are integers (bytes per second, rounded once per kernel) so adding and removing
// the same thread blocks returns the sums to exactly zero.

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/gpu_config.h"
#include "core/kernel_desc.h"
#include "core/types.h"

namespace gpumux {

/// Told when progress rates changed, so its completion events can move.
class ProgressRateListener {
 public:
  virtual ~ProgressRateListener() = default;
  ProgressRateListener() = default;
  ProgressRateListener(const ProgressRateListener&) = delete;
  ProgressRateListener& operator=(const ProgressRateListener&) = delete;
  /// Rates changed at `now`: re-time the pending completion events.
  virtual void on_progress_rate_changed(TimePs now) = 0;
};

/// One kernel's alone-speed work against simulated time, advancing at a rate that changes.
class WorkClock {
 public:
  /// Starts at `now` reading work = now, at rate 1.
  explicit WorkClock(TimePs now) : anchor_time_(now), anchor_work_(now) {}

  /// Work done from time 0 to `at` (at must not be before the last rate change; later times
  /// extrapolate at the current rate).
  [[nodiscard]] TimePs work_at(TimePs at) const;
  /// The earliest time at which the clock reaches `work` at the current rate (at most the last rate
  /// change for a value already reached: the caller compares with its own now).
  [[nodiscard]] TimePs time_of(TimePs work) const;
  [[nodiscard]] double rate() const { return rate_; }
  /// The rate is `rate` from `now` on; false when it already was.
  bool set_rate(double rate, TimePs now);

 private:
  TimePs anchor_time_;  ///< the clock read anchor_work_ at anchor_time_ (the last rate change)
  TimePs anchor_work_;
  double rate_ = 1.0;
};

/// What one running thread block of a kernel adds (bytes per second, integers).
struct TbTraffic {
  std::uint64_t demand = 0;    ///< DRAM bytes per second (Eq. 3)
  std::uint64_t pressure = 0;  ///< bubble-equivalent bytes per second (sensitivity)
  [[nodiscard]] bool any() const { return demand > 0 || pressure > 0; }
};

class BandwidthPenalty {
 public:
  /// `peak_bytes_per_s`: Pb, the memory's peak bandwidth (memory.bandwidth_gb_per_s); must be positive.
  /// `gpu`: for the kernels' occupancy (a kernel's pressure is given per SM at full occupancy).
  BandwidthPenalty(double peak_bytes_per_s, const GpuConfig& gpu);

  /// What a running thread block of `kernel` demands and presses (zero without a memory profile).
  [[nodiscard]] TbTraffic traffic_of(const KernelDesc& kernel);

  /// The work clock of `kernel` while one of its thread blocks runs; nullptr when none does.
  [[nodiscard]] const WorkClock* clock(KernelId kernel) const;
  /// Kernel `kernel`'s clock, made (reading work = now) if none of its thread blocks runs.
  const WorkClock& clock_for(KernelId kernel, TimePs now);

  /// A thread block of `kernel` starts (add) or stops (remove) running at `now`. When a rate changes,
  /// every listener is told (or, with a deferral, the hook is called). remove() drops the kernel's clock
  /// with its last thread block.
  void add(KernelId kernel, const KernelDesc& desc, const TbTraffic& traffic, TimePs now);
  void remove(KernelId kernel, const TbTraffic& traffic, TimePs now);

  void add_listener(ProgressRateListener* listener) { listeners_.push_back(listener); }

  /// Defers telling the listeners: the first rate change after a flush() calls `hook` (the simulator
  /// schedules a flush() for the end of the instant), and flush() tells them. A thread block ending and
  /// the next one starting in the same instant (the common case) then move nothing. The work
  /// clocks themselves always change at once. Without a hook, every change is told at once.
  void set_deferral(std::function<void()> hook) { hook_ = std::move(hook); }
  /// Tells the listeners, at `now`, if a kernel's rate differs from the one they last heard of.
  void flush(TimePs now);

  /// Eq. 3's rate now: 1, or Pb / demand while oversubscribed.
  [[nodiscard]] double oversubscription_rate() const;
  [[nodiscard]] std::uint64_t demand_bytes_per_s() const { return demand_; }
  [[nodiscard]] std::uint64_t pressure_bytes_per_s() const { return pressure_; }
  /// Pb, bytes per second.
  [[nodiscard]] std::uint64_t peak_bytes_per_s() const { return peak_; }
  /// Simulated time spent oversubscribed (Eq. 3), up to `now`.
  [[nodiscard]] TimePs oversubscribed_ps(TimePs now) const;
  /// Kernel time lost to interference up to `now`: over every kernel while its thread blocks ran,
  /// elapsed time less the alone-speed work its clock did.
  [[nodiscard]] TimePs lost_ps(TimePs now) const;
  /// Highest demand and pressure seen, bytes per second.
  [[nodiscard]] std::uint64_t peak_demand_bytes_per_s() const { return max_demand_; }
  [[nodiscard]] std::uint64_t peak_pressure_bytes_per_s() const { return max_pressure_; }

 private:
  struct Running {
    const KernelDesc* desc = nullptr;
    WorkClock clock;
    std::uint32_t tbs = 0;
    std::uint64_t pressure = 0;  ///< of its own running thread blocks
    double told_rate = 1.0;      ///< the rate the listeners last heard of (its SMs' events follow it)
  };
  /// New rates for every running kernel at `now`; tells the listeners when one moved.
  void update_rates(TimePs now);
  [[nodiscard]] double rate_of(const Running& kernel) const;
  /// Kernel `kernel`'s entry, made with a clock reading work = now if none of its thread blocks runs.
  Running& running_for(KernelId kernel, TimePs now);
  /// Kernel time a running kernel has lost up to `now`: its clock started reading work = time, so the
  /// loss is time less work.
  [[nodiscard]] static TimePs lost_by(const Running& kernel, TimePs now) {
    return now - kernel.clock.work_at(now);
  }

  GpuConfig gpu_;       ///< a copy: occupancy is computed as kernels first appear
  std::uint64_t peak_;  ///< Pb, bytes per second
  std::uint64_t demand_ = 0;
  std::uint64_t pressure_ = 0;
  std::uint64_t max_demand_ = 0;
  std::uint64_t max_pressure_ = 0;
  std::map<KernelId, Running> running_;  ///< by id: a deterministic order
  std::unordered_map<const KernelDesc*, TbTraffic> traffic_;
  TimePs oversubscribed_since_ = 0;
  TimePs oversubscribed_before_ = 0;  ///< oversubscribed time before oversubscribed_since_
  TimePs lost_before_ = 0;            ///< lost by kernels whose clocks were dropped
  std::vector<ProgressRateListener*> listeners_;
  std::function<void()> hook_;
  bool flush_pending_ = false;  ///< the hook was called and flush() has not run since
};

/// Kernel `desc`'s slowdown beside `pressure_gb_per_s` of other kernels' pressure: its sensitivity curve
/// interpolated linearly, (0, 1) before the first point, and beyond the last in proportion to the
/// pressure (Eq. 3's form). 1 without a curve.
[[nodiscard]] double sensitivity_slowdown(const TbInterferenceProfile& profile, double pressure_gb_per_s);

}  // namespace gpumux
