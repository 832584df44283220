#pragma once
// A shared channel with a bandwidth and a latency: the timing core of the memory controller and of
// each direction of the PCIe link. A transfer waits until the channel is free, occupies it for
// bytes/bandwidth, and is delivered `latency` after its service ends. Requests are served in the
// order they are made (first come, first served).

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/types.h"

namespace gpumux {

class BandwidthChannel {
 public:
  BandwidthChannel(double bytes_per_second, TimePs latency_ps)
      : bytes_per_ps_(bytes_per_second / 1e12), latency_ps_(latency_ps) {}

  struct Slot {
    TimePs start_ps;    ///< service begins
    TimePs end_ps;      ///< channel free again
    TimePs deliver_ps;  ///< data delivered (end + latency)
  };

  /// Reserves the channel for `bytes` arriving at `arrival_ps`.
  Slot reserve(std::uint64_t bytes, TimePs arrival_ps) {
    const TimePs start = std::max(arrival_ps, free_ps_);
    free_ps_ = start + service_ps(bytes);
    busy_ps_ += free_ps_ - start;
    bytes_ += bytes;
    return Slot{start, free_ps_, free_ps_ + latency_ps_};
  }

  [[nodiscard]] TimePs service_ps(std::uint64_t bytes) const {
    return static_cast<TimePs>(std::ceil(static_cast<double>(bytes) / bytes_per_ps_));
  }
  [[nodiscard]] double bytes_per_second() const { return bytes_per_ps_ * 1e12; }
  [[nodiscard]] TimePs latency_ps() const { return latency_ps_; }
  [[nodiscard]] TimePs busy_ps() const { return busy_ps_; }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }
  [[nodiscard]] TimePs free_ps() const { return free_ps_; }

 private:
  double bytes_per_ps_;
  TimePs latency_ps_;
  TimePs free_ps_ = 0;
  TimePs busy_ps_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace gpumux
