#pragma once
// A tiny discrete-event engine for policy unit tests that need time to pass (runtime predictors,
// SRTF hand-off): the real SmDriver over SMs that only account resources and complete each thread
// block after the duration the driver gave it, earliest first. No SystemC. Policies that preempt
// are not supported (save_context fails the test).

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/test_support.h"
#include "engine/sm_driver.h"
#include "policy/registry.h"
#include "sm/tb/tb_duration.h"

namespace gpumux::test {

class TimedSm final : public SmPort {
 public:
  TimedSm(const SmResources& limits, const TimePs& now) : limits_(limits), now_(now) {}
  [[nodiscard]] bool fits(const TbFootprint& f, std::uint32_t config) const override {
    return usage_.fits(limits_, f, config);
  }
  TimePs start_tb(const TbLaunch& launch) override {
    usage_.add(launch.footprint);
    running.push_back(
        {launch.kernel, launch.tb, launch.footprint, now_, now_ + durations_.duration_of(launch), order_++});
    return 0;  // always set up
  }
  void save_context() override { ADD_FAILURE() << "policy preempted an SM"; }
  [[nodiscard]] const SmUsage& usage() const override { return usage_; }

  struct Tb {
    KernelId kernel;
    std::uint32_t tb;
    TbFootprint f;
    TimePs start;
    TimePs end;
    std::uint64_t order;
  };
  /// Index of the running TB that ends first (ties: issued first); running must not be empty.
  [[nodiscard]] std::size_t earliest() const {
    return static_cast<std::size_t>(std::min_element(running.begin(), running.end(),
                                                     [](const Tb& a, const Tb& b) {
                                                       return a.end != b.end ? a.end < b.end
                                                                             : a.order < b.order;
                                                     }) -
                                    running.begin());
  }
  Tb take(std::size_t i) {
    Tb t = running[i];
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    usage_.remove(t.f);
    return t;
  }
  [[nodiscard]] std::uint32_t resident(KernelId k) const {
    return static_cast<std::uint32_t>(
        std::count_if(running.begin(), running.end(), [&](const Tb& t) { return t.kernel == k; }));
  }
  std::vector<Tb> running;

 private:
  const SmResources& limits_;
  const TimePs& now_;
  SmUsage usage_;
  std::uint64_t order_ = 0;
  TbDurationModel durations_{TbDurationMode::kFixed, 1};
};

/// Fermi-like SMs (Pai Table 4: 32768 registers, 1536 threads, 8 TBs, 48 warps, 48 KB, up to 8
/// kernels per SM), `sms` of them, fixed thread-block times.
class TimedEngineTest : public ::testing::Test {
 protected:
  void make(const std::string& policy, std::uint32_t sms = 2, const PolicyOptions& options = {},
            std::uint32_t max_resident_kernels = 8) {
    now_ = 0;
    finished_.clear();
    end_.clear();
    gpu_ = test::k20c();
    gpu_.name = "test-fermi";
    gpu_.num_sms = sms;
    gpu_.core_clock_mhz = 700;
    gpu_.sm.registers = 32768;
    gpu_.sm.max_threads = 1536;
    gpu_.sm.max_thread_blocks = 8;
    gpu_.sm.max_warps = 48;
    gpu_.sm.shared_memory_configs = {49152};
    gpu_.sm.max_resident_kernels = max_resident_kernels;
    gpu_.active_kernels = 8;
    SmDriver::Hooks hooks;
    hooks.now = [this] { return now_; };
    hooks.kernel_finished = [this](KernelId k) {
      finished_.push_back(k);
      end_.resize(std::max<std::size_t>(end_.size(), index(k) + 1), kNever);
      end_[index(k)] = now_;
    };
    hooks.process_names = {"p0", "p1", "p2", "p3"};
    driver_ = std::make_unique<SmDriver>(gpu_, create_policy(policy, options), hooks);
    sms_.clear();
    for (std::uint32_t s = 0; s < sms; ++s) sms_.push_back(std::make_unique<TimedSm>(gpu_.sm, now_));
    std::vector<SmPort*> ports;
    for (auto& s : sms_) ports.push_back(s.get());
    driver_->attach_sms(ports);
  }
  /// A kernel with `tbs` blocks of `tb_ps` each; `threads` and `regs` per TB set its residency.
  static std::shared_ptr<KernelDesc> kernel(const std::string& name, std::uint32_t tbs, TimePs tb_ps,
                                            std::uint32_t threads = 64, std::uint32_t regs = 1024) {
    auto k = test::kernel(name, tbs, 1.0, threads, regs);
    k->tb_time = {tb_ps, 0};
    return k;
  }
  KernelId launch(const std::shared_ptr<KernelDesc>& desc, std::uint32_t process = 0) {
    descs_.push_back(desc);
    KernelStatus k;
    k.process = ProcessId{process};
    k.desc = desc.get();
    return driver_->launch(k);
  }
  /// Completes the thread block that ends first anywhere; false when nothing runs.
  bool step() {
    std::size_t best_sm = sms_.size();
    TimePs best_end = kNever;
    for (std::size_t s = 0; s < sms_.size(); ++s) {
      if (sms_[s]->running.empty()) continue;
      const TimePs end = sms_[s]->running[sms_[s]->earliest()].end;
      if (end < best_end) {
        best_end = end;
        best_sm = s;
      }
    }
    if (best_sm == sms_.size()) return false;
    const TimedSm::Tb t = sms_[best_sm]->take(sms_[best_sm]->earliest());
    now_ = t.end;
    driver_->on_tb_complete(SmId{static_cast<std::uint32_t>(best_sm)}, t.kernel, t.tb, t.start);
    return true;
  }
  /// Runs until `now_` reaches `until` (completions at `until` included) or nothing runs.
  void run_until(TimePs until) {
    while (true) {
      TimePs next = kNever;
      for (auto& s : sms_) {
        if (!s->running.empty()) next = std::min(next, s->running[s->earliest()].end);
      }
      if (next == kNever || next > until) break;
      step();
    }
    now_ = std::max(now_, until);
  }
  void run_all() {
    while (step()) {
    }
  }
  [[nodiscard]] TimePs end_of(KernelId k) const { return index(k) < end_.size() ? end_[index(k)] : kNever; }
  [[nodiscard]] std::uint32_t resident(std::uint32_t sm, KernelId k) const { return sms_[sm]->resident(k); }
  template <typename P>
  [[nodiscard]] const P& policy() const {
    return dynamic_cast<const P&>(driver_->policy());
  }

  GpuConfig gpu_;
  TimePs now_ = 0;
  std::vector<KernelId> finished_;
  std::vector<TimePs> end_;
  std::vector<std::shared_ptr<KernelDesc>> descs_;
  std::vector<std::unique_ptr<TimedSm>> sms_;
  std::unique_ptr<SmDriver> driver_;
};

}  // namespace gpumux::test
