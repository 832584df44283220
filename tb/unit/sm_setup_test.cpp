// The SM's setup for a kernel (sm/sm_setup.h, Tanasic 3.1 and Fig. 3): when a thread block may begin.
// `charged`: the SM was preempted since its last thread block (only then does a setup cost time).

#include <gtest/gtest.h>

#include "sm/sm_setup.h"

namespace gpumux {
namespace {

constexpr TimePs kSetup = 500'000;  // 0.5 us

TEST(SmSetup, AThreadBlockOfANewKernelWaitsForTheSetupAndItsKernelMatesForItsEnd) {
  SmSetup setup(kSetup, 1);
  EXPECT_EQ(setup.begin(KernelId{3}, 1'000, true), 1'000 + kSetup);
  // The same kernel while its setup is under way: the setup's end; once it is done: at once.
  EXPECT_EQ(setup.begin(KernelId{3}, 2'000, true), 1'000 + kSetup);
  EXPECT_EQ(setup.begin(KernelId{3}, 9'000'000, true), 9'000'000);
  EXPECT_EQ(setup.setups(), 1U);
  EXPECT_EQ(setup.setup_total_ps(), kSetup);
}

TEST(SmSetup, ChangingKernelSetsTheSmUpAgainAndGoingBackDoesToo) {
  SmSetup setup(kSetup, 1);
  setup.begin(KernelId{1}, 0, true);
  EXPECT_EQ(setup.begin(KernelId{2}, 1'000'000, true), 1'000'000 + kSetup);
  // One slot: kernel 1's setup was replaced by kernel 2's.
  EXPECT_EQ(setup.begin(KernelId{1}, 2'000'000, true), 2'000'000 + kSetup);
  EXPECT_EQ(setup.setups(), 3U);
}

TEST(SmSetup, SetupsAreDoneOneAfterAnother) {
  SmSetup setup(kSetup, 2);
  EXPECT_EQ(setup.begin(KernelId{1}, 0, true), kSetup);
  // Requested while the first runs: starts when it ends.
  EXPECT_EQ(setup.begin(KernelId{2}, 100, true), 2 * kSetup);
  EXPECT_EQ(setup.setup_total_ps(), kSetup + (2 * kSetup - 100));
}

TEST(SmSetup, AnSmHoldsTheSetupsOfItsLastKernelsUpToItsSlots) {
  SmSetup setup(kSetup, 2);
  setup.begin(KernelId{1}, 0, true);
  setup.begin(KernelId{2}, 0, true);
  const TimePs later = 10'000'000;
  EXPECT_EQ(setup.begin(KernelId{1}, later, true), later);  // still set up (1 becomes the most recent)
  EXPECT_EQ(setup.begin(KernelId{3}, later, true), later + kSetup);  // replaces 2, the least recent
  EXPECT_EQ(setup.begin(KernelId{1}, later + kSetup, true), later + kSetup);
  EXPECT_EQ(setup.begin(KernelId{2}, later + kSetup, true), later + 2 * kSetup);
}

TEST(SmSetup, OnlyASetupAfterAPreemptionCostsTimeButEverySetupIsRemembered) {
  SmSetup setup(kSetup, 1);
  // Kernels started without a preemption: set up within their calibrated time, no wait, not counted.
  EXPECT_EQ(setup.begin(KernelId{1}, 0, false), 0);
  EXPECT_EQ(setup.begin(KernelId{2}, 1'000, false), 1'000);
  EXPECT_EQ(setup.setups(), 0U);
  // Preempted, then handed kernel 1 (not set up: the SM holds kernel 2's setup): it waits.
  EXPECT_EQ(setup.begin(KernelId{1}, 2'000, true), 2'000 + kSetup);
  // Preempted, then handed back the kernel it is set up for: nothing to set up.
  EXPECT_EQ(setup.begin(KernelId{1}, 9'000'000, true), 9'000'000);
  EXPECT_EQ(setup.setups(), 1U);
  EXPECT_EQ(setup.setup_total_ps(), kSetup);
}

TEST(SmSetup, AFreeSetupNeverDelaysAThreadBlock) {
  SmSetup setup(0, 1);
  for (std::uint32_t k = 0; k < 5; ++k) {
    const TimePs now = TimePs{1'000} * k;
    EXPECT_EQ(setup.begin(KernelId{k % 2}, now, true), now);
  }
  EXPECT_EQ(setup.setups(), 5U);
  EXPECT_EQ(setup.setup_total_ps(), 0);
}

}  // namespace
}  // namespace gpumux
