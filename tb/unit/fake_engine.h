#pragma once
// A fake execution engine for policy and SM-driver unit tests: SMs that only account resources
// (the test completes thread blocks and context saves by hand) and a manual clock. No SystemC.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_support.h"
#include "engine/sm_driver.h"
#include "policy/registry.h"
#include "sm/tb/tb_duration.h"

namespace gpumux::test {

/// An SM that only accounts resources; the test completes thread blocks by hand.
class FakeSm final : public SmPort {
 public:
  explicit FakeSm(const SmResources& limits) : limits_(limits) {}
  [[nodiscard]] bool fits(const TbFootprint& f, std::uint32_t config) const override {
    return usage_.fits(limits_, f, config);
  }
  TimePs start_tb(const TbLaunch& launch) override {
    usage_.add(launch.footprint);
    running.push_back(
        {launch.kernel, launch.tb, launch.footprint, durations_.duration_of(launch), launch.restore_bytes});
    return 0;  // always set up
  }
  /// The save is completed by the test with finish_save().
  void save_context() override { save_requested = true; }
  /// Completes a requested context save: every running TB is reported saved with its duration left.
  std::vector<PreemptedTb> take_all() {
    std::vector<PreemptedTb> saved;
    while (!running.empty()) {
      const Tb t = finish_oldest();
      saved.push_back({t.kernel, t.tb, {t.duration, {}}});
    }
    save_requested = false;
    return saved;
  }
  bool save_requested = false;
  [[nodiscard]] const SmUsage& usage() const override { return usage_; }

  struct Tb {
    KernelId kernel;
    std::uint32_t tb;
    TbFootprint f;
    TimePs duration;
    std::uint64_t restore_bytes;
  };
  /// Removes the oldest running TB and returns it (as the SM would before reporting it).
  Tb finish_oldest() {
    Tb t = running.front();
    running.erase(running.begin());
    usage_.remove(t.f);
    return t;
  }
  std::vector<Tb> running;

 private:
  const SmResources& limits_;
  SmUsage usage_;
  TbDurationModel durations_{TbDurationMode::kFixed, 1};
};

class DriverTest : public ::testing::Test {
 protected:
  void make(const std::string& policy, std::uint32_t sms = 2,
            PreemptionMechanism mechanism = PreemptionMechanism::kDrain, const PolicyOptions& options = {}) {
    make_with(create_policy(policy, options), sms, mechanism);
  }
  /// make() with a policy object (a test's own scripted policy).
  void make_with(std::unique_ptr<SchedulingPolicy> policy, std::uint32_t sms = 2,
                 PreemptionMechanism mechanism = PreemptionMechanism::kDrain) {
    gpu_ = test::k20c();
    gpu_.num_sms = sms;
    gpu_.active_kernels = std::max(sms, 4U);
    SmDriver::Hooks hooks;
    hooks.now = [this] { return now_; };
    hooks.kernel_finished = [this](KernelId k) { finished_.push_back(k); };
    hooks.process_names = {"p0", "p1"};
    driver_ = std::make_unique<SmDriver>(gpu_, std::move(policy), hooks);
    driver_->set_preemption(mechanism);
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
    completed_.emplace_back(sm, index(t.kernel), t.tb, now_);
    driver_->on_tb_complete(SmId{sm}, t.kernel, t.tb, now_);
  }
  /// Completes the context save an SM was asked for.
  void save(std::uint32_t sm) {
    ASSERT_TRUE(fakes_[sm]->save_requested) << "SM " << sm << " was not asked to save its context";
    driver_->on_context_saved(SmId{sm}, fakes_[sm]->take_all(), ContextSave{1, 0, 0, now_});
  }
  /// Runs until nothing is left: completes TBs (oldest first, SM by SM) and requested saves.
  void drain_all() {
    bool any = true;
    while (any) {
      any = false;
      for (std::uint32_t s = 0; s < fakes_.size(); ++s) {
        if (fakes_[s]->save_requested) {
          ++now_;
          save(s);
          any = true;
        } else if (!fakes_[s]->running.empty()) {
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
  /// Every thread block complete() ended: (SM, kernel, thread block, time), in order.
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, TimePs>> completed_;
  std::vector<std::shared_ptr<KernelDesc>> descs_;
  std::vector<std::unique_ptr<FakeSm>> fakes_;
  std::unique_ptr<SmDriver> driver_;
};

}  // namespace gpumux::test
