// Kernelet's decision half (Zhong and He; systemc/kernelet/): the Markov-chain IPC model of 4.4 against
// stationary distributions worked by hand, its properties (probabilities, peak, monotony, symmetry, the
// heterogeneous model's reduction to the homogeneous one), the co-scheduling profit of Eq. 1, the
// balanced slice ratio of Eq. 8 against a brute force, the pruning of 4.3 against Table 6, and
// FindCoSchedule of Algorithm 1 on constructed kernel sets. Plain C++.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernelet/co_schedule.h"
#include "kernelet/markov_model.h"

namespace gpumux::kernelet {
namespace {

/// One scheduler issuing one warp instruction a cycle, latency 400 + 0.5 x outstanding requests:
/// the single-pipeline SM of 4.4 before its extensions.
SmModel simple_sm() {
  SmModel sm;
  sm.warp_schedulers = 1;
  sm.peak_ipc_per_scheduler = 1;
  sm.max_threads = 2048;
  sm.registers = 65536;
  sm.shared_memory_bytes = 49152;
  sm.max_thread_blocks = 8;
  sm.max_warps = 64;
  sm.unloaded_latency_cycles = 400;
  sm.bandwidth_requests_per_cycle = 2;
  sm.latency_slope = 1;
  sm.latency_intercept_cycles = 0;
  sm.requests_per_uncoalesced_instruction = 8;
  return sm;
}

/// A Kepler-like SMX: four schedulers (4.4 "Adaptation"), 16 thread-block slots.
SmModel kepler_like_sm() {
  SmModel sm = simple_sm();
  sm.warp_schedulers = 4;
  sm.max_thread_blocks = 16;
  sm.bandwidth_requests_per_cycle = 0.7;
  return sm;
}

KernelTraits make_kernel(const std::string& name, double memory_ratio, double pur = 0, double mur = 0) {
  KernelTraits k;
  k.name = name;
  k.memory_instruction_ratio = memory_ratio;
  k.warps_per_tb = 4;
  k.threads_per_tb = 128;
  k.instructions_per_tb = 10000;
  k.pur = pur;
  k.mur = mur;
  return k;
}

/// The virtual SM of a constant latency L (a0 = 0), one warp instruction a cycle.
VirtualSm constant_latency_vsm(double latency) {
  VirtualSm vsm;
  vsm.peak_ipc = 1;
  vsm.bandwidth_requests_per_cycle = 1;
  vsm.unloaded_latency_cycles = latency;
  vsm.latency_slope = 0;
  vsm.latency_intercept_cycles = 0;
  return vsm;
}

ChainKernel chain(std::uint32_t units, double memory_ratio, double uncoalesced_share = 0,
                  double warps_per_unit = 1) {
  ChainKernel k;
  k.units = units;
  k.warps_per_unit = warps_per_unit;
  k.memory_ratio = memory_ratio;
  k.uncoalesced_share = uncoalesced_share;
  return k;
}

void expect_stochastic(const TransitionMatrix& p) {
  ASSERT_EQ(p.probabilities.size(), p.size() * p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    double sum = 0;
    for (std::size_t j = 0; j < p.size(); ++j) {
      EXPECT_GE(p.at(i, j), 0.0) << i << " -> " << j;
      EXPECT_LE(p.at(i, j), 1.0) << i << " -> " << j;
      sum += p.at(i, j);
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << "row " << i;
  }
}

/// pi >= 0, sum pi = 1 and pi P = pi.
void expect_stationary(const TransitionMatrix& p, const std::vector<double>& pi) {
  ASSERT_EQ(pi.size(), p.size());
  double sum = 0;
  for (const double value : pi) {
    EXPECT_GE(value, 0.0);
    sum += value;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  for (std::size_t j = 0; j < p.size(); ++j) {
    double flow_in = 0;
    for (std::size_t i = 0; i < p.size(); ++i) flow_in += pi[i] * p.at(i, j);
    EXPECT_NEAR(flow_in, pi[j], 1e-12) << "state " << j;
  }
}

// ---------------------------------------------------------------------------------------------------
// Inputs and occupancy

TEST(KerneletInputs, RejectsOutOfRangeFieldsNamingThem) {
  const auto message_of = [](const auto& call) -> std::string {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no exception)";
  };
  KernelTraits k = make_kernel("pc", 0.2);
  k.memory_instruction_ratio = 1.0;  // Rm = 1: no unique steady state
  EXPECT_NE(message_of([&] { validate(k); }).find("memory_instruction_ratio"), std::string::npos);
  k.memory_instruction_ratio = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(message_of([&] { validate(k); }).find("'pc': memory_instruction_ratio"), std::string::npos);
  k = make_kernel("pc", 0.2);
  k.uncoalesced_share = 1.5;
  EXPECT_NE(message_of([&] { validate(k); }).find("uncoalesced_share"), std::string::npos);
  k = make_kernel("pc", 0.2);
  k.warps_per_tb = 0;
  EXPECT_NE(message_of([&] { validate(k); }).find("warps_per_tb"), std::string::npos);
  k = make_kernel("pc", 0.2);
  k.instructions_per_tb = 0;
  EXPECT_NE(message_of([&] { validate(k); }).find("instructions_per_tb"), std::string::npos);

  SmModel sm = simple_sm();
  sm.bandwidth_requests_per_cycle = 0;
  EXPECT_NE(message_of([&] { validate(sm); }).find("bandwidth_requests_per_cycle"), std::string::npos);
  sm = simple_sm();
  sm.latency_intercept_cycles = -400;  // L0 + b0 = 0: a latency under one cycle
  EXPECT_NE(message_of([&] { validate(sm); }).find("latency_intercept_cycles"), std::string::npos);
  sm = simple_sm();
  sm.warp_schedulers = 0;
  EXPECT_NE(message_of([&] { validate(sm); }).find("warp_schedulers"), std::string::npos);
  sm = simple_sm();
  sm.requests_per_uncoalesced_instruction = 0.5;
  EXPECT_NE(message_of([&] { validate(sm); }).find("requests_per_uncoalesced_instruction"),
            std::string::npos);
  EXPECT_THROW((void)alone_ipc(make_kernel("k", 0.1), 1, sm), std::invalid_argument);
}

TEST(KerneletInputs, ThreadBlocksAloneStopAtTheFirstResourceToRunOut) {
  const SmModel sm = simple_sm();  // 2048 threads, 65536 registers, 48 KB, 8 slots, 64 warps
  KernelTraits k = make_kernel("k", 0.1);
  EXPECT_EQ(tbs_alone(k, sm), 8U);  // slots (threads would allow 16)
  k.registers_per_tb = 128 * 80;    // 10240: 6 fit
  EXPECT_EQ(tbs_alone(k, sm), 6U);
  k.shared_memory_per_tb = 12 * 1024;  // 4 fit
  EXPECT_EQ(tbs_alone(k, sm), 4U);
  k.shared_memory_per_tb = 64 * 1024;  // none
  EXPECT_EQ(tbs_alone(k, sm), 0U);
  EXPECT_THROW((void)alone_ipc(k, 1, sm), std::invalid_argument);

  KernelTraits a = make_kernel("a", 0.1);
  a.shared_memory_per_tb = 16 * 1024;  // 3 alone
  KernelTraits b = make_kernel("b", 0.1);
  b.registers_per_tb = 128 * 128;  // 16384: 4 alone
  EXPECT_TRUE(fit_together(a, 3, b, 0, sm));
  EXPECT_FALSE(fit_together(a, 4, b, 0, sm));
  EXPECT_TRUE(fit_together(a, 3, b, 4, sm));   // 7 slots, 48 KB, 65536 registers: all exactly within
  EXPECT_FALSE(fit_together(a, 3, b, 5, sm));  // 81920 registers
  EXPECT_FALSE(fit_together(a, 4, b, 1, sm));  // 64 KB
  const KernelTraits plain = make_kernel("plain", 0.1);
  EXPECT_TRUE(fit_together(plain, 4, plain, 4, sm));
  EXPECT_FALSE(fit_together(plain, 4, plain, 5, sm));  // 9 thread-block slots
}

TEST(KerneletInputs, VirtualSmKeepsTheDividedWarpsInWholeUnits) {
  // 4.4 "Adaptation": the virtual SM holds 1 / S of the SM's warps. 8 TBs of 4 warps on 4 schedulers:
  // 8 warps, as 2 thread-block units of 4 warps or 8 warp units.
  const SmModel sm = kepler_like_sm();
  const KernelTraits k = make_kernel("k", 0.1);
  ChainKernel c = chain_kernel(k, 8, sm, ModelUnit::kThreadBlock);
  EXPECT_EQ(c.units, 2U);
  EXPECT_DOUBLE_EQ(c.warps_per_unit, 4.0);
  c = chain_kernel(k, 8, sm, ModelUnit::kWarp);
  EXPECT_EQ(c.units, 8U);
  EXPECT_DOUBLE_EQ(c.warps_per_unit, 1.0);
  // 3 TBs: 3 warps, one unit of 3 (3 / 4 of a thread block); 5 TBs: 5 warps, 2 units of 2.5.
  c = chain_kernel(k, 3, sm, ModelUnit::kThreadBlock);
  EXPECT_EQ(c.units, 1U);
  EXPECT_DOUBLE_EQ(c.warps_per_unit, 3.0);
  c = chain_kernel(k, 5, sm, ModelUnit::kThreadBlock);
  EXPECT_EQ(c.units, 2U);
  EXPECT_DOUBLE_EQ(c.warps_per_unit, 2.5);
  EXPECT_EQ(chain_kernel(k, 0, sm, ModelUnit::kThreadBlock).units, 0U);
  // The virtual SM's bandwidth is the SM's over S; the rest is the SM's.
  const VirtualSm vsm = virtual_sm(sm);
  EXPECT_DOUBLE_EQ(vsm.bandwidth_requests_per_cycle, 0.7 / 4);
  EXPECT_DOUBLE_EQ(vsm.peak_ipc, 1.0);
}

TEST(KerneletInputs, CappingUnitsBoundsTheChainKeepsWarpsAndSymmetry) {
  // Two three-state kernels of 8 units: 45 x 45 = 2025 states. Capped at 256: m = 4 gives 15 x 15 =
  // 225 (m = 5: 21 x 21 = 441 is over).
  const std::vector<ChainKernel> capped = cap_units({chain(8, 0.1, 0.5, 2.0), chain(8, 0.2, 0.5, 1.0)}, 256);
  ASSERT_EQ(capped.size(), 2U);
  EXPECT_EQ(capped[0].units, 4U);
  EXPECT_EQ(capped[1].units, 4U);
  EXPECT_DOUBLE_EQ(capped[0].units * capped[0].warps_per_unit, 16.0);
  EXPECT_DOUBLE_EQ(capped[1].units * capped[1].warps_per_unit, 8.0);
  EXPECT_EQ(kernel_state_count(capped[0]) * kernel_state_count(capped[1]), 225U);
  // Within the bound nothing changes; a kernel below the cap keeps its units.
  const std::vector<ChainKernel> same = cap_units({chain(3, 0.1), chain(8, 0.1)}, 256);
  EXPECT_EQ(same[0].units, 3U);
  EXPECT_EQ(same[1].units, 8U);
  const std::vector<ChainKernel> one_side = cap_units({chain(2, 0.1), chain(30, 0.1)}, 40);
  EXPECT_EQ(one_side[0].units, 2U);
  EXPECT_EQ(one_side[1].units, 12U);  // 3 x 13 = 39 <= 40 < 3 x 14
  EXPECT_THROW((void)cap_units({chain(2, 0.1)}, 0), std::invalid_argument);
}

TEST(KerneletInputs, StateCountsLeaveOutStatesNoRoundReaches) {
  EXPECT_EQ(kernel_state_count(chain(5, 0.0)), 1U);        // never idle
  EXPECT_EQ(kernel_state_count(chain(0, 0.3)), 1U);        // absent
  EXPECT_EQ(kernel_state_count(chain(5, 0.3)), 6U);        // S_0..S_5
  EXPECT_EQ(kernel_state_count(chain(5, 0.3, 1.0)), 6U);   // uncoalesced only
  EXPECT_EQ(kernel_state_count(chain(5, 0.3, 0.4)), 21U);  // (c, u), c + u <= 5
}

// ---------------------------------------------------------------------------------------------------
// The chain (4.4)

TEST(KerneletChain, OneUnitMatchesItsClosedForm) {
  // W = 1, constant latency L, one warp: states S_0 (ready) and S_1 (idle). Both rounds last one cycle
  // (S_0: one ready warp; S_1: the all-idle round), so P_01 = Rm = m and P_10 = 1 / L = q. Balance
  // pi_0 m = pi_1 q gives pi_0 = q / (m + q) = 1 / (1 + m L), and Eq. 4's IPC = pi_0 x 1 / (pi_0 + pi_1)
  // = 1 / (1 + m L): each instruction stalls L cycles with probability m.
  for (const double m : {0.01, 0.1, 0.5}) {
    for (const double latency : {1.0, 10.0, 400.0}) {
      const ChainSolution s = solve_chain({chain(1, m)}, constant_latency_vsm(latency));
      ASSERT_EQ(s.transitions.size(), 2U);
      EXPECT_NEAR(s.transitions.at(0, 1), m, 1e-15);
      EXPECT_NEAR(s.transitions.at(1, 0), 1 / latency, 1e-15);
      EXPECT_NEAR(s.stationary[0], 1 / (1 + m * latency), 1e-12);
      EXPECT_NEAR(s.stationary[1], m * latency / (1 + m * latency), 1e-12);
      EXPECT_NEAR(s.virtual_sm_ipc[0], 1 / (1 + m * latency), 1e-12);
    }
  }
}

TEST(KerneletChain, TwoUnitsWithLoadDependentLatencyMatchTheTreeTheorem) {
  // W = 2 warps, m = Rm = 0.3, L(S_i) = L0 + a0 i / B = 10 + 2 i (a0 = 1, B = 0.5, coalesced: one
  // request per idle warp). Round durations D(S_0) = 2, D(S_1) = 1, D(S_2) = 1 (all idle), so the
  // return probabilities are q1 = D(S_1) / L(S_1) = 1/12 and q2 = 1/14. Eq. 2's sums by hand:
  //   P00 = (1-m)^2        P01 = 2m(1-m)                 P02 = m^2          (no idle warp to return)
  //   P10 = (1-m) q1       P11 = (1-m)(1-q1) + m q1      P12 = m (1-q1)
  //   P20 = q2^2           P21 = 2 q2 (1-q2)             P22 = (1-q2)^2     (no ready warp to leave)
  // The Markov chain tree theorem gives pi_i proportional to the sum over spanning trees directed into i
  // of their edge products: w0 = P10 P20 + P12 P20 + P21 P10, w1 = P01 P21 + P02 P21 + P20 P01,
  // w2 = P02 P12 + P01 P12 + P10 P02. Eq. 4: IPC = (2 pi_0 + pi_1) / (2 pi_0 + pi_1 + pi_2).
  VirtualSm vsm = constant_latency_vsm(10);
  vsm.latency_slope = 1;
  vsm.bandwidth_requests_per_cycle = 0.5;
  const double m = 0.3, q1 = 1.0 / 12, q2 = 1.0 / 14;
  const double p[3][3] = {{(1 - m) * (1 - m), 2 * m * (1 - m), m * m},
                          {(1 - m) * q1, (1 - m) * (1 - q1) + m * q1, m * (1 - q1)},
                          {q2 * q2, 2 * q2 * (1 - q2), (1 - q2) * (1 - q2)}};
  const ChainSolution s = solve_chain({chain(2, m)}, vsm);
  ASSERT_EQ(s.transitions.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s.transitions.states[i][0].coalesced, i);
    for (std::size_t j = 0; j < 3; ++j) EXPECT_NEAR(s.transitions.at(i, j), p[i][j], 1e-15) << i << j;
  }
  const double w0 = p[1][0] * p[2][0] + p[1][2] * p[2][0] + p[2][1] * p[1][0];
  const double w1 = p[0][1] * p[2][1] + p[0][2] * p[2][1] + p[2][0] * p[0][1];
  const double w2 = p[0][2] * p[1][2] + p[0][1] * p[1][2] + p[1][0] * p[0][2];
  const double z = w0 + w1 + w2;
  EXPECT_NEAR(s.stationary[0], w0 / z, 1e-12);
  EXPECT_NEAR(s.stationary[1], w1 / z, 1e-12);
  EXPECT_NEAR(s.stationary[2], w2 / z, 1e-12);
  const double ipc = (2 * w0 + w1) / (2 * w0 + w1 + w2);
  EXPECT_NEAR(s.virtual_sm_ipc[0], ipc, 1e-12);
}

TEST(KerneletChain, ThreeStateUnitMatchesItsClosedForm) {
  // W = 1 with both kinds (4.4 "Uncoalesced Access"): states (c, u) = (0,0) ready, (0,1) uncoalesced
  // idle, (1,0) coalesced idle. L0 = 100, a0 = 1, B = 0.5, R = 4 requests per uncoalesced instruction:
  //   coalesced idle:   Q = 1, L_c = 100 + 1/0.5 = 102;
  //   uncoalesced idle: Q = 4, L = 100 + 4/0.5 = 108, L_u = L + a0 (R - 1) / B = 114.
  // All rounds last one cycle. Balance: pi_c / L_c = pi_r m (1-f), pi_u / L_u = pi_r m f, so
  // IPC = pi_r = 1 / (1 + m (1-f) L_c + m f L_u).
  VirtualSm vsm = constant_latency_vsm(100);
  vsm.latency_slope = 1;
  vsm.bandwidth_requests_per_cycle = 0.5;
  vsm.requests_per_uncoalesced_instruction = 4;
  const double m = 0.05, f = 0.25;
  const ChainSolution s = solve_chain({chain(1, m, f)}, vsm);
  ASSERT_EQ(s.transitions.size(), 3U);
  EXPECT_EQ(s.transitions.states[1][0], (IdleUnits{0, 1}));
  EXPECT_EQ(s.transitions.states[2][0], (IdleUnits{1, 0}));
  EXPECT_NEAR(s.transitions.at(1, 0), 1.0 / 114, 1e-15);
  EXPECT_NEAR(s.transitions.at(2, 0), 1.0 / 102, 1e-15);
  const double z = 1 + m * (1 - f) * 102 + m * f * 114;
  EXPECT_NEAR(s.stationary[0], 1 / z, 1e-12);
  EXPECT_NEAR(s.stationary[1], m * f * 114 / z, 1e-12);
  EXPECT_NEAR(s.stationary[2], m * (1 - f) * 102 / z, 1e-12);
  EXPECT_NEAR(s.virtual_sm_ipc[0], 1 / z, 1e-12);
}

TEST(KerneletChain, MatricesAreStochasticAndSteadyStatesAreDistributions) {
  VirtualSm vsm = virtual_sm(kepler_like_sm());
  const std::vector<std::vector<ChainKernel>> cases = {
      {chain(4, 0.2)},
      {chain(6, 0.05, 0.3, 2.0)},
      {chain(3, 0.2), chain(4, 0.01)},
      {chain(3, 0.1, 1.0, 8.0), chain(2, 0.3, 0.5, 0.5)},
      {chain(2, 0.1), chain(2, 0.2, 0.5), chain(1, 0.4)},
      {chain(12, 0.9)},  // deep memory stalls: most mass near all-idle
  };
  for (const auto& kernels : cases) {
    const ChainSolution s = solve_chain(kernels, vsm);
    expect_stochastic(s.transitions);
    expect_stationary(s.transitions, s.stationary);
  }
  // Rounds longer than the latency: every idle unit returns (P_i->r clamped to 1).
  const ChainSolution fast = solve_chain({chain(8, 0.5, 0, 4.0)}, constant_latency_vsm(2));
  expect_stochastic(fast.transitions);
  expect_stationary(fast.transitions, fast.stationary);
  EXPECT_THROW((void)build_transition_matrix({chain(60, 0.1, 0.5), chain(60, 0.1, 0.5)}, vsm),
               std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------------
// IPC (Eqs. 4-7)

TEST(KerneletIpc, ComputeOnlyKernelRunsAtPeak) {
  // Rm = 0: never idle, every round issues every warp: the SM's peak, S x peak per scheduler.
  const KernelTraits k = make_kernel("compute", 0.0);
  SmModel sm = kepler_like_sm();
  sm.peak_ipc_per_scheduler = 2;
  for (std::uint32_t tbs = 2; tbs <= 16; ++tbs) EXPECT_NEAR(alone_ipc(k, tbs, sm), 8.0, 1e-12) << tbs;
  EXPECT_NEAR(alone_ipc(k, 8, sm, ModelOptions{ModelUnit::kWarp, 256}), 8.0, 1e-12);
  EXPECT_NEAR(alone_ipc(k, 4, simple_sm()), 1.0, 1e-12);
  // Fewer warps than the schedulers can issue: one TB of 4 warps on 4 schedulers of 2 gives one warp a
  // scheduler, one instruction a cycle each (a round lasts at least a cycle): 4, not 8.
  EXPECT_NEAR(alone_ipc(k, 1, sm), 4.0, 1e-12);
}

TEST(KerneletIpc, FallsAsTheMemoryRatioOrTheLatencyGrows) {
  for (const SmModel& base : {simple_sm(), kepler_like_sm()}) {
    double previous = std::numeric_limits<double>::infinity();
    for (int step = 0; step <= 18; ++step) {
      const double rm = 0.05 * step;
      const double ipc = alone_ipc(make_kernel("k", rm), 8, base);
      EXPECT_LT(ipc, previous) << "Rm " << rm;
      EXPECT_GT(ipc, 0.0);
      previous = ipc;
    }
    previous = std::numeric_limits<double>::infinity();
    for (const double l0 : {1.0, 10.0, 50.0, 100.0, 200.0, 400.0, 800.0, 1600.0}) {
      SmModel sm = base;
      sm.unloaded_latency_cycles = l0;
      const double ipc = alone_ipc(make_kernel("k", 0.1), 8, sm);
      EXPECT_LT(ipc, previous) << "L0 " << l0;
      previous = ipc;
    }
  }
  // Uncoalesced instructions wait longer: IPC falls with their share.
  double previous = std::numeric_limits<double>::infinity();
  for (const double share : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    KernelTraits k = make_kernel("k", 0.1);
    k.uncoalesced_share = share;
    const double ipc = alone_ipc(k, 8, simple_sm());
    EXPECT_LT(ipc, previous) << "share " << share;
    previous = ipc;
  }
}

TEST(KerneletIpc, NeverAbovePeakAndGrowsWithLatencyHidingWarps) {
  const SmModel sm = simple_sm();
  const KernelTraits k = make_kernel("k", 0.05);
  double previous = 0;
  for (std::uint32_t tbs = 1; tbs <= 8; ++tbs) {
    const double ipc = alone_ipc(k, tbs, sm);
    EXPECT_LE(ipc, 1.0);
    EXPECT_GT(ipc, previous) << tbs;  // more warps hide more latency
    previous = ipc;
  }
}

TEST(KerneletIpc, HeterogeneousModelWithAnAbsentKernelIsTheHomogeneousModel) {
  for (const SmModel& sm : {simple_sm(), kepler_like_sm()}) {
    KernelTraits a = make_kernel("a", 0.12);
    a.uncoalesced_share = 0.3;
    const KernelTraits b = make_kernel("b", 0.02);
    for (std::uint32_t tbs = 1; tbs <= 6; ++tbs) {
      const double alone = alone_ipc(a, tbs, sm);
      const PairIpc first_only = concurrent_ipc(a, tbs, b, 0, sm);
      const PairIpc second_only = concurrent_ipc(b, 0, a, tbs, sm);
      EXPECT_NEAR(first_only.first, alone, 1e-12 * alone) << tbs;
      EXPECT_EQ(first_only.second, 0.0);
      EXPECT_NEAR(second_only.second, alone, 1e-12 * alone) << tbs;
      EXPECT_EQ(second_only.first, 0.0);
    }
  }
}

TEST(KerneletIpc, SymmetricPairsGetEqualIpcsAndOrderDoesNotMatter) {
  const SmModel sm = kepler_like_sm();
  KernelTraits a = make_kernel("a", 0.08);
  a.uncoalesced_share = 0.5;
  const KernelTraits a_copy = a;
  const PairIpc same = concurrent_ipc(a, 6, a_copy, 6, sm);
  EXPECT_NEAR(same.first, same.second, 1e-12 * same.first);
  const KernelTraits b = make_kernel("b", 0.01);
  const PairIpc ab = concurrent_ipc(a, 5, b, 7, sm);
  const PairIpc ba = concurrent_ipc(b, 7, a, 5, sm);
  EXPECT_NEAR(ab.first, ba.second, 1e-12 * ab.first);
  EXPECT_NEAR(ab.second, ba.first, 1e-12 * ab.second);
}

TEST(KerneletIpc, TwoHalvesOfOneKernelAddUpToTheKernelAlone) {
  // Units of two copies of one kernel move by the same rule, which reads only the totals: the sum of
  // their idle counts is the homogeneous chain of both (lumpable), so C (Eq. 7) = IPC alone at 2P.
  const SmModel sm = simple_sm();
  const KernelTraits k = make_kernel("k", 0.07);
  for (std::uint32_t half = 1; half <= 4; ++half) {
    const PairIpc pair = concurrent_ipc(k, half, k, half, sm);
    EXPECT_NEAR(pair.total(), alone_ipc(k, 2 * half, sm), 1e-12) << half;
  }
  const PairIpc uneven = concurrent_ipc(k, 2, k, 5, sm);
  EXPECT_NEAR(uneven.total(), alone_ipc(k, 7, sm), 1e-12);
  EXPECT_NEAR(uneven.first / uneven.second, 2.0 / 5.0, 1e-9);  // each unit its share
}

TEST(KerneletIpc, ComputeKernelFillsTheIdleCyclesOfAMemoryKernel) {
  const SmModel sm = simple_sm();
  const KernelTraits memory = make_kernel("memory", 0.2);
  const KernelTraits compute = make_kernel("compute", 0.005);
  const PairIpc pair = concurrent_ipc(memory, 4, compute, 4, sm);
  EXPECT_GT(pair.total(), alone_ipc(memory, 8, sm));
  EXPECT_LE(pair.total(), 1.0 + 1e-12);
  EXPECT_GT(pair.second, pair.first);
  EXPECT_THROW((void)concurrent_ipc(memory, 5, compute, 4, sm), std::invalid_argument);  // 9 slots
}

TEST(KerneletIpc, WarpUnitsAgreeWithThreadBlockUnitsForOneWarpBlocks) {
  // A thread block of one warp is a warp: both units give the same chain.
  const SmModel sm = simple_sm();
  KernelTraits k = make_kernel("k", 0.1);
  k.warps_per_tb = 1;
  k.threads_per_tb = 32;
  for (std::uint32_t tbs = 1; tbs <= 8; ++tbs) {
    EXPECT_DOUBLE_EQ(alone_ipc(k, tbs, sm, ModelOptions{ModelUnit::kWarp, 256}), alone_ipc(k, tbs, sm));
  }
  // With 4-warp blocks the warp model is finer grained: different, and within the peak.
  const KernelTraits wide = make_kernel("wide", 0.1);
  const double warp_level = alone_ipc(wide, 4, sm, ModelOptions{ModelUnit::kWarp, 256});
  EXPECT_GT(warp_level, 0.0);
  EXPECT_LE(warp_level, 1.0);
  EXPECT_NE(warp_level, alone_ipc(wide, 4, sm));
}

// ---------------------------------------------------------------------------------------------------
// Co-scheduling profit (Eq. 1) and the balanced slice ratio (Eq. 8)

TEST(KerneletProfit, IsZeroWithoutGainPositiveWithGainNegativeWithLoss) {
  EXPECT_DOUBLE_EQ(co_scheduling_profit({0.5, 0.5}, {1.0, 1.0}), 0.0);  // each keeps half: no gain
  EXPECT_DOUBLE_EQ(co_scheduling_profit({0.3, 1.4}, {0.6, 2.0}), 1.0 - 1.0 / 1.2);
  EXPECT_DOUBLE_EQ(co_scheduling_profit({1.0, 1.0}, {1.0, 1.0}), 0.5);  // 1 - 1/n at most
  EXPECT_DOUBLE_EQ(co_scheduling_profit({0.4, 0.4}, {1.0, 1.0}), -0.25);
  EXPECT_DOUBLE_EQ(co_scheduling_profit({0.7}, {0.7}), 0.0);
  EXPECT_THROW((void)co_scheduling_profit({0.5}, {1.0, 1.0}), std::invalid_argument);
  EXPECT_THROW((void)co_scheduling_profit({}, {}), std::invalid_argument);
  EXPECT_THROW((void)co_scheduling_profit({0.5, 0.5}, {1.0, 0.0}), std::invalid_argument);
  EXPECT_THROW((void)co_scheduling_profit({0.0, 0.0}, {1.0, 1.0}), std::invalid_argument);
}

TEST(KerneletProfit, SliceTimeDifferenceIsEq8) {
  // |1000 x 3 / 0.5 - 2000 x 2 / 0.8| = |6000 - 5000|.
  EXPECT_DOUBLE_EQ(slice_time_difference(1000, 3, 0.5, 2000, 2, 0.8), 1000.0);
  EXPECT_DOUBLE_EQ(slice_time_difference(2000, 2, 0.8, 1000, 3, 0.5), 1000.0);
  EXPECT_THROW((void)slice_time_difference(1000, 3, 0.0, 2000, 2, 0.8), std::invalid_argument);
}

TEST(KerneletProfit, CandidatesAreExactlyTheMaximalFittingSizes) {
  const SmModel sm = simple_sm();
  KernelTraits a = make_kernel("a", 0.1);
  a.shared_memory_per_tb = 10 * 1024;  // 4 alone
  KernelTraits b = make_kernel("b", 0.1);
  b.registers_per_tb = 128 * 96;  // 12288: 5 alone
  std::vector<SliceSizes> brute;
  for (std::uint32_t p1 = 1; p1 <= 8; ++p1) {
    for (std::uint32_t p2 = 1; p2 <= 8; ++p2) {
      if (fit_together(a, p1, b, p2, sm) && !fit_together(a, p1 + 1, b, p2, sm) &&
          !fit_together(a, p1, b, p2 + 1, sm)) {
        brute.push_back(SliceSizes{p1, p2});
      }
    }
  }
  EXPECT_EQ(candidate_slice_sizes(a, b, sm), brute);
  ASSERT_FALSE(brute.empty());
  // Two plain kernels: every split of the 8 slots.
  const KernelTraits plain = make_kernel("plain", 0.1);
  const std::vector<SliceSizes> splits = candidate_slice_sizes(plain, plain, sm);
  ASSERT_EQ(splits.size(), 7U);
  for (std::uint32_t i = 0; i < 7; ++i) EXPECT_EQ(splits[i], (SliceSizes{i + 1, 7 - i}));
  KernelTraits huge = make_kernel("huge", 0.1);
  huge.shared_memory_per_tb = 40 * 1024;
  EXPECT_TRUE(candidate_slice_sizes(huge, huge, sm).empty());
}

TEST(KerneletProfit, BalancedRatioMinimisesEq8OverEveryCandidate) {
  for (const SmModel& sm : {simple_sm(), kepler_like_sm()}) {
    KernelTraits memory = make_kernel("memory", 0.15);
    memory.uncoalesced_share = 0.2;
    KernelTraits compute = make_kernel("compute", 0.01);
    compute.instructions_per_tb = 40000;
    compute.registers_per_tb = 128 * 40;
    const double alone_memory = alone_ipc(memory, tbs_alone(memory, sm), sm);
    const double alone_compute = alone_ipc(compute, tbs_alone(compute, sm), sm);
    const PairEvaluation best = balanced_slice_ratio(memory, compute, sm);
    EXPECT_DOUBLE_EQ(best.alone_ipc_first, alone_memory);
    EXPECT_DOUBLE_EQ(best.alone_ipc_second, alone_compute);
    double least = std::numeric_limits<double>::infinity();
    for (const SliceSizes& sizes : candidate_slice_sizes(memory, compute, sm)) {
      const PairIpc ipc = concurrent_ipc(memory, sizes.first, compute, sizes.second, sm);
      const double time = std::abs(memory.instructions_per_tb * sizes.first / ipc.first -
                                   compute.instructions_per_tb * sizes.second / ipc.second);
      least = std::min(least, time);
      EXPECT_GE(time, best.time_difference * (1 - 1e-9)) << sizes.first << ":" << sizes.second;
    }
    EXPECT_NEAR(best.time_difference, least, 1e-9 * least);
    const PairIpc at_best = concurrent_ipc(memory, best.sizes.first, compute, best.sizes.second, sm);
    EXPECT_DOUBLE_EQ(best.concurrent_ipc_first, at_best.first);
    EXPECT_DOUBLE_EQ(best.concurrent_ipc_second, at_best.second);
    EXPECT_DOUBLE_EQ(best.profit,
                     co_scheduling_profit({at_best.first, at_best.second}, {alone_memory, alone_compute}));
  }
}

TEST(KerneletProfit, KernelWithItselfGainsNothing) {
  // Lumpable (TwoHalvesOfOneKernel...): every split's C is the IPC alone, so CP = 0 at every ratio; the
  // balanced one is the even split. On the 4-scheduler SM unit sizes differ between splits, and the
  // gain stays within a percent either way.
  const KernelTraits k = make_kernel("k", 0.1);
  const PairEvaluation simple = balanced_slice_ratio(k, k, simple_sm());
  EXPECT_NEAR(simple.profit, 0.0, 1e-12);
  EXPECT_EQ(simple.sizes, (SliceSizes{4, 4}));
  EXPECT_NEAR(simple.time_difference, 0.0, 1e-6);
  const PairEvaluation kepler = balanced_slice_ratio(k, k, kepler_like_sm());
  EXPECT_LT(kepler.profit, 0.01);
  EXPECT_EQ(kepler.sizes, (SliceSizes{8, 8}));
}

TEST(KerneletProfit, MemoryBoundBesideComputeBoundGains) {
  for (const SmModel& sm : {simple_sm(), kepler_like_sm()}) {
    // Eq. 8 balances the slices' times: a memory-bound thread block takes far longer, so the balanced
    // ratio gives the memory kernel one block (1:7 here, 1:15 on the 4-scheduler SM) and CP is modest
    // (about 0.05); a memory-heavier ratio would gain more (CP 0.31 at 7:1), Eq. 8 does not ask for it.
    const PairEvaluation e =
        balanced_slice_ratio(make_kernel("memory", 0.2), make_kernel("compute", 0.002), sm);
    EXPECT_GT(e.profit, 0.03);
    // Two memory-bound kernels gain next to nothing.
    const PairEvaluation both =
        balanced_slice_ratio(make_kernel("memory", 0.2), make_kernel("memory2", 0.25), sm);
    EXPECT_LT(both.profit, e.profit / 5);
  }
}

// ---------------------------------------------------------------------------------------------------
// Pruning (4.3)

TEST(KerneletPruning, CountsPairsOfASmallSetByEitherRule) {
  // PUR / MUR: a 0.1/0.5, b 0.2/0.45, c 0.9/0.1, d 0.85/0.4. Differences (PUR, MUR):
  //   ab 0.1/0.05  ac 0.8/0.4  ad 0.75/0.1  bc 0.7/0.35  bd 0.65/0.05  cd 0.05/0.3
  // alpha_p = 0.3, alpha_m = 0.08: PUR close: ab, cd; MUR close: ab, bd.
  const std::vector<KernelTraits> kernels = {
      make_kernel("a", 0.1, 0.1, 0.5), make_kernel("b", 0.1, 0.2, 0.45), make_kernel("c", 0.1, 0.9, 0.1),
      make_kernel("d", 0.1, 0.85, 0.4)};
  EXPECT_EQ(count_pruned_pairs(kernels, PruneThresholds{0.3, 0.08, PruneRule::kEitherClose}),
            3U);                                                                                  // ab bd cd
  EXPECT_EQ(count_pruned_pairs(kernels, PruneThresholds{0.3, 0.08, PruneRule::kBothClose}), 1U);  // ab
  EXPECT_TRUE(is_pruned(kernels[1], kernels[3], PruneThresholds{0.3, 0.08, PruneRule::kEitherClose}));
  EXPECT_FALSE(is_pruned(kernels[1], kernels[3], PruneThresholds{0.3, 0.08, PruneRule::kBothClose}));
  EXPECT_EQ(count_pruned_pairs(kernels, PruneThresholds{0.0, 0.0, PruneRule::kEitherClose}), 0U);
  EXPECT_EQ(count_pruned_pairs(kernels, PruneThresholds{1.0, 1.0, PruneRule::kBothClose}), 6U);
  EXPECT_THROW((void)count_pruned_pairs(kernels, PruneThresholds{-0.1, 0.1, PruneRule::kEitherClose}),
               std::invalid_argument);
}

TEST(KerneletPruning, BothCloseRuleReproducesTable6FromTable4) {
  // Table 4, C2050: PC, SAD, SPMV, ST, MM, MRIQ, BS, TEA.
  const double pur[] = {0.0096, 0.1498, 0.3464, 0.3629, 0.5804, 0.8539, 0.8642, 0.9978};
  const double mur[] = {0.1404, 0.1120, 0.003, 0.1156, 0.0161, 0.0002, 0.0604, 0.0196};
  std::vector<KernelTraits> kernels;
  for (int i = 0; i < 8; ++i) kernels.push_back(make_kernel("k" + std::to_string(i), 0.1, pur[i], mur[i]));
  const double alpha_p[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  const double alpha_m[] = {0.015, 0.03, 0.045, 0.06, 0.075, 0.09, 0.105, 0.12, 0.135, 0.15};
  const std::size_t table6[10][10] = {
      {0, 0, 2, 2, 3, 4, 4, 4, 4, 4},         {0, 2, 5, 6, 7, 8, 9, 9, 9, 9},
      {0, 3, 7, 8, 9, 10, 11, 11, 11, 11},    {1, 4, 8, 9, 12, 13, 15, 15, 15, 15},
      {1, 4, 8, 9, 12, 13, 15, 15, 15, 15},   {1, 4, 8, 9, 12, 13, 15, 15, 16, 16},
      {1, 4, 9, 10, 14, 15, 18, 18, 20, 20},  {2, 6, 11, 12, 17, 18, 21, 22, 24, 24},
      {2, 6, 11, 12, 17, 19, 22, 23, 25, 26}, {2, 6, 11, 13, 18, 20, 23, 24, 27, 28}};
  int exact = 0;
  for (int row = 0; row < 10; ++row) {
    for (int column = 0; column < 10; ++column) {
      const std::size_t both =
          count_pruned_pairs(kernels, PruneThresholds{alpha_p[column], alpha_m[row], PruneRule::kBothClose});
      // The first three rows exactly; the rest within 3 (Table 4's rounded inputs; the printed
      // alpha_m = 0.06 row repeats the 0.075 row).
      if (row < 3) {
        EXPECT_EQ(both, table6[row][column]) << alpha_m[row] << " " << alpha_p[column];
      }
      EXPECT_LE(both, table6[row][column]) << alpha_m[row] << " " << alpha_p[column];
      EXPECT_GE(both + 3, table6[row][column]) << alpha_m[row] << " " << alpha_p[column];
      exact += both == table6[row][column] ? 1 : 0;
      // The text's rule cannot be Table 6's: at alpha_p = 1.0 every PUR difference (at most 0.99) is close.
      if (column == 9) {
        EXPECT_EQ(count_pruned_pairs(kernels,
                                     PruneThresholds{alpha_p[column], alpha_m[row], PruneRule::kEitherClose}),
                  28U);
      }
    }
  }
  EXPECT_EQ(exact, 78);
}

// ---------------------------------------------------------------------------------------------------
// FindCoSchedule (Algorithm 1)

TEST(KerneletFindCoSchedule, PicksTheComplementaryPair) {
  const SmModel sm = simple_sm();
  // Two memory-bound kernels (low PUR, high MUR) and a compute-bound one, compute-bound one in between.
  const std::vector<KernelTraits> pending = {make_kernel("mem_a", 0.2, 0.1, 0.5),
                                             make_kernel("compute", 0.002, 0.95, 0.01),
                                             make_kernel("mem_b", 0.25, 0.08, 0.6)};
  const CoSchedule with_pruning = find_co_schedule(pending, sm);  // alpha_p 0.4: mem_a-mem_b pruned
  EXPECT_TRUE(with_pruning.paired);
  EXPECT_EQ(with_pruning.pairs_pruned, 1U);
  EXPECT_EQ(with_pruning.pairs_evaluated, 2U);
  EXPECT_FALSE(with_pruning.pruning_relaxed);
  EXPECT_TRUE(with_pruning.kernel_first == 1 || with_pruning.kernel_second == 1);  // compute is in it
  // The chosen pair is the better of the two complementary ones, at its balanced ratio.
  const PairEvaluation a_compute = balanced_slice_ratio(pending[0], pending[1], sm);
  const PairEvaluation compute_b = balanced_slice_ratio(pending[1], pending[2], sm);
  const bool a_wins = a_compute.profit >= compute_b.profit;
  EXPECT_EQ(with_pruning.kernel_first, a_wins ? 0U : 1U);
  EXPECT_EQ(with_pruning.kernel_second, a_wins ? 1U : 2U);
  const PairEvaluation& chosen = a_wins ? a_compute : compute_b;
  EXPECT_EQ(with_pruning.size_first, chosen.sizes.first);
  EXPECT_EQ(with_pruning.size_second, chosen.sizes.second);
  EXPECT_DOUBLE_EQ(with_pruning.evaluation.profit, chosen.profit);
  // Without pruning the memory pair is evaluated too and loses.
  const CoSchedule unpruned = find_co_schedule(pending, sm, PruneThresholds{0, 0, PruneRule::kEitherClose});
  EXPECT_EQ(unpruned.pairs_evaluated, 3U);
  EXPECT_EQ(unpruned.kernel_first, with_pruning.kernel_first);
  EXPECT_EQ(unpruned.kernel_second, with_pruning.kernel_second);
  EXPECT_LT(balanced_slice_ratio(pending[0], pending[2], sm).profit, chosen.profit);
}

TEST(KerneletFindCoSchedule, RunsTheOldestKernelAloneWhenNothingGains) {
  const SmModel sm = simple_sm();
  const CoSchedule one = find_co_schedule({make_kernel("only", 0.1)}, sm);
  EXPECT_FALSE(one.paired);
  EXPECT_EQ(one.kernel_first, 0U);
  EXPECT_EQ(one.size_first, 8U);
  EXPECT_EQ(one.size_second, 0U);
  EXPECT_EQ(one.pairs_evaluated, 0U);
  // Two copies of one kernel: CP = 0 at every ratio (KernelWithItselfGainsNothing), not > 0.
  const KernelTraits k = make_kernel("k", 0.1, 0.2, 0.3);
  const CoSchedule twins = find_co_schedule({k, k}, sm, PruneThresholds{0, 0, PruneRule::kEitherClose});
  EXPECT_FALSE(twins.paired);
  EXPECT_EQ(twins.pairs_evaluated, 1U);
  EXPECT_EQ(twins.kernel_first, 0U);
  EXPECT_EQ(twins.size_first, 8U);
  EXPECT_THROW((void)find_co_schedule({}, sm), std::invalid_argument);
  KernelTraits huge = make_kernel("huge", 0.1);
  huge.shared_memory_per_tb = 64 * 1024;
  EXPECT_THROW((void)find_co_schedule({k, huge}, sm), std::invalid_argument);
}

TEST(KerneletFindCoSchedule, EvaluatesEveryPairWhenPruningLeavesNone) {
  const SmModel sm = simple_sm();
  // Close PURs: the default alpha_p = 0.4 prunes both pairs.
  const std::vector<KernelTraits> pending = {make_kernel("memory", 0.2, 0.3, 0.5),
                                             make_kernel("compute", 0.002, 0.5, 0.45),
                                             make_kernel("other", 0.1, 0.4, 0.4)};
  EXPECT_EQ(count_pruned_pairs(pending, PruneThresholds{}), 3U);
  const CoSchedule relaxed = find_co_schedule(pending, sm);
  EXPECT_TRUE(relaxed.pruning_relaxed);
  EXPECT_EQ(relaxed.pairs_pruned, 0U);
  EXPECT_EQ(relaxed.pairs_evaluated, 3U);
  EXPECT_TRUE(relaxed.paired);
  EXPECT_EQ(relaxed.kernel_first, 0U);  // memory with compute: the complementary pair
  EXPECT_EQ(relaxed.kernel_second, 1U);
}

TEST(KerneletFindCoSchedule, BreaksTiesByInputOrderAndSkipsPairsThatDoNotFit) {
  const SmModel sm = simple_sm();
  const KernelTraits memory = make_kernel("memory", 0.2, 0.1, 0.5);
  const KernelTraits compute = make_kernel("compute", 0.002, 0.95, 0.01);
  KernelTraits fat = make_kernel("fat", 0.002, 0.9, 0.0);
  fat.shared_memory_per_tb = 40 * 1024;  // fits alone, beside nothing that uses shared memory
  KernelTraits fat_memory = make_kernel("fat_memory", 0.2, 0.1, 0.6);
  fat_memory.shared_memory_per_tb = 10 * 1024;
  // Two identical compute kernels: equal CP with memory; the first pair in (i, j) order wins.
  const CoSchedule tie =
      find_co_schedule({memory, compute, compute}, sm, PruneThresholds{0, 0, PruneRule::kEitherClose});
  EXPECT_TRUE(tie.paired);
  EXPECT_EQ(tie.kernel_first, 0U);
  EXPECT_EQ(tie.kernel_second, 1U);
  const CoSchedule unfit =
      find_co_schedule({fat, fat_memory}, sm, PruneThresholds{0, 0, PruneRule::kEitherClose});
  EXPECT_EQ(unfit.pairs_unfit, 1U);
  EXPECT_EQ(unfit.pairs_evaluated, 0U);
  EXPECT_FALSE(unfit.paired);
}

}  // namespace
}  // namespace gpumux::kernelet
