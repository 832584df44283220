// The RTL cross-check runner: GoogleTest plus the options of scripts/rtl-crosscheck.
//   --scenarios N   random scenarios per block (spread over its parameter sets; default 300)
//   --seed S        run seed (default 1)
//   --scenario K    run only scenario K of each random test (to reproduce a failure); K must be among
//                   the run's scenarios (exit 2 otherwise)
//   --wave FILE     dump VCD waveforms: FILE with the test's name before the extension
//   --inject-mismatch K:C
//                   test the failure path: alter the reference model's outputs in cycle C of random
//                   scenario K (each random test fails there, printing its report and rerun command)

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "rtl_options.h"

namespace gpumux::rtl {

namespace {

/// Parameter sets per block with random tests.
std::map<std::string, std::uint64_t>& random_blocks() {
  static std::map<std::string, std::uint64_t> blocks;
  return blocks;
}

/// With --scenario K: random tests that ran K, and those K is not among the scenarios of.
struct ScenarioRuns {
  std::uint64_t ran = 0;
  std::vector<std::string> outside;
};
ScenarioRuns& scenario_runs() {
  static ScenarioRuns runs;
  return runs;
}

std::string running_test() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info == nullptr ? std::string("*") : std::string(info->test_suite_name()) + "." + info->name();
}

/// `text` as one shell word.
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::strchr("_-+./=:,@", c) != nullptr;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

RtlOptions& options() {
  static RtlOptions o;
  return o;
}

std::map<std::string, Tally>& tallies() {
  static std::map<std::string, Tally> t;
  return t;
}

std::string wave_path(const std::string& tag) {
  const std::string& base = options().wave;
  if (base.empty()) return {};
  const std::size_t dot = base.rfind('.');
  const std::size_t slash = base.rfind('/');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (has_ext ? base.substr(0, dot) : base) + "." + tag + (has_ext ? base.substr(dot) : ".vcd");
}

std::uint64_t scenario_seed(std::uint64_t seed, const std::string& set, std::uint64_t scenario) {
  std::uint64_t h = seed * 0x9E3779B97F4A7C15ULL;
  for (const char c : set) {
    h ^= static_cast<unsigned char>(c);
    (void)splitmix64(h);
  }
  h ^= scenario * 0xD1B54A32D192ED03ULL;
  return splitmix64(h);
}

bool register_random_block(const std::string& block, std::uint64_t sets) {
  random_blocks()[block] = sets;
  return true;
}

bool random_scenarios_run(const std::string& block, std::uint64_t set_index, std::uint64_t& n) {
  const RtlOptions& o = options();
  n = scenarios_for_set(o.scenarios, random_blocks().at(block), set_index);
  if (!o.only_scenario) return true;
  if (*o.only_scenario < n) {
    ++scenario_runs().ran;
    return true;
  }
  scenario_runs().outside.push_back(running_test() + " has " +
                                    (n == 0 ? std::string("none") : "0 to " + std::to_string(n - 1)));
  return false;
}

std::string rerun_command(std::uint64_t scenario) {
  const RtlOptions& o = options();
  std::string cmd = shell_word(o.program) + " --gtest_filter=" + shell_word(running_test()) +
                    " --scenarios " + std::to_string(o.scenarios) + " --seed " + std::to_string(o.seed) +
                    " --scenario " + std::to_string(scenario);
  if (const auto cycle = injected_cycle(scenario)) {
    cmd += " --inject-mismatch " + std::to_string(scenario) + ":" + std::to_string(*cycle);
  }
  return cmd + " --wave out.vcd";
}

std::optional<std::uint64_t> injected_cycle(std::uint64_t scenario) {
  const RtlOptions& o = options();
  if (o.inject && o.inject->scenario == scenario) return o.inject->cycle;
  return std::nullopt;
}

}  // namespace gpumux::rtl

namespace {

bool parse_u64(const char* text, std::uint64_t& value) {
  if (*text < '0' || *text > '9') return false;  // strtoull would take "-1" and " 1"
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE) return false;
  value = v;
  return true;
}

bool parse_injection(const std::string& text, gpumux::rtl::Injection& inject) {
  const std::size_t colon = text.find(':');
  return colon != std::string::npos && parse_u64(text.substr(0, colon).c_str(), inject.scenario) &&
         parse_u64(text.substr(colon + 1).c_str(), inject.cycle);
}

/// --scenario K against the run before it starts: K must be below the scenarios of the largest random
/// test. Empty when it is (or no --scenario); otherwise the message.
std::string check_scenario_option() {
  const auto& o = gpumux::rtl::options();
  if (!o.only_scenario) return {};
  std::uint64_t most = 0;
  std::string blocks;
  for (const auto& [block, sets] : gpumux::rtl::random_blocks()) {
    const std::uint64_t n = gpumux::rtl::scenarios_for_set(o.scenarios, sets, 0);  // set 0 has the most
    most = std::max(most, n);
    blocks += (blocks.empty() ? "" : "; ") + block + ": " + std::to_string(sets) + " sets, at most " +
              std::to_string(n) + " per test";
  }
  if (*o.only_scenario < most) return {};
  const std::string k = std::to_string(*o.only_scenario);
  const std::string n = std::to_string(o.scenarios);
  if (most == 0) {
    return "--scenario " + k + " is outside the run: --scenarios " + n + " runs no random scenario";
  }
  return "--scenario " + k + " is outside the run: --scenarios " + n +
         " spreads that many random scenarios over each block's parameter sets (" + blocks +
         "), so --scenario must be 0 to " + std::to_string(most - 1) +
         " (give the --scenarios of the run that printed it)";
}

}  // namespace

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  ::testing::InitGoogleTest(&argc, argv);
  auto& o = gpumux::rtl::options();
  if (argc > 0) o.program = argv[0];
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const std::size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    }
    std::uint64_t n = 0;
    gpumux::rtl::Injection inject;
    if (arg == "--scenarios" && parse_u64(value.c_str(), n)) {
      o.scenarios = n;
    } else if (arg == "--seed" && parse_u64(value.c_str(), n)) {
      o.seed = n;
    } else if (arg == "--scenario" && parse_u64(value.c_str(), n)) {
      o.only_scenario = n;
    } else if (arg == "--wave" && !value.empty()) {
      o.wave = value;
    } else if (arg == "--inject-mismatch" && parse_injection(value, inject)) {
      o.inject = inject;
    } else {
      std::fprintf(
          stderr,
          "gpumux_rtl_tests: bad argument '%s' (known: --scenarios N, --seed S, --scenario K, --wave "
          "FILE, --inject-mismatch K:C)\n",
          argv[i]);
      return 2;
    }
  }
  if (const std::string error = check_scenario_option(); !error.empty()) {
    std::fprintf(stderr, "gpumux_rtl_tests: %s\n", error.c_str());
    return 2;
  }
  const int rc = RUN_ALL_TESTS();
  for (const auto& [block, t] : gpumux::rtl::tallies()) {
    std::printf(
        "rtl-crosscheck: %s: %llu random scenarios, %llu cycles compared (%llu decisions, %llu restarts), "
        "%s\n",
        block.c_str(), static_cast<unsigned long long>(t.scenarios),
        static_cast<unsigned long long>(t.cycles), static_cast<unsigned long long>(t.decisions),
        static_cast<unsigned long long>(t.restarts), rc == 0 ? "all agree" : "FAILURES (see above)");
  }
  const auto& runs = gpumux::rtl::scenario_runs();
  if (o.only_scenario && runs.ran == 0 && !runs.outside.empty()) {
    std::string tests;
    for (const std::string& t : runs.outside) tests += (tests.empty() ? "" : "; ") + t;
    std::fprintf(
        stderr,
        "gpumux_rtl_tests: --scenario %llu is outside the run of every random test selected (--scenarios "
        "%llu: %s)\n",
        static_cast<unsigned long long>(*o.only_scenario), static_cast<unsigned long long>(o.scenarios),
        tests.c_str());
    return 2;
  }
  return rc;
}
