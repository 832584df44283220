// rtl/dss_token_policy.sv against DssReference, cycle by cycle: both get the same event in every
// cycle, and every output (busy, assign, reserve) and every KSRT / SMST entry after the clock edge
// must agree. Directed sequences (Tanasic's examples, restarts, clamping) and seeded random scenarios,
// for five parameter sets of the serial scan and nine of the parallel search (EntriesPerCycle P > 1:
// a divisor of N = max(SMs, KSRT entries) or not, and P = N), one Verilated model each (see
// tb/rtl/CMakeLists.txt). On the first mismatch the test prints the cycle, the inputs and both
// outputs, and how to rerun that scenario.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "Vdss_gtx480.h"
#include "Vdss_gtx480_p15.h"
#include "Vdss_gtx480_p4.h"
#include "Vdss_k20c.h"
#include "Vdss_k20c_p13.h"
#include "Vdss_k20c_p2.h"
#include "Vdss_k20c_p5.h"
#include "Vdss_pow2.h"
#include "Vdss_pow2_p16.h"
#include "Vdss_pow2_p3.h"
#include "Vdss_wide_slots.h"
#include "Vdss_wide_slots_p6.h"
#include "Vdss_wide_sms.h"
#include "Vdss_wide_sms_p4.h"
#include "dss_check.h"
#include "dss_rtl.h"
#include "lockstep.h"
#include "rtl_options.h"

namespace gpumux::rtl {
namespace {

using Ref = DssReference;
using In = Ref::Inputs;

// The parameter sets: must match the -G arguments of the verilate() calls in tb/rtl/CMakeLists.txt.
struct K20c {
  using Top = Vdss_k20c;
  static constexpr const char* kName = "k20c";
  static Ref::Config config() { return Ref::Config{13, 13, 8, true}; }
};
struct Gtx480 {  // the Fermi GTX480 config: 15 SMs, 8 active kernels (Pai 5.1.2)
  using Top = Vdss_gtx480;
  static constexpr const char* kName = "gtx480";
  static Ref::Config config() { return Ref::Config{15, 8, 8, true}; }
};
struct WideSlots {  // more KSRT entries than SMs, narrow tokens (clamping), Tanasic's two events only
  using Top = Vdss_wide_slots;
  static constexpr const char* kName = "wide_slots";
  static Ref::Config config() { return Ref::Config{4, 6, 4, false}; }
};
struct WideSms {  // more SMs than KSRT entries
  using Top = Vdss_wide_sms;
  static constexpr const char* kName = "wide_sms";
  static Ref::Config config() { return Ref::Config{6, 3, 4, true}; }
};
struct Pow2 {  // power-of-two tables: index widths without spare codes
  using Top = Vdss_pow2;
  static constexpr const char* kName = "pow2";
  static Ref::Config config() { return Ref::Config{16, 16, 6, true}; }
};
// The parallel search (EntriesPerCycle = P > 1): the same shapes, the same decisions, fewer cycles.
struct K20cP2 {
  using Top = Vdss_k20c_p2;
  static constexpr const char* kName = "k20c_p2";
  static Ref::Config config() { return Ref::Config{13, 13, 8, true, 2}; }
};
struct K20cP5 {  // 13 = 2 x 5 + 3: the last scan cycle has three lanes past the tables
  using Top = Vdss_k20c_p5;
  static constexpr const char* kName = "k20c_p5";
  static Ref::Config config() { return Ref::Config{13, 13, 8, true, 5}; }
};
struct K20cP13 {  // every entry in one scan cycle: a full comparator tree
  using Top = Vdss_k20c_p13;
  static constexpr const char* kName = "k20c_p13";
  static Ref::Config config() { return Ref::Config{13, 13, 8, true, 13}; }
};
struct Gtx480P4 {
  using Top = Vdss_gtx480_p4;
  static constexpr const char* kName = "gtx480_p4";
  static Ref::Config config() { return Ref::Config{15, 8, 8, true, 4}; }
};
struct Gtx480P15 {
  using Top = Vdss_gtx480_p15;
  static constexpr const char* kName = "gtx480_p15";
  static Ref::Config config() { return Ref::Config{15, 8, 8, true, 15}; }
};
struct WideSlotsP6 {  // one scan cycle; lanes 4 and 5 read KSRT entries with no SM behind them
  using Top = Vdss_wide_slots_p6;
  static constexpr const char* kName = "wide_slots_p6";
  static Ref::Config config() { return Ref::Config{4, 6, 4, false, 6}; }
};
struct WideSmsP4 {  // SMs 3..5 have no KSRT entry of the same index; lanes 6 and 7 of cycle 1 neither
  using Top = Vdss_wide_sms_p4;
  static constexpr const char* kName = "wide_sms_p4";
  static Ref::Config config() { return Ref::Config{6, 3, 4, true, 4}; }
};
struct Pow2P3 {
  using Top = Vdss_pow2_p3;
  static constexpr const char* kName = "pow2_p3";
  static Ref::Config config() { return Ref::Config{16, 16, 6, true, 3}; }
};
struct Pow2P16 {  // 16 lanes and the registered candidates: a 17-leaf tree padded to 32
  using Top = Vdss_pow2_p16;
  static constexpr const char* kName = "pow2_p16";
  static Ref::Config config() { return Ref::Config{16, 16, 6, true, 16}; }
};

// Random scenarios are spread over each block's sets: the serial scan keeps its share of a run
// (--scenarios 300: 60 per set), the parallel variants are a block of their own.
constexpr std::uint64_t kNumSets = 5;
constexpr const char* kBlock = "dss_token_policy";
[[maybe_unused]] const bool kRegistered = register_random_block(kBlock, kNumSets);
constexpr std::uint64_t kNumParallelSets = 9;
constexpr const char* kParallelBlock = "dss_token_policy_parallel";
[[maybe_unused]] const bool kParallelRegistered = register_random_block(kParallelBlock, kNumParallelSets);

/// The reference model and the RTL in lockstep: every output and every table entry, every cycle.
template <class Set>
class Lockstep : public LockstepPair<Ref, DssRtl<typename Set::Top>> {
 public:
  explicit Lockstep(const std::string& tag)
      : LockstepPair<Ref, DssRtl<typename Set::Top>>(Set::config(), wave_path(tag)) {}

  /// One cycle; false (with failure() set) on the first disagreement. The reference's outputs and
  /// tables go into the wave beside the RTL's, with the mismatch marker.
  bool step(const In& in) {
    Ref::Outputs ref_out = this->ref_.step(in);
    this->last_ = ref_out;
    if (this->injecting()) ref_out.busy = !ref_out.busy;  // --inject-mismatch
    std::string diff;
    const Ref::Outputs rtl_out = this->rtl_.step(in, this->ref_, ref_out, [&](const Ref::Outputs& out) {
      diff = compare(this->ref_, ref_out, this->rtl_.snapshot(out));
      if (diff.empty() && this->rtl_.assertion_failed()) diff = "an RTL assertion failed (message above)";
      if (diff.empty()) {
        const Ref::Check check = this->ref_.check_invariants();
        if (!check) diff = "reference model invariant: " + check.message;
      }
      return !diff.empty();
    });
    if (!diff.empty()) {
      return this->disagree(describe_config(Set::config()), describe(in), describe(ref_out),
                            describe(rtl_out), diff);
    }
    return this->agree();
  }

  /// Clocks without events until the search stops (bounded).
  bool settle(std::uint64_t limit = 1'000'000) {
    for (std::uint64_t i = 0; i < limit && (this->ref_.busy() || this->rtl_.busy()); ++i) {
      if (!step(In::none())) return false;
    }
    if (this->ref_.busy()) {
      this->failure_ = "the search did not stop within " + std::to_string(limit) + " cycles";
      return false;
    }
    return true;
  }

  /// One event, then clocks until the search stops; the decisions (assign / reserve outputs).
  std::vector<Ref::Outputs> feed(const In& in) {
    std::vector<Ref::Outputs> decisions;
    EXPECT_TRUE(step(in)) << this->failure_;
    for (std::uint64_t i = 0; i < 1'000'000 && this->ref_.busy() && this->failure_.empty(); ++i) {
      if (!step(In::none())) break;
      if (this->last_.assign.valid || this->last_.reserve.valid) decisions.push_back(this->last_);
    }
    EXPECT_TRUE(this->failure_.empty()) << this->failure_;
    return decisions;
  }
};

template <class Set>
void run_random(std::uint64_t set_index, const char* block = kBlock, std::uint64_t sets = kNumSets) {
  const RtlOptions& o = options();
  std::uint64_t n = 0;
  if (!random_scenarios_run(block, set_index, n)) {
    GTEST_SKIP() << "--scenario " << *o.only_scenario << " is not among this test's " << n
                 << " random scenarios (--scenarios " << o.scenarios << " over " << sets
                 << " parameter sets)";
  }
  Lockstep<Set> lock(std::string("dss_") + Set::kName + "_random");
  // The serial scan's sets count together; each parallel set is counted apart, by its P.
  const std::uint32_t p = Set::config().entries_per_cycle;
  Tally& tally = tallies()[p == 1 ? std::string(block)
                                  : std::string(block) + " " + Set::kName + " (P=" + std::to_string(p) + ")"];
  for (std::uint64_t k = 0; k < n; ++k) {
    if (o.only_scenario && *o.only_scenario != k) continue;
    lock.reset();
    lock.inject_at(injected_cycle(k));
    DssStimulus stim(scenario_seed(o.seed, std::string("dss_") + Set::kName, k));
    bool ok = true;
    for (std::uint32_t c = 0; c < stim.cycles() && ok; ++c) ok = lock.step(stim.next(lock.ref()));
    if (ok) ok = lock.settle();
    if (!ok) {
      FAIL() << "dss_token_policy/" << Set::kName << " random scenario " << k << " (seed " << o.seed
             << "): first mismatch\n"
             << lock.failure() << "\n  rerun: " << rerun_command(k);
    }
    ++tally.scenarios;
    tally.cycles += lock.cycle();
    tally.decisions += lock.ref().stats().assigns + lock.ref().stats().reservations;
    tally.restarts += lock.ref().stats().restarts;
  }
}

TEST(DssRtlCrosscheck, RandomK20c) { run_random<K20c>(0); }
TEST(DssRtlCrosscheck, RandomWideSlots) { run_random<WideSlots>(1); }
TEST(DssRtlCrosscheck, RandomWideSms) { run_random<WideSms>(2); }
TEST(DssRtlCrosscheck, RandomPow2) { run_random<Pow2>(3); }
TEST(DssRtlCrosscheck, RandomGtx480) { run_random<Gtx480>(4); }
TEST(DssRtlCrosscheck, RandomK20cP2) { run_random<K20cP2>(0, kParallelBlock, kNumParallelSets); }
TEST(DssRtlCrosscheck, RandomK20cP5) { run_random<K20cP5>(1, kParallelBlock, kNumParallelSets); }
TEST(DssRtlCrosscheck, RandomK20cP13) { run_random<K20cP13>(2, kParallelBlock, kNumParallelSets); }
TEST(DssRtlCrosscheck, RandomGtx480P4) { run_random<Gtx480P4>(3, kParallelBlock, kNumParallelSets); }
TEST(DssRtlCrosscheck, RandomGtx480P15) { run_random<Gtx480P15>(4, kParallelBlock, kNumParallelSets); }
TEST(DssRtlCrosscheck, RandomWideSlotsP6) { run_random<WideSlotsP6>(5, kParallelBlock, kNumParallelSets); }
TEST(DssRtlCrosscheck, RandomWideSmsP4) { run_random<WideSmsP4>(6, kParallelBlock, kNumParallelSets); }
TEST(DssRtlCrosscheck, RandomPow2P3) { run_random<Pow2P3>(7, kParallelBlock, kNumParallelSets); }
TEST(DssRtlCrosscheck, RandomPow2P16) { run_random<Pow2P16>(8, kParallelBlock, kNumParallelSets); }

std::uint32_t running_for(const Ref& ref, std::uint32_t slot) {
  std::uint32_t n = 0;
  for (const Ref::Sm& m : ref.sms()) {
    n += (m.state == Ref::SmState::kRunning && m.kernel_valid && m.kernel == slot);
  }
  return n;
}

template <class Set>
void single_kernel_takes_every_idle_sm_in_order(const std::string& tag) {
  Lockstep<Set> lock(tag);
  const auto decisions = lock.feed(In::kernel_insert(0, 7));
  ASSERT_EQ(decisions.size(), 13U);
  for (std::uint32_t i = 0; i < 13; ++i) EXPECT_EQ(decisions[i].assign.sm, i);
  EXPECT_EQ(lock.ref().slot(0).tokens, -6);
}

TEST(DssRtlCrosscheck, SingleKernelTakesEveryIdleSmInOrder) {
  single_kernel_takes_every_idle_sm_in_order<K20c>("dss_k20c_single");
}
TEST(DssRtlCrosscheck, SingleKernelTakesEveryIdleSmInOrderP5) {
  single_kernel_takes_every_idle_sm_in_order<K20cP5>("dss_k20c_p5_single");
}
TEST(DssRtlCrosscheck, SingleKernelTakesEveryIdleSmInOrderP13) {
  single_kernel_takes_every_idle_sm_in_order<K20cP13>("dss_k20c_p13_single");
}

/// The cycles from a kernel's insertion to its first assignment (the event cycle is cycle 0), and from
/// there to each further one while it fills the GPU.
template <class Set>
void expect_iteration_cycles(std::uint64_t expected, const std::string& tag) {
  Lockstep<Set> lock(tag);
  ASSERT_EQ(DssReference::iteration_cycles(Set::config()), expected);
  ASSERT_TRUE(lock.step(In::kernel_insert(0, 1))) << lock.failure();
  std::vector<std::uint64_t> decisions;
  for (std::uint64_t c = 1; c < 1000 && lock.ref().busy(); ++c) {
    ASSERT_TRUE(lock.step(In::none())) << lock.failure();
    if (lock.last().assign.valid) decisions.push_back(c);
  }
  ASSERT_EQ(decisions.size(), Set::config().num_sms);
  for (std::size_t i = 0; i < decisions.size(); ++i) {
    EXPECT_EQ(decisions[i], (i + 1) * expected) << "decision " << i;
  }
}

TEST(DssRtlCrosscheck, EachIterationTakesNumSmsScanCyclesPlusOneDecision) {
  expect_iteration_cycles<K20c>(14, "dss_k20c_latency");  // 13 scan cycles, then the decision cycle
}
TEST(DssRtlCrosscheck, EachIterationTakesCeilNOverPScanCyclesPlusOneDecision) {
  expect_iteration_cycles<K20cP2>(8, "dss_k20c_p2_latency");    // ceil(13 / 2) = 7 scan cycles
  expect_iteration_cycles<K20cP5>(4, "dss_k20c_p5_latency");    // 3
  expect_iteration_cycles<K20cP13>(2, "dss_k20c_p13_latency");  // 1: the whole tree in one cycle
  expect_iteration_cycles<Gtx480P4>(5, "dss_gtx480_p4_latency");
  expect_iteration_cycles<WideSmsP4>(3, "dss_wide_sms_p4_latency");
}

template <class Set>
void two_then_three_kernels_rebalance_by_reservation(const std::string& tag) {
  Lockstep<Set> lock(tag);
  lock.feed(In::kernel_insert(0, 7));
  const auto two = lock.feed(In::kernel_insert(1, 6));
  ASSERT_EQ(two.size(), 6U);
  for (const auto& d : two) EXPECT_TRUE(d.reserve.valid);
  for (std::uint32_t s = 0; s < 13; ++s) {
    if (lock.ref().sm(s).state == Ref::SmState::kReserved) lock.feed(In::preempt_done(s));
  }
  lock.feed(In::kernel_insert(2, 4));
  for (std::uint32_t s = 0; s < 13; ++s) {
    if (lock.ref().sm(s).state == Ref::SmState::kReserved) lock.feed(In::preempt_done(s));
  }
  EXPECT_EQ(running_for(lock.ref(), 0) + running_for(lock.ref(), 1) + running_for(lock.ref(), 2), 13U);
  // Finish kernel 1: its SMs go idle one by one and are handed out again.
  lock.feed(In::kernel_finish(1));
  for (std::uint32_t s = 0; s < 13; ++s) {
    if (lock.ref().sm(s).state == Ref::SmState::kRunning && !lock.ref().sm(s).kernel_valid) {
      lock.feed(In::sm_idle(s));
    }
  }
  EXPECT_EQ(running_for(lock.ref(), 0) + running_for(lock.ref(), 2), 13U);
  EXPECT_TRUE(lock.failure().empty()) << lock.failure();
}

TEST(DssRtlCrosscheck, TwoThenThreeKernelsRebalanceByReservation) {
  two_then_three_kernels_rebalance_by_reservation<K20c>("dss_k20c_rebalance");
}
TEST(DssRtlCrosscheck, TwoThenThreeKernelsRebalanceByReservationP2) {
  two_then_three_kernels_rebalance_by_reservation<K20cP2>("dss_k20c_p2_rebalance");
}
TEST(DssRtlCrosscheck, TwoThenThreeKernelsRebalanceByReservationP13) {
  two_then_three_kernels_rebalance_by_reservation<K20cP13>("dss_k20c_p13_rebalance");
}

template <class Set>
void events_restart_the_scan_every_cycle(const std::string& tag) {
  Lockstep<Set> lock(tag);
  ASSERT_TRUE(lock.step(In::kernel_insert(0, 5))) << lock.failure();
  // has_tbs toggling every few cycles keeps restarting the scan before its decision.
  for (std::uint32_t c = 0; c < 200; ++c) {
    const In in = (c % 7 == 3) ? In::has_tbs(0, c % 14 != 3) : In::none();
    ASSERT_TRUE(lock.step(in)) << lock.failure();
  }
  ASSERT_TRUE(lock.settle()) << lock.failure();
}

TEST(DssRtlCrosscheck, EventsRestartTheScanEveryCycle) {
  events_restart_the_scan_every_cycle<K20c>("dss_k20c_restart");
}
TEST(DssRtlCrosscheck, EventsRestartTheScanEveryCycleP5) {
  events_restart_the_scan_every_cycle<K20cP5>("dss_k20c_p5_restart");
}
TEST(DssRtlCrosscheck, EventsRestartTheScanEveryCycleP13) {
  events_restart_the_scan_every_cycle<K20cP13>("dss_k20c_p13_restart");
}

TEST(DssRtlCrosscheck, InsertTokensAreClampedIntoTheCounterRange) {
  Lockstep<WideSlots> lock("dss_wide_slots_clamp");  // 4-bit tokens, 4 SMs: insert range [-4, 7]
  const std::vector<std::int32_t> tokens = {std::numeric_limits<std::int32_t>::min(), -5, -4, 7, 8,
                                            std::numeric_limits<std::int32_t>::max()};
  for (std::uint32_t i = 0; i < tokens.size(); ++i) lock.feed(In::kernel_insert(i, tokens[i]));
  EXPECT_TRUE(lock.failure().empty()) << lock.failure();
  for (std::uint32_t i = 0; i < tokens.size(); ++i) {
    const std::int32_t given = lock.ref().slot(i).tokens + static_cast<std::int32_t>(lock.ref().held_sms(i));
    EXPECT_GE(given, -4);
    EXPECT_LE(given, 7);
  }
}

TEST(DssRtlCrosscheck, ReservedSmWhoseNextFinishesBecomesIdleOnPreemptDone) {
  Lockstep<WideSms> lock("dss_wide_sms_orphan");
  lock.feed(In::kernel_insert(0, 3));
  lock.feed(In::kernel_insert(1, 3));  // reserves 3 of kernel 0's 6 SMs
  lock.feed(In::kernel_finish(1));
  for (std::uint32_t s = 0; s < 6; ++s) {
    if (lock.ref().sm(s).state == Ref::SmState::kReserved) lock.feed(In::preempt_done(s));
  }
  EXPECT_TRUE(lock.failure().empty()) << lock.failure();
  EXPECT_EQ(running_for(lock.ref(), 0), 6U);
}

}  // namespace
}  // namespace gpumux::rtl
