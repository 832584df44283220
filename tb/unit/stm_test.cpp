// Spatial-temporal multitasking's decision half (Liang et al., TPDS 2015; systemc/stm/): the estimate
// of 3.2 (per-TB latency, dynamic round robin of Fig. 4, Eqs. 1-4) on hand-worked cases, Algorithm 1's
// dp_select on constructed kernel pairs, the exhaustive optimum of Algorithms 2-3 against a brute force
// written differently, and the profile file's round trip and errors. Plain C++.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "stm/estimate.h"
#include "stm/kernel_profile.h"
#include "stm/schedule.h"

namespace gpumux::stm {
namespace {

namespace fs = std::filesystem;

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A profile with R[m] = latency(m) and B[m] = bandwidth(m), m = 1..sms.
KernelProfile make_kernel(const std::string& name, std::uint32_t thread_blocks, std::uint32_t sms,
                          const std::function<double(std::uint32_t)>& latency,
                          const std::function<double(std::uint32_t)>& bandwidth,
                          std::uint64_t global_memory = 0) {
  KernelProfile k;
  k.kernel = name;
  k.thread_blocks = thread_blocks;
  k.global_memory_bytes = global_memory;
  k.tb_latency_ns = latency(sms) * sms / thread_blocks;
  for (std::uint32_t m = 1; m <= sms; ++m) {
    k.latency_ns.push_back(latency(m));
    k.bandwidth_gb_per_s.push_back(bandwidth(m));
  }
  return k;
}

ProfileSet make_gpu(std::uint32_t sms, double peak_gb_per_s, std::vector<KernelProfile> kernels,
                    std::uint64_t global_memory = 0) {
  ProfileSet p;
  p.gpu = "test-gpu";
  p.sms = sms;
  p.peak_bandwidth_gb_per_s = peak_gb_per_s;
  p.global_memory_bytes = global_memory;
  p.sm_model = "tb";
  p.memory_model = "simple";
  p.kernels = std::move(kernels);
  return p;
}

/// A kernel on a 4-SM GPU whose thread blocks take `tb_ns` each with 2 SMs: R[2] = tb_ns x TB / 2.
KernelProfile fig4_kernel(const std::string& name, std::uint32_t thread_blocks, double tb_ns) {
  return make_kernel(
      name, thread_blocks, 4, [=](std::uint32_t m) { return tb_ns * thread_blocks / m; },
      [](std::uint32_t) { return 1.0; });
}

// ---------------------------------------------------------------------------------------------------
// The estimate (3.2)

TEST(StmEstimate, PerThreadBlockLatencyIsRTimesSmsOverThreadBlocks) {
  const KernelProfile k = make_kernel(
      "k", 200, 4, [](std::uint32_t m) { return 1000.0 - 100.0 * m; }, [](std::uint32_t) { return 0.0; });
  EXPECT_DOUBLE_EQ(per_tb_latency_ns(k, 1), 900.0 * 1 / 200);
  EXPECT_DOUBLE_EQ(per_tb_latency_ns(k, 3), 700.0 * 3 / 200);
  EXPECT_THROW((void)per_tb_latency_ns(k, 5), std::out_of_range);
}

TEST(StmEstimate, LeakyBucketInterleavesEqualSharesAlternately) {
  EXPECT_EQ(interleave_order({2, 2}, {3, 3}), (std::vector<std::size_t>{0, 1, 0, 1, 0, 1}));
}

TEST(StmEstimate, LeakyBucketInterleavesOneToTwoAsWorkedByHand) {
  // Fig. 5's case: A 4 TBs on 1 SM, B 6 TBs on 2 SMs. In units of 256: rates 1 and 2, capacity 3.
  // Cycle 1: levels 1, 2. 2: 2, 4 -> B (excess 1), B = 1. 3: 3, 3 -> tie, A, A = 0. 4: 1, 5 -> B, 2.
  // 5: 2, 4 -> B, 1. 6: 3, 3 -> A. 7: B. 8: B. 9: A (A's third). 10: 1, 5 -> B, its sixth and last: B
  // leaves and A's capacity becomes 1. 11: A.
  const std::vector<std::size_t> a_b = interleave_order({1, 2}, {4, 6});
  EXPECT_EQ(a_b, (std::vector<std::size_t>{1, 0, 1, 1, 0, 1, 1, 0, 1, 0}));
}

TEST(StmEstimate, LeakyBucketSkipsKernelsWithoutThreadBlocksAndRejectsZeroShares) {
  EXPECT_EQ(interleave_order({1, 1, 1}, {2, 0, 1}), (std::vector<std::size_t>{0, 2, 0}));
  EXPECT_TRUE(interleave_order({}, {}).empty());
  EXPECT_THROW((void)interleave_order({0, 1}, {1, 1}), std::invalid_argument);
  EXPECT_THROW((void)interleave_order({1}, {1, 1}), std::invalid_argument);
}

TEST(StmEstimate, DynamicRoundRobinWithEqualThreadBlockLatencyFig4a) {
  // 4 SMs, A and B 2 SMs each, 6 TBs each of 10 ns: order A B A B ..., three full waves of four.
  const ProfileSet gpu = make_gpu(4, 100, {fig4_kernel("A", 6, 10), fig4_kernel("B", 6, 10)});
  EXPECT_DOUBLE_EQ(drr_latency_ns(gpu, {{0, 2}, {1, 2}}), 30.0);
}

TEST(StmEstimate, DynamicRoundRobinWithVariedThreadBlockLatencyFig4b) {
  // A's blocks take 10 ns, B's 20 ns; order A B A B A B A B A B A B onto SMs 0..3:
  //  t=0:  SM0 A1 (-10)  SM1 B1 (-20)  SM2 A2 (-10)  SM3 B2 (-20)
  //  t=10: SM0 A3 (-20)  SM2 B3 (-30)
  //  t=20: SM0 A4 (-30)  SM1 B4 (-40)  SM3 A5 (-30)   (SMs 0, 1, 3 free at 20: lowest index first)
  //  t=30: SM0 B5 (-50)  SM2 A6 (-40)  SM3 B6 (-50)
  // The last block ends at 50 (sequential waves would end at 60: the dispatch balances the SMs).
  const ProfileSet gpu = make_gpu(4, 100, {fig4_kernel("A", 6, 10), fig4_kernel("B", 6, 20)});
  EXPECT_DOUBLE_EQ(drr_latency_ns(gpu, {{0, 2}, {1, 2}}), 50.0);
  // The configuration's order decides only ties: B first here, same blocks, same end.
  EXPECT_DOUBLE_EQ(drr_latency_ns(gpu, {{1, 2}, {0, 2}}), 50.0);
}

TEST(StmEstimate, DynamicRoundRobinEndsWithTheLastBlockToFinishNotTheLastDispatched) {
  // 2 SMs, 1 each: A one block of 100 ns, B three of 10 ns. Order A B, then A has left: B B.
  //  t=0: SM0 A (-100), SM1 B (-10); t=10: SM1 B (-20); t=20: SM1 B (-30). The last dispatched block
  //  ends at 30, A's at 100.
  const ProfileSet gpu =
      make_gpu(2, 100,
               {make_kernel(
                    "A", 1, 2, [](std::uint32_t m) { return 100.0 / m; }, [](std::uint32_t) { return 1.0; }),
                make_kernel(
                    "B", 3, 2, [](std::uint32_t m) { return 30.0 / m; }, [](std::uint32_t) { return 1.0; })});
  EXPECT_DOUBLE_EQ(drr_latency_ns(gpu, {{0, 1}, {1, 1}}), 100.0);
}

TEST(StmEstimate, DynamicRoundRobinOfOneKernelIsItsRoundsTimesThePerBlockLatency) {
  for (const std::uint32_t blocks : {1U, 7U, 15U, 16U, 100U, 196U, 1001U}) {
    const ProfileSet gpu =
        make_gpu(15, 100,
                 {make_kernel(
                     "k", blocks, 15, [](std::uint32_t m) { return 3000.0 / std::sqrt(m); },
                     [](std::uint32_t) { return 1.0; })});
    for (std::uint32_t m = 1; m <= 15; ++m) {
      const double rounds = std::ceil(static_cast<double>(blocks) / m);
      const double expected = rounds * per_tb_latency_ns(gpu.kernels[0], m);
      EXPECT_NEAR(drr_latency_ns(gpu, {{0, m}}), expected, 1e-12 * expected) << blocks << " TBs on " << m;
    }
  }
}

TEST(StmEstimate, PenaltyIsExcessBandwidthOverPeakEq3) {
  const auto flat = [](double gb) { return [gb](std::uint32_t m) { return gb * m; }; };
  const auto r = [](std::uint32_t m) { return 100.0 / m; };
  const ProfileSet gpu =
      make_gpu(8, 100, {make_kernel("a", 8, 8, r, flat(10)), make_kernel("b", 8, 8, r, flat(20))});
  EXPECT_DOUBLE_EQ(penalty(gpu, {{0, 2}, {1, 2}}), 1.0);          // 20 + 40 = 60 < 100
  EXPECT_DOUBLE_EQ(penalty(gpu, {{0, 2}, {1, 4}}), 1.0);          // exactly 100: not above
  EXPECT_DOUBLE_EQ(penalty(gpu, {{0, 3}, {1, 5}}), 130.0 / 100);  // 30 + 100
  EXPECT_DOUBLE_EQ(penalty(gpu, {}), 1.0);
  // con_lat = DRR x penalty (Eq. 4).
  EXPECT_DOUBLE_EQ(con_lat_ns(gpu, {{0, 3}, {1, 5}}), drr_latency_ns(gpu, {{0, 3}, {1, 5}}) * 1.3);
}

TEST(StmEstimate, KernelsThatDoNotFitInGlobalMemoryTakeForeverEq4) {
  const auto r = [](std::uint32_t m) { return 100.0 / m; };
  const auto b = [](std::uint32_t) { return 1.0; };
  const std::vector<KernelProfile> kernels = {make_kernel("a", 8, 4, r, b, 600),
                                              make_kernel("b", 8, 4, r, b, 500),
                                              make_kernel("c", 8, 4, r, b, 400)};
  const ProfileSet small = make_gpu(4, 100, kernels, 1000);
  EXPECT_EQ(con_lat_ns(small, {{0, 2}, {1, 2}}), kInf);  // 1100 > 1000
  EXPECT_LT(imp_ns(small, {{0, 2}, {1, 2}}), 0);
  EXPECT_EQ(imp_ns(small, {{0, 2}, {1, 2}}), -kInf);
  EXPECT_TRUE(std::isfinite(con_lat_ns(small, {{0, 2}, {2, 2}})));  // exactly 1000: fits
  const ProfileSet unlimited = make_gpu(4, 100, kernels, 0);
  EXPECT_TRUE(std::isfinite(con_lat_ns(unlimited, {{0, 1}, {1, 1}, {2, 2}})));
}

TEST(StmEstimate, SequentialLatencyReadsEachProfileAtTheConfigurationsSmsEq2) {
  const ProfileSet gpu = make_gpu(
      8, 100,
      {make_kernel(
           "a", 8, 8, [](std::uint32_t m) { return 1000.0 + m; }, [](std::uint32_t) { return 0.0; }),
       make_kernel(
           "b", 8, 8, [](std::uint32_t m) { return 2000.0 + m; }, [](std::uint32_t) { return 0.0; })});
  EXPECT_DOUBLE_EQ(seq_lat_ns(gpu, {{0, 2}, {1, 3}}), 1005.0 + 2005.0);  // R_a[5] + R_b[5]
  EXPECT_DOUBLE_EQ(imp_ns(gpu, {{0, 2}, {1, 3}}), 3010.0 - con_lat_ns(gpu, {{0, 2}, {1, 3}}));
  EXPECT_DOUBLE_EQ(phase_latency_ns(gpu, {{1, 8}}), 2008.0);  // a kernel alone: its profile
  EXPECT_DOUBLE_EQ(phase_latency_ns(gpu, {{0, 4}, {1, 4}}), con_lat_ns(gpu, {{0, 4}, {1, 4}}));
}

TEST(StmEstimate, InvalidConfigurationsAreProgrammingErrors) {
  const ProfileSet gpu = make_gpu(4, 100, {fig4_kernel("A", 6, 10), fig4_kernel("B", 6, 20)});
  EXPECT_THROW((void)con_lat_ns(gpu, {{0, 0}}), std::invalid_argument);
  EXPECT_THROW((void)con_lat_ns(gpu, {{0, 3}, {1, 2}}), std::invalid_argument);  // 5 SMs of 4
  EXPECT_THROW((void)con_lat_ns(gpu, {{0, 1}, {0, 1}}), std::invalid_argument);
  EXPECT_THROW((void)seq_lat_ns(gpu, {{2, 1}}), std::invalid_argument);
  EXPECT_EQ(to_string(gpu, Configuration{{1, 3}, {0, 1}}), "{B:3, A:1}");
}

// ---------------------------------------------------------------------------------------------------
// Algorithm 1

/// A memory-bound kernel: R[m] falls until 3 SMs and is flat after (its bandwidth saturates there), and a
/// compute-bound one that scales linearly and asks little bandwidth. 15 SMs, peak 180 GB/s.
ProfileSet memory_and_compute_pair() {
  return make_gpu(15, 180,
                  {make_kernel(
                       "mem", 300, 15, [](std::uint32_t m) { return 300.0 / std::min(m, 3U); },
                       [](std::uint32_t m) { return 60.0 * std::min(m, 3U); }),
                   make_kernel(
                       "comp", 1500, 15, [](std::uint32_t m) { return 1500.0 / m; },
                       [](std::uint32_t m) { return 1.0 * m; })});
}

TEST(StmSchedule, DpSelectCoRunsAMemoryBoundKernelOnFewSmsBesideAComputeBoundOne) {
  const ProfileSet gpu = memory_and_compute_pair();
  for (const std::vector<std::size_t>& order :
       {std::vector<std::size_t>{0, 1}, std::vector<std::size_t>{1, 0}}) {
    const Configuration c = dp_select(gpu, order);
    SCOPED_TRACE(to_string(gpu, c));
    ASSERT_EQ(c.size(), 2U);
    const auto mem = std::find_if(c.begin(), c.end(), [](const Allocation& a) { return a.kernel == 0; });
    ASSERT_NE(mem, c.end());
    EXPECT_LE(mem->sms, 3U);
    EXPECT_EQ(sms_used(c), 15U);
    EXPECT_GT(imp_ns(gpu, c), 0);
  }
  const Schedule stm = stm_schedule(gpu, all_kernels(gpu));
  ASSERT_EQ(stm.phases.size(), 1U);
  const Schedule sequential = sequential_schedule(gpu, all_kernels(gpu));
  EXPECT_DOUBLE_EQ(sequential.latency_ns, 100.0 + 100.0);  // R_mem[15] + R_comp[15]
  // All 1800 blocks take 1 ns on their allocation (mem: 100 x 1 / 300 for 1 SM ... 3 SMs; comp: 1500 / 1500),
  // so the phase is 120 ns of DRR, under the peak bandwidth with mem on 1 or 2 SMs.
  EXPECT_NEAR(stm.latency_ns, 120.0, 1e-9);
  EXPECT_EQ(to_string(gpu, stm), "{mem:2, comp:13}");  // m ascends: the first of the 120 ns ties
}

TEST(StmSchedule, DpSelectRunsLinearlyScalingComputeBoundKernelsOneAfterAnother) {
  // Both scale perfectly, so no allocation beats running each on all SMs; DRR's last round only adds.
  const ProfileSet gpu = make_gpu(15, 180,
                                  {make_kernel(
                                       "c1", 1000, 15, [](std::uint32_t m) { return 1000.0 / m; },
                                       [](std::uint32_t m) { return 2.0 * m; }),
                                   make_kernel(
                                       "c2", 700, 15, [](std::uint32_t m) { return 2100.0 / m; },
                                       [](std::uint32_t m) { return 1.0 * m; })});
  EXPECT_EQ(dp_select(gpu, {0, 1}), (Configuration{{0, 15}}));
  EXPECT_EQ(dp_select(gpu, {1, 0}), (Configuration{{1, 15}}));
  const Schedule stm = stm_schedule(gpu, all_kernels(gpu));
  EXPECT_EQ(to_string(gpu, stm), "{c1:15} | {c2:15}");
  EXPECT_DOUBLE_EQ(stm.latency_ns, sequential_schedule(gpu, all_kernels(gpu)).latency_ns);
  EXPECT_DOUBLE_EQ(stm.latency_ns, 1000.0 / 15 + 2100.0 / 15);
}

TEST(StmSchedule, RoundingNoiseIsNoImprovement) {
  // Two identical kernels that scale perfectly: any split of 4 SMs takes exactly as long as running
  // them one after another, but summing 0.25-wave latencies in DRR and R[4] = 100 / 4 round apart, so
  // imp() comes out a few 1e-15 either side of 0 (positive here with IEEE doubles). Not an improvement.
  const auto scale = [](std::uint32_t m) { return 100.0 / m; };
  const auto low = [](std::uint32_t) { return 1.0; };
  const ProfileSet gpu =
      make_gpu(4, 100, {make_kernel("a", 24, 4, scale, low), make_kernel("b", 24, 4, scale, low)});
  for (std::uint32_t a = 1; a < 4; ++a) {
    const Configuration split = {{0, a}, {1, 4 - a}};
    EXPECT_LT(std::abs(imp_ns(gpu, split)), 1e-12 * seq_lat_ns(gpu, split)) << to_string(gpu, split);
  }
  EXPECT_EQ(dp_select(gpu, {0, 1}), (Configuration{{0, 4}}));
  EXPECT_EQ(stm_schedule(gpu, {0, 1}).phases.size(), 2U);
}

TEST(StmSchedule, KernelsThatCannotShareMemoryRunApart) {
  ProfileSet gpu = memory_and_compute_pair();
  gpu.global_memory_bytes = 1000;
  gpu.kernels[0].global_memory_bytes = 600;
  gpu.kernels[1].global_memory_bytes = 600;
  EXPECT_EQ(to_string(gpu, stm_schedule(gpu, all_kernels(gpu))), "{mem:15} | {comp:15}");
}

TEST(StmSchedule, OneKernelAloneTakesEverySm) {
  const ProfileSet gpu = memory_and_compute_pair();
  EXPECT_EQ(dp_select(gpu, {1}), (Configuration{{1, 15}}));
  EXPECT_THROW((void)dp_select(gpu, {}), std::invalid_argument);
  EXPECT_THROW((void)stm_schedule(gpu, {0, 0}), std::invalid_argument);
  EXPECT_THROW((void)stm_schedule(gpu, {2}), std::invalid_argument);
}

TEST(StmSchedule, ScheduleIsPrintedPhaseByPhase) {
  const std::vector<KernelProfile> kernels = {fig4_kernel("va", 4, 1), fig4_kernel("bs", 4, 1),
                                              fig4_kernel("mci", 4, 1)};
  ProfileSet gpu = make_gpu(4, 100, kernels);
  Schedule s;
  s.phases = {{{0, 5}, {1, 10}}, {{2, 15}}};
  EXPECT_EQ(to_string(gpu, s), "{va:5, bs:10} | {mci:15}");
  EXPECT_EQ(to_string(gpu, Schedule{}), "");
}

TEST(StmSchedule, ProfilesForRepeatsKernelsAndNamesUnknownOnes) {
  const ProfileSet gpu = memory_and_compute_pair();
  const ProfileSet three = profiles_for(gpu, {"comp", "mem", "comp"});
  ASSERT_EQ(three.kernels.size(), 3U);
  EXPECT_EQ(three.kernels[2].kernel, "comp");
  EXPECT_EQ(three.sms, 15U);
  std::size_t scheduled = 0;
  for (const Configuration& phase : stm_schedule(three, all_kernels(three)).phases) {
    scheduled += phase.size();
  }
  EXPECT_EQ(scheduled, 3U);
  try {
    (void)profiles_for(gpu, {"mme"});
    ADD_FAILURE() << "accepted an unknown kernel";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'mme' (did you mean 'mem'?)"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------------
// The exhaustive optimum (Algorithms 2-3)

TEST(StmExhaustive, BellNumbers) {
  const std::vector<std::uint64_t> bell = {1, 1, 2, 5, 15, 52, 203, 877, 4140, 21147, 115975};
  for (std::size_t n = 0; n < bell.size(); ++n) {
    EXPECT_EQ(bell_number(n), bell[n]) << n;
    EXPECT_EQ(exhaustive_size(n, 15).schedules, bell[n]) << n;
  }
  EXPECT_EQ(bell_number(25), 4638590332229999353ULL);  // the last below 2^64
  EXPECT_EQ(bell_number(26), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(bell_number(200), std::numeric_limits<std::uint64_t>::max());
}

TEST(StmExhaustive, OracleCallsCountEverySubsetsAllocations) {
  EXPECT_EQ(exhaustive_size(3, 15).oracle_calls, 3U * 1 + 3U * 14 + 1U * 91);
  EXPECT_EQ(exhaustive_size(3, 2).oracle_calls, 3U * 1 + 3U * 1);  // no phase of 3 kernels on 2 SMs
  EXPECT_EQ(exhaustive_size(1, 1).oracle_calls, 1U);
  EXPECT_EQ(exhaustive_size(13, 15).oracle_calls, 17383860U);  // Vandermonde: C(27, 15)
  EXPECT_EQ(exhaustive_size(200, 1024).oracle_calls, std::numeric_limits<std::uint64_t>::max());
}

TEST(StmExhaustive, RefusesSearchesAboveTheLimitsBeforeCallingTheOracle) {
  std::vector<KernelProfile> kernels;
  for (int i = 0; i < 12; ++i) {
    kernels.push_back(make_kernel(
        "k" + std::to_string(i), 30, 15, [](std::uint32_t m) { return 100.0 / m; },
        [](std::uint32_t) { return 1.0; }));
  }
  const ProfileSet gpu = make_gpu(15, 100, kernels);
  int calls = 0;
  const PhaseOracle counting = [&calls](const Configuration&) {
    ++calls;
    return 1.0;
  };
  try {
    (void)exhaustive_optimum(gpu, all_kernels(gpu), counting);
    ADD_FAILURE() << "12 kernels on 15 SMs accepted";
  } catch (const InputError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("12 kernels on 15 SMs"), std::string::npos) << text;
    EXPECT_NE(
        text.find(std::to_string(exhaustive_size(12, 15).oracle_calls) + " phase latencies (limit 2000000)"),
        std::string::npos)
        << text;
  }
  EXPECT_EQ(calls, 0);
  ExhaustiveLimits tight;
  tight.max_oracle_calls = 100;
  EXPECT_THROW((void)exhaustive_optimum(gpu, {0, 1, 2}, counting, tight), InputError);  // 136 calls
  tight.max_oracle_calls = 136;
  EXPECT_NO_THROW((void)exhaustive_optimum(gpu, {0, 1, 2}, counting, tight));
  EXPECT_EQ(calls, 136);
}

/// Brute force, written as recursion: every way to put each kernel into an existing phase or a new one,
/// and for each phase every way to hand out M SMs kernel by kernel, with phase_latency_ns as the oracle.
class BruteForce {
 public:
  explicit BruteForce(const ProfileSet& gpu) : gpu_(gpu) {}

  double best(std::size_t n) {
    std::vector<std::vector<std::size_t>> phases;
    return place(0, n, phases);
  }

 private:
  double place(std::size_t kernel, std::size_t n, std::vector<std::vector<std::size_t>>& phases) {
    if (kernel == n) {
      double sum = 0;
      for (const auto& phase : phases) {
        if (phase.size() > gpu_.sms) {
          return kInf;
        }
        Configuration c;
        sum += best_allocation(phase, 0, gpu_.sms, c);
      }
      return sum;
    }
    double best_ns = kInf;
    for (std::size_t p = 0; p <= phases.size(); ++p) {
      if (p == phases.size()) {
        phases.emplace_back();
      }
      phases[p].push_back(kernel);
      best_ns = std::min(best_ns, place(kernel + 1, n, phases));
      phases[p].pop_back();
      if (phases[p].empty()) {
        phases.pop_back();
      }
    }
    return best_ns;
  }

  double best_allocation(const std::vector<std::size_t>& phase, std::size_t at, std::uint32_t left,
                         Configuration& c) {
    if (at == phase.size()) {
      return left == 0 ? phase_latency_ns(gpu_, c) : kInf;
    }
    double best_ns = kInf;
    for (std::uint32_t sms = 1; sms <= left; ++sms) {
      c.push_back({phase[at], sms});
      best_ns = std::min(best_ns, best_allocation(phase, at + 1, left - sms, c));
      c.pop_back();
    }
    return best_ns;
  }

  const ProfileSet& gpu_;
};

/// 2-5 random kernels on 6-15 SMs: memory-bound ones saturate after a few SMs, compute-bound ones scale.
ProfileSet random_gpu(Rng& rng) {
  const auto sms = static_cast<std::uint32_t>(6 + rng.below(10));
  const std::size_t n = 2 + rng.below(4);
  std::vector<KernelProfile> kernels;
  for (std::size_t i = 0; i < n; ++i) {
    const auto blocks = static_cast<std::uint32_t>(10 + rng.below(90));
    const double work = 100.0 + 900.0 * rng.uniform();
    const bool memory_bound = rng.below(2) == 0;
    const auto saturate = static_cast<std::uint32_t>(memory_bound ? 1 + rng.below(4) : sms);
    const double per_sm_gb = memory_bound ? 20.0 + 40.0 * rng.uniform() : 2.0 * rng.uniform();
    kernels.push_back(make_kernel(
        "k" + std::to_string(i), blocks, sms,
        [=](std::uint32_t m) { return work / std::min(m, saturate) * (1.0 + 0.01 * m); },
        [=](std::uint32_t m) { return per_sm_gb * std::min(m, saturate); }, 100 * rng.below(6)));
  }
  return make_gpu(sms, 100, kernels, rng.below(2) == 0 ? 0 : 600);
}

TEST(StmExhaustive, OptimumMatchesBruteForceAndIsNoWorseThanStmOrSequential) {
  Rng rng(20150701);
  for (int trial = 0; trial < 24; ++trial) {
    const ProfileSet gpu = random_gpu(rng);
    const std::vector<std::size_t> kernels = all_kernels(gpu);
    const ExhaustiveResult optimum = exhaustive_optimum(gpu, kernels);
    const Schedule stm = stm_schedule(gpu, kernels);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", M = " + std::to_string(gpu.sms) + ": optimum " +
                 to_string(gpu, optimum.best) + ", STM " + to_string(gpu, stm));
    const double brute = BruteForce(gpu).best(kernels.size());
    EXPECT_NEAR(optimum.best.latency_ns, brute, 1e-9 * brute);
    EXPECT_LE(optimum.best.latency_ns, stm.latency_ns * (1 + 1e-12));
    EXPECT_LE(optimum.best.latency_ns, sequential_schedule(gpu, kernels).latency_ns * (1 + 1e-12));
    EXPECT_EQ(optimum.oracle_calls, exhaustive_size(kernels.size(), gpu.sms).oracle_calls);
    EXPECT_EQ(optimum.schedules, bell_number(kernels.size()));  // n <= 5 < M: every partition is valid
    // Algorithm 1 as printed builds every Config[i][j] on Config[1][.] = {<k_1, .>} (k_i alone on j SMs
    // never improves on 0): each phase holds the first kernel left.
    std::vector<bool> done(kernels.size(), false);
    for (const Configuration& phase : stm.phases) {
      const auto first_left =
          static_cast<std::size_t>(std::find(done.begin(), done.end(), false) - done.begin());
      EXPECT_TRUE(std::any_of(phase.begin(), phase.end(),
                              [&](const Allocation& a) { return a.kernel == first_left; }));
      for (const Allocation& a : phase) {
        done[a.kernel] = true;
      }
    }
    // The schedules are what they claim: each kernel in one phase, all M SMs per phase, latency the sum.
    for (const Schedule* s : {&optimum.best, &stm}) {
      std::vector<int> seen(kernels.size(), 0);
      double sum = 0;
      for (const Configuration& phase : s->phases) {
        EXPECT_EQ(sms_used(phase), gpu.sms);
        for (const Allocation& a : phase) {
          ++seen[a.kernel];
        }
        sum += phase_latency_ns(gpu, phase);
      }
      EXPECT_EQ(seen, std::vector<int>(kernels.size(), 1));
      EXPECT_NEAR(s->latency_ns, sum, 1e-12 * sum);
    }
  }
}

TEST(StmExhaustive, TakesTheCallersOracleAndEvaluatesEachPhaseSetOnce) {
  const ProfileSet gpu =
      make_gpu(4, 100, {fig4_kernel("a", 8, 1), fig4_kernel("b", 8, 1), fig4_kernel("c", 8, 1)});
  std::vector<Configuration> asked;
  // "Measured": a and b together on 1 + 3 SMs take 5 ns; everything else 10 ns per kernel.
  const PhaseOracle measured = [&asked](const Configuration& c) {
    asked.push_back(c);
    if (c == Configuration{{0, 1}, {1, 3}}) {
      return 5.0;
    }
    return 10.0 * static_cast<double>(c.size());
  };
  const ExhaustiveResult result = exhaustive_optimum(gpu, {0, 1, 2}, measured);
  EXPECT_EQ(to_string(gpu, result.best), "{a:1, b:3} | {c:4}");
  EXPECT_DOUBLE_EQ(result.best.latency_ns, 15.0);
  EXPECT_EQ(result.oracle_calls, asked.size());
  EXPECT_EQ(asked.size(), 3U * 1 + 3U * 3 + 1U * 3);
  std::sort(asked.begin(), asked.end(), [](const Configuration& x, const Configuration& y) {
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end(),
                                        [](const Allocation& p, const Allocation& q) {
                                          return p.kernel != q.kernel ? p.kernel < q.kernel : p.sms < q.sms;
                                        });
  });
  EXPECT_EQ(std::adjacent_find(asked.begin(), asked.end()), asked.end()) << "an allocation asked twice";
  const PhaseOracle bad = [](const Configuration&) { return std::nan(""); };
  EXPECT_THROW((void)exhaustive_optimum(gpu, {0, 1}, bad), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------------
// Profile files (docs/config.md "Profile files")

class StmProfileFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("gpumux_stm_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& name, const std::string& text) const {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  /// The 1-based line of the first line of `text` containing `marker`.
  static int line_of(const std::string& text, const std::string& marker) {
    const std::size_t at = text.find(marker);
    EXPECT_NE(at, std::string::npos) << "test bug: marker '" << marker << "' not in text";
    return 1 +
           static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  }

  /// Loads `text` (with `from` replaced by `to`) and expects an InputError at the line of `marker` (in the
  /// edited text) naming `key`; returns the message.
  std::string expect_error(const std::string& from, const std::string& to, const std::string& marker,
                           const std::string& key) {
    std::string text = kValid;
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in the valid file";
    text.replace(at, from.size(), to);
    const std::string path = write("bad.yaml", text);
    try {
      (void)load_profile_file(path);
    } catch (const InputError& e) {
      std::string message = e.what();
      EXPECT_EQ(message.rfind(path + ":" + std::to_string(line_of(text, marker)) + ":", 0), 0U) << message;
      EXPECT_NE(message.find("'" + key + "'"), std::string::npos) << message;
      return message;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected InputError, got: " << e.what();
      return {};
    }
    ADD_FAILURE() << "accepted: " << to;
    return {};
  }

  static constexpr const char* kValid = R"(gpu: fermi-gtx480
sms: 3
peak_bandwidth_gb_per_s: 177.4
global_memory_bytes: 1610612736   # 0 or absent: unlimited
sm_model: warp
memory_model: dram
kernels:
  - kernel: va
    thread_blocks: 196
    global_memory_bytes: 600000
    tb_latency_ns: 1234.5
    latency_ns: [300, 150, 100]
    bandwidth_gb_per_s: [60, 120, 170]
  - kernel: bs
    thread_blocks: 480
    tb_latency_ns: 99
    latency_ns: [900, 450, 300]
    bandwidth_gb_per_s: [1, 2, 3]
)";

  fs::path dir_;
};

TEST_F(StmProfileFile, LoadsTheDocumentedFormat) {
  const ProfileSet p = load_profile_file(write("p.yaml", kValid));
  EXPECT_EQ(p.gpu, "fermi-gtx480");
  EXPECT_EQ(p.sms, 3U);
  EXPECT_DOUBLE_EQ(p.peak_bandwidth_gb_per_s, 177.4);
  EXPECT_EQ(p.global_memory_bytes, 1610612736U);
  EXPECT_EQ(p.sm_model, "warp");
  EXPECT_EQ(p.memory_model, "dram");
  ASSERT_EQ(p.kernels.size(), 2U);
  EXPECT_EQ(p.kernels[0].global_memory_bytes, 600000U);
  EXPECT_EQ(p.kernels[1].global_memory_bytes, 0U);  // absent: 0
  EXPECT_DOUBLE_EQ(p.kernels[1].R(3), 300.0);
  EXPECT_DOUBLE_EQ(p.kernels[0].B(2), 120.0);
  ASSERT_NE(p.find("bs"), nullptr);
  EXPECT_EQ(p.find("bs")->thread_blocks, 480U);
  EXPECT_EQ(p.find("nope"), nullptr);
}

TEST_F(StmProfileFile, RoundTripsExactly) {
  Rng rng(7);
  ProfileSet p = make_gpu(5, 177.4, {}, 1610612736);
  p.gpu = "gpu: with colon";
  p.sm_model = "warp";
  p.memory_model = "dram";
  for (const char* name : {"va", "null", "42", "- dash", "#hash", "quote'd \"x\"", "ünï"}) {
    KernelProfile k;
    k.kernel = name;
    k.thread_blocks = static_cast<std::uint32_t>(1 + rng.below(100000));
    k.global_memory_bytes = rng.below(1ULL << 40U);
    k.tb_latency_ns = 1.0 / 3.0 + rng.uniform();
    for (int m = 0; m < 5; ++m) {
      k.latency_ns.push_back(std::ldexp(rng.uniform() + 0.1, static_cast<int>(rng.below(80)) - 40));
      k.bandwidth_gb_per_s.push_back(m == 0 ? 0.0 : 0.1 + 3000 * rng.uniform());
    }
    p.kernels.push_back(k);
  }
  p.kernels[0].latency_ns[0] = 5e-324;  // the least positive double
  p.kernels[0].latency_ns[1] = 0.1;
  p.kernels[0].latency_ns[2] = 1e300;
  const std::string path = (dir_ / "out.yaml").string();
  write_profile_file(path, p);
  const ProfileSet q = load_profile_file(path);
  EXPECT_EQ(q.gpu, p.gpu);
  EXPECT_EQ(q.sms, p.sms);
  EXPECT_EQ(q.peak_bandwidth_gb_per_s, p.peak_bandwidth_gb_per_s);
  EXPECT_EQ(q.global_memory_bytes, p.global_memory_bytes);
  EXPECT_EQ(q.sm_model, p.sm_model);
  EXPECT_EQ(q.memory_model, p.memory_model);
  ASSERT_EQ(q.kernels.size(), p.kernels.size());
  for (std::size_t i = 0; i < p.kernels.size(); ++i) {
    EXPECT_EQ(q.kernels[i].kernel, p.kernels[i].kernel);
    EXPECT_EQ(q.kernels[i].thread_blocks, p.kernels[i].thread_blocks);
    EXPECT_EQ(q.kernels[i].global_memory_bytes, p.kernels[i].global_memory_bytes);
    EXPECT_EQ(q.kernels[i].tb_latency_ns, p.kernels[i].tb_latency_ns);  // exact, not near
    EXPECT_EQ(q.kernels[i].latency_ns, p.kernels[i].latency_ns);
    EXPECT_EQ(q.kernels[i].bandwidth_gb_per_s, p.kernels[i].bandwidth_gb_per_s);
  }
  // Written again, the same text: the format is a fixed point.
  const std::string again = (dir_ / "again.yaml").string();
  write_profile_file(again, q);
  std::ifstream a(path);
  std::ifstream b(again);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}),
            std::string(std::istreambuf_iterator<char>(b), {}));
}

TEST_F(StmProfileFile, WriterRefusesWhatTheReaderWouldReject) {
  ProfileSet p = load_profile_file(write("p.yaml", kValid));
  p.kernels[1].latency_ns[2] = 0;
  EXPECT_THROW(write_profile_file((dir_ / "x.yaml").string(), p), std::invalid_argument);
  p = load_profile_file(write("p.yaml", kValid));
  p.kernels[1].bandwidth_gb_per_s.pop_back();
  EXPECT_THROW(write_profile_file((dir_ / "x.yaml").string(), p), std::invalid_argument);
  p = load_profile_file(write("p.yaml", kValid));
  p.kernels[1].kernel = "va";
  EXPECT_THROW(write_profile_file((dir_ / "x.yaml").string(), p), std::invalid_argument);
  p = load_profile_file(write("p.yaml", kValid));
  EXPECT_THROW(write_profile_file((dir_ / "no-such-dir" / "x.yaml").string(), p), InputError);
}

TEST_F(StmProfileFile, ListOfWrongLength) {
  expect_error("latency_ns: [900, 450, 300]", "latency_ns: [900, 450]", "latency_ns: [900, 450]",
               "kernels[1].latency_ns");
  const std::string message =
      expect_error("bandwidth_gb_per_s: [60, 120, 170]", "bandwidth_gb_per_s: [60, 120, 170, 1]",
                   "bandwidth_gb_per_s: [60, 120, 170, 1]", "kernels[0].bandwidth_gb_per_s");
  EXPECT_NE(message.find("got 4"), std::string::npos) << message;
}

TEST_F(StmProfileFile, NonPositiveLatency) {
  expect_error("latency_ns: [300, 150, 100]", "latency_ns: [300, 0, 100]", "latency_ns: [300, 0, 100]",
               "kernels[0].latency_ns[1]");
  expect_error("latency_ns: [300, 150, 100]", "latency_ns: [-300, 150, 100]", "latency_ns: [-300",
               "kernels[0].latency_ns[0]");
  expect_error("tb_latency_ns: 99", "tb_latency_ns: 0", "tb_latency_ns: 0", "kernels[1].tb_latency_ns");
}

TEST_F(StmProfileFile, NegativeBandwidth) {
  expect_error("bandwidth_gb_per_s: [1, 2, 3]", "bandwidth_gb_per_s: [1, 2, -3]",
               "bandwidth_gb_per_s: [1, 2, -3]", "kernels[1].bandwidth_gb_per_s[2]");
}

TEST_F(StmProfileFile, DuplicateKernelName) {
  const std::string message =
      expect_error("kernel: bs", "kernel: va", "kernel: va\n    thread_blocks: 480", "kernels[1].kernel");
  EXPECT_NE(message.find("duplicate kernel 'va' (first profiled at line 8)"), std::string::npos) << message;
}

TEST_F(StmProfileFile, ZeroSms) { expect_error("sms: 3", "sms: 0", "sms: 0", "sms"); }

TEST_F(StmProfileFile, UnknownKeys) {
  const std::string top = expect_error("sm_model: warp", "sm_modle: warp", "sm_modle", "sm_modle");
  EXPECT_NE(top.find("did you mean 'sm_model'"), std::string::npos) << top;
  expect_error("    tb_latency_ns: 99", "    tb_latency_ns: 99\n    latency: [1, 2, 3]", "latency: [1",
               "kernels[1].latency");
}

TEST_F(StmProfileFile, WrongTypes) {
  expect_error("sms: 3", "sms: \"3\"", "sms: \"3\"", "sms");
  expect_error("thread_blocks: 196", "thread_blocks: 19.6", "thread_blocks: 19.6",
               "kernels[0].thread_blocks");
  expect_error("latency_ns: [300, 150, 100]", "latency_ns: 300", "latency_ns: 300", "kernels[0].latency_ns");
  expect_error("latency_ns: [300, 150, 100]", "latency_ns: [300, fast, 100]", "latency_ns: [300, fast",
               "kernels[0].latency_ns[1]");
  expect_error("global_memory_bytes: 600000", "global_memory_bytes: -1", "global_memory_bytes: -1",
               "kernels[0].global_memory_bytes");
  expect_error("sm_model: warp", "sm_model: cycle", "sm_model: cycle", "sm_model");
  expect_error("memory_model: dram", "memory_model: [dram]", "memory_model: [dram]", "memory_model");
}

TEST_F(StmProfileFile, MissingKeys) {
  expect_error("    tb_latency_ns: 99\n", "", "  - kernel: bs", "kernels[1].tb_latency_ns");
  expect_error("peak_bandwidth_gb_per_s: 177.4\n", "", "gpu: fermi", "peak_bandwidth_gb_per_s");
}

TEST_F(StmProfileFile, MissingFileNamesIt) {
  const std::string path = (dir_ / "absent.yaml").string();
  try {
    (void)load_profile_file(path);
    ADD_FAILURE() << "a missing file loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0U) << e.what();
  }
}

}  // namespace
}  // namespace gpumux::stm
