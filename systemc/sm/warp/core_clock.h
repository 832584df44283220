#pragma once
// The core clock of a warp-level SM: cycle numbers <-> picoseconds. Cycle c starts at absolute time
// round(c * period) (cycle 0 at time 0, the same grid on every SM), so the SMs, the memory
// controller and the driver agree on when a cycle begins whatever the clock's fractional period
// (706 MHz: 1416.43 ps).
//
// The period is held in fixed point, in units of 2^-32 ps, and the product taken in 128 bits: exact
// integer arithmetic (the same grid on every machine, no floating-point rounding to disagree about)
// and cheap, since the SM converts on every activation. The fixed-point period differs from the
// exact one by less than 2^-33 ps, which moves cycle 1e15 by at most about 0.1 ns: the grid is
// still monotonic and cycles stay within a picosecond of their nominal time for any run the time
// horizon allows at GHz clocks.

#include <cmath>
#include <cstdint>

#include "core/types.h"

namespace gpumux {

class CoreClock {
 public:
  explicit CoreClock(double clock_mhz)
      : period_fx_(static_cast<std::uint64_t>(std::llround(1e6 / clock_mhz * 4294967296.0))) {}

  /// Absolute time at which cycle `cycle` begins.
  [[nodiscard]] TimePs ps_of(std::uint64_t cycle) const {
    return static_cast<TimePs>((static_cast<U128>(cycle) * period_fx_ + kHalf) >> 32U);
  }
  /// The first cycle that begins at or after `ps`.
  [[nodiscard]] std::uint64_t cycle_at_or_after(TimePs ps) const {
    auto cycle = static_cast<std::uint64_t>((static_cast<U128>(ps) << 32U) / period_fx_);
    // The division ignores ps_of's rounding: settle on ps_of's grid (a step or two at most).
    while (cycle > 0 && ps_of(cycle - 1) >= ps) --cycle;
    while (ps_of(cycle) < ps) ++cycle;
    return cycle;
  }
  /// The first cycle that begins strictly after `ps`.
  [[nodiscard]] std::uint64_t cycle_after(TimePs ps) const { return cycle_at_or_after(ps + 1); }

 private:
  __extension__ using U128 = unsigned __int128;  // GCC and Clang; __extension__: no -Wpedantic warning
  static constexpr U128 kHalf = U128{1} << 31U;

  std::uint64_t period_fx_;  ///< period in 2^-32 ps
};

}  // namespace gpumux
