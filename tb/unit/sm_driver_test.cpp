// The SM driver and the fcfs/fifo policies, without SystemC: fake SMs, a manual clock.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "common/test_support.h"
#include "core/error.h"
#include "engine/sm_driver.h"
#include "policy/registry.h"

namespace gpumux {
namespace {

/// An SM that only accounts resources; the test completes thread blocks by hand.
class FakeSm final : public SmPort {
 public:
  explicit FakeSm(const SmResources& limits) : limits_(limits) {}
  [[nodiscard]] bool fits(const TbFootprint& f, std::uint32_t config) const override {
    return usage_.thread_blocks + 1 <= limits_.max_thread_blocks &&
           usage_.registers + f.registers <= limits_.registers &&
           usage_.threads + f.threads <= limits_.max_threads &&
           usage_.shared_memory + f.shared_memory <= config;
  }
  void start_tb(KernelId kernel, std::uint32_t tb, const TbFootprint& f, std::uint32_t, TimePs) override {
    usage_.thread_blocks++;
    usage_.registers += f.registers;
    usage_.threads += f.threads;
    usage_.shared_memory += f.shared_memory;
    usage_.warps += f.warps;
    running.push_back({kernel, tb, f});
  }
  [[nodiscard]] const SmUsage& usage() const override { return usage_; }

  struct Tb {
    KernelId kernel;
    std::uint32_t tb;
    TbFootprint f;
  };
  /// Removes the oldest running TB and returns it (as the SM would before reporting it).
  Tb finish_oldest() {
    Tb t = running.front();
    running.erase(running.begin());
    usage_.thread_blocks--;
    usage_.registers -= t.f.registers;
    usage_.threads -= t.f.threads;
    usage_.shared_memory -= t.f.shared_memory;
    usage_.warps -= t.f.warps;
    return t;
  }
  std::vector<Tb> running;

 private:
  const SmResources& limits_;
  SmUsage usage_;
};

class DriverTest : public ::testing::Test {
 protected:
  void make(const std::string& policy, std::uint32_t sms = 2) {
    gpu_ = test::k20c();
    gpu_.num_sms = sms;
    gpu_.active_kernels = std::max(sms, 2U);
    SmDriver::Hooks hooks;
    hooks.now = [this] { return now_; };
    hooks.kernel_finished = [this](KernelId k) { finished_.push_back(k); };
    hooks.process_names = {"p0", "p1"};
    driver_ = std::make_unique<SmDriver>(gpu_, create_policy(policy), TbDurationMode::kFixed, 1, hooks);
    fakes_.clear();
    for (std::uint32_t s = 0; s < sms; ++s) fakes_.push_back(std::make_unique<FakeSm>(gpu_.sm));
    std::vector<SmPort*> ports;
    for (auto& f : fakes_) ports.push_back(f.get());
    driver_->attach_sms(ports);
  }
  KernelId launch(const std::shared_ptr<KernelDesc>& desc, std::uint32_t process = 0) {
    descs_.push_back(desc);
    KernelStatus k;
    k.process = ProcessId{process};
    k.desc = desc.get();
    return driver_->launch(k);
  }
  void complete(std::uint32_t sm) {
    const FakeSm::Tb t = fakes_[sm]->finish_oldest();
    driver_->on_tb_complete(SmId{sm}, t.kernel, t.tb, now_);
  }
  void drain_all() {
    bool any = true;
    while (any) {
      any = false;
      for (std::uint32_t s = 0; s < fakes_.size(); ++s) {
        if (!fakes_[s]->running.empty()) {
          ++now_;
          complete(s);
          any = true;
        }
      }
    }
  }

  GpuConfig gpu_;
  TimePs now_ = 0;
  std::vector<KernelId> finished_;
  std::vector<std::shared_ptr<KernelDesc>> descs_;
  std::vector<std::unique_ptr<FakeSm>> fakes_;
  std::unique_ptr<SmDriver> driver_;
};

TEST_F(DriverTest, IssuesUntilTheFirstResourceRunsOut) {
  make("fcfs");
  launch(test::kernel("k", 100, 1.0, 256, 20000));  // registers allow 3 per SM
  EXPECT_EQ(fakes_[0]->running.size(), 3U);
  EXPECT_EQ(fakes_[1]->running.size(), 3U);
  EXPECT_EQ(driver_->sm(SmId{0}).state, SmState::kRunning);
}

TEST_F(DriverTest, EveryThreadBlockRunsExactlyOnce) {
  make("fcfs");
  const KernelId k = launch(test::kernel("k", 37, 1.0));
  drain_all();
  EXPECT_EQ(driver_->kernel(k).completed_tbs, 37U);
  EXPECT_EQ(driver_->tbs_issued(), 37U);
  ASSERT_EQ(finished_.size(), 1U);
  EXPECT_NO_THROW(driver_->check_final_invariants());
  EXPECT_EQ(driver_->sm(SmId{0}).state, SmState::kIdle);
}

TEST_F(DriverTest, DuplicateCompletionIsAnInvariantViolation) {
  make("fcfs");
  const KernelId k = launch(test::kernel("k", 10, 1.0));
  const FakeSm::Tb t = fakes_[0]->running.front();
  complete(0);
  try {
    driver_->on_tb_complete(SmId{0}, k, t.tb, now_);
    FAIL() << "expected InvariantViolation";
  } catch (const InvariantViolation& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("SM 0"), std::string::npos) << what;
    EXPECT_NE(what.find("'k'"), std::string::npos) << what;
    EXPECT_NE(what.find("completed twice"), std::string::npos) << what;
  }
}

TEST_F(DriverTest, UnfinishedKernelFailsTheFinalCheck) {
  make("fcfs");
  launch(test::kernel("k", 10, 1.0));
  complete(0);
  EXPECT_THROW(driver_->check_final_invariants(), InvariantViolation);
}

TEST_F(DriverTest, FcfsKeepsOtherContextsOffTheEngine) {
  make("fcfs");
  const KernelId a = launch(test::kernel("a", 8, 1.0, 256, 8192), 0);  // 8/SM: fits on SM 0 alone
  const KernelId b = launch(test::kernel("b", 8, 1.0, 256, 8192), 1);
  EXPECT_EQ(driver_->kernel(a).issued_tbs, 8U);
  // SM 1 is idle, but b belongs to another process: it waits (Tanasic 2.3).
  EXPECT_EQ(driver_->kernel(b).issued_tbs, 0U);
  EXPECT_EQ(driver_->sm(SmId{1}).state, SmState::kIdle);
  drain_all();
  EXPECT_EQ(driver_->kernel(b).completed_tbs, 8U);
}

TEST_F(DriverTest, FifoLetsAnotherContextUseIdleSms) {
  make("fifo");
  launch(test::kernel("a", 8, 1.0, 256, 8192), 0);
  const KernelId b = launch(test::kernel("b", 8, 1.0, 256, 8192), 1);
  EXPECT_EQ(driver_->kernel(b).issued_tbs, 8U);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(DriverTest, ActiveQueueHoldsAtMostItsCapacity) {
  make("fifo");
  for (int i = 0; i < 5; ++i) launch(test::kernel("k" + std::to_string(i), 1, 1.0));
  EXPECT_EQ(driver_->active_kernels().size(), 2U);  // N_SM entries (Tanasic 3.3)
  drain_all();
  EXPECT_EQ(finished_.size(), 5U);
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(DriverTest, ResidencyLimitTakesEffectAsThreadBlocksFinish) {
  make("fcfs", 1);
  const KernelId k = launch(test::kernel("k", 40, 1.0, 256, 8192));  // 8 resident
  EXPECT_EQ(fakes_[0]->running.size(), 8U);
  driver_->set_residency_limit(SmId{0}, k, 3);
  EXPECT_EQ(fakes_[0]->running.size(), 8U);  // never evicts
  for (int i = 0; i < 6; ++i) complete(0);
  EXPECT_EQ(fakes_[0]->running.size(), 3U);
  drain_all();
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST_F(DriverTest, DrainReservationHandsTheSmToTheNextKernel) {
  make("fifo", 1);
  const KernelId a = launch(test::kernel("a", 40, 1.0, 256, 8192), 0);
  const KernelId b = launch(test::kernel("b", 8, 1.0, 256, 8192), 1);
  driver_->reserve_sm(SmId{0}, b);
  EXPECT_EQ(driver_->sm(SmId{0}).state, SmState::kReserved);
  for (int i = 0; i < 7; ++i) complete(0);
  EXPECT_EQ(driver_->kernel(b).issued_tbs, 0U);  // still draining a's TBs
  complete(0);
  EXPECT_EQ(driver_->sm(SmId{0}).state, SmState::kRunning);
  EXPECT_EQ(driver_->sm(SmId{0}).kernel, b);
  EXPECT_EQ(driver_->kernel(b).issued_tbs, 8U);
  drain_all();
  EXPECT_EQ(driver_->kernel(a).completed_tbs, 40U);
  EXPECT_NO_THROW(driver_->check_final_invariants());
}

TEST(PolicyRegistry, UnknownNameIsAnInputErrorListingTheKnownOnes) {
  try {
    (void)create_policy("nope");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fcfs"), std::string::npos);
  }
  EXPECT_NE(find_policy("fcfs"), nullptr);
  EXPECT_NE(find_policy("fifo"), nullptr);
}

}  // namespace
}  // namespace gpumux
