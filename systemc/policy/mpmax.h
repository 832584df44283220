#pragma once
// Just-in-time MPMax (Pai 5.2.2), a resource-allocation policy: each running kernel sets aside, on
// every SM, room for one thread block of each co-runner, by a residency limit on itself. The limits
// are recomputed whenever the set of co-running kernels changes (a kernel arrives, finishes, or has
// dispatched all its thread blocks) and lifted when co-running ends, so a kernel reoccupies what it
// had set aside. Thread blocks are issued in FIFO order: from a kernel until its limit (or the SM)
// is full, then from the next kernel in arrival order.
//
// Interpretation choices (docs/validation.md, "Pai policies"):
//  - "Kernels actually running" are the active kernels that still have thread blocks to issue: a
//    kernel whose blocks are all dispatched cannot use room set aside for it, so none is kept.
//  - A kernel's limit is the most of its TBs that fit beside one TB of each co-runner (registers,
//    threads, warps, TB slots, shared memory), at least 1; no limit when that is its full residency.
//  - With max_resident_kernels = 1 kernels cannot share an SM: no room is set aside (MPMax is FIFO);
//    with fewer kernel slots than co-runners, room is kept for the oldest co-runners that fit.
//  - Lowering a limit never evicts a running thread block; it takes effect as blocks finish.

#include <vector>

#include "policy/policy.h"

namespace gpumux {

class MpmaxPolicy final : public SchedulingPolicy {
 public:
  [[nodiscard]] std::string name() const override { return "mpmax"; }
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_tb_finished(SmId sm, KernelId kernel, TimePs duration_ps, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  [[nodiscard]] std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control) override;

  /// Times the limits were recomputed because the set of co-running kernels changed.
  [[nodiscard]] std::uint64_t recomputations() const { return recomputations_; }

 private:
  /// Kernels that still have thread blocks to issue, in arrival order.
  [[nodiscard]] static std::vector<KernelId> running_set(const EngineControl& control);
  /// Recomputes the limits when the running set differs from the one they were computed for.
  void update(EngineControl& control);
  [[nodiscard]] static std::optional<KernelId> first_issuable(SmId sm, const EngineControl& control);

  std::vector<KernelId> limited_for_;  ///< running set the current limits were computed for
  std::vector<KernelId> limited_;      ///< kernels with a limit set
  std::uint64_t recomputations_ = 0;
};

}  // namespace gpumux
