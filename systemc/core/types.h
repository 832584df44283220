#pragma once
// Strongly typed identifiers and time units shared by every block of the model.
// Policies and reference models use only these plain C++ types (no SystemC), so the same code
// drives the simulator and the Verilator cross-checks.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

namespace gpumux {

/// Simulated time in picoseconds (SystemC's default resolution). Converted to sc_time only at
/// module boundaries.
using TimePs = std::uint64_t;
inline constexpr TimePs kNever = std::numeric_limits<TimePs>::max();
/// The simulated-time horizon: 1e18 ps, about 11.6 days. Every time read from a config, and the
/// back-to-back work of a whole workload, must stay below it (checked when loading, docs/config.md
/// "Ranges"), which leaves a factor of 18 to 2^64 ps for sums inside the model.
inline constexpr TimePs kTimeHorizonPs = 1'000'000'000'000'000'000ULL;

/// Nearest whole picosecond (times are never negative; llround, not a +0.5 cast, for exact halves).
/// Nearest picosecond, halves away from zero: std::llround's result, without its library call for the
/// values the model makes (0 <= ps < 2^53, where the truncation and the remainder are exact).
inline TimePs round_to_ps(double ps) {
  if (ps >= 0.0 && ps < 0x1p53) {
    auto whole = static_cast<TimePs>(ps);
    if (ps - static_cast<double>(whole) >= 0.5) ++whole;
    return whole;
  }
  return static_cast<TimePs>(std::llround(ps));
}
inline TimePs ps_from_ns(double ns) { return round_to_ps(ns * 1000.0); }
inline constexpr double ns_from_ps(TimePs ps) { return static_cast<double>(ps) / 1000.0; }

/// Index of a streaming multiprocessor, 0 .. N_SM-1.
enum class SmId : std::uint32_t {};
/// One kernel launch (an instance); unique within one simulation, in launch order.
enum class KernelId : std::uint32_t {};
/// A process of the workload (one GPU context), in workload order.
enum class ProcessId : std::uint32_t {};

inline constexpr std::uint32_t index(SmId id) { return static_cast<std::uint32_t>(id); }
inline constexpr std::uint32_t index(KernelId id) { return static_cast<std::uint32_t>(id); }
inline constexpr std::uint32_t index(ProcessId id) { return static_cast<std::uint32_t>(id); }

}  // namespace gpumux

template <>
struct std::hash<gpumux::KernelId> {
  std::size_t operator()(gpumux::KernelId id) const noexcept { return gpumux::index(id); }
};
