// Warp schedulers (sm/warp_scheduler/, Awatramani ch. 3): scripted sequences that show each
// scheduler's defining behaviour against a fake SM, the registry, and a property test over random
// event sequences (no warp lost or duplicated; only warps that can issue, and for two-level only
// ready-queue warps, are selected; identical sequences give identical decisions).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "sm/warp_scheduler/gto.h"
#include "sm/warp_scheduler/lrr.h"
#include "sm/warp_scheduler/phase_aware.h"
#include "sm/warp_scheduler/registry.h"
#include "sm/warp_scheduler/two_level.h"

namespace gpumux {
namespace {

/// The SM as a warp scheduler sees it: per slot, whether the warp can issue, its phase distance and
/// its phase length, set by the test.
class FakeQuery final : public WarpQuery {
 public:
  explicit FakeQuery(std::uint32_t capacity)
      : can_(capacity, 1), distance_(capacity, 0), length_(capacity, 0) {}
  [[nodiscard]] bool can_issue(WarpSlot warp) const override { return can_.at(warp) != 0; }
  [[nodiscard]] std::uint32_t phase_distance(WarpSlot warp) const override { return distance_.at(warp); }
  [[nodiscard]] std::uint32_t phase_length(WarpSlot warp) const override { return length_.at(warp); }

  void set_can(WarpSlot warp, bool can) { can_.at(warp) = can ? 1 : 0; }
  void block_all() { std::fill(can_.begin(), can_.end(), 0); }
  void set_distance(WarpSlot warp, std::uint32_t d) { distance_.at(warp) = d; }
  void set_length(WarpSlot warp, std::uint32_t l) { length_.at(warp) = l; }

 private:
  std::vector<std::uint8_t> can_;
  std::vector<std::uint32_t> distance_;
  std::vector<std::uint32_t> length_;
};

constexpr int kNone = -1;

/// `n` decisions: select, and when a warp is chosen, tell the scheduler it issued. kNone for a
/// decision with no warp.
std::vector<int> issue(WarpScheduler& s, const FakeQuery& q, int n) {
  std::vector<int> chosen;
  for (int i = 0; i < n; ++i) {
    const auto w = s.select(q);
    if (w) s.issued(*w);
    chosen.push_back(w ? static_cast<int>(*w) : kNone);
  }
  return chosen;
}

WarpSchedulerSetup setup(std::uint32_t capacity, std::uint32_t ready = 6) {
  WarpSchedulerSetup s;
  s.capacity = capacity;
  s.ready_queue_size = ready;
  return s;
}

using Slots = std::vector<WarpSlot>;
using Picks = std::vector<int>;

// ---- lrr -----------------------------------------------------------------------------------------

TEST(LrrScheduler, RotatesPastTheWarpThatIssued) {
  FakeQuery q(4);
  LrrScheduler s(setup(4));
  for (WarpSlot w = 0; w < 4; ++w) s.add_warp(w, w, q);
  EXPECT_EQ(issue(s, q, 6), (Picks{0, 1, 2, 3, 0, 1}));
}

TEST(LrrScheduler, SkipsWarpsThatCannotIssueAndTheyKeepTheirTurn) {
  FakeQuery q(4);
  LrrScheduler s(setup(4));
  for (WarpSlot w = 0; w < 4; ++w) s.add_warp(w, w, q);
  q.set_can(1, false);
  EXPECT_EQ(issue(s, q, 4), (Picks{0, 2, 3, 0}));
  // Warp 1 can issue again: it comes right after warp 0, which issued last ("loose" round robin).
  q.set_can(1, true);
  EXPECT_EQ(issue(s, q, 3), (Picks{1, 2, 3}));
}

TEST(LrrScheduler, RotatesBySlotNotByAgeAndIgnoresEmptySlots) {
  FakeQuery q(8);
  LrrScheduler s(setup(8));
  s.add_warp(6, 0, q);  // the oldest warp sits in a high slot
  s.add_warp(2, 1, q);
  s.add_warp(4, 2, q);
  EXPECT_EQ(issue(s, q, 4), (Picks{2, 4, 6, 2}));
}

TEST(LrrScheduler, NothingToIssueIsNone) {
  FakeQuery q(4);
  LrrScheduler s(setup(4));
  EXPECT_EQ(s.select(q), std::nullopt);  // no warps
  s.add_warp(0, 0, q);
  s.add_warp(1, 1, q);
  q.block_all();
  EXPECT_EQ(s.select(q), std::nullopt);
}

TEST(LrrScheduler, RemovedWarpIsNeverSelected) {
  FakeQuery q(4);
  LrrScheduler s(setup(4));
  for (WarpSlot w = 0; w < 3; ++w) s.add_warp(w, w, q);
  EXPECT_EQ(issue(s, q, 1), (Picks{0}));
  s.remove_warp(1);
  EXPECT_EQ(issue(s, q, 3), (Picks{2, 0, 2}));
}

// ---- gto -----------------------------------------------------------------------------------------

TEST(GtoScheduler, StaysGreedyThenFallsBackToTheOldest) {
  FakeQuery q(4);
  GtoScheduler s(setup(4));
  // Ages deliberately not in slot order: slot 2 is the oldest, then 0, then 1.
  s.add_warp(2, 10, q);
  s.add_warp(0, 11, q);
  s.add_warp(1, 12, q);
  EXPECT_EQ(issue(s, q, 3), (Picks{2, 2, 2}));  // the oldest, then greedy
  q.set_can(2, false);
  EXPECT_EQ(issue(s, q, 2), (Picks{0, 0}));  // the oldest that can issue, then greedy on it
  q.set_can(2, true);
  // Greedy: warp 0 keeps issuing although the older warp 2 could issue again.
  EXPECT_EQ(issue(s, q, 2), (Picks{0, 0}));
  q.set_can(0, false);
  EXPECT_EQ(issue(s, q, 2), (Picks{2, 2}));  // back to the oldest, not to the next slot
}

TEST(GtoScheduler, RemovedGreedyWarpAndReusedSlotAreNotGreedy) {
  FakeQuery q(4);
  GtoScheduler s(setup(4));
  s.add_warp(0, 1, q);
  s.add_warp(1, 2, q);
  EXPECT_EQ(issue(s, q, 1), (Picks{0}));
  q.set_can(0, false);
  EXPECT_EQ(issue(s, q, 1), (Picks{1}));  // greedy on 1 now
  s.remove_warp(1);
  s.add_warp(1, 3, q);  // a younger warp in the same slot
  q.set_can(0, true);
  EXPECT_EQ(issue(s, q, 1), (Picks{0}));  // the oldest, not the slot that issued last
}

TEST(GtoScheduler, NothingToIssueIsNone) {
  FakeQuery q(2);
  GtoScheduler s(setup(2));
  s.add_warp(0, 0, q);
  s.add_warp(1, 1, q);
  EXPECT_EQ(issue(s, q, 1), (Picks{0}));
  q.block_all();
  EXPECT_EQ(s.select(q), std::nullopt);
}

// ---- phase-aware (single level) ------------------------------------------------------------------

TEST(PhaseAwareScheduler, PicksTheLowestPhaseDistanceTiesToTheOldest) {
  FakeQuery q(4);
  PhaseAwareScheduler s(setup(4));
  s.add_warp(0, 3, q);
  s.add_warp(1, 2, q);
  s.add_warp(2, 1, q);
  s.add_warp(3, 0, q);
  q.set_distance(0, 40);
  q.set_distance(1, 12);
  q.set_distance(2, 12);
  q.set_distance(3, 90);
  EXPECT_EQ(s.select(q), 2U);  // 1 and 2 are nearest their phase end; 2 is older
  q.set_can(2, false);
  EXPECT_EQ(s.select(q), 1U);
  q.set_can(1, false);
  EXPECT_EQ(s.select(q), 0U);  // 40 before the oldest warp's 90
  q.set_distance(3, 40);
  EXPECT_EQ(s.select(q), 3U);  // tie at 40: the oldest
}

TEST(PhaseAwareScheduler, IsNotGreedyWhenAnotherWarpIsNearerItsPhaseEnd) {
  FakeQuery q(2);
  PhaseAwareScheduler s(setup(2));
  s.add_warp(0, 0, q);
  s.add_warp(1, 1, q);
  q.set_distance(0, 10);
  q.set_distance(1, 20);
  EXPECT_EQ(issue(s, q, 1), (Picks{0}));
  q.set_distance(0, 100);  // warp 0 crossed into a long phase
  EXPECT_EQ(issue(s, q, 1), (Picks{1}));
  q.block_all();
  EXPECT_EQ(s.select(q), std::nullopt);
}

// ---- two-level -----------------------------------------------------------------------------------

using Priority = TwoLevelScheduler::Priority;
using Inner = TwoLevelScheduler::Inner;
using Queue = TwoLevelScheduler::Queue;

TEST(TwoLevelScheduler, OnlyReadyQueueWarpsIssue) {
  FakeQuery q(8);
  TwoLevelScheduler s(Priority::kRoundRobin, Inner::kLrr, setup(8, 3));
  for (WarpSlot w = 0; w < 5; ++w) s.add_warp(w, w, q);
  EXPECT_EQ(s.ready_queue(), (Slots{0, 1, 2}));
  EXPECT_EQ(s.active_queue(), (Slots{3, 4}));
  // Round robin inside the ready queue; warps 3 and 4 never issue although they could.
  EXPECT_EQ(issue(s, q, 5), (Picks{0, 1, 2, 0, 1}));
  q.set_can(0, false);
  q.set_can(1, false);
  q.set_can(2, false);
  EXPECT_EQ(s.select(q), std::nullopt);
}

TEST(TwoLevelScheduler, WaitingWarpLeavesForPendingAndTheActiveHeadReplacesIt) {
  FakeQuery q(8);
  TwoLevelScheduler s(Priority::kRoundRobin, Inner::kLrr, setup(8, 3));
  for (WarpSlot w = 0; w < 5; ++w) s.add_warp(w, w, q);
  s.long_latency_wait(1);
  EXPECT_EQ(s.ready_queue(), (Slots{0, 2, 3}));
  EXPECT_EQ(s.active_queue(), (Slots{4}));
  EXPECT_EQ(s.pending_queue(), (Slots{1}));
  EXPECT_EQ(s.queue_of(1), Queue::kPending);
  EXPECT_EQ(issue(s, q, 4), (Picks{0, 2, 3, 0}));
  // Its waits complete: it joins the tail of the active queue (round robin does not sort).
  s.long_latency_done(1, q);
  EXPECT_EQ(s.active_queue(), (Slots{4, 1}));
  EXPECT_TRUE(s.pending_queue().empty());
  s.long_latency_wait(2);
  EXPECT_EQ(s.active_queue(), (Slots{1}));
  s.long_latency_wait(3);
  EXPECT_EQ(s.ready_queue(), (Slots{0, 4, 1}));
  EXPECT_EQ(s.pending_queue(), (Slots{2, 3}));
  // A wait or done that does not apply changes nothing.
  s.long_latency_wait(3);
  s.long_latency_done(0, q);
  EXPECT_EQ(s.ready_queue(), (Slots{0, 4, 1}));
  EXPECT_EQ(s.pending_queue(), (Slots{2, 3}));
}

TEST(TwoLevelScheduler, LrrInsideTheReadyQueueRotatesAndNewcomersGoLast) {
  FakeQuery q(8);
  TwoLevelScheduler s(Priority::kRoundRobin, Inner::kLrr, setup(8, 3));
  for (WarpSlot w = 0; w < 4; ++w) s.add_warp(w, w, q);
  EXPECT_EQ(issue(s, q, 1), (Picks{0}));
  EXPECT_EQ(s.ready_queue(), (Slots{1, 2, 0}));  // the warp that issued has the lowest priority
  s.long_latency_wait(1);
  EXPECT_EQ(s.ready_queue(), (Slots{2, 0, 3}));  // the replacement enters last
  EXPECT_EQ(issue(s, q, 3), (Picks{2, 0, 3}));
}

TEST(TwoLevelScheduler, GtoSortsTheActiveQueueByAge) {
  FakeQuery q(8);
  TwoLevelScheduler s(Priority::kOldest, Inner::kLrr, setup(8, 2));
  for (WarpSlot w = 0; w < 5; ++w) s.add_warp(w, 100 + w, q);
  EXPECT_EQ(s.ready_queue(), (Slots{0, 1}));
  EXPECT_EQ(s.active_queue(), (Slots{2, 3, 4}));
  s.long_latency_wait(0);
  s.long_latency_wait(1);
  EXPECT_EQ(s.ready_queue(), (Slots{2, 3}));
  s.long_latency_done(1, q);
  s.long_latency_done(0, q);
  // The oldest warps go back to the head, in launch order, ahead of younger warp 4.
  EXPECT_EQ(s.active_queue(), (Slots{0, 1, 4}));
  s.long_latency_wait(3);
  EXPECT_EQ(s.ready_queue(), (Slots{2, 0}));

  // The same events under round robin leave the returning warps behind warp 4.
  TwoLevelScheduler rr(Priority::kRoundRobin, Inner::kLrr, setup(8, 2));
  for (WarpSlot w = 0; w < 5; ++w) rr.add_warp(w, 100 + w, q);
  rr.long_latency_wait(0);
  rr.long_latency_wait(1);
  rr.long_latency_done(1, q);
  rr.long_latency_done(0, q);
  EXPECT_EQ(rr.active_queue(), (Slots{4, 1, 0}));
}

TEST(TwoLevelScheduler, PhaseAwareSortsTheActiveQueueByNextPhaseLengthTiesOldest) {
  FakeQuery q(8);
  TwoLevelScheduler s(Priority::kShortestPhase, Inner::kLrr, setup(8, 1));
  // Phase lengths as the warps enter: warp 0 in the ready queue, the others queue shortest first.
  const std::uint32_t first_phase[] = {50, 50, 30, 80, 30};
  for (WarpSlot w = 0; w < 5; ++w) {
    q.set_length(w, first_phase[w]);
    s.add_warp(w, w, q);
  }
  EXPECT_EQ(s.ready_queue(), (Slots{0}));
  EXPECT_EQ(s.active_queue(), (Slots{2, 4, 1, 3}));  // 30 (older), 30, 50, 80
  // Warp 0 waits; the shortest-phase warp 2 moves up. Warp 0's next phase is short (7 cycles, as
  // LUD's last phase, 3.5.2.1): it returns ahead of everyone.
  s.long_latency_wait(0);
  EXPECT_EQ(s.ready_queue(), (Slots{2}));
  q.set_length(0, 7);
  s.long_latency_done(0, q);
  EXPECT_EQ(s.active_queue(), (Slots{0, 4, 1, 3}));
  // A long next phase (985 cycles, CFD's longest) sends a returning warp behind all of them.
  s.long_latency_wait(2);
  EXPECT_EQ(s.ready_queue(), (Slots{0}));
  q.set_length(2, 985);
  s.long_latency_done(2, q);
  EXPECT_EQ(s.active_queue(), (Slots{4, 1, 3, 2}));
  // The length is read once, on entry: later changes do not reorder queued warps.
  q.set_length(3, 1);
  EXPECT_EQ(s.active_queue(), (Slots{4, 1, 3, 2}));
}

TEST(TwoLevelScheduler, ReadyQueueNeverExceedsItsSizeAndFillsWhenThereIsRoom) {
  FakeQuery q(16);
  TwoLevelScheduler s(Priority::kRoundRobin, Inner::kLrr, setup(16, 6));
  for (WarpSlot w = 0; w < 16; ++w) {
    s.add_warp(w, w, q);
    EXPECT_EQ(s.ready_queue().size(), std::min<std::size_t>(w + 1, 6));
  }
  // Every ready warp waits: the six next ones move up, then the last four, then nothing.
  for (const WarpSlot w : Slots{0, 1, 2, 3, 4, 5}) s.long_latency_wait(w);
  EXPECT_EQ(s.ready_queue(), (Slots{6, 7, 8, 9, 10, 11}));
  for (const WarpSlot w : Slots{6, 7, 8, 9, 10, 11}) s.long_latency_wait(w);
  EXPECT_EQ(s.ready_queue(), (Slots{12, 13, 14, 15}));
  EXPECT_TRUE(s.active_queue().empty());
  // A warp back from pending goes straight to the ready queue, which has room.
  s.long_latency_done(3, q);
  EXPECT_EQ(s.ready_queue(), (Slots{12, 13, 14, 15, 3}));
  EXPECT_TRUE(s.active_queue().empty());
}

TEST(TwoLevelScheduler, RemoveWarpFromEveryQueue) {
  FakeQuery q(8);
  TwoLevelScheduler s(Priority::kOldest, Inner::kLrr, setup(8, 2));
  for (WarpSlot w = 0; w < 6; ++w) s.add_warp(w, w, q);
  s.long_latency_wait(0);  // ready: 1 2, active: 3 4 5, pending: 0
  ASSERT_EQ(s.ready_queue(), (Slots{1, 2}));
  s.remove_warp(0);  // from pending
  EXPECT_TRUE(s.pending_queue().empty());
  s.remove_warp(4);  // from active
  EXPECT_EQ(s.active_queue(), (Slots{3, 5}));
  s.remove_warp(1);  // from ready: the active head replaces it
  EXPECT_EQ(s.ready_queue(), (Slots{2, 3}));
  EXPECT_EQ(s.active_queue(), (Slots{5}));
  for (const WarpSlot w : Slots{0, 1, 4}) EXPECT_EQ(s.queue_of(w), Queue::kNone);
  EXPECT_THROW(s.remove_warp(4), std::logic_error);
  // The slot is free for a new warp.
  s.add_warp(4, 10, q);
  EXPECT_EQ(s.active_queue(), (Slots{5, 4}));
}

TEST(TwoLevelScheduler, GtoInsideTheReadyQueueIsGreedyThenOldest) {
  FakeQuery q(8);
  TwoLevelScheduler s(Priority::kRoundRobin, Inner::kGto, setup(8, 3));
  s.add_warp(0, 12, q);
  s.add_warp(1, 10, q);
  s.add_warp(2, 11, q);
  s.add_warp(3, 1, q);  // the oldest warp, but not ready
  EXPECT_EQ(issue(s, q, 2), (Picks{1, 1}));
  q.set_can(1, false);
  EXPECT_EQ(issue(s, q, 1), (Picks{2}));
  q.set_can(1, true);
  EXPECT_EQ(issue(s, q, 1), (Picks{2}));  // greedy
  s.long_latency_wait(2);                 // the greedy warp leaves; 3 becomes ready
  EXPECT_EQ(issue(s, q, 1), (Picks{3}));  // the oldest ready warp
}

TEST(TwoLevelScheduler, IssuedForAWarpOutsideTheReadyQueueIsAProgrammingError) {
  FakeQuery q(4);
  TwoLevelScheduler s(Priority::kRoundRobin, Inner::kLrr, setup(4, 1));
  s.add_warp(0, 0, q);
  s.add_warp(1, 1, q);
  EXPECT_THROW(s.issued(1), std::logic_error);
  EXPECT_THROW(s.add_warp(1, 2, q), std::logic_error);  // already resident
  EXPECT_THROW(s.add_warp(4, 2, q), std::logic_error);  // outside the capacity
  EXPECT_THROW(s.long_latency_wait(3), std::logic_error);
}

// ---- registry ------------------------------------------------------------------------------------

TEST(WarpSchedulerRegistry, ListsTheSixSchedulersSortedWithSummaries) {
  EXPECT_EQ(warp_scheduler_names(), (std::vector<std::string>{"gto", "lrr", "phase-aware", "two-level-gto",
                                                              "two-level-lrr", "two-level-phase-aware"}));
  for (const auto& info : warp_scheduler_registry()) {
    SCOPED_TRACE(info.name);
    EXPECT_NE(info.summary.find("Awatramani"), std::string::npos);
    EXPECT_EQ(info.summary.find('\n'), std::string::npos);
    const auto scheduler = create_warp_scheduler(info.name, {}, setup(48));
    EXPECT_EQ(scheduler->name(), info.name);
  }
}

TEST(WarpSchedulerRegistry, UnknownNameListsTheKnownOnes) {
  try {
    (void)create_warp_scheduler("rr", {}, setup(4));
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown warp scheduler 'rr' (known: gto, lrr, phase-aware, two-level-gto, two-level-lrr, "
                 "two-level-phase-aware)");
  }
  EXPECT_THROW((void)warp_scheduler_option_specs("rr"), InputError);
  EXPECT_EQ(find_warp_scheduler("rr"), nullptr);
}

TEST(WarpSchedulerRegistry, OptionsAreTypedAndChecked) {
  EXPECT_TRUE(warp_scheduler_option_specs("lrr").empty());
  EXPECT_TRUE(warp_scheduler_option_specs("phase-aware").empty());
  try {
    (void)create_warp_scheduler("gto", {{"inner", "lrr"}}, setup(4));
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "warp scheduler gto takes no options (got 'inner')");
  }
  try {
    (void)create_warp_scheduler("two-level-gto", {{"ready_queue_size", "8"}}, setup(4));
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "warp scheduler two-level-gto: unknown option 'ready_queue_size' (known: inner)");
  }
  EXPECT_THROW((void)create_warp_scheduler("two-level-lrr", {{"inner", "oldest"}}, setup(4)), InputError);
  EXPECT_EQ(effective_warp_scheduler_options("two-level-phase-aware", {}),
            nlohmann::json({{"inner", "lrr"}}));
  EXPECT_EQ(effective_warp_scheduler_options("lrr", {}), nlohmann::json::object());
}

TEST(WarpSchedulerRegistry, TwoLevelTakesTheReadyQueueSizeAndInnerOrderFromItsSetup) {
  FakeQuery q(8);
  auto made = create_warp_scheduler("two-level-gto", {{"inner", "gto"}}, setup(8, 2));
  auto* s = dynamic_cast<TwoLevelScheduler*>(made.get());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->ready_queue_size(), 2U);
  for (WarpSlot w = 0; w < 4; ++w) s->add_warp(w, w, q);
  EXPECT_EQ(s->ready_queue(), (Slots{0, 1}));
  EXPECT_EQ(issue(*s, q, 3), (Picks{0, 0, 0}));  // gto inside: greedy
  // WarpSchedulerSetup's default is Table 3.1's 6.
  WarpSchedulerSetup m2090;
  m2090.capacity = 48;
  auto table = create_warp_scheduler("two-level-lrr", {}, m2090);
  EXPECT_EQ(dynamic_cast<TwoLevelScheduler&>(*table).ready_queue_size(), 6U);
}

// ---- property test -------------------------------------------------------------------------------

/// One random event sequence against a scheduler, checking after every event: the resident warps are
/// exactly those added and not removed; for two-level, each is in exactly one queue, the ready queue
/// is within its size and full whenever the active queue is not empty; a selected warp is resident,
/// can issue and (two-level) is ready; nothing is selected only when no eligible warp can issue.
/// Returns the decisions, for the determinism check.
std::vector<int> random_run(const std::string& name, std::uint64_t seed) {
  constexpr std::uint32_t kCapacity = 24;
  constexpr std::uint32_t kReady = 4;
  FakeQuery q(kCapacity);
  auto scheduler = create_warp_scheduler(name, {}, setup(kCapacity, kReady));
  auto* two_level = dynamic_cast<TwoLevelScheduler*>(scheduler.get());
  Rng rng(seed);
  std::set<WarpSlot> resident;
  std::set<WarpSlot> waiting;  // what the fake SM believes is waiting on a long-latency op
  std::uint64_t next_age = 0;
  std::vector<int> decisions;
  const auto pick = [&](const std::set<WarpSlot>& from) {
    auto it = from.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(rng.next() % from.size()));
    return *it;
  };
  for (int step = 0; step < 4000; ++step) {
    const std::uint64_t op = rng.next() % 8;
    if (op == 0 && resident.size() < kCapacity) {
      WarpSlot w = 0;
      while (resident.count(w) != 0) ++w;
      w = (w + static_cast<WarpSlot>(rng.next() % 3)) % kCapacity;  // not always the lowest free slot
      if (resident.count(w) == 0) {
        q.set_length(w, static_cast<std::uint32_t>(rng.next() % 5));
        scheduler->add_warp(w, next_age++, q);
        resident.insert(w);
      }
    } else if (op == 1 && !resident.empty()) {
      const WarpSlot w = pick(resident);
      scheduler->remove_warp(w);
      resident.erase(w);
      waiting.erase(w);
    } else if (op == 2 && !resident.empty()) {
      const WarpSlot w = pick(resident);
      scheduler->long_latency_wait(w);
      waiting.insert(w);
      q.set_can(w, false);
    } else if (op == 3 && !waiting.empty()) {
      const WarpSlot w = pick(waiting);
      q.set_length(w, static_cast<std::uint32_t>(rng.next() % 5));
      scheduler->long_latency_done(w, q);
      waiting.erase(w);
    } else {
      // A decision; warps that are not waiting flip between ready and stalled (short hazards).
      for (const WarpSlot w : resident) {
        if (waiting.count(w) == 0) q.set_can(w, rng.next() % 4 != 0);
        q.set_distance(w, static_cast<std::uint32_t>(rng.next() % 6));
      }
      const auto chosen = scheduler->select(q);
      std::vector<WarpSlot> eligible(resident.begin(), resident.end());
      if (two_level != nullptr) eligible = two_level->ready_queue();
      const bool any =
          std::any_of(eligible.begin(), eligible.end(), [&](WarpSlot w) { return q.can_issue(w); });
      EXPECT_EQ(chosen.has_value(), any) << name << " step " << step;
      if (chosen) {
        EXPECT_EQ(resident.count(*chosen), 1U) << name << " step " << step;
        EXPECT_TRUE(q.can_issue(*chosen)) << name << " step " << step;
        EXPECT_NE(std::find(eligible.begin(), eligible.end(), *chosen), eligible.end()) << name;
        scheduler->issued(*chosen);
      }
      decisions.push_back(chosen ? static_cast<int>(*chosen) : kNone);
    }
    if (two_level != nullptr) {
      std::multiset<WarpSlot> queued;
      for (const auto* queue :
           {&two_level->ready_queue(), &two_level->active_queue(), &two_level->pending_queue()}) {
        queued.insert(queue->begin(), queue->end());
      }
      EXPECT_EQ(queued, std::multiset<WarpSlot>(resident.begin(), resident.end()))
          << name << " step " << step;
      EXPECT_LE(two_level->ready_queue().size(), kReady);
      if (!two_level->active_queue().empty()) {
        EXPECT_EQ(two_level->ready_queue().size(), kReady);
      }
      EXPECT_EQ(std::set<WarpSlot>(two_level->pending_queue().begin(), two_level->pending_queue().end()),
                waiting);
      if (::testing::Test::HasFailure()) break;  // one failure is enough to read
    }
  }
  return decisions;
}

TEST(WarpSchedulerProperty, RandomSequencesNeverLoseOrDuplicateAWarpAndAreDeterministic) {
  for (const std::string& name : warp_scheduler_names()) {
    SCOPED_TRACE(name);
    for (const std::uint64_t seed : {1U, 2U, 3U}) {
      const auto first = random_run(name, seed);
      EXPECT_GT(std::count_if(first.begin(), first.end(), [](int d) { return d != kNone; }), 100);
      EXPECT_EQ(random_run(name, seed), first);
    }
  }
}

}  // namespace
}  // namespace gpumux
