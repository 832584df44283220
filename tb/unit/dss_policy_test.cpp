// The dss policy on the SM driver with fake SMs and a manual clock (no SystemC): equal sharing,
// OS tokens, reservations carried out by draining and by context switch, every thread block once.

#include "policy/dss.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/test_support.h"
#include "core/error.h"
#include "core/rng.h"
#include "engine/sm_driver.h"
#include "policy/registry.h"
#include "unit/fake_engine.h"

namespace gpumux {
namespace {

class DssPolicyTest : public test::DriverTest {
 protected:
  void make_dss(std::uint32_t sms, std::uint32_t processes,
                PreemptionMechanism mechanism = PreemptionMechanism::kDrain,
                std::unique_ptr<DssPolicy> policy = nullptr) {
    gpu_ = test::k20c();
    gpu_.num_sms = sms;
    gpu_.active_kernels = sms;  // KSRT of N_SM entries (Tanasic 3.3)
    SmDriver::Hooks hooks;
    hooks.now = [this] { return now_; };
    hooks.kernel_finished = [this](KernelId k) { finished_.push_back(k); };
    for (std::uint32_t p = 0; p < processes; ++p) hooks.process_names.push_back("p" + std::to_string(p));
    if (!policy) policy = std::make_unique<DssPolicy>();
    dss_ = policy.get();
    driver_ = std::make_unique<SmDriver>(gpu_, std::move(policy), hooks);
    driver_->set_preemption(mechanism);
    fakes_.clear();
    for (std::uint32_t s = 0; s < sms; ++s) fakes_.push_back(std::make_unique<test::FakeSm>(gpu_.sm));
    std::vector<SmPort*> ports;
    for (auto& f : fakes_) ports.push_back(f.get());
    driver_->attach_sms(ports);
  }

  KernelId launch_with(const std::shared_ptr<KernelDesc>& desc, std::uint32_t process,
                       std::optional<int> tokens = std::nullopt) {
    descs_.push_back(desc);
    KernelStatus k;
    k.process = ProcessId{process};
    k.desc = desc.get();
    k.os_tokens = tokens;
    return driver_->launch(k);
  }

  /// SMs per kernel: running it, or reserved for it.
  std::map<KernelId, std::uint32_t> held() const {
    std::map<KernelId, std::uint32_t> n;
    for (std::uint32_t s = 0; s < gpu_.num_sms; ++s) {
      const SmStatus& sm = driver_->sm(SmId{s});
      if (sm.state == SmState::kRunning && sm.kernel) ++n[*sm.kernel];
      if (sm.state == SmState::kReserved && sm.next) ++n[*sm.next];
    }
    return n;
  }
  std::uint32_t held(KernelId k) const {
    const auto n = held();
    const auto it = n.find(k);
    return it == n.end() ? 0 : it->second;
  }
  bool any_reserved() const {
    for (std::uint32_t s = 0; s < gpu_.num_sms; ++s) {
      if (driver_->sm(SmId{s}).state == SmState::kReserved) return true;
    }
    return false;
  }

  /// One event on a random SM: a requested context save, or the oldest TB's completion.
  bool step_random(Rng& rng) {
    std::vector<std::uint32_t> busy;
    for (std::uint32_t s = 0; s < fakes_.size(); ++s) {
      if (fakes_[s]->save_requested || !fakes_[s]->running.empty()) busy.push_back(s);
    }
    if (busy.empty()) return false;
    const std::uint32_t s = busy[static_cast<std::size_t>(rng.below(busy.size()))];
    ++now_;
    if (fakes_[s]->save_requested) {
      save(s);
    } else {
      complete(s);
    }
    return true;
  }
  /// Random steps until no SM is reserved.
  void finish_preemptions(Rng& rng) {
    for (int guard = 0; any_reserved() && guard < 100000; ++guard) ASSERT_TRUE(step_random(rng));
    ASSERT_FALSE(any_reserved());
  }

  DssPolicy* dss_ = nullptr;
};

/// One TB per SM (the whole register file), so a drain takes one completion.
std::shared_ptr<KernelDesc> whole_sm_kernel(const std::string& name, std::uint32_t tbs) {
  return test::kernel(name, tbs, 1.0, 256, 65536);
}

TEST(EqualShareTokens, ThirteenSmsSplitByProcessesWithTheRemainderToTheFirstArrivals) {
  {
    EqualShareTokens t;
    EXPECT_EQ(t.tokens_for(ProcessId{0}, std::nullopt, 13, 2), 7);
    EXPECT_EQ(t.tokens_for(ProcessId{1}, std::nullopt, 13, 2), 6);
    EXPECT_EQ(t.tokens_for(ProcessId{0}, std::nullopt, 13, 2), 7);  // a later kernel of the same process
  }
  {
    EqualShareTokens t;  // 8 processes: t_c = 1, r = 5, in order of first arrival
    std::vector<int> got;
    for (std::uint32_t p : {7U, 6U, 5U, 4U, 3U, 2U, 1U, 0U}) {
      got.push_back(t.tokens_for(ProcessId{p}, std::nullopt, 13, 8));
    }
    EXPECT_EQ(got, (std::vector<int>{2, 2, 2, 2, 2, 1, 1, 1}));
  }
  {
    EqualShareTokens t;  // OS tokens override and take no left-over token
    EXPECT_EQ(t.tokens_for(ProcessId{0}, 9, 13, 4), 9);
    EXPECT_EQ(t.tokens_for(ProcessId{1}, std::nullopt, 13, 4), 4);
    EXPECT_EQ(t.tokens_for(ProcessId{2}, std::nullopt, 13, 4), 3);
  }
}

TEST(DssPolicyRegistry, RegisteredWithOptions) {
  const PolicyInfo* info = find_policy("dss");
  ASSERT_NE(info, nullptr);
  EXPECT_NE(info->summary.find("Tanasic 3.4"), std::string::npos);
  EXPECT_EQ(create_policy("dss")->name(), "dss");
  EXPECT_NO_THROW((void)create_policy("dss", {{"token_bits", "16"}, {"preempt_done_starts", "off"}}));
  EXPECT_THROW((void)create_policy("dss", {{"token_bits", "x"}}), InputError);
  EXPECT_THROW((void)create_policy("dss", {{"token_bits", "1"}}), InputError);
  EXPECT_THROW((void)create_policy("dss", {{"preempt_done_starts", "maybe"}}), InputError);
  EXPECT_THROW((void)create_policy("dss", {{"bogus", "1"}}), InputError);
  EXPECT_NO_THROW((void)create_policy("dss", {{"tokens", "kernel"}}));
  EXPECT_THROW((void)create_policy("dss", {{"tokens", "thread"}}), InputError);
}

// Tanasic 4.4: equal sharing gives tokens to processes. A process with two active kernels (two
// streams) holds its count once, so it gets half the SMs, not two thirds; with tokens per kernel
// (option tokens=kernel) each kernel holds a count of its own.
TEST_F(DssPolicyTest, PerProcessTokensAreSharedByTheContextsKernels) {
  for (const auto holder : {DssPolicy::TokenHolder::kProcess, DssPolicy::TokenHolder::kKernel}) {
    make_dss(12, 2, PreemptionMechanism::kDrain, std::make_unique<DssPolicy>(0, true, holder));
    finished_.clear();
    const KernelId a1 = launch_with(whole_sm_kernel("a1", 200), 0);
    const KernelId a2 = launch_with(whole_sm_kernel("a2", 200), 0);
    const KernelId b = launch_with(whole_sm_kernel("b", 200), 1);
    Rng rng(3);
    finish_preemptions(rng);
    const bool per_process = holder == DssPolicy::TokenHolder::kProcess;
    EXPECT_EQ(held(a1) + held(a2), per_process ? 6U : 8U);
    EXPECT_EQ(held(b), per_process ? 6U : 4U);
    if (per_process) {
      EXPECT_EQ(held(a2), 0U);  // the context's SMs go to its first kernel with work
    }
    while (step_random(rng)) {
    }
    EXPECT_EQ(finished_.size(), 3U);
    EXPECT_NO_THROW(driver_->check_final_invariants());
  }
}

TEST_F(DssPolicyTest, PerProcessTokensHandTheContextsSmsToItsNextKernel) {
  make_dss(4, 2);
  const KernelId a1 = launch_with(whole_sm_kernel("a1", 4), 0);
  const KernelId a2 = launch_with(whole_sm_kernel("a2", 400), 0);
  const KernelId b = launch_with(whole_sm_kernel("b", 400), 1);
  Rng rng(5);
  for (int guard = 0; guard < 100000 && driver_->kernel(a1).completed_tbs < 4; ++guard) {
    ASSERT_TRUE(step_random(rng));
  }
  finish_preemptions(rng);
  EXPECT_EQ(held(a1), 0U);
  EXPECT_EQ(held(a2), 2U);  // a1 finished: the context's two tokens now cover a2
  EXPECT_EQ(held(b), 2U);
  while (step_random(rng)) {
  }
  EXPECT_EQ(finished_.size(), 3U);
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(DssPolicyTest, TwoProcessesSplitThirteenSmsSevenToSix) {
  make_dss(13, 2);
  const KernelId a = launch_with(whole_sm_kernel("a", 200), 0);
  EXPECT_EQ(held(a), 13U);  // alone: every SM, in debt
  const KernelId b = launch_with(whole_sm_kernel("b", 200), 1);
  EXPECT_EQ(dss_->tokens_given(a), 7);
  EXPECT_EQ(dss_->tokens_given(b), 6);
  EXPECT_EQ(held(a), 7U);
  EXPECT_EQ(held(b), 6U);  // reserved, draining a's thread blocks
  EXPECT_TRUE(any_reserved());
  Rng rng(7);
  finish_preemptions(rng);
  EXPECT_EQ(held(a), 7U);
  EXPECT_EQ(held(b), 6U);
  EXPECT_EQ(dss_->stats().reservations, 6U);
  EXPECT_GT(dss_->search_cycles(), 0U);
  EXPECT_EQ(dss_->decisions(), 13U + 6U);
  // While both have thread blocks the partition holds; when one runs out, its SMs go to the other.
  while (driver_->kernel(b).has_tbs_to_issue()) {
    ASSERT_TRUE(step_random(rng));
    if (driver_->kernel(a).has_tbs_to_issue() && driver_->kernel(b).has_tbs_to_issue()) {
      ASSERT_EQ(held(a), 7U);
    }
  }
  drain_all();
  EXPECT_EQ(driver_->kernel(a).completed_tbs, 200U);
  EXPECT_EQ(driver_->kernel(b).completed_tbs, 200U);
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(DssPolicyTest, ThreeProcessesArrivingTogetherEndWithinOneSmOfEachOther) {
  for (const PreemptionMechanism mechanism :
       {PreemptionMechanism::kDrain, PreemptionMechanism::kContextSwitch}) {
    make_dss(13, 3, mechanism);
    std::vector<KernelId> k;
    for (std::uint32_t p = 0; p < 3; ++p) {
      k.push_back(launch_with(test::kernel("k" + std::to_string(p), 600, 1.0, 256, 16384), p));  // 4 per SM
    }
    Rng rng(11);
    finish_preemptions(rng);
    std::vector<std::uint32_t> counts;
    for (KernelId id : k) counts.push_back(held(id));
    EXPECT_EQ(counts, (std::vector<std::uint32_t>{5, 4, 4}));
    // Steady state: nothing changes while every kernel has thread blocks.
    for (int i = 0; i < 300; ++i) {
      ASSERT_TRUE(step_random(rng));
      bool all = true;
      for (KernelId id : k) all = all && driver_->kernel(id).has_tbs_to_issue();
      if (!all) break;
      std::uint32_t lo = 13;
      std::uint32_t hi = 0;
      for (KernelId id : k) {
        lo = std::min(lo, held(id));
        hi = std::max(hi, held(id));
      }
      ASSERT_LE(hi - lo, 1U);
    }
    drain_all();
    for (KernelId id : k) EXPECT_EQ(driver_->kernel(id).completed_tbs, 600U);
    EXPECT_NO_THROW(driver_->check_final_invariants());
    if (mechanism == PreemptionMechanism::kContextSwitch) {
      EXPECT_GT(driver_->tbs_reissued(), 0U);
    }
  }
}

TEST_F(DssPolicyTest, OnlyTanasicsTwoEventsLeaveTheDrainingKernelShort) {
  // With preempt_done_starts=off the three kernels of the previous test settle at 4/6/3.
  make_dss(13, 3, PreemptionMechanism::kDrain, std::make_unique<DssPolicy>(0, false));
  std::vector<KernelId> k;
  for (std::uint32_t p = 0; p < 3; ++p) {
    k.push_back(launch_with(whole_sm_kernel("k" + std::to_string(p), 300), p));
  }
  Rng rng(5);
  finish_preemptions(rng);
  EXPECT_EQ(held(k[0]), 4U);
  EXPECT_EQ(held(k[1]), 6U);
  EXPECT_EQ(held(k[2]), 3U);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(DssPolicyTest, ProcessWithMoreOsTokensGetsMoreSms) {
  make_dss(13, 2);
  const KernelId low = launch_with(whole_sm_kernel("low", 300), 1, 3);
  const KernelId high = launch_with(whole_sm_kernel("high", 300), 0, 10);
  Rng rng(3);
  finish_preemptions(rng);
  EXPECT_EQ(held(high), 10U);
  EXPECT_EQ(held(low), 3U);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(DssPolicyTest, OsTokensBeyondTheTokenCounterAreAnErrorNotAClamp) {
  // 8-bit tokens (the default up to 63 SMs) hold at most 127; the hardware would clamp 300 to 127.
  make_dss(13, 1);
  try {
    (void)launch_with(whole_sm_kernel("big", 30), 0, 300);
    ADD_FAILURE() << "300 tokens in an 8-bit counter were accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("300 tokens, more than the 8-bit token counter holds (at most 127)"),
              std::string::npos)
        << msg;
  }
  make_dss(13, 1);
  EXPECT_NO_THROW((void)launch_with(whole_sm_kernel("fits", 30), 0, 127));
}

TEST_F(DssPolicyTest, SmallKernelLeavesNoSmStuckWithoutThreadBlocks) {
  make_dss(13, 2);
  const KernelId tiny = launch_with(test::kernel("tiny", 3, 1.0, 256, 8192), 0);  // 3 TBs: one SM
  EXPECT_EQ(held(tiny), 1U);
  for (std::uint32_t s = 1; s < 13; ++s) EXPECT_EQ(driver_->sm(SmId{s}).state, SmState::kIdle);
  const KernelId big = launch_with(whole_sm_kernel("big", 50), 1);
  EXPECT_EQ(held(big), 12U);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

/// Processes with streams of kernels of different shapes, each launched when its predecessor
/// finished, started at different times; TBs complete in random order. The policy checks its model
/// against the SMST after every event; at the end every TB has run exactly once.
TEST_F(DssPolicyTest, RandomWorkloadsRunEveryThreadBlockExactlyOnce) {
  for (const PreemptionMechanism mechanism :
       {PreemptionMechanism::kDrain, PreemptionMechanism::kContextSwitch}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      const std::uint32_t processes = 2 + static_cast<std::uint32_t>(seed % 3);
      make_dss(13, processes, mechanism);
      Rng rng(seed);
      std::vector<std::vector<std::shared_ptr<KernelDesc>>> streams(processes);
      std::uint32_t total = 0;
      for (std::uint32_t p = 0; p < processes; ++p) {
        for (int i = 0; i < 4; ++i) {
          const auto tbs = static_cast<std::uint32_t>(1 + rng.below(120));
          const auto regs = static_cast<std::uint32_t>(8192U << rng.below(4));  // 8, 4, 2 or 1 per SM
          streams[p].push_back(
              test::kernel("p" + std::to_string(p) + "k" + std::to_string(i), tbs, 1.0, 256, regs));
          total += tbs;
        }
      }
      std::vector<std::size_t> next(processes, 0);
      std::vector<std::optional<KernelId>> current(processes);
      std::vector<std::uint32_t> start_step(processes);
      for (std::uint32_t p = 0; p < processes; ++p) start_step[p] = static_cast<std::uint32_t>(rng.below(40));
      std::vector<KernelId> launched;
      for (std::uint32_t step = 0; step < 1'000'000; ++step) {
        for (std::uint32_t p = 0; p < processes; ++p) {
          const bool ready = !current[p] || driver_->kernel(*current[p]).finished();
          if (step >= start_step[p] && ready && next[p] < streams[p].size()) {
            current[p] = launch_with(streams[p][next[p]++], p);
            launched.push_back(*current[p]);
          }
        }
        bool pending = false;
        for (std::uint32_t p = 0; p < processes; ++p) pending = pending || next[p] < streams[p].size();
        if (!step_random(rng) && !pending) break;
      }
      std::uint32_t completed = 0;
      for (KernelId k : launched) completed += driver_->kernel(k).completed_tbs;
      EXPECT_EQ(completed, total);
      EXPECT_EQ(launched.size(), processes * 4U);
      EXPECT_NO_THROW(driver_->check_final_invariants());
      EXPECT_GT(dss_->decisions(), 0U);
      for (std::uint32_t s = 0; s < 13; ++s) {
        EXPECT_EQ(dss_->model()->sm(s).state, DssReference::SmState::kIdle);
      }
    }
  }
}

TEST_F(DssPolicyTest, TablesOutOfStepAreAnInvariantViolation) {
  make_dss(2, 2);
  launch_with(whole_sm_kernel("a", 20), 0);
  const KernelId b = launch_with(whole_sm_kernel("b", 20), 1);  // tokens 1 and 1: one SM each
  Rng rng(1);
  finish_preemptions(rng);
  // Reserving behind the policy's back: the SMST and the model disagree when the drain completes.
  const std::uint32_t victim = driver_->sm(SmId{0}).kernel == b ? 1 : 0;
  driver_->reserve_sm(SmId{victim}, b);
  try {
    complete(victim);
    FAIL() << "expected InvariantViolation";
  } catch (const InvariantViolation& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("SM " + std::to_string(victim)), std::string::npos) << what;
    EXPECT_NE(what.find("dss"), std::string::npos) << what;
    EXPECT_NE(what.find(" ns "), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace gpumux
