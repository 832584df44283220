#pragma once
// Static spatial partitioning: each process (GPU context) owns a fixed, contiguous range of SMs for the
// whole run, and its kernels run only there, back to back in arrival order as fcfs runs them on a whole
// GPU. It is the a:b SM allocation of Liang et al. (Sec. 2, Fig. 2: kernels of different
// applications on disjoint SM sets), given by hand instead of decided by STM, and the
// arrangement the memory-interference check of docs/validation.md uses: two kernels on their own SMs
// meet only in the memory system.
//
// Option sms=a:b:... gives the SMs of each process in workload order (process 0 takes SMs 0..a-1, process
// 1 the next b, ...); the list must name every process and fit the GPU. Without it the SMs are split
// evenly, the first (N_SM mod processes) processes taking one more. SMs past the allocations stay idle.
// The policy never preempts.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "policy/registry.h"

namespace gpumux {

class SpatialPolicy final : public SchedulingPolicy {
 public:
  explicit SpatialPolicy(std::vector<std::uint32_t> sms) : asked_(std::move(sms)) {}
  /// Option: sms=a:b:... (SMs per process in workload order).
  [[nodiscard]] static const OptionSpecs& option_specs();
  /// From values parsed against option_specs().
  [[nodiscard]] static std::unique_ptr<SchedulingPolicy> create(const OptionValues& options);

  [[nodiscard]] std::string name() const override { return "spatial"; }
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  [[nodiscard]] std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control) override;
  [[nodiscard]] bool select_kernel_only_reads() const override { return true; }
  [[nodiscard]] bool observes_thread_blocks() const override { return false; }

  /// The process owning `sm` (nullopt: the SM belongs to none). Valid after the first hook.
  [[nodiscard]] std::optional<std::uint32_t> owner(SmId sm) const;

 private:
  /// Computes the SM ranges on the first hook (the GPU's SM and process counts are known then).
  void ensure_partition(const EngineControl& control);
  /// Oldest active kernel of `process` with thread blocks to issue.
  [[nodiscard]] static std::optional<KernelId> head_kernel(std::uint32_t process,
                                                           const EngineControl& control);
  void fill_idle_sms(EngineControl& control);

  std::vector<std::uint32_t> asked_;
  std::vector<std::optional<std::uint32_t>> owner_;  ///< per SM; empty until the first hook
};

}  // namespace gpumux
