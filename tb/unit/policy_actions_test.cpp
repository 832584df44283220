// Policy actions are carried out after the hook that called them returns (policy.h, "Actions"):
// decisions are in the tables at once, the SM driver's mechanism runs afterwards, hooks never nest,
// and what an assigned SM will take is claimed meanwhile. Fake SMs, a manual clock, no SystemC.

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/sm_driver.h"
#include "unit/fake_engine.h"

namespace gpumux {
namespace {

using test::DriverTest;

/// A policy whose hooks are lambdas set by the test; it logs every hook with its nesting depth.
class ScriptedPolicy final : public SchedulingPolicy {
 public:
  using Hook = std::function<void(EngineControl&)>;
  Hook arrival;
  std::function<void(SmId, EngineControl&)> idle;
  std::function<void(SmId, KernelId, EngineControl&)> tb_finished;
  std::function<void(SmId, KernelId, EngineControl&)> tb_started;
  std::function<std::optional<KernelId>(SmId, const EngineControl&)> select;
  std::vector<std::string> log;  ///< "name:depth" on entry
  int depth = 0;
  int max_depth = 0;

  [[nodiscard]] std::string name() const override { return "scripted"; }
  void on_kernel_arrival(KernelId /*kernel*/, EngineControl& control) override {
    enter("arrival");
    if (arrival) arrival(control);
    --depth;
  }
  void on_sm_idle(SmId sm, EngineControl& control) override {
    enter("idle" + std::to_string(index(sm)));
    if (idle) idle(sm, control);
    --depth;
  }
  void on_tb_started(SmId sm, KernelId kernel, EngineControl& control) override {
    started.push_back(index(sm));
    if (tb_started) tb_started(sm, kernel, control);
  }
  void on_tb_finished(SmId sm, KernelId kernel, TimePs /*duration_ps*/, EngineControl& control) override {
    enter("tb_finished");
    if (tb_finished) tb_finished(sm, kernel, control);
    --depth;
  }
  void on_kernel_finished(KernelId /*kernel*/, EngineControl& /*control*/) override {
    enter("kernel_finished");
    --depth;
  }
  void on_preemption_done(SmId sm, KernelId /*preempted*/, EngineControl& /*control*/) override {
    enter("preemption_done" + std::to_string(index(sm)));
    --depth;
  }
  [[nodiscard]] std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control) override {
    return select ? select(sm, control) : SchedulingPolicy::select_kernel(sm, control);
  }
  std::vector<std::uint32_t> started;  ///< SM of every thread block issued, in issue order

 private:
  void enter(const std::string& hook) {
    ++depth;
    max_depth = std::max(max_depth, depth);
    log.push_back(hook + ":" + std::to_string(depth));
  }
};

class PolicyActions : public DriverTest {
 protected:
  ScriptedPolicy& make_scripted(std::uint32_t sms = 2, PreemptionMechanism m = PreemptionMechanism::kDrain) {
    auto policy = std::make_unique<ScriptedPolicy>();
    ScriptedPolicy& p = *policy;
    make_with(std::move(policy), sms, m);
    return p;
  }
};

TEST_F(PolicyActions, DecisionIsInTheTablesAtOnceAndCarriedOutAfterTheHook) {
  ScriptedPolicy& p = make_scripted();
  std::size_t started_inside = 99;
  p.arrival = [&](EngineControl& control) {
    const KernelId k = control.active_kernels().front();
    control.assign_sm(SmId{0}, k);
    // The SMST shows the decision; no thread block is on the SM yet; the 3 it takes are claimed.
    EXPECT_EQ(control.sm(SmId{0}).state, SmState::kRunning);
    EXPECT_EQ(control.sm(SmId{0}).kernel, k);
    EXPECT_EQ(control.sm(SmId{0}).claimed_tbs, 3U);
    EXPECT_EQ(control.kernel(k).claimed_tbs, 3U);
    EXPECT_EQ(control.kernel(k).unissued_tbs(), 97U);
    started_inside = fakes_[0]->running.size();
  };
  const KernelId k = launch(test::kernel("k", 100, 1.0, 256, 20000));  // registers allow 3 per SM
  EXPECT_EQ(started_inside, 0U);
  EXPECT_EQ(fakes_[0]->running.size(), 3U);
  EXPECT_EQ(driver_->sm(SmId{0}).claimed_tbs, 0U);
  EXPECT_EQ(driver_->kernel(k).claimed_tbs, 0U);
  EXPECT_EQ(driver_->kernel(k).issued_tbs, 3U);
}

TEST_F(PolicyActions, HandingOutSmsInALoopSeesWhatEachTakes) {
  // fcfs assigns idle SMs to the head kernel while it has thread blocks: 5 TBs at 3 per SM need two
  // SMs; the claims keep it from setting up the other two for a kernel with nothing left for them.
  make("fcfs", 4);
  const KernelId k = launch(test::kernel("k", 5, 1.0, 256, 20000));
  EXPECT_EQ(fakes_[0]->running.size(), 3U);
  EXPECT_EQ(fakes_[1]->running.size(), 2U);
  EXPECT_EQ(driver_->sm(SmId{2}).state, SmState::kIdle);
  EXPECT_EQ(driver_->sm(SmId{3}).state, SmState::kIdle);
  EXPECT_FALSE(driver_->kernel(k).has_tbs_to_issue());
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(PolicyActions, HooksNeverNest) {
  // The SM's last thread block of `a` finishes; on_tb_finished reserves it, empty, for `b`. Carried
  // out inside the hook, the preemption would complete at once and call on_preemption_done from within
  // on_tb_finished; now it comes after it.
  ScriptedPolicy& p = make_scripted(1);
  p.arrival = [&](EngineControl& control) {
    if (control.sm(SmId{0}).state == SmState::kIdle) {
      control.assign_sm(SmId{0}, control.active_kernels().front());
    }
  };
  std::optional<KernelId> b;
  p.tb_finished = [&](SmId sm, KernelId /*kernel*/, EngineControl& control) {
    if (control.sm(sm).running_tbs == 0 && b) {
      control.reserve_sm(sm, *b);
      EXPECT_EQ(control.sm(sm).state, SmState::kReserved);  // in the tables at once
    }
  };
  launch(test::kernel("a", 1, 1.0), 0);
  b = launch(test::kernel("b", 8, 1.0), 1);
  p.log.clear();
  complete(0);
  EXPECT_EQ(p.max_depth, 1);
  const std::vector<std::string> expected = {"tb_finished:1", "preemption_done0:1", "kernel_finished:1"};
  EXPECT_EQ(p.log, expected);
  EXPECT_EQ(driver_->sm(SmId{0}).kernel, b);
  EXPECT_EQ(fakes_[0]->running.size(), 8U);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(PolicyActions, TheDriverChecksAChoiceThePolicyCheckedOnlyElsewhere) {
  // The driver reuses the policy's own can_issue() answer for the kernel select_kernel() chose on that
  // SM (issue_one), and only that one: a check of another SM, or a refusal the policy ignores, must
  // not let a thread block onto a full SM.
  ScriptedPolicy& p = make_scripted();
  p.arrival = [&](EngineControl& control) { control.assign_sm(SmId{0}, control.active_kernels().front()); };
  bool ignore_refusal = false;
  p.select = [&](SmId sm, const EngineControl& control) -> std::optional<KernelId> {
    const KernelId k = control.active_kernels().front();
    // Asks about this SM (no, once it is full) or about SM 1 (idle and empty: yes), then picks k anyway.
    (void)control.can_issue(ignore_refusal ? sm : SmId{1}, k);
    return k;
  };
  const KernelId k = launch(test::kernel("k", 100, 1.0, 256, 20000));  // registers allow 3 per SM
  EXPECT_EQ(fakes_[0]->running.size(), 3U);
  EXPECT_EQ(driver_->kernel(k).issued_tbs, 3U);
  ignore_refusal = true;
  complete(0);  // one thread block ends: room for one more, and no more
  EXPECT_EQ(fakes_[0]->running.size(), 3U);
  EXPECT_EQ(driver_->kernel(k).issued_tbs, 4U);
}

TEST_F(PolicyActions, ActionFromSelectKernelIsAnInvariantViolation) {
  ScriptedPolicy& p = make_scripted();
  p.arrival = [&](EngineControl& control) { control.assign_sm(SmId{0}, control.active_kernels().front()); };
  p.select = [&](SmId sm, const EngineControl& control) -> std::optional<KernelId> {
    // A policy that casts constness away to act from select_kernel.
    const_cast<EngineControl&>(control).request_issue(
        SmId{1});  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    return control.sm(sm).kernel;
  };
  try {
    launch(test::kernel("k", 10, 1.0));
    FAIL() << "expected InvariantViolation";
  } catch (const InvariantViolation& e) {
    EXPECT_NE(std::string(e.what()).find("request_issue from select_kernel"), std::string::npos) << e.what();
  }
}

TEST_F(PolicyActions, ActionFromOnTbStartedIsAnInvariantViolation) {
  ScriptedPolicy& p = make_scripted();
  p.arrival = [&](EngineControl& control) { control.assign_sm(SmId{0}, control.active_kernels().front()); };
  p.tb_started = [&](SmId /*sm*/, KernelId kernel, EngineControl& control) {
    control.assign_sm(SmId{1}, kernel);
  };
  try {
    launch(test::kernel("k", 10, 1.0));
    FAIL() << "expected InvariantViolation";
  } catch (const InvariantViolation& e) {
    EXPECT_NE(std::string(e.what()).find("assign_sm from on_tb_started"), std::string::npos) << e.what();
  }
}

TEST_F(PolicyActions, AssignedSmThatReceivesNothingIsIdleAgainAndReported) {
  ScriptedPolicy& p = make_scripted(1);
  bool refuse = true;
  p.arrival = [&](EngineControl& control) { control.assign_sm(SmId{0}, control.active_kernels().front()); };
  p.select = [&](SmId sm, const EngineControl& control) -> std::optional<KernelId> {
    if (refuse) return std::nullopt;
    return control.sm(sm).kernel;
  };
  p.idle = [&](SmId sm, EngineControl& control) {
    EXPECT_EQ(control.sm(sm).state, SmState::kIdle);
    refuse = false;
    if (!control.active_kernels().empty()) control.assign_sm(sm, control.active_kernels().front());
  };
  launch(test::kernel("k", 4, 1.0));
  const std::vector<std::string> expected = {"arrival:1", "idle0:1"};
  EXPECT_EQ(p.log, expected);
  EXPECT_EQ(fakes_[0]->running.size(), 4U);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

// Issue 20: a claim that takes a kernel's last thread blocks ends its has_tbs_to_issue() inside the hook, and
// its release (the assigned SM took none) brings it back; both move the engine's tbs_to_issue_epoch(), which
// DSS reads to skip its has_tbs look (it looks right after its own assignments, inside the hook).
TEST_F(PolicyActions, ClaimsAndTheirReleaseMoveTheIssueStateEpoch) {
  ScriptedPolicy& p = make_scripted(1);
  bool refuse = true;
  std::uint64_t after_claim = 0;
  p.arrival = [&](EngineControl& control) {
    const KernelId k = control.active_kernels().front();
    const std::uint64_t before = control.tbs_to_issue_epoch();
    ASSERT_TRUE(control.kernel(k).has_tbs_to_issue());
    control.assign_sm(SmId{0}, k);  // 4 thread blocks fit: the claim takes all of them
    EXPECT_FALSE(control.kernel(k).has_tbs_to_issue());
    after_claim = control.tbs_to_issue_epoch();
    EXPECT_NE(after_claim, before);
  };
  p.select = [&](SmId sm, const EngineControl& control) -> std::optional<KernelId> {
    if (refuse) return std::nullopt;
    return control.sm(sm).kernel;
  };
  int idle_calls = 0;
  p.idle = [&](SmId sm, EngineControl& control) {
    if (++idle_calls > 1) return;  // the last, once the kernel finished
    const KernelId k = control.active_kernels().front();
    EXPECT_TRUE(control.kernel(k).has_tbs_to_issue());  // the claim was released: nothing was issued
    EXPECT_NE(control.tbs_to_issue_epoch(), after_claim);
    refuse = false;
    control.assign_sm(sm, k);
  };
  launch(test::kernel("k", 4, 1.0));
  EXPECT_EQ(fakes_[0]->running.size(), 4U);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(PolicyActions, EndlessAssignAndRefuseIsAnInvariantViolationNotAHang) {
  ScriptedPolicy& p = make_scripted(2);
  p.arrival = [&](EngineControl& control) { control.assign_sm(SmId{0}, control.active_kernels().front()); };
  p.select = [](SmId /*sm*/, const EngineControl& /*control*/) -> std::optional<KernelId> {
    return std::nullopt;
  };
  p.idle = [&](SmId sm, EngineControl& control) { control.assign_sm(sm, control.active_kernels().front()); };
  try {
    launch(test::kernel("k", 4, 1.0));
    FAIL() << "expected InvariantViolation";
  } catch (const InvariantViolation& e) {
    EXPECT_NE(std::string(e.what()).find("without settling"), std::string::npos) << e.what();
  }
}

TEST_F(PolicyActions, DealGivesEachSmOneThreadBlockPerRound) {
  ScriptedPolicy& p = make_scripted(3);
  p.arrival = [&](EngineControl& control) { control.deal_thread_blocks(); };
  p.select = [](SmId sm, const EngineControl& control) -> std::optional<KernelId> {
    const KernelId k = control.active_kernels().front();
    return control.can_issue(sm, k) ? std::optional<KernelId>(k) : std::nullopt;
  };
  launch(test::kernel("k", 7, 1.0));  // 8 fit per SM
  const std::vector<std::uint32_t> expected = {0, 1, 2, 0, 1, 2, 0};
  EXPECT_EQ(p.started, expected);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(PolicyActions, ContextSaveStartsAfterTheHook) {
  ScriptedPolicy& p = make_scripted(1, PreemptionMechanism::kContextSwitch);
  p.arrival = [&](EngineControl& control) {
    const SmId sm{0};
    if (control.sm(sm).state == SmState::kIdle) {
      control.assign_sm(sm, control.active_kernels().front());
      return;
    }
    control.reserve_sm(sm, control.active_kernels().back());
    EXPECT_FALSE(fakes_[0]->save_requested);  // the save starts after this hook returns
  };
  p.idle = [&](SmId sm, EngineControl& control) {  // then back to `a`, from its PTBQ
    for (const KernelId k : control.active_kernels()) {
      if (control.kernel(k).has_tbs_to_issue()) return control.assign_sm(sm, k);
    }
  };
  launch(test::kernel("a", 40, 1.0), 0);
  const KernelId b = launch(test::kernel("b", 8, 1.0), 0);
  EXPECT_TRUE(fakes_[0]->save_requested);
  save(0);
  EXPECT_EQ(driver_->sm(SmId{0}).kernel, b);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

}  // namespace
}  // namespace gpumux
