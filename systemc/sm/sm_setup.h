#pragma once
// When an SM may begin a thread block, given the setup it needs first (Tanasic 3.1 and Fig. 3: the SM
// driver sets an SM up for a kernel, writing its context id, page-table base and the kernel's
// parameters, before the SM receives that kernel's thread blocks). Shared by both SM models; plain C++.
//
// The SM holds the setup of its last `slots` kernels (GpuConfig's sm.max_resident_kernels: one on
// Tanasic's Kepler, where an SM runs one kernel at a time). A thread block of one of them begins at
// once, or when that kernel's setup under way ends; one of another kernel has the SM set up for it,
// its kernel replacing the least recently set-up one.
//
// Which setups cost time: only those after a preemption (`charged`). The kernel times the thread-block
// durations are calibrated to (Tanasic Table 1's Avg. Time, Pai Table 3) were measured on hardware
// that set every SM up at each kernel's start, so the calibrated durations already hold the setups of
// a kernel run alone and of back-to-back kernels; charging them again would count them twice. A
// preemption (context switch or draining) adds a setup the calibration holds nothing for: the SM is
// set up for the kernel it is handed, `setup_ps` after any setup under way. An SM handed back the
// kernel it was set up for pays nothing.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/types.h"

namespace gpumux {

class SmSetup {
 public:
  SmSetup(TimePs setup_ps, std::uint32_t slots) : setup_ps_(setup_ps), slots_(std::max(slots, 1U)) {}

  /// The time a thread block of `kernel` issued at `now` may begin (restore its context or run).
  /// `charged`: the SM was preempted since its last thread block, so a setup for a new kernel costs
  /// `setup_ps` (see above).
  TimePs begin(KernelId kernel, TimePs now, bool charged) {
    const auto it =
        std::find_if(set_up_.begin(), set_up_.end(), [&](const SetUp& s) { return s.kernel == kernel; });
    if (it != set_up_.end()) {
      // Most recently used last (a rotate of at most `slots` entries, usually one).
      const SetUp hit = *it;
      std::rotate(it, it + 1, set_up_.end());
      set_up_.back() = hit;
      return std::max(now, hit.ready_ps);
    }
    if (set_up_.size() == slots_) set_up_.erase(set_up_.begin());
    if (!charged) {
      set_up_.push_back({kernel, now});
      return now;
    }
    // Setups are done one after another: a new one starts when the latest one has ended.
    const TimePs start = std::max(now, last_ready_ps_);
    last_ready_ps_ = start + setup_ps_;
    set_up_.push_back({kernel, last_ready_ps_});
    ++setups_;
    setup_total_ps_ += last_ready_ps_ - now;
    return last_ready_ps_;
  }

  /// Charged setups so far, and the time thread blocks waited for them (each setup counted once,
  /// from the request of the thread block that caused it).
  [[nodiscard]] std::uint64_t setups() const { return setups_; }
  [[nodiscard]] TimePs setup_total_ps() const { return setup_total_ps_; }

 private:
  struct SetUp {
    KernelId kernel{};
    TimePs ready_ps = 0;
  };

  TimePs setup_ps_;
  std::size_t slots_;
  std::vector<SetUp> set_up_;  ///< least recently used first
  TimePs last_ready_ps_ = 0;
  std::uint64_t setups_ = 0;
  TimePs setup_total_ps_ = 0;
};

}  // namespace gpumux
