// DssReference, the cycle-level model of the DSS token policy (Tanasic 3.4, Algorithm 1): directed
// cases, cycle timing and token conservation under random event sequences. Plain C++.

#include "policy/dss_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/rng.h"

namespace gpumux {
namespace {

using Ref = DssReference;
using In = Ref::Inputs;

/// Feeds `in` (one cycle) and then clocks until the search stops; returns every decision output.
std::vector<Ref::Outputs> feed(Ref& ref, const In& in) {
  std::vector<Ref::Outputs> decisions;
  Ref::Outputs out = ref.step(in);
  EXPECT_FALSE(out.assign.valid || out.reserve.valid) << "decision in an event cycle";
  for (int guard = 0; ref.busy() && guard < 1'000'000; ++guard) {
    out = ref.step(In::none());
    if (out.assign.valid || out.reserve.valid) decisions.push_back(out);
    const Ref::Check check = ref.check_invariants();
    EXPECT_TRUE(check.ok) << check.message;
  }
  EXPECT_FALSE(ref.busy()) << "search did not stop";
  return decisions;
}

std::uint32_t running_for(const Ref& ref, std::uint32_t slot) {
  std::uint32_t n = 0;
  for (const Ref::Sm& m : ref.sms()) {
    n += (m.state == Ref::SmState::kRunning && m.kernel_valid && m.kernel == slot);
  }
  return n;
}

std::uint32_t reserved_for(const Ref& ref, std::uint32_t slot) {
  std::uint32_t n = 0;
  for (const Ref::Sm& m : ref.sms()) {
    n += (m.state == Ref::SmState::kReserved && m.next_valid && m.next == slot);
  }
  return n;
}

/// Completes every reservation in progress (as the SM driver does when the SMs have drained).
void finish_preemptions(Ref& ref) {
  for (std::uint32_t s = 0; s < ref.num_sms(); ++s) {
    if (ref.sm(s).state == Ref::SmState::kReserved) feed(ref, In::preempt_done(s));
  }
}

/// The stop condition, recomputed independently of the scan: no idle SM while some kernel has thread
/// blocks, and the max/min token counts (as Algorithm 1 defines them) differ by at most one.
void expect_steady_state(const Ref& ref) {
  bool idle = false;
  for (const Ref::Sm& m : ref.sms()) idle = idle || m.state == Ref::SmState::kIdle;
  bool have_max = false;
  bool have_min = false;
  std::int32_t max = 0;
  std::int32_t min = 0;
  for (std::uint32_t k = 0; k < ref.num_slots(); ++k) {
    const Ref::Slot& s = ref.slot(k);
    if (!s.valid) continue;
    if (s.has_tbs && (!have_max || s.tokens > max)) {
      have_max = true;
      max = s.tokens;
    }
    if (running_for(ref, k) > 0 && (!have_min || s.tokens < min)) {
      have_min = true;
      min = s.tokens;
    }
  }
  EXPECT_FALSE(idle && have_max) << "an SM is idle while a kernel has thread blocks";
  if (have_max && have_min) {
    EXPECT_LE(max, min + 1);
  }
}

TEST(DssReference, RejectsTokenWidthsTooNarrowForTheDebt) {
  EXPECT_THROW(Ref(Ref::Config{13, 13, 4}), std::invalid_argument);  // 4 bits: -8..7
  EXPECT_THROW(Ref(Ref::Config{0, 13}), std::invalid_argument);
  EXPECT_THROW(Ref(Ref::Config{13, 13, 40}), std::invalid_argument);
  const Ref ref(Ref::Config{13, 13, 8});
  EXPECT_EQ(ref.token_min(), -128);
  EXPECT_EQ(ref.token_max(), 127);
  EXPECT_EQ(ref.insert_min(), -115);
  EXPECT_EQ(Ref(Ref::Config{13, 20}).scan_length(), 20U);
  EXPECT_EQ(Ref(Ref::Config{20, 13}).scan_length(), 20U);
}

TEST(DssReference, EntriesPerCycleMustBeOneToTheScanLength) {
  EXPECT_THROW(Ref(Ref::Config{13, 13, 8, true, 0}), std::invalid_argument);
  EXPECT_THROW(Ref(Ref::Config{13, 13, 8, true, 14}), std::invalid_argument);
  EXPECT_THROW(Ref(Ref::Config{4, 6, 4, true, 7}), std::invalid_argument);
  EXPECT_NO_THROW(Ref(Ref::Config{4, 6, 4, true, 6}));  // N = max(SMs, slots): the KSRT is longer
  EXPECT_NO_THROW(Ref(Ref::Config{13, 13, 8, true, 13}));
  EXPECT_EQ(Ref::Config{}.entries_per_cycle, 1U);  // Tanasic's serial scan unless asked otherwise
}

TEST(DssReference, IterationCyclesAreTheScanCyclesCeilNOverPPlusTheDecision) {
  // N = 13: 13 + 1 serially, a tree over all 13 entries scans in one cycle.
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{13, 13, 8, true, 1}), 14U);
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{13, 13, 8, true, 2}), 8U);
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{13, 13, 8, true, 4}), 5U);
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{13, 13, 8, true, 12}), 3U);
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{13, 13, 8, true, 13}), 2U);
  EXPECT_EQ(Ref::scan_cycles(Ref::Config{13, 13, 8, true, 13}), 1U);
  // N is max(SMs, slots).
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{15, 8, 8, true, 4}), 5U);
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{4, 6, 4, true, 4}), 3U);
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{132, 132, 9, true, 1}), 133U);
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{132, 132, 9, true, 128}), 3U);
  EXPECT_EQ(Ref::iteration_cycles(Ref::Config{264, 264, 10, true, 264}), 2U);
}

TEST(DssReference, SingleKernelTakesEveryIdleSmAndGoesIntoDebt) {
  Ref ref(Ref::Config{13, 13});
  const auto decisions = feed(ref, In::kernel_insert(0, 7));
  ASSERT_EQ(decisions.size(), 13U);
  for (std::uint32_t i = 0; i < 13; ++i) {
    EXPECT_TRUE(decisions[i].assign.valid);
    EXPECT_EQ(decisions[i].assign.sm, i);  // lowest idle SM first
    EXPECT_EQ(decisions[i].assign.slot, 0U);
  }
  EXPECT_EQ(ref.slot(0).tokens, 7 - 13);  // debt: Tanasic's "to prevent the underutilization"
  EXPECT_EQ(running_for(ref, 0), 13U);
  EXPECT_EQ(ref.stats().assigns, 13U);
  EXPECT_EQ(ref.stats().reservations, 0U);
  EXPECT_TRUE(ref.check_invariants().ok);
}

TEST(DssReference, EachIterationScansOneEntryPerCycleThenDecides) {
  for (const auto& [sms, slots] :
       std::vector<std::pair<std::uint32_t, std::uint32_t>>{{13, 13}, {13, 16}, {4, 2}}) {
    Ref ref(Ref::Config{sms, slots});
    const std::uint32_t n = std::max(sms, slots);
    Ref::Outputs out = ref.step(In::kernel_insert(0, 1));
    EXPECT_FALSE(out.busy);  // the event cycle; the search starts in the next one
    EXPECT_TRUE(ref.busy());
    for (std::uint32_t i = 0; i < n; ++i) {
      EXPECT_EQ(ref.phase(), Ref::Phase::kScan);
      EXPECT_EQ(ref.scan().index, i);
      out = ref.step(In::none());
      EXPECT_TRUE(out.busy);
      EXPECT_FALSE(out.assign.valid || out.reserve.valid) << "decision before the scan ended, cycle " << i;
    }
    EXPECT_EQ(ref.phase(), Ref::Phase::kDecide);
    out = ref.step(In::none());  // cycle N + 1: the decision
    ASSERT_TRUE(out.assign.valid);
    EXPECT_EQ(out.assign.sm, 0U);
    while (ref.busy()) ref.step(In::none());
    // `sms` iterations with an assignment, then one that stops: N + 1 cycles each.
    EXPECT_EQ(ref.stats().iterations, sms + 1U);
    EXPECT_EQ(ref.stats().busy_cycles, (sms + 1U) * (n + 1U));
    EXPECT_EQ(ref.stats().max_search_cycles, (sms + 1U) * (n + 1U));
    EXPECT_EQ(ref.stats().searches, 1U);
  }
}

TEST(DssReference, EachIterationScansPEntriesPerCycleThenDecides) {
  struct Case {
    std::uint32_t sms, slots, p;
  };
  for (const Case& k :
       std::vector<Case>{{13, 13, 2}, {13, 13, 5}, {13, 13, 13}, {15, 8, 4}, {4, 6, 4}, {6, 3, 6}}) {
    SCOPED_TRACE("sms " + std::to_string(k.sms) + " slots " + std::to_string(k.slots) + " P " +
                 std::to_string(k.p));
    Ref ref(Ref::Config{k.sms, k.slots, 8, true, k.p});
    const std::uint32_t n = std::max(k.sms, k.slots);
    const std::uint32_t scan = (n + k.p - 1) / k.p;  // ceil(N / P)
    Ref::Outputs out = ref.step(In::kernel_insert(0, 1));
    EXPECT_FALSE(out.busy);
    for (std::uint32_t c = 0; c < scan; ++c) {
      EXPECT_EQ(ref.phase(), Ref::Phase::kScan);
      EXPECT_EQ(ref.scan().index, c * k.p);  // scan cycle c starts at entry c * P
      out = ref.step(In::none());
      EXPECT_TRUE(out.busy);
      EXPECT_FALSE(out.assign.valid || out.reserve.valid) << "decision before the scan ended, cycle " << c;
    }
    EXPECT_EQ(ref.phase(), Ref::Phase::kDecide);
    out = ref.step(In::none());
    ASSERT_TRUE(out.assign.valid);
    EXPECT_EQ(out.assign.sm, 0U);
    while (ref.busy()) ref.step(In::none());
    EXPECT_EQ(ref.stats().iterations, k.sms + 1U);
    EXPECT_EQ(ref.stats().busy_cycles, (k.sms + 1U) * (scan + 1U));
    EXPECT_EQ(Ref::iteration_cycles(ref.config()), scan + 1U);
    EXPECT_EQ(running_for(ref, 0), k.sms);
  }
}

TEST(DssReference, TwoKernelsSplitThirteenSmsSevenToSixAndIdleSmsGoBack) {
  Ref ref(Ref::Config{13, 13});
  feed(ref, In::kernel_insert(0, 7));  // equal sharing of 13 SMs by 2 processes: 7 and 6
  const auto decisions = feed(ref, In::kernel_insert(1, 6));
  ASSERT_EQ(decisions.size(), 6U);
  for (const auto& d : decisions) {
    ASSERT_TRUE(d.reserve.valid);
    EXPECT_EQ(d.reserve.next_slot, 1U);
  }
  // Reservations come from the lowest-index running SMs of the kernel with the fewest tokens.
  EXPECT_EQ(decisions.front().reserve.sm, 0U);
  EXPECT_EQ(decisions.back().reserve.sm, 5U);
  EXPECT_EQ(ref.slot(0).tokens, 0);
  EXPECT_EQ(ref.slot(1).tokens, 0);
  EXPECT_EQ(running_for(ref, 0), 7U);
  EXPECT_EQ(reserved_for(ref, 1), 6U);

  finish_preemptions(ref);
  EXPECT_EQ(running_for(ref, 0), 7U);
  EXPECT_EQ(running_for(ref, 1), 6U);
  EXPECT_EQ(ref.stats().reservations, 6U);  // the preempt_done searches changed nothing

  // Kernel 1 finishes: its SMs drain and report idle one by one, each going back to kernel 0.
  feed(ref, In::kernel_finish(1));
  for (std::uint32_t s = 0; s < 6; ++s) {
    EXPECT_EQ(ref.sm(s).state, Ref::SmState::kRunning);
    EXPECT_FALSE(ref.sm(s).kernel_valid);  // orphan until its idle event
    const auto d = feed(ref, In::sm_idle(s));
    ASSERT_EQ(d.size(), 1U);
    EXPECT_TRUE(d[0].assign.valid);
    EXPECT_EQ(d[0].assign.sm, s);
    EXPECT_EQ(d[0].assign.slot, 0U);
  }
  EXPECT_EQ(running_for(ref, 0), 13U);
  EXPECT_EQ(ref.slot(0).tokens, -6);
}

TEST(DssReference, SmsOfAKernelWithoutThreadBlocksStayIdle) {
  Ref ref(Ref::Config{4, 4});
  feed(ref, In::kernel_insert(0, 4));
  feed(ref, In::has_tbs(0, false));  // issued its last thread block: no search
  EXPECT_FALSE(ref.busy());
  EXPECT_TRUE(feed(ref, In::sm_idle(2)).empty());
  EXPECT_EQ(ref.sm(2).state, Ref::SmState::kIdle);
  EXPECT_EQ(ref.slot(0).tokens, 1);                // the token came back
  EXPECT_TRUE(feed(ref, In::sm_idle(2)).empty());  // idle again: only a search
  EXPECT_EQ(ref.slot(0).tokens, 1);
}

TEST(DssReference, ThirdKernelReservesFromTheKernelsWithFewestTokensUntilBalanced) {
  Ref ref(Ref::Config{13, 13});
  feed(ref, In::kernel_insert(0, 5));  // 13 SMs, 3 processes: 5, 4, 4
  feed(ref, In::kernel_insert(1, 4));
  finish_preemptions(ref);
  EXPECT_EQ(running_for(ref, 0), 7U);
  EXPECT_EQ(running_for(ref, 1), 6U);
  EXPECT_EQ(ref.slot(0).tokens, -2);
  EXPECT_EQ(ref.slot(1).tokens, -2);

  const auto decisions = feed(ref, In::kernel_insert(2, 4));
  ASSERT_EQ(decisions.size(), 4U);
  // tokens (k0, k1, k2): (-2,-2,4) -> k0 (tie, lowest slot) -> (-1,-2,3) -> k1 -> (-1,-1,2) -> k0
  // -> (0,-1,1) -> k1 -> (0,0,0): stop.
  const std::vector<std::uint32_t> victims = {0, 1, 0, 1};
  for (std::size_t i = 0; i < decisions.size(); ++i) {
    ASSERT_TRUE(decisions[i].reserve.valid);
    EXPECT_EQ(decisions[i].reserve.next_slot, 2U);
    EXPECT_EQ(ref.sm(decisions[i].reserve.sm).kernel, victims[i]) << "decision " << i;
  }
  finish_preemptions(ref);
  EXPECT_EQ(running_for(ref, 0), 5U);
  EXPECT_EQ(running_for(ref, 1), 4U);
  EXPECT_EQ(running_for(ref, 2), 4U);
  for (std::uint32_t k = 0; k < 3; ++k) EXPECT_EQ(ref.slot(k).tokens, 0);
  expect_steady_state(ref);
}

TEST(DssReference, ReservedSmsAreNeverReservedAgain) {
  // Three kernels arrive before any preemption completes: kernel 1 holds only reserved SMs, so it
  // cannot be ksr_min, and kernel 0 gives up more SMs than its share for now.
  for (const bool preempt_starts : {false, true}) {
    Ref ref(Ref::Config{13, 13, 8, preempt_starts});
    feed(ref, In::kernel_insert(0, 5));
    feed(ref, In::kernel_insert(1, 4));
    EXPECT_EQ(reserved_for(ref, 1), 6U);
    const auto decisions = feed(ref, In::kernel_insert(2, 4));
    ASSERT_EQ(decisions.size(), 3U);
    for (const auto& d : decisions) EXPECT_EQ(ref.sm(d.reserve.sm).kernel, 0U);
    EXPECT_EQ(running_for(ref, 0), 4U);
    finish_preemptions(ref);
    if (preempt_starts) {
      // preempt_done restarts the search: the partition converges to 5/4/4.
      EXPECT_EQ(running_for(ref, 0) + reserved_for(ref, 0), 5U);
      EXPECT_EQ(running_for(ref, 1) + reserved_for(ref, 1), 4U);
      EXPECT_EQ(running_for(ref, 2) + reserved_for(ref, 2), 4U);
      finish_preemptions(ref);
      expect_steady_state(ref);
    } else {
      // Tanasic's two events only: 4/6/3 until some SM goes idle.
      EXPECT_EQ(running_for(ref, 0), 4U);
      EXPECT_EQ(running_for(ref, 1), 6U);
      EXPECT_EQ(running_for(ref, 2), 3U);
    }
    EXPECT_TRUE(ref.check_invariants().ok) << ref.check_invariants().message;
  }
}

TEST(DssReference, ReservationWhoseNextKernelFinishesEndsIdleAndIsReassigned) {
  Ref ref(Ref::Config{4, 4});
  feed(ref, In::kernel_insert(0, 2));
  feed(ref, In::kernel_insert(1, 2));  // 4 SMs: reserve 2 of kernel 0's for kernel 1
  ASSERT_EQ(reserved_for(ref, 1), 2U);
  const std::uint32_t sm = 0;
  ASSERT_EQ(ref.sm(sm).state, Ref::SmState::kReserved);

  feed(ref, In::kernel_finish(1));  // kernel 1 finishes while SM 0 still drains kernel 0
  EXPECT_EQ(ref.sm(sm).state, Ref::SmState::kReserved);
  EXPECT_FALSE(ref.sm(sm).next_valid);
  EXPECT_TRUE(ref.sm(sm).kernel_valid);  // still draining kernel 0
  EXPECT_TRUE(ref.check_invariants().ok) << ref.check_invariants().message;

  // The drain completes: without a next kernel the SM is idle, which starts a search that gives it
  // (back) to the kernel with the most tokens and thread blocks.
  const auto d = feed(ref, In::preempt_done(sm));
  ASSERT_EQ(d.size(), 1U);
  EXPECT_TRUE(d[0].assign.valid);
  EXPECT_EQ(d[0].assign.sm, sm);
  EXPECT_EQ(d[0].assign.slot, 0U);
  EXPECT_TRUE(ref.check_invariants().ok) << ref.check_invariants().message;
}

TEST(DssReference, IdleReportOfAReservedSmReturnsTheTokenToItsNextKernel) {
  Ref ref(Ref::Config{2, 2});
  feed(ref, In::kernel_insert(0, 1));
  feed(ref, In::kernel_insert(1, 1));
  ASSERT_EQ(ref.sm(0).state, Ref::SmState::kReserved);
  EXPECT_EQ(ref.slot(1).tokens, 0);
  feed(ref, In::has_tbs(1, false));
  feed(ref, In::sm_idle(0));
  EXPECT_EQ(ref.slot(1).tokens, 1);
  EXPECT_TRUE(ref.check_invariants().ok) << ref.check_invariants().message;
}

TEST(DssReference, OrphanSmsDoNotCountForTheNextKernelInTheirSlot) {
  Ref ref(Ref::Config{3, 3});
  feed(ref, In::kernel_insert(0, 3));
  ASSERT_EQ(running_for(ref, 0), 3U);
  feed(ref, In::kernel_finish(0));
  // The KSRT entry is reused before the SMs report idle (the SM driver admits the next kernel first).
  feed(ref, In::kernel_insert(0, 3));
  EXPECT_EQ(running_for(ref, 0), 0U);
  EXPECT_EQ(ref.slot(0).tokens, 3);
  EXPECT_TRUE(ref.check_invariants().ok) << ref.check_invariants().message;
  for (std::uint32_t s = 0; s < 3; ++s) feed(ref, In::sm_idle(s));
  EXPECT_EQ(running_for(ref, 0), 3U);
  EXPECT_EQ(ref.slot(0).tokens, 0);
}

TEST(DssReference, AnEventDuringASearchRestartsTheScan) {
  Ref ref(Ref::Config{4, 4});
  ref.step(In::kernel_insert(0, 4));
  for (int i = 0; i < 3; ++i) ref.step(In::none());
  EXPECT_EQ(ref.scan().index, 3U);
  const Ref::Outputs out = ref.step(In::kernel_insert(1, 0));
  EXPECT_TRUE(out.busy);
  EXPECT_EQ(ref.phase(), Ref::Phase::kScan);
  EXPECT_EQ(ref.scan().index, 0U);
  EXPECT_EQ(ref.stats().restarts, 1U);
  EXPECT_EQ(ref.stats().searches, 1U);
  // An event in the decision cycle wins over the decision.
  for (int i = 0; i < 4; ++i) ref.step(In::none());
  ASSERT_EQ(ref.phase(), Ref::Phase::kDecide);
  const Ref::Outputs busy = ref.step(In::has_tbs(1, false));
  EXPECT_FALSE(busy.assign.valid || busy.reserve.valid);
  EXPECT_EQ(ref.stats().restarts, 2U);
  while (ref.busy()) ref.step(In::none());
  EXPECT_EQ(running_for(ref, 0), 4U);
  EXPECT_EQ(running_for(ref, 1), 0U);
}

TEST(DssReference, InsertTokensAreClampedToTheTokenWidth) {
  Ref ref(Ref::Config{13, 13, 8});
  ref.step(In::kernel_insert(0, 1000));
  ref.step(In::kernel_insert(1, -1000));
  EXPECT_EQ(ref.slot(0).tokens, 127);
  EXPECT_EQ(ref.slot(1).tokens, -115);  // -128 + 13: room for the debt of every SM
  while (ref.busy()) ref.step(In::none());
  EXPECT_TRUE(ref.check_invariants().ok) << ref.check_invariants().message;
  EXPECT_EQ(ref.slot(0).tokens, 127 - 13);
}

TEST(DssReference, ProtocolViolationsThrowAndChangeNothing) {
  Ref ref(Ref::Config{2, 2});
  EXPECT_THROW(ref.step(In::kernel_insert(2, 1)), std::invalid_argument);
  EXPECT_THROW(ref.step(In::kernel_finish(0)), std::invalid_argument);
  EXPECT_THROW(ref.step(In::has_tbs(1, true)), std::invalid_argument);
  EXPECT_THROW(ref.step(In::sm_idle(2)), std::invalid_argument);
  EXPECT_THROW(ref.step(In::preempt_done(0)), std::invalid_argument);
  EXPECT_EQ(ref.stats().cycles, 0U);  // a rejected event is no clock cycle
  feed(ref, In::kernel_insert(0, 1));
  const Ref::Slot slot = ref.slot(0);
  const std::uint64_t cycles = ref.stats().cycles;
  EXPECT_THROW(ref.step(In::kernel_insert(0, 5)), std::invalid_argument);
  EXPECT_EQ(ref.slot(0).tokens, slot.tokens);
  EXPECT_EQ(ref.stats().cycles, cycles);
  EXPECT_TRUE(ref.check_invariants().ok);
  ref.reset();
  EXPECT_FALSE(ref.slot(0).valid);
  EXPECT_EQ(ref.stats().cycles, 0U);
}

/// Random legal events, one cycle at a time, with and without a search in progress. Every cycle:
/// invariants (token conservation), decisions only on legal SMs and never two at once; whenever a
/// search stops, the stop condition holds.
void random_run(const Ref::Config& c, std::uint64_t seed, int steps) {
  Ref ref(c);
  Rng rng(seed);
  std::uint64_t decisions = 0;
  for (int step = 0; step < steps; ++step) {
    In in;
    const bool quiet = step > steps - 2000;  // at the end: let the searches finish
    if (!quiet && rng.uniform() < 0.15) {
      std::vector<std::uint32_t> valid;
      std::vector<std::uint32_t> free;
      std::vector<std::uint32_t> reserved;
      for (std::uint32_t k = 0; k < c.num_slots; ++k) (ref.slot(k).valid ? valid : free).push_back(k);
      for (std::uint32_t s = 0; s < c.num_sms; ++s) {
        if (ref.sm(s).state == Ref::SmState::kReserved) reserved.push_back(s);
      }
      const auto pick = [&](const std::vector<std::uint32_t>& v) {
        return v[static_cast<std::size_t>(rng.below(v.size()))];
      };
      switch (rng.below(6)) {
        case 0:
          if (!free.empty()) {
            in = In::kernel_insert(pick(free), static_cast<std::int32_t>(rng.below(40)) - 10);
          }
          break;
        case 1:
          if (!valid.empty() && rng.uniform() < 0.5) in = In::kernel_finish(pick(valid));
          break;
        case 2:
        case 3:
          in = In::sm_idle(static_cast<std::uint32_t>(rng.below(c.num_sms)));
          break;
        case 4:
          if (!reserved.empty()) in = In::preempt_done(pick(reserved));
          break;
        default:
          if (!valid.empty()) in = In::has_tbs(pick(valid), rng.uniform() < 0.6);
          break;
      }
    }
    const std::vector<Ref::Sm> before = ref.sms();
    const std::vector<Ref::Slot> slots_before = ref.slots();
    const bool was_deciding = ref.phase() == Ref::Phase::kDecide;
    const Ref::Outputs out = ref.step(in);
    const Ref::Check check = ref.check_invariants();
    ASSERT_TRUE(check.ok) << "seed " << seed << " step " << step << ": " << check.message;
    ASSERT_FALSE(out.assign.valid && out.reserve.valid) << "two decisions in one cycle";
    if (in.kind != Ref::EventKind::kNone) {
      ASSERT_FALSE(out.assign.valid || out.reserve.valid);
    }
    if (out.assign.valid) {
      ++decisions;
      ASSERT_EQ(before[out.assign.sm].state, Ref::SmState::kIdle) << "assigned a busy SM";
      ASSERT_TRUE(slots_before[out.assign.slot].valid && slots_before[out.assign.slot].has_tbs);
      ASSERT_EQ(ref.sm(out.assign.sm).state, Ref::SmState::kRunning);
      ASSERT_EQ(ref.sm(out.assign.sm).kernel, out.assign.slot);
    }
    if (out.reserve.valid) {
      ++decisions;
      const Ref::Sm& victim = before[out.reserve.sm];
      ASSERT_EQ(victim.state, Ref::SmState::kRunning) << "reserved an SM that was not running";
      ASSERT_TRUE(victim.kernel_valid);
      ASSERT_NE(victim.kernel, out.reserve.next_slot);
      ASSERT_GE(slots_before[out.reserve.next_slot].tokens, slots_before[victim.kernel].tokens + 2);
      ASSERT_EQ(ref.sm(out.reserve.sm).state, Ref::SmState::kReserved);
      ASSERT_EQ(ref.sm(out.reserve.sm).next, out.reserve.next_slot);
    }
    if (was_deciding && in.kind == Ref::EventKind::kNone && !ref.busy()) expect_steady_state(ref);
  }
  EXPECT_FALSE(ref.busy()) << "seed " << seed << ": search still running after 2000 quiet cycles";
  EXPECT_GT(decisions, 0U);
  EXPECT_GT(ref.stats().searches, 0U);
}

TEST(DssReference, RandomEventsConserveTokensAndNeverDecideTwice) {
  std::uint64_t seed = 1;
  for (const auto& [sms, slots] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {13, 13}, {13, 13}, {4, 8}, {8, 3}, {1, 1}, {15, 15}}) {
    Ref::Config c = Ref::Config{sms, slots, sms == 15 ? 5U : 8U, seed % 2 == 1};
    SCOPED_TRACE("sms " + std::to_string(sms) + " slots " + std::to_string(slots));
    random_run(c, seed++, 20000);
  }
}

/// A legal event for the state of `ref` (kernel_insert, kernel_finish, sm_idle, preempt_done, has_tbs).
In random_event(const Ref& ref, Rng& rng) {
  std::vector<std::uint32_t> valid;
  std::vector<std::uint32_t> free;
  std::vector<std::uint32_t> reserved;
  for (std::uint32_t k = 0; k < ref.num_slots(); ++k) (ref.slot(k).valid ? valid : free).push_back(k);
  for (std::uint32_t s = 0; s < ref.num_sms(); ++s) {
    if (ref.sm(s).state == Ref::SmState::kReserved) reserved.push_back(s);
  }
  const auto pick = [&](const std::vector<std::uint32_t>& v) {
    return v[static_cast<std::size_t>(rng.below(v.size()))];
  };
  switch (rng.below(6)) {
    case 0:
      if (!free.empty()) {
        // Mostly fair shares, sometimes past the clamping range.
        const std::int32_t tokens = rng.below(10) == 0 ? (rng.below(2) == 0 ? -1000 : 1000)
                                                       : static_cast<std::int32_t>(rng.below(40)) - 10;
        return In::kernel_insert(pick(free), tokens);
      }
      break;
    case 1:
      if (!valid.empty()) return In::kernel_finish(pick(valid));
      break;
    case 2:
      if (!reserved.empty()) return In::preempt_done(pick(reserved));
      break;
    case 3:
      if (!valid.empty()) return In::has_tbs(pick(valid), rng.uniform() < 0.6);
      break;
    default:
      break;
  }
  return In::sm_idle(static_cast<std::uint32_t>(rng.below(ref.num_sms())));
}

/// What a run of the same event schedule decided, in order.
struct DecisionTrace {
  std::vector<Ref::Outputs> decisions;
  std::vector<Ref::Slot> slots;  ///< the tables at the end
  std::vector<Ref::Sm> sms;
  Ref::Stats stats;
};

/// Runs a random event schedule whose outcome cannot depend on the search's speed: each event is
/// issued after the search in progress has made a drawn number of further decisions (or stopped), and
/// then a drawn fraction of an iteration later, short of the next decision. A mid-scan event throws
/// the partial scan away whatever P is, so the decisions must be the same for every P; what P changes
/// is when they come. Checks that timing on the way: every decision, and every stop, comes exactly
/// iteration_cycles() = ceil(N / P) + 1 cycles after the event or decision before it.
DecisionTrace run_schedule(Ref::Config c, std::uint32_t p, std::uint64_t seed, int events) {
  c.entries_per_cycle = p;
  Ref ref(c);
  const std::uint32_t n = std::max(c.num_sms, c.num_slots);
  const std::uint64_t iteration = (n + p - 1) / p + 1;  // recomputed here, not taken from the model
  EXPECT_EQ(Ref::iteration_cycles(c), iteration);
  Rng rng(seed);
  DecisionTrace trace;
  std::uint64_t cycle = 0;
  std::uint64_t anchor = 0;  // the cycle of the last event or decision: the current iteration began after it
  // One cycle without an event; checks the iteration timing of a decision or a stop.
  const auto clock = [&]() {
    const bool was_busy = ref.busy();
    const Ref::Outputs out = ref.step(In::none());
    ++cycle;
    const bool decided = out.assign.valid || out.reserve.valid;
    if (decided || (was_busy && !ref.busy())) {
      EXPECT_EQ(cycle - anchor, iteration)
          << (decided ? "decision" : "stop") << " at cycle " << cycle << " (P " << p << ")";
      anchor = cycle;
    }
    if (decided) trace.decisions.push_back(out);
    return decided;
  };
  for (int e = 0; e < events && !::testing::Test::HasFailure(); ++e) {
    const std::uint64_t more = rng.below(4);
    const double fraction = rng.uniform();
    for (std::uint64_t made = 0; ref.busy() && made < more;) made += clock() ? 1 : 0;
    if (ref.busy()) {
      // Mid-iteration: anchor is now (the last event or decision), the next decision comes at anchor +
      // iteration; wait part of that.
      const auto wait = static_cast<std::uint64_t>(fraction * static_cast<double>(iteration));
      for (std::uint64_t w = 0; w < wait; ++w) EXPECT_FALSE(clock()) << "decision while waiting";
    }
    const In in = random_event(ref, rng);
    const Ref::Outputs out = ref.step(in);
    ++cycle;
    EXPECT_FALSE(out.assign.valid || out.reserve.valid);
    anchor = cycle;
    const Ref::Check check = ref.check_invariants();
    EXPECT_TRUE(check.ok) << check.message;
  }
  for (int guard = 0; ref.busy() && guard < 10'000'000; ++guard) clock();
  EXPECT_FALSE(ref.busy());
  trace.slots = ref.slots();
  trace.sms = ref.sms();
  trace.stats = ref.stats();
  return trace;
}

TEST(DssReference, EntriesPerCycleChangesWhenDecisionsComeNotWhichDecisions) {
  struct Case {
    std::uint32_t sms, slots, token_bits;
    bool preempt_done_starts;
  };
  std::uint64_t seed = 11;
  for (const Case& k : std::vector<Case>{{13, 13, 8, true},
                                         {15, 8, 8, true},
                                         {4, 6, 4, false},
                                         {6, 3, 4, true},
                                         {16, 16, 6, true},
                                         {5, 5, 4, true}}) {
    const Ref::Config c{k.sms, k.slots, k.token_bits, k.preempt_done_starts};
    const std::uint32_t n = std::max(k.sms, k.slots);
    for (int run = 0; run < 4; ++run, ++seed) {
      SCOPED_TRACE("sms " + std::to_string(k.sms) + " slots " + std::to_string(k.slots) + " seed " +
                   std::to_string(seed));
      const DecisionTrace serial = run_schedule(c, 1, seed, 300);
      ASSERT_GT(serial.decisions.size(), 20U);
      ASSERT_GT(serial.stats.reservations, 0U);
      ASSERT_GT(serial.stats.restarts, 0U);  // events meet searches in progress, mid-scan
      for (const std::uint32_t p : {2U, 3U, n}) {
        SCOPED_TRACE("P " + std::to_string(p));
        const DecisionTrace parallel = run_schedule(c, p, seed, 300);
        ASSERT_EQ(parallel.decisions.size(), serial.decisions.size());
        for (std::size_t i = 0; i < serial.decisions.size(); ++i) {
          const Ref::Outputs& a = serial.decisions[i];
          const Ref::Outputs& b = parallel.decisions[i];
          EXPECT_EQ(b.assign.valid, a.assign.valid) << "decision " << i;
          EXPECT_EQ(b.assign.sm, a.assign.sm) << "decision " << i;
          EXPECT_EQ(b.assign.slot, a.assign.slot) << "decision " << i;
          EXPECT_EQ(b.reserve.valid, a.reserve.valid) << "decision " << i;
          EXPECT_EQ(b.reserve.sm, a.reserve.sm) << "decision " << i;
          EXPECT_EQ(b.reserve.next_slot, a.reserve.next_slot) << "decision " << i;
        }
        for (std::uint32_t s = 0; s < k.slots; ++s) {
          EXPECT_EQ(parallel.slots[s].valid, serial.slots[s].valid);
          EXPECT_EQ(parallel.slots[s].tokens, serial.slots[s].tokens);
        }
        for (std::uint32_t s = 0; s < k.sms; ++s) {
          EXPECT_EQ(parallel.sms[s].state, serial.sms[s].state);
          EXPECT_EQ(parallel.sms[s].kernel, serial.sms[s].kernel);
          EXPECT_EQ(parallel.sms[s].next, serial.sms[s].next);
        }
        EXPECT_EQ(parallel.stats.iterations, serial.stats.iterations);
        EXPECT_EQ(parallel.stats.restarts, serial.stats.restarts);
        EXPECT_EQ(parallel.stats.searches, serial.stats.searches);
        EXPECT_LT(parallel.stats.busy_cycles, serial.stats.busy_cycles);  // P >= 2 here
      }
    }
  }
}

TEST(DssReference, RandomEventsConserveTokensWithAParallelSearch) {
  std::uint64_t seed = 101;
  for (const auto& [sms, slots, p] : std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>>{
           {13, 13, 2}, {13, 13, 13}, {4, 8, 3}, {8, 3, 5}, {15, 15, 4}}) {
    SCOPED_TRACE("sms " + std::to_string(sms) + " slots " + std::to_string(slots) + " P " +
                 std::to_string(p));
    random_run(Ref::Config{sms, slots, sms == 15 ? 5U : 8U, seed % 2 == 1, p}, seed, 20000);
    ++seed;
  }
}

}  // namespace
}  // namespace gpumux
