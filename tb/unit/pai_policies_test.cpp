// The Pai et al. policies (mpmax, srtf, srtf-adaptive, srtf-oracle, sjf, ljf) with the real SM
// driver over timed fake SMs (Fermi-like resources, several kernels per SM): residency limits,
// sampling, hand-off, sharing mode, oracle orders.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "policy/mpmax.h"
#include "policy/pai_common.h"
#include "policy/srtf.h"
#include "unit/timed_engine.h"

namespace gpumux {
namespace {

using PaiPolicyUnit = test::TimedEngineTest;

constexpr TimePs kUs = 1000000;  // 1 us in ps

// --- helpers ----------------------------------------------------------------------------------------

TEST(PaiCommon, TbsAlongsideCountsEveryResource) {
  SmResources sm;
  sm.registers = 32768;
  sm.max_threads = 1536;
  sm.max_thread_blocks = 8;
  sm.max_warps = 48;
  sm.shared_memory_configs = {49152};
  Occupancy render;  // Pai's RayTracing render: R = 5 by registers
  render.tbs_per_sm = 5;
  render.footprint = {6400, 0, 128, 4};
  render.shared_memory_config = 49152;
  Occupancy jpeg;  // JPEG-d: R = 8 by TB slots
  jpeg.tbs_per_sm = 8;
  jpeg.footprint = {1536, 2112, 64, 2};
  jpeg.shared_memory_config = 49152;
  EXPECT_EQ(tbs_alongside(sm, render, {}), 5U);
  EXPECT_EQ(tbs_alongside(sm, render, {{&jpeg, 1}}), 4U);  // (32768 - 1536) / 6400
  EXPECT_EQ(tbs_alongside(sm, jpeg, {{&render, 1}}), 7U);  // TB slots
  EXPECT_EQ(tbs_alongside(sm, jpeg, {{&render, 3}}), 5U);  // (32768 - 19200) / 1536 = 8, slots 5
  EXPECT_EQ(tbs_alongside(sm, render, {{&render, 5}}), 0U);
}

TEST(PaiCommon, StaircaseOracleIsEq1OverTheGrid) {
  KernelDesc d;
  d.tb_time.mean_ps = 7;
  KernelStatus k;
  k.desc = &d;
  k.total_tbs = 512;
  k.occupancy.tbs_per_sm = 8;
  EXPECT_EQ(staircase_runtime_ps(k, 15), 5U * 7U);  // ceil(512 / 120) = 5 waves
  k.completed_tbs = 400;
  EXPECT_EQ(staircase_remaining_ps(k, 15), 1U * 7U);
}

TEST(PaiRegistry, EveryPaiPolicyIsRegisteredAndChecksItsOptions) {
  for (const char* name : {"fifo", "mpmax", "srtf", "srtf-adaptive", "srtf-oracle", "sjf", "ljf"}) {
    EXPECT_NE(find_policy(name), nullptr) << name;
    EXPECT_EQ(create_policy(name)->name(), name);
  }
  EXPECT_THROW((void)create_policy("mpmax", {{"x", "1"}}), InputError);
  EXPECT_THROW((void)create_policy("sjf", {{"sample", "first-to-end"}}), InputError);
  EXPECT_THROW((void)create_policy("srtf", {{"threshold", "0.5"}}), InputError);
  EXPECT_THROW((void)create_policy("srtf", {{"sample", "sometimes"}}), InputError);
  EXPECT_THROW((void)create_policy("srtf-adaptive", {{"shared_limit", "0"}}), InputError);
  // inf and nan parse as numbers; "-5" and " 2" parse as counts (stoul wraps and skips spaces). None is
  // silently clamped or accepted.
  for (const char* bad : {"inf", "nan", "1e300", "-1"}) {
    EXPECT_THROW((void)create_policy("srtf-adaptive", {{"threshold", bad}}), InputError) << bad;
  }
  for (const char* bad : {"-5", " 2", "+2", "1025"}) {
    EXPECT_THROW((void)create_policy("srtf-adaptive", {{"shared_limit", bad}}), InputError) << bad;
  }
  EXPECT_NO_THROW((void)create_policy("srtf-adaptive", {{"threshold", "0.25"}, {"shared_limit", "2"}}));
  EXPECT_NO_THROW((void)create_policy("srtf", {{"sample", "first-started-in-slice"}, {"decide", "gpu"}}));
  EXPECT_THROW((void)create_policy("srtf", {{"decide", "sm"}}), InputError);
  EXPECT_THROW((void)create_policy("srtf-oracle", {{"decide", "gpu"}}), InputError);
}

// --- mpmax --------------------------------------------------------------------------------------------

TEST_F(PaiPolicyUnit, MpmaxSetsAsideRoomForOneBlockOfEachCoRunner) {
  make("mpmax", 2);
  const KernelId a = launch(kernel("a", 200, 10 * kUs, 128, 6400));  // R = 5 by registers
  EXPECT_EQ(resident(0, a), 5U);
  EXPECT_EQ(driver_->sm(SmId{0}).limit_for(a), 0U);
  run_until(1 * kUs);
  const KernelId b = launch(kernel("b", 40, 3 * kUs), 1);  // R = 8 by TB slots, 1024 registers
  // a keeps room for one block of b: (32768 - 1024) / 6400 = 4; b beside one block of a: 7 slots.
  EXPECT_EQ(driver_->sm(SmId{0}).limit_for(a), 4U);
  EXPECT_EQ(driver_->sm(SmId{1}).limit_for(b), 7U);
  // Nothing is evicted, and b does not fit in a's left-over registers (32768 - 32000 = 768 < 1024).
  EXPECT_EQ(resident(0, a), 5U);
  EXPECT_EQ(resident(0, b), 0U);
  run_until(10 * kUs);  // a's first wave ends: a refills to 4, b takes the rest
  EXPECT_EQ(resident(0, a), 4U);
  EXPECT_GE(resident(0, b), 1U);
  EXPECT_EQ(resident(1, a), 4U);
  EXPECT_GE(resident(1, b), 1U);
  // Once b has dispatched every block, a reclaims the room it set aside.
  while (driver_->kernel(b).has_tbs_to_issue()) ASSERT_TRUE(step());
  step();
  EXPECT_EQ(driver_->sm(SmId{0}).limit_for(a), 0U);
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  EXPECT_LT(end_of(b), end_of(a));
  EXPECT_GE(policy<MpmaxPolicy>().recomputations(), 3U);
}

TEST_F(PaiPolicyUnit, MpmaxIsFifoWhenKernelsCannotShareAnSm) {
  make("mpmax", 2, {}, 1);
  const KernelId a = launch(kernel("a", 64, 10 * kUs));
  const KernelId b = launch(kernel("b", 16, 10 * kUs), 1);
  EXPECT_EQ(driver_->sm(SmId{0}).limit_for(a), 0U);
  EXPECT_EQ(driver_->sm(SmId{0}).limit_for(b), 0U);
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  EXPECT_GE(driver_->kernel(b).start_ps, 30 * kUs);  // after a's blocks are all dispatched (4 waves)
}

// --- srtf ---------------------------------------------------------------------------------------------

TEST_F(PaiPolicyUnit, SrtfSamplesANewKernelOnOneSmThenHandsTheGpuToTheShorterOne) {
  make("srtf", 3);
  const KernelId a = launch(kernel("long", 8 * 3 * 20, 10 * kUs));  // 20 waves = 200 us alone
  run_until(1 * kUs);
  const KernelId b = launch(kernel("short", 8 * 3 * 2, 4 * kUs), 1);  // 2 waves = 8 us alone
  const auto& srtf = policy<ShortestFirstPolicy>();
  ASSERT_TRUE(srtf.sampling().has_value());
  EXPECT_EQ(*srtf.sampling(), b);
  const std::uint32_t sampler = index(srtf.sampling_sm());
  // The sampling SM stops issuing a; the others keep running it.
  run_until(10 * kUs);
  EXPECT_EQ(resident(sampler, a), 0U);
  EXPECT_EQ(resident(sampler, b), 8U);
  for (std::uint32_t s = 0; s < 3; ++s) {
    if (s != sampler) {
      EXPECT_EQ(resident(s, a), 8U) << s;
    }
  }
  run_until(14 * kUs);  // b's first block ended: sampled, predicted shorter, copied to every SM
  EXPECT_EQ(srtf.stats().samples_completed, 2U);  // a (its own first blocks) and b
  EXPECT_FALSE(srtf.sampling().has_value());
  run_until(20 * kUs);  // a's second wave ended: the other SMs hand over to b
  for (std::uint32_t s = 0; s < 3; ++s) EXPECT_EQ(resident(s, a), 0U) << s;
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  // b: sampled 10-14, then hand-off at 20; 48 blocks done by 28 us. fifo would end it after a (~200 us).
  EXPECT_LE(end_of(b), 30 * kUs);
  EXPECT_GT(end_of(a), 200 * kUs);
}

TEST_F(PaiPolicyUnit, SrtfKeepsTheRunningKernelWhenTheNewOneIsLonger) {
  make("srtf", 2);
  const KernelId a = launch(kernel("short", 8 * 2 * 4, 10 * kUs));     // 40 us
  const KernelId b = launch(kernel("long", 8 * 2 * 20, 10 * kUs), 1);  // 200 us
  run_until(25 * kUs);  // b sampled on one SM (first wave 0-10), predicted longer: back to a
  const auto& srtf = policy<ShortestFirstPolicy>();
  EXPECT_EQ(srtf.stats().samples_completed, 2U);
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  // a lost one SM for one wave to the sample: 64 blocks on 2 SMs, one wave late at most.
  EXPECT_LE(end_of(a), 50 * kUs);
  EXPECT_GT(end_of(b), end_of(a));
}

TEST_F(PaiPolicyUnit, SrtfSamplesQueuedKernelsOneAtATimeInArrivalOrder) {
  make("srtf", 4);
  launch(kernel("a", 8 * 4 * 10, 10 * kUs));
  run_until(1 * kUs);
  const KernelId b = launch(kernel("b", 8 * 4 * 5, 10 * kUs), 1);
  const KernelId c = launch(kernel("c", 8 * 4 * 1, 10 * kUs), 2);
  const auto& srtf = policy<ShortestFirstPolicy>();
  ASSERT_TRUE(srtf.sampling().has_value());
  EXPECT_EQ(*srtf.sampling(), b);
  EXPECT_EQ(srtf.stats().samples_started, 1U);
  run_until(10 * kUs);  // a's first wave ends; b's sample starts on its SM
  EXPECT_EQ(*srtf.sampling(), b);
  run_until(20 * kUs);  // b's first block ends: c is next
  ASSERT_TRUE(srtf.sampling().has_value());
  EXPECT_EQ(*srtf.sampling(), c);
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  // Shortest first: c, then b, then a.
  EXPECT_LT(end_of(c), end_of(b));
  EXPECT_LT(end_of(b), end_of(KernelId{0}));
}

// --- srtf-adaptive ------------------------------------------------------------------------------------

TEST_F(PaiPolicyUnit, SrtfAdaptiveSharesWhenSrtfWouldBeUnfair) {
  make("srtf-adaptive", 2);
  const KernelId a = launch(kernel("a", 8 * 2 * 20, 10 * kUs));
  run_until(1 * kUs);
  const KernelId b = launch(kernel("b", 8 * 2 * 22, 10 * kUs), 1);  // about as long: SRTF slows b 2x
  run_until(40 * kUs);
  const auto& p = policy<ShortestFirstPolicy>();
  EXPECT_TRUE(p.sharing());
  EXPECT_GE(p.stats().sharing_entries, 1U);
  // The fastest kernel is limited to 3 blocks per SM; the other gets the rest. As their remaining
  // times cross, the limit follows the fastest (equitable progress).
  EXPECT_EQ(driver_->sm(SmId{0}).limit_for(a), 3U);
  run_until(60 * kUs);
  for (std::uint32_t s = 0; s < 2; ++s) {
    const SmStatus& st = driver_->sm(SmId{s});
    EXPECT_EQ(st.limit_for(a) + st.limit_for(b), 3U) << s;  // exactly one of them is limited
    EXPECT_EQ(std::min(resident(s, a), resident(s, b)), 3U) << s;
    EXPECT_EQ(resident(s, a) + resident(s, b), 8U) << s;
  }
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  std::printf("sharing entries %llu, exits %llu, fastest kernel changes %llu\n",
              static_cast<unsigned long long>(p.stats().sharing_entries),
              static_cast<unsigned long long>(p.stats().sharing_exits),
              static_cast<unsigned long long>(p.stats().fastest_changes));
}

TEST_F(PaiPolicyUnit, SrtfAdaptiveStaysExclusiveWhenSrtfIsFair) {
  make("srtf-adaptive", 2);
  const KernelId a = launch(kernel("long", 8 * 2 * 40, 10 * kUs));
  run_until(1 * kUs);
  const KernelId b = launch(kernel("short", 8 * 2 * 2, 10 * kUs), 1);
  run_all();
  const auto& p = policy<ShortestFirstPolicy>();
  EXPECT_EQ(p.stats().sharing_entries, 0U);
  EXPECT_GT(p.stats().evaluations, 0U);
  EXPECT_LT(end_of(b), end_of(a));
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

// --- oracles ------------------------------------------------------------------------------------------

TEST_F(PaiPolicyUnit, SjfAndLjfOrderKernelsByIsolatedRuntime) {
  for (const char* name : {"sjf", "ljf"}) {
    make(name, 2);
    const KernelId first = launch(kernel("first", 16 * 6, 10 * kUs));  // 60 us alone
    run_until(1 * kUs);
    const KernelId shortk = launch(kernel("short", 16 * 2, 10 * kUs), 1);   // 20 us
    const KernelId medium = launch(kernel("medium", 16 * 4, 10 * kUs), 2);  // 40 us
    run_all();
    EXPECT_NO_THROW(driver_->check_final_invariants());
    if (std::string(name) == "sjf") {
      EXPECT_LT(end_of(shortk), end_of(medium)) << name;
      EXPECT_LT(end_of(medium), end_of(first)) << name;
      EXPECT_EQ(driver_->kernel(shortk).start_ps, 10 * kUs) << name;  // hand-off after one wave
    } else {
      EXPECT_LT(end_of(first), end_of(medium)) << name;
      EXPECT_LT(end_of(medium), end_of(shortk)) << name;
    }
  }
}

TEST_F(PaiPolicyUnit, SrtfOracleUsesRemainingNotTotalRuntime) {
  make("srtf-oracle", 2);
  const KernelId a = launch(kernel("a", 16 * 10, 10 * kUs));    // 100 us alone
  run_until(75 * kUs);                                          // 7 of 10 waves done: 30 us left
  const KernelId b = launch(kernel("b", 16 * 5, 10 * kUs), 1);  // 50 us: longer than what a has left
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  EXPECT_EQ(end_of(a), 100 * kUs);  // not disturbed
  EXPECT_EQ(end_of(b), 150 * kUs);
}

TEST_F(PaiPolicyUnit, SjfHandsOverWithoutPreemption) {
  make("sjf", 1);
  const KernelId a = launch(kernel("a", 8 * 10, 10 * kUs));
  run_until(1 * kUs);
  const KernelId b = launch(kernel("b", 8, 2 * kUs), 1);
  EXPECT_EQ(resident(0, a), 8U);  // a's blocks keep running
  EXPECT_EQ(resident(0, b), 0U);
  run_all();
  EXPECT_EQ(driver_->kernel(b).start_ps, 10 * kUs);
  EXPECT_EQ(end_of(b), 12 * kUs);
  EXPECT_EQ(driver_->tbs_reissued(), 0U);
}

}  // namespace
}  // namespace gpumux
