// The DMA queue in front of a DMA engine (frontend/dma_queue.h) under both copy policies: fcfs takes
// copies in arrival order; npq the highest process priority, ties in arrival order. It holds at most one
// copy per hardware queue (the dispatcher's in-order rule), and the names of the policies.

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "frontend/copy_policy.h"
#include "frontend/dma_queue.h"

namespace gpumux {
namespace {

/// Copy `id` of process `process` from hardware queue `queue`.
GpuCommand copy(std::uint64_t id, std::uint32_t process, std::uint32_t queue) {
  GpuCommand c;
  c.id = id;
  c.kind = CommandKind::kHostToDevice;
  c.process = ProcessId{process};
  c.queue = queue;
  c.bytes = 4096;
  return c;
}

/// The ids in the order the queue hands the copies out.
std::vector<std::uint64_t> drain(DmaQueue& q) {
  std::vector<std::uint64_t> ids;
  while (!q.empty()) ids.push_back(q.pop_next().id);
  return ids;
}

// Priorities of processes 0..3: 0, 2, 1, 2.
const std::vector<int> kPriorities = {0, 2, 1, 2};

void push_mixed(DmaQueue& q) {
  q.push(copy(1, 0, 0));  // priority 0
  q.push(copy(2, 2, 1));  // priority 1
  q.push(copy(3, 1, 2));  // priority 2
  q.push(copy(4, 0, 3));  // priority 0
  q.push(copy(5, 3, 4));  // priority 2, after copy 3
}

TEST(DmaQueue, FcfsTakesCopiesInArrivalOrder) {
  DmaQueue q(CopyPolicy::kFcfs, kPriorities);
  push_mixed(q);
  EXPECT_EQ(q.size(), 5U);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
}

TEST(DmaQueue, NpqTakesTheHighestPriorityFirstTiesInArrivalOrder) {
  DmaQueue q(CopyPolicy::kNpq, kPriorities);
  push_mixed(q);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{3, 5, 2, 1, 4}));
}

TEST(DmaQueue, NpqWithOnePriorityIsFcfs) {
  DmaQueue q(CopyPolicy::kNpq, {7, 7, 7});
  for (std::uint32_t id = 1; id <= 6; ++id) q.push(copy(id, id % 3, id));
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(DmaQueue, NpqChoosesAmongTheCopiesWaitingWhenTheEngineIsFree) {
  // A copy taken is gone: a higher-priority copy arriving later waits for the next choice only.
  DmaQueue q(CopyPolicy::kNpq, kPriorities);
  q.push(copy(1, 0, 0));
  q.push(copy(2, 2, 1));
  EXPECT_EQ(q.pop_next().id, 2U);  // priority 1 before 0
  q.push(copy(3, 1, 2));           // priority 2 arrives while copy 2 runs
  EXPECT_EQ(q.pop_next().id, 3U);  // ... and goes before the older priority-0 copy
  EXPECT_EQ(q.pop_next().id, 1U);
  EXPECT_TRUE(q.empty());
}

TEST(DmaQueue, OneCopyPerHardwareQueue) {
  // The dispatcher stops inspecting a hardware queue after issuing its command (Tanasic 2.2), so two
  // waiting copies of one queue mean the in-order rule broke.
  DmaQueue q(CopyPolicy::kNpq, kPriorities);
  q.push(copy(1, 0, 5));
  EXPECT_THROW(q.push(copy(2, 1, 5)), InvariantViolation);
  EXPECT_EQ(q.pop_next().id, 1U);
  q.push(copy(3, 1, 5));  // once taken, the queue's next command may come
  EXPECT_EQ(q.pop_next().id, 3U);
}

TEST(DmaQueue, RejectsUnknownProcessAndEmptyPop) {
  DmaQueue q(CopyPolicy::kFcfs, {0});
  EXPECT_THROW(q.push(copy(1, 1, 0)), InvariantViolation);
  EXPECT_THROW((void)q.pop_next(), InvariantViolation);
}

TEST(CopyPolicy, Names) {
  EXPECT_STREQ(to_string(CopyPolicy::kFcfs), "fcfs");
  EXPECT_STREQ(to_string(CopyPolicy::kNpq), "npq");
  EXPECT_EQ(copy_policy_named("fcfs"), CopyPolicy::kFcfs);
  EXPECT_EQ(copy_policy_named("npq"), CopyPolicy::kNpq);
  for (const char* bad : {"", "NPQ", "ppq", "fifo", "npq "}) EXPECT_FALSE(copy_policy_named(bad)) << bad;
  ASSERT_EQ(copy_policies().size(), 2U);
  EXPECT_EQ(copy_policies()[0].policy, CopyPolicy::kFcfs);  // the default, listed first
}

}  // namespace
}  // namespace gpumux
