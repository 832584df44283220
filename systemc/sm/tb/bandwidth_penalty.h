#pragma once
// Memory interference at the thread-block level (memory.tb_interference: on; issue 12 item 4).
//
// The rule is Liang et al.'s Eq. 3, applied continuously instead of once per kernel set: every running
// thread block demands its kernel's DRAM bytes per thread block over its kernel's mean thread-block time
// (KernelDesc::memory, measured alone), and while the demands of all running thread blocks add up to more
// than the peak bandwidth Pb, "all kernels are uniformly slowed down in proportion to the excess demand":
// every thread block progresses at rate Pb / demand instead of 1. Below the peak nothing slows down, so
// compute-bound co-runners leave each other alone and the rule costs nothing.
//
// Progress is kept as one shared work clock: work(t), in picoseconds of alone-speed execution, advances
// at the current rate. A thread block that needs D picoseconds alone and starts at work w ends when the
// clock reaches w + D, whatever the rate does meanwhile, so the SMs keep their thread blocks ordered by
// that work value and only the mapping from work to time moves when the demand changes. With rate 1
// throughout, work(t) = t exactly: interference off (or never oversubscribed) gives the times of today.
//
// Demands are integers (bytes per second, rounded once per kernel) so adding and removing the same
// thread blocks returns the sum to exactly zero.

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/types.h"

namespace gpumux {

/// Told when the progress rate changed, so its completion events can move.
class ProgressRateListener {
 public:
  virtual ~ProgressRateListener() = default;
  ProgressRateListener() = default;
  ProgressRateListener(const ProgressRateListener&) = delete;
  ProgressRateListener& operator=(const ProgressRateListener&) = delete;
  /// The rate changed at `now`: re-time the pending completion events.
  virtual void on_progress_rate_changed(TimePs now) = 0;
};

class BandwidthPenalty {
 public:
  /// `peak_bytes_per_s`: Pb, the memory's peak bandwidth (memory.bandwidth_gb_per_s); must be positive.
  explicit BandwidthPenalty(double peak_bytes_per_s);

  /// Alone-speed work done by a thread block running throughout, from time 0 to `at` (at must not be
  /// before the last change; later times extrapolate at the current rate).
  [[nodiscard]] TimePs work_at(TimePs at) const;
  /// The earliest time at which the work clock reaches `work` at the current rate (at most now for a
  /// value already reached: the caller compares with its own now).
  [[nodiscard]] TimePs time_of(TimePs work) const;

  /// A thread block demanding `bytes_per_s` starts (add) or stops (remove) running at `now`. When the
  /// rate changes, every listener is told (the caller included).
  void add_demand(std::uint64_t bytes_per_s, TimePs now);
  void remove_demand(std::uint64_t bytes_per_s, TimePs now);

  void add_listener(ProgressRateListener* listener) { listeners_.push_back(listener); }

  /// Defers telling the listeners: the first rate change after a flush() calls `hook` (the simulator
  /// schedules a flush() for the end of the instant), and flush() tells them only if the rate then differs
  /// from the one they last heard. A thread block ending and the next one starting in the same instant
  /// (the common case) then move nothing. The work clock itself always changes at once. Without a hook,
  /// every change is told at once.
  void set_deferral(std::function<void()> hook) { hook_ = std::move(hook); }
  /// Tells the listeners of the rate, at `now`, if it changed since they were last told.
  void flush(TimePs now);

  /// Current progress rate: 1, or Pb / demand while oversubscribed.
  [[nodiscard]] double rate() const { return rate_; }
  [[nodiscard]] std::uint64_t demand_bytes_per_s() const { return demand_; }
  /// Pb, bytes per second.
  [[nodiscard]] std::uint64_t peak_bytes_per_s() const { return peak_; }
  /// Simulated time spent oversubscribed, and the work lost to it (time - work), up to `now`.
  [[nodiscard]] TimePs oversubscribed_ps(TimePs now) const;
  [[nodiscard]] TimePs lost_ps(TimePs now) const { return now - work_at(now); }
  /// Highest demand seen, bytes per second.
  [[nodiscard]] std::uint64_t peak_demand_bytes_per_s() const { return max_demand_; }

 private:
  void set_demand(std::uint64_t demand, TimePs now);

  std::uint64_t peak_;  ///< Pb, bytes per second
  std::uint64_t demand_ = 0;
  std::uint64_t max_demand_ = 0;
  double rate_ = 1.0;
  TimePs anchor_time_ = 0;  ///< the clock read anchor_work_ at anchor_time_ (the last rate change)
  TimePs anchor_work_ = 0;
  TimePs oversubscribed_before_ = 0;  ///< oversubscribed time before anchor_time_
  std::vector<ProgressRateListener*> listeners_;
  std::function<void()> hook_;
  double told_rate_ = 1.0;  ///< the rate the listeners last heard of
  bool flush_pending_ = false;
};

}  // namespace gpumux
