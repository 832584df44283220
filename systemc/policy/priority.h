#pragma once
// Priority scheduling of kernels on SMs (Tanasic 4.2, Fig. 2):
//  - npq: non-preemptive priority queues. The highest-priority kernel with thread blocks left gets
//    the next idle SMs; running thread blocks are never preempted.
//  - ppq: preemptive priority queues. As npq, and when a kernel of higher priority has thread blocks
//    left and no SM is idle, SMs running lower-priority kernels are reserved for it (preempted with
//    the configured mechanism: context switch or draining). Two variants (option `access`):
//      shared (default): only as many SMs as the high-priority kernel can use are taken; idle SMs
//        run lower-priority kernels back to back.
//      exclusive: the highest-priority active kernel holds the execution engine: every SM running a
//        lower-priority kernel is reserved for it, and no lower-priority kernel starts on an idle SM
//        until it finishes.
// Priorities come from the workload's process `priority` (higher is more important); ties go to the
// kernel admitted first. When the active queue is full, the highest-priority launch waiting in a
// command buffer is admitted first (Tanasic 3.3; ties: first come).

#include "policy/policy.h"
#include "policy/registry.h"

namespace gpumux {

class PriorityPolicy final : public SchedulingPolicy {
 public:
  enum class Mode { kNonPreemptive, kPreemptiveShared, kPreemptiveExclusive };
  explicit PriorityPolicy(Mode mode) : mode_(mode) {}
  /// ppq's option: access=shared|exclusive.
  [[nodiscard]] static const OptionSpecs& preemptive_option_specs();
  /// ppq from values parsed against preemptive_option_specs().
  [[nodiscard]] static std::unique_ptr<SchedulingPolicy> preemptive(const OptionValues& options);

  [[nodiscard]] std::string name() const override;
  /// select_kernel: the default (the kernel the SM is set up for), which only reads.
  [[nodiscard]] bool select_kernel_only_reads() const override { return true; }
  [[nodiscard]] bool observes_thread_blocks() const override { return false; }
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  void on_preemption_done(SmId sm, KernelId preempted, EngineControl& control) override;
  /// The highest-priority waiting launch enters the active queue first (ties: first come).
  [[nodiscard]] KernelId select_admission(const std::vector<KernelId>& waiting,
                                          const EngineControl& control) override;

 private:
  /// Highest-priority active kernel satisfying `want` (ties: admission order).
  template <typename Want>
  [[nodiscard]] static std::optional<KernelId> best(const EngineControl& control, Want want);
  /// SMs running `kernel` or reserved for it.
  [[nodiscard]] static std::uint32_t sms_held(KernelId kernel, const EngineControl& control);
  void rebalance(EngineControl& control);
  void fill_idle_sms(EngineControl& control);
  void preempt_for_higher_priority(EngineControl& control);

  Mode mode_;
};

}  // namespace gpumux
