// Decision latency of rtl/dss_token_policy.sv measured in RTL simulation (scripts/rtl-report builds
// this once per N_SM with `verilator --cc --exe --build`, prefix Vdss). Prints one `key value` line
// per measurement, in clock cycles; the event cycle is cycle 0.

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "Vdss.h"
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

/// Applies `in`, then clocks until the search stops.
Search run(Rtl& rtl, const In& in) {
  Search s;
  rtl.step(in);
  std::uint64_t last = 0;
  for (std::uint64_t c = 1; rtl.busy() && c < 100'000'000; ++c) {
    const DssReference::Outputs out = rtl.step(In::none());
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
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s NUM_SMS NUM_SLOTS TOKEN_BITS\n", argv[0]);
    return 2;
  }
  DssReference::Config config;
  config.num_sms = static_cast<std::uint32_t>(std::strtoul(argv[1], nullptr, 10));
  config.num_slots = static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10));
  config.token_bits = static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10));
  const std::uint32_t n = config.num_sms;
  const auto half = static_cast<std::int32_t>(n / 2);

  Rtl rtl(config);
  // 1. One kernel arrives at an idle GPU: it takes every SM, one per iteration.
  const Search fill = run(rtl, In::kernel_insert(0, static_cast<std::int32_t>(n - n / 2)));
  // 2. A second kernel arrives with half the tokens: reservations until the counts balance.
  const Search rebalance = run(rtl, In::kernel_insert(1, half));
  for (std::uint32_t s = 0; s < n; ++s) {
    if (rtl.sm(s).state == DssReference::SmState::kReserved) rtl.step(In::preempt_done(s));
  }
  while (rtl.busy()) rtl.step(In::none());
  // 3. One SM goes idle with both kernels holding their share: it is handed out again.
  const Search reassign = run(rtl, In::sm_idle(n - 1));

  std::printf("scan_length %u\n", n > config.num_slots ? n : config.num_slots);
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
