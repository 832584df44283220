#pragma once
// Options of the RTL cross-check runner (tb/rtl/rtl_main.cpp), shared by its tests.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace gpumux::rtl {

struct RtlOptions {
  std::uint64_t scenarios = 300;  ///< random scenarios per block, spread over its parameter sets
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> only_scenario;  ///< rerun one scenario index (as a failure names it)
  std::string wave;  ///< VCD base name; each test writes <stem>.<test>.vcd (empty: no waves)
};

RtlOptions& options();

/// The wave file for test `tag` (empty when waves are off).
std::string wave_path(const std::string& tag);

/// Scenarios and cycles that agreed, per block; the runner prints them at the end.
struct Tally {
  std::uint64_t scenarios = 0;
  std::uint64_t cycles = 0;
  std::uint64_t decisions = 0;  ///< outputs that changed the tables (assign, reserve, grant)
  std::uint64_t restarts = 0;   ///< searches restarted by an event (DSS)
};
std::map<std::string, Tally>& tallies();

/// Scenario k of parameter set `set` when `total` scenarios are spread over `sets` sets.
inline std::uint64_t scenarios_for_set(std::uint64_t total, std::uint64_t sets, std::uint64_t set) {
  return total / sets + (set < total % sets ? 1 : 0);
}

/// An independent seed per (run seed, block, parameter set, scenario).
std::uint64_t scenario_seed(std::uint64_t seed, const std::string& set, std::uint64_t scenario);

}  // namespace gpumux::rtl
