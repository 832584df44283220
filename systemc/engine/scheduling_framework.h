#pragma once
// The scheduling framework's storage (Tanasic 3.3, Fig. 4): one command buffer per GPU context, each
// holding at most one kernel launch that waits for a KSRT entry; the active queue / KSRT of at most
// `active_capacity` kernels; and the SMST. "Command Buffers receive the commands from the command
// dispatcher and separate the execution commands from different contexts. Each command buffer can
// store one command. ... When there are free entries in the active queue, the scheduling policy can
// read a command (kernel launch) from one of the command buffers and allocate an entry in the KSRT."
// Plain C++; the SM driver implements the mechanisms on top of it and asks the policy which buffer
// to admit (SchedulingPolicy::select_admission).

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/tables.h"

namespace gpumux {

class SchedulingFramework {
 public:
  SchedulingFramework(std::uint32_t num_sms, std::uint32_t active_capacity);

  /// True when the command buffer of `process` is empty, i.e. it can take a launch.
  [[nodiscard]] bool buffer_free(ProcessId process) const;
  /// Registers a new kernel launch in its context's command buffer and returns its id. Throws
  /// InvariantViolation when that buffer is occupied (the dispatcher checks buffer_free() first).
  KernelId add_kernel(KernelStatus status);
  /// The kernels in the command buffers, in context order; empty when none waits.
  [[nodiscard]] std::vector<KernelId> buffered() const;
  /// True when the active queue has a free entry and some command buffer holds a launch.
  [[nodiscard]] bool can_admit() const { return buffered_count_ != 0 && active_.size() < active_capacity_; }
  /// Moves `kernel` from its command buffer into the active queue (the lowest free KSRT entry).
  void admit(KernelId kernel, TimePs now);
  /// Frees the KSRT entry of a finished kernel.
  void retire(KernelId kernel);

  [[nodiscard]] KernelStatus& kernel(KernelId id) { return kernels_[index(id)]; }
  [[nodiscard]] const KernelStatus& kernel(KernelId id) const { return kernels_[index(id)]; }
  [[nodiscard]] const std::vector<KernelStatus>& all_kernels() const { return kernels_; }
  [[nodiscard]] const std::vector<KernelId>& active_queue() const { return active_; }
  /// Launches waiting in command buffers.
  [[nodiscard]] std::size_t waiting() const { return buffered_count_; }
  [[nodiscard]] SmStatus& sm(SmId id) { return smst_[index(id)]; }
  [[nodiscard]] const SmStatus& sm(SmId id) const { return smst_[index(id)]; }
  [[nodiscard]] std::uint32_t num_sms() const { return static_cast<std::uint32_t>(smst_.size()); }
  [[nodiscard]] std::uint32_t active_capacity() const { return active_capacity_; }

  /// A count that changes whenever some kernel's has_tbs_to_issue() may have changed or a kernel entered
  /// or left the active queue (admit() and retire() advance it; the SM driver, which changes the KSRs'
  /// issue state, calls note_tbs_to_issue_changed()). Equal readings mean no kernel's answer changed in
  /// between, so a policy that mirrors those answers (DSS's has_tbs inputs) need not look again.
  [[nodiscard]] std::uint64_t tbs_to_issue_epoch() const { return tbs_to_issue_epoch_; }
  void note_tbs_to_issue_changed() { ++tbs_to_issue_epoch_; }

 private:
  std::vector<KernelStatus> kernels_;                    ///< every launch of the run, indexed by KernelId
  std::vector<std::optional<KernelId>> command_buffer_;  ///< per context (process index)
  std::size_t buffered_count_ = 0;
  std::vector<KernelId> active_;  ///< active queue (admission order)
  std::vector<bool> slot_used_;   ///< KSRT entries in use
  std::vector<SmStatus> smst_;
  std::uint32_t active_capacity_;
  std::uint64_t tbs_to_issue_epoch_ = 0;
};

}  // namespace gpumux
