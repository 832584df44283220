// The intra-core concurrent kernel policies of Awatramani chapter 5 (interleaved, leftover) with the real
// SM driver over timed fake SMs (Fermi-like: 8 TB slots, 48 warps, several kernels per SM): the kernel
// status block (Fig. 5.6), the core status block (Fig. 5.7), the partition (5.4.2, 5.5.1) and the exits
// (5.4.3).

#include <gtest/gtest.h>

#include "core/error.h"
#include "policy/intracore.h"
#include "unit/timed_engine.h"

namespace gpumux {
namespace {

using Ksb = IntracorePolicy::KsbEntry;

constexpr TimePs kUs = 1000000;  // 1 us in ps

class IntracoreUnit : public test::TimedEngineTest {
 protected:
  /// An 8-warp CTA as 5.3's kernels have (256 threads, 4096 registers): 6 per core by warps (48).
  static std::shared_ptr<KernelDesc> cta8(const std::string& name, std::uint32_t tbs, TimePs tb_ps) {
    return kernel(name, tbs, tb_ps, 256, 4096);
  }
};

TEST(IntracoreRegistry, BothMappingsAreRegisteredAndCheckTheirOptions) {
  EXPECT_EQ(create_policy("interleaved")->name(), "interleaved");
  EXPECT_EQ(create_policy("leftover")->name(), "leftover");
  EXPECT_NO_THROW((void)create_policy("interleaved", {{"ksb_entries", "2"}, {"gather_ns", "500"}}));
  EXPECT_THROW((void)create_policy("interleaved", {{"ksb_entries", "0"}}), InputError);
  EXPECT_THROW((void)create_policy("interleaved", {{"ksb_entries", "many"}}), InputError);
  EXPECT_THROW((void)create_policy("leftover", {{"gather_ns", "-1"}}), InputError);
  EXPECT_THROW((void)create_policy("interleaved", {{"ksb", "4"}}), InputError);
}

TEST_F(IntracoreUnit, InterleavedSplitsEachCoreThenGivesTheLongerKernelTheRest) {
  make("interleaved", 2);
  const KernelId a = launch(cta8("add", 200, 10 * kUs));
  const auto& policy = this->policy<IntracorePolicy>();
  // Alone: the whole core (6 CTAs by warps), no limit.
  EXPECT_EQ(resident(0, a), 6U);
  EXPECT_EQ(driver_->sm(SmId{0}).limit_for(a), 0U);
  const Ksb& ka = policy.kernel_status_block()[0];
  EXPECT_TRUE(ka.valid);
  EXPECT_EQ(ka.kernel, a);
  EXPECT_EQ(ka.grid, 200U);
  EXPECT_EQ(ka.next_block, 12U);
  EXPECT_EQ(ka.registers, 4096U);
  EXPECT_EQ(ka.active_cores, 2U);  // mapped to every core (5.4.1)
  ASSERT_EQ(policy.core_status_block()[1].queue.size(), 1U);
  EXPECT_EQ(policy.core_status_block()[1].queue[0].max_blocks, 6U);
  EXPECT_EQ(policy.core_status_block()[1].queue[0].active_blocks, 6U);

  run_until(1 * kUs);
  const KernelId b = launch(cta8("stream", 24, 3 * kUs), 1);
  // Two kernels with blocks left: half of each core each, 24 warps = 3 CTAs; nothing is evicted.
  for (std::uint32_t s = 0; s < 2; ++s) {
    EXPECT_EQ(driver_->sm(SmId{s}).limit_for(a), 3U) << s;
    EXPECT_EQ(driver_->sm(SmId{s}).limit_for(b), 3U) << s;
    const auto& queue = policy.core_status_block()[s].queue;
    ASSERT_EQ(queue.size(), 2U);
    EXPECT_EQ(queue[1].kernel, b);
    EXPECT_EQ(queue[1].max_blocks, 3U);
  }
  EXPECT_EQ(resident(0, a), 6U);
  EXPECT_EQ(resident(0, b), 0U);
  EXPECT_EQ(policy.kernel_status_block()[1].active_cores, 2U);

  run_until(10 * kUs);  // a's first wave ends: a refills to 3 only, b takes the other 3
  for (std::uint32_t s = 0; s < 2; ++s) {
    EXPECT_EQ(resident(s, a), 3U) << s;
    EXPECT_EQ(resident(s, b), 3U) << s;
    // The CSB's active blocks are the SMST's residents.
    EXPECT_EQ(policy.core_status_block()[s].find(a)->active_blocks, driver_->sm(SmId{s}).resident(a)->tbs);
    EXPECT_EQ(policy.core_status_block()[s].find(b)->active_blocks, driver_->sm(SmId{s}).resident(b)->tbs);
  }

  // 5.5.1: once every block of the shorter kernel is issued, the longer one gets the whole core back.
  while (driver_->kernel(b).has_tbs_to_issue()) ASSERT_TRUE(step());
  step();
  EXPECT_FALSE(policy.kernel_status_block()[1].active);
  EXPECT_EQ(driver_->sm(SmId{0}).limit_for(a), 0U);
  EXPECT_EQ(policy.core_status_block()[0].find(a)->max_blocks, 6U);
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  EXPECT_LT(end_of(b), end_of(a));
  // 5.4.3: every entry freed, every queue empty.
  for (const Ksb& e : policy.kernel_status_block()) EXPECT_FALSE(e.valid);
  for (const auto& core : policy.core_status_block()) EXPECT_TRUE(core.queue.empty());
  EXPECT_GE(policy.remaps(), 4U);  // a alone, a+b, a alone again, none
}

// Fig. 5.7's core 16: mapped (assigned) to the next kernel, still finishing blocks of the previous one,
// and launching none until they are done (5.4.1). fifo would put the next kernel's blocks beside them.
TEST_F(IntracoreUnit, LeftoverCoreFinishesItsActiveKernelBeforeTheAssignedOne) {
  make("leftover", 2);
  const KernelId a = launch(cta8("k9", 14, 10 * kUs));  // 12 on the cores, 2 left
  const KernelId b = launch(cta8("k10", 30, 4 * kUs), 1);
  const auto& policy = this->policy<IntracorePolicy>();
  for (std::uint32_t s = 0; s < 2; ++s) {
    EXPECT_EQ(policy.core_status_block()[s].assigned_kernel, a) << s;
    EXPECT_EQ(resident(s, a), 6U) << s;
    EXPECT_EQ(resident(s, b), 0U) << s;
  }
  // At 10 us a's first blocks end, core 0 first: it takes a's last two blocks. Both cores are then
  // assigned b (a has no block left to launch); core 1 runs b at once, core 0 still finishes a.
  run_until(10 * kUs);
  EXPECT_FALSE(driver_->kernel(a).has_tbs_to_issue());
  const auto& core0 = policy.core_status_block()[0];
  const auto& core1 = policy.core_status_block()[1];
  EXPECT_EQ(core0.assigned_kernel, b);
  EXPECT_EQ(core0.active_kernel, a);  // Fig. 5.7's core 16
  EXPECT_EQ(resident(0, a), 2U);
  EXPECT_EQ(resident(0, b), 0U);  // room for 4 more, but no block of b beside a's
  ASSERT_NE(core0.find(a), nullptr);
  EXPECT_EQ(core0.find(a)->active_blocks, 2U);
  EXPECT_EQ(core1.assigned_kernel, b);
  EXPECT_EQ(core1.active_kernel, b);
  EXPECT_EQ(resident(1, b), 6U);
  EXPECT_EQ(policy.kernel_status_block()[0].active_cores, 1U);  // a: only core 0 still holds it
  EXPECT_FALSE(policy.kernel_status_block()[0].active);
  run_until(19 * kUs);
  EXPECT_EQ(resident(0, b), 0U);
  run_until(20 * kUs);  // a's last blocks end: core 0 takes b, a's entry is freed (5.4.3)
  EXPECT_GT(resident(0, b), 0U);
  EXPECT_EQ(core0.active_kernel, b);
  EXPECT_FALSE(policy.kernel_status_block()[0].valid);
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

// 5.4.1's round-robin mapping: core c runs the (c mod n)-th kernel with blocks left, so two kernels get
// disjoint cores; when one has launched all its blocks, its cores are reassigned and each takes the other
// kernel once its own blocks have drained.
TEST_F(IntracoreUnit, RoundRobinMappingGivesConcurrentKernelsDisjointCores) {
  EXPECT_THROW(make("leftover", 4, {{"core_mapping", "spatial"}}), InputError);
  EXPECT_THROW(make("interleaved", 4, {{"core_mapping", "round-robin"}}), InputError) << "leftover only";
  make("leftover", 4, {{"core_mapping", "round-robin"}});
  const KernelId a = launch(cta8("a", 100, 10 * kUs));  // alone: every core, 6 blocks each
  const auto& policy = this->policy<IntracorePolicy>();
  for (std::uint32_t s = 0; s < 4; ++s) EXPECT_EQ(resident(s, a), 6U) << s;
  run_until(1 * kUs);
  const KernelId b = launch(cta8("b", 12, 4 * kUs), 1);
  // Two kernels with blocks left: a on cores 0 and 2, b on cores 1 and 3, which still hold a's blocks
  // and launch nothing until they end (5.4.1).
  for (std::uint32_t s = 0; s < 4; ++s) {
    EXPECT_EQ(policy.core_status_block()[s].assigned_kernel, s % 2 == 0 ? a : b) << s;
    EXPECT_EQ(resident(s, a), 6U) << s;
    EXPECT_EQ(resident(s, b), 0U) << s;
  }
  EXPECT_EQ(policy.core_status_block()[1].active_kernel, a);
  run_until(10 * kUs);  // a's first wave ends: cores 0 and 2 refill with a, 1 and 3 take all of b
  EXPECT_EQ(resident(0, a), 6U);
  EXPECT_EQ(resident(2, a), 6U);
  EXPECT_EQ(resident(1, b), 6U);
  EXPECT_EQ(resident(3, b), 6U);
  EXPECT_EQ(resident(1, a), 0U);
  EXPECT_FALSE(driver_->kernel(b).has_tbs_to_issue());
  // b has launched every block: all cores are a's again, and cores 1 and 3 take a once b's blocks end.
  run_until(14 * kUs);
  for (std::uint32_t s = 0; s < 4; ++s) EXPECT_EQ(policy.core_status_block()[s].assigned_kernel, a) << s;
  EXPECT_EQ(resident(1, b), 0U);
  EXPECT_EQ(resident(1, a), 6U);
  EXPECT_EQ(resident(3, a), 6U);
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  EXPECT_LT(end_of(b), end_of(a));
  for (const Ksb& e : policy.kernel_status_block()) EXPECT_FALSE(e.valid);
}

TEST_F(IntracoreUnit, AFullKernelStatusBlockHoldsTheLaunchUntilAnEntryIsFreed) {
  make("interleaved", 2, {{"ksb_entries", "1"}});
  const KernelId a = launch(cta8("a", 12, 5 * kUs));
  const KernelId b = launch(cta8("b", 12, 5 * kUs), 1);
  const auto& policy = this->policy<IntracorePolicy>();
  ASSERT_EQ(policy.waiting_for_ksb().size(), 1U);
  EXPECT_EQ(policy.waiting_for_ksb().front(), b);
  EXPECT_EQ(resident(0, b), 0U);
  EXPECT_EQ(resident(0, a), 6U);  // alone in the KSB: the whole core
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  EXPECT_TRUE(policy.waiting_for_ksb().empty());
  EXPECT_GE(driver_->kernel(b).start_ps, end_of(a));
}

TEST_F(IntracoreUnit, MoreKernelsThanACoreMayHoldShareItOldestFirst) {
  make("interleaved", 1, {}, 2);  // two kernels per core at most
  const KernelId a = launch(cta8("a", 30, 5 * kUs));
  const KernelId b = launch(cta8("b", 30, 5 * kUs), 1);
  const KernelId c = launch(cta8("c", 6, 5 * kUs), 2);
  const auto& core = policy<IntracorePolicy>().core_status_block()[0];
  EXPECT_EQ(core.find(a)->max_blocks, 3U);
  EXPECT_EQ(core.find(b)->max_blocks, 3U);
  EXPECT_EQ(core.find(c)->max_blocks, 0U);  // waits for a or b to launch its last block
  run_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
  EXPECT_GT(driver_->kernel(c).start_ps, driver_->kernel(b).start_ps);
}

}  // namespace
}  // namespace gpumux
