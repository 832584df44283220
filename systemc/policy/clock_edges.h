#pragma once
// The GPU core clock's edges in simulated time, for policies that charge their hardware's latency in
// cycles (DSS and the leaky bucket with latency=hardware, issue 21): edge c is at c core-clock periods,
// rounded up to whole picoseconds, so edge_at(edge_time(c)) == c for every c.

#include <cmath>
#include <cstdint>

#include "core/types.h"

namespace gpumux {

/// The time of clock edge `cycle` at `clock_mhz`.
[[nodiscard]] inline TimePs edge_time(std::uint64_t cycle, double clock_mhz) {
  return static_cast<TimePs>(std::ceil(static_cast<double>(cycle) * 1e6 / clock_mhz));
}

/// The first clock edge at or after `time`.
[[nodiscard]] inline std::uint64_t edge_at(TimePs time, double clock_mhz) {
  // The double estimate may be off by a few cycles for very late times; the two loops settle it.
  auto cycle = static_cast<std::uint64_t>(static_cast<double>(time) * clock_mhz / 1e6);
  while (edge_time(cycle, clock_mhz) < time) ++cycle;
  while (cycle > 0 && edge_time(cycle - 1, clock_mhz) >= time) --cycle;
  return cycle;
}

}  // namespace gpumux
