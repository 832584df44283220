#pragma once
// First-come first-served thread-block scheduling, in two hardware flavours:
//  - kFcfs (Tanasic 2.3, today's GPUs): the SM driver sets up idle SMs for the oldest kernel with
//    thread blocks left and keeps issuing it; the next kernel runs back to back on SMs as they free
//    up. An engine runs kernels of one context (process) at a time: a kernel of another process
//    waits until the engine holds no other context's work.
//  - kFifo (Pai 5.2.1, Fermi TB scheduler): thread blocks of the next kernel are scheduled only once
//    every block of the previous kernel has been dispatched, and may share an SM with them.

#include "policy/policy.h"

namespace gpumux {

class FcfsPolicy final : public SchedulingPolicy {
 public:
  enum class Variant { kFcfs, kFifo };
  explicit FcfsPolicy(Variant variant) : variant_(variant) {}

  [[nodiscard]] std::string name() const override { return variant_ == Variant::kFcfs ? "fcfs" : "fifo"; }
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  [[nodiscard]] std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control) override;
  [[nodiscard]] bool select_kernel_only_reads() const override { return true; }
  [[nodiscard]] bool observes_thread_blocks() const override { return false; }

 private:
  /// Oldest active kernel that still has thread blocks to issue.
  [[nodiscard]] static std::optional<KernelId> head_kernel(const EngineControl& control);
  /// Tanasic 2.3: may `kernel` start while other work is on the engine?
  [[nodiscard]] bool context_allows(KernelId kernel, const EngineControl& control) const;
  void fill_idle_sms(EngineControl& control);
  void backfill_running_sms(EngineControl& control);

  Variant variant_;
};

}  // namespace gpumux
