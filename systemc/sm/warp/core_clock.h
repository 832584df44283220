#pragma once
// The core clock of a warp-level SM: cycle numbers <-> picoseconds. Cycle c starts at absolute time
// round(c * period) (cycle 0 at time 0, the same grid on every SM), so the SMs, the memory
// controller and the driver agree on when a cycle begins whatever the clock's fractional period
// (706 MHz: 1416.43 ps). The product is taken in long double (64-bit mantissa) so cycle times stay
// exact to the picosecond up to the model's time horizon (1e18 ps), where a double's 53 bits would
// not.

#include <cmath>
#include <cstdint>

#include "core/types.h"

namespace gpumux {

class CoreClock {
 public:
  explicit CoreClock(double clock_mhz) : period_ps_(1e6L / static_cast<long double>(clock_mhz)) {}

  /// Absolute time at which cycle `cycle` begins.
  [[nodiscard]] TimePs ps_of(std::uint64_t cycle) const {
    return static_cast<TimePs>(std::llroundl(static_cast<long double>(cycle) * period_ps_));
  }
  /// The first cycle that begins at or after `ps`.
  [[nodiscard]] std::uint64_t cycle_at_or_after(TimePs ps) const {
    auto cycle = static_cast<std::uint64_t>(std::ceil(static_cast<long double>(ps) / period_ps_));
    // Rounding of the division and of ps_of can disagree by one; settle on ps_of's grid.
    while (cycle > 0 && ps_of(cycle - 1) >= ps) --cycle;
    while (ps_of(cycle) < ps) ++cycle;
    return cycle;
  }
  /// The first cycle that begins strictly after `ps`.
  [[nodiscard]] std::uint64_t cycle_after(TimePs ps) const { return cycle_at_or_after(ps + 1); }

 private:
  long double period_ps_;
};

}  // namespace gpumux
