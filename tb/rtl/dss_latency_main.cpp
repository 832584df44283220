// Decision latency of rtl/dss_token_policy.sv measured in RTL simulation (scripts/rtl-report builds
// this once per N_SM and search parallelism with `verilator --cc --exe --build`, prefix Vdss, with
// systemc/policy/dss_reference.cpp). Prints one `key value` line per measurement, in clock cycles; the
// event cycle is cycle 0. The reference model (DssReference) runs beside the RTL in lockstep: every
// output and table entry must agree in every cycle (exit 1 otherwise), so each variant the report
// measures is cross-checked on these searches too, and the measured iteration must be the one
// DssReference::iteration_cycles() gives the simulator.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "Vdss.h"
#include "dss_check.h"
#include "dss_rtl.h"

namespace {

using gpumux::DssReference;
using In = DssReference::Inputs;
using Rtl = gpumux::rtl::DssRtl<Vdss>;

struct Search {
  std::uint64_t first_decision = 0;  ///< cycles after the event cycle to the first decision (inclusive)
  std::uint64_t cycles = 0;          ///< cycles after the event cycle until the FSM is idle again
  std::uint64_t decisions = 0;
  std::uint64_t max_gap = 0;  ///< most cycles between two decisions
};

/// The RTL and the reference model, one cycle; exits with status 1 on the first disagreement.
DssReference::Outputs step(Rtl& rtl, DssReference& ref, const In& in) {
  const DssReference::Outputs want = ref.step(in);
  const DssReference::Outputs got = rtl.step(in);
  const std::string diff = gpumux::rtl::compare(ref, want, rtl.snapshot(got));
  if (!diff.empty() || rtl.assertion_failed()) {
    std::fprintf(
        stderr,
        "dss_latency: %s: RTL and reference disagree in cycle %llu: %s\n  reference: %s\n  RTL:       %s\n",
        gpumux::rtl::describe_config(ref.config()).c_str(), static_cast<unsigned long long>(rtl.cycles()),
        diff.empty() ? "an RTL assertion failed" : diff.c_str(), gpumux::rtl::describe(want).c_str(),
        gpumux::rtl::describe(got).c_str());
    std::exit(1);
  }
  return got;
}

/// Applies `in`, then clocks until the search stops.
Search run(Rtl& rtl, DssReference& ref, const In& in) {
  Search s;
  step(rtl, ref, in);
  std::uint64_t last = 0;
  for (std::uint64_t c = 1; rtl.busy() && c < 100'000'000; ++c) {
    const DssReference::Outputs out = step(rtl, ref, In::none());
    if (out.assign.valid || out.reserve.valid) {
      if (s.decisions == 0) s.first_decision = c;
      s.max_gap = c - last > s.max_gap ? c - last : s.max_gap;
      last = c;
      ++s.decisions;
    }
    s.cycles = c;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s NUM_SMS NUM_SLOTS TOKEN_BITS [ENTRIES_PER_CYCLE]\n", argv[0]);
    return 2;
  }
  DssReference::Config config;
  config.num_sms = static_cast<std::uint32_t>(std::strtoul(argv[1], nullptr, 10));
  config.num_slots = static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10));
  config.token_bits = static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10));
  if (argc == 5) config.entries_per_cycle = static_cast<std::uint32_t>(std::strtoul(argv[4], nullptr, 10));
  const std::uint32_t n = config.num_sms;
  const auto half = static_cast<std::int32_t>(n / 2);

  Rtl rtl(config);
  DssReference ref(config);
  // 1. One kernel arrives at an idle GPU: it takes every SM, one per iteration.
  const Search fill = run(rtl, ref, In::kernel_insert(0, static_cast<std::int32_t>(n - n / 2)));
  // 2. A second kernel arrives with half the tokens: reservations until the counts balance.
  const Search rebalance = run(rtl, ref, In::kernel_insert(1, half));
  for (std::uint32_t s = 0; s < n; ++s) {
    if (rtl.sm(s).state == DssReference::SmState::kReserved) step(rtl, ref, In::preempt_done(s));
  }
  while (rtl.busy()) step(rtl, ref, In::none());
  // 3. One SM goes idle with both kernels holding their share: it is handed out again.
  const Search reassign = run(rtl, ref, In::sm_idle(n - 1));
  if (fill.max_gap != DssReference::iteration_cycles(config)) {
    std::fprintf(
        stderr, "dss_latency: measured %llu cycles per iteration, DssReference::iteration_cycles() says %u\n",
        static_cast<unsigned long long>(fill.max_gap), DssReference::iteration_cycles(config));
    return 1;
  }

  std::printf("entries_per_cycle %u\n", config.entries_per_cycle);
  std::printf("scan_length %u\n", n > config.num_slots ? n : config.num_slots);
  std::printf("scan_cycles %u\n", DssReference::scan_cycles(config));
  std::printf("first_decision %llu\n", static_cast<unsigned long long>(fill.first_decision));
  std::printf("iteration %llu\n", static_cast<unsigned long long>(fill.max_gap));
  std::printf("fill_search %llu\n", static_cast<unsigned long long>(fill.cycles));
  std::printf("fill_decisions %llu\n", static_cast<unsigned long long>(fill.decisions));
  std::printf("rebalance_search %llu\n", static_cast<unsigned long long>(rebalance.cycles));
  std::printf("rebalance_decisions %llu\n", static_cast<unsigned long long>(rebalance.decisions));
  std::printf("idle_reassign %llu\n", static_cast<unsigned long long>(reassign.first_decision));
  std::printf("idle_search %llu\n", static_cast<unsigned long long>(reassign.cycles));
  return rtl.assertion_failed() ? 1 : 0;
}
