#pragma once
// Options of the RTL cross-check runner (tb/rtl/rtl_main.cpp), shared by its tests.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace gpumux::rtl {

/// --inject-mismatch K:C: random scenario K, cycle C.
struct Injection {
  std::uint64_t scenario = 0;
  std::uint64_t cycle = 0;
};

struct RtlOptions {
  std::uint64_t scenarios = 300;  ///< random scenarios per block, spread over its parameter sets
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> only_scenario;  ///< rerun one scenario index (as a failure names it)
  std::string wave;  ///< VCD base name; each test writes <stem>.<test>.vcd (empty: no waves)
  /// Tests the failure path: the reference model's outputs are altered in one cycle of one scenario.
  std::optional<Injection> inject;
  std::string program = "gpumux_rtl_tests";  ///< argv[0], for the rerun command
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

/// Each block's random tests register the number of parameter sets the scenarios are spread over
/// (at static initialisation), so the runner can check --scenario against the run before it starts.
bool register_random_block(const std::string& block, std::uint64_t sets);

/// The random scenarios the running test (parameter set `set_index` of `block`) compares: n of them,
/// or with --scenario K only K. False (the test is then skipped, and the runner fails with exit code 2
/// when no random test ran K) when K is not among this test's scenarios.
bool random_scenarios_run(const std::string& block, std::uint64_t set_index, std::uint64_t& n);

/// The command that reruns random scenario `scenario` of the running test exactly: the test, every
/// option that shapes the scenario (--scenarios, --seed, --scenario, --inject-mismatch when it falls
/// in it) and --wave.
std::string rerun_command(std::uint64_t scenario);

/// The cycle of `scenario` in which --inject-mismatch alters the reference's outputs (nullopt: none).
std::optional<std::uint64_t> injected_cycle(std::uint64_t scenario);

}  // namespace gpumux::rtl
