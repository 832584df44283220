// The RTL cross-check runner: GoogleTest plus the options of scripts/rtl-crosscheck.
//   --scenarios N   random scenarios per block (spread over its parameter sets; default 300)
//   --seed S        run seed (default 1)
//   --scenario K    run only scenario K of each random test (to reproduce a failure)
//   --wave FILE     dump VCD waveforms: FILE with the test's name before the extension

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/rng.h"
#include "rtl_options.h"

namespace gpumux::rtl {

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

}  // namespace gpumux::rtl

namespace {

bool parse_u64(const char* text, std::uint64_t& value) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0') return false;
  value = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  ::testing::InitGoogleTest(&argc, argv);
  auto& o = gpumux::rtl::options();
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
    if (arg == "--scenarios" && parse_u64(value.c_str(), n)) {
      o.scenarios = n;
    } else if (arg == "--seed" && parse_u64(value.c_str(), n)) {
      o.seed = n;
    } else if (arg == "--scenario" && parse_u64(value.c_str(), n)) {
      o.only_scenario = n;
    } else if (arg == "--wave" && !value.empty()) {
      o.wave = value;
    } else {
      std::fprintf(
          stderr,
          "gpumux_rtl_tests: bad argument '%s' (known: --scenarios N, --seed S, --scenario K, --wave FILE)\n",
          argv[i]);
      return 2;
    }
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
  return rc;
}
