#pragma once
// The scheduling framework's storage (Tanasic 3.3, Fig. 4): the execution queue of kernels waiting
// for a KSRT entry, the active queue / KSRT of at most `active_capacity` kernels, and the SMST.
// Plain C++; the SM driver implements the mechanisms on top of it.

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/tables.h"

namespace gpumux {

class SchedulingFramework {
 public:
  SchedulingFramework(std::uint32_t num_sms, std::uint32_t active_capacity);

  /// Registers a new kernel launch (in the execution queue) and returns its id.
  KernelId add_kernel(KernelStatus status);
  /// Moves waiting kernels into the active queue while it has room; returns those admitted.
  std::vector<KernelId> admit_waiting(TimePs now);
  /// Frees the KSRT entry of a finished kernel.
  void retire(KernelId kernel);

  [[nodiscard]] KernelStatus& kernel(KernelId id) { return kernels_[index(id)]; }
  [[nodiscard]] const KernelStatus& kernel(KernelId id) const { return kernels_[index(id)]; }
  [[nodiscard]] const std::vector<KernelStatus>& all_kernels() const { return kernels_; }
  [[nodiscard]] const std::vector<KernelId>& active_queue() const { return active_; }
  [[nodiscard]] std::size_t waiting() const { return execution_queue_.size(); }
  [[nodiscard]] SmStatus& sm(SmId id) { return smst_[index(id)]; }
  [[nodiscard]] const SmStatus& sm(SmId id) const { return smst_[index(id)]; }
  [[nodiscard]] std::uint32_t num_sms() const { return static_cast<std::uint32_t>(smst_.size()); }
  [[nodiscard]] std::uint32_t active_capacity() const { return active_capacity_; }

 private:
  std::vector<KernelStatus> kernels_;  ///< every launch of the run, indexed by KernelId
  std::deque<KernelId> execution_queue_;
  std::vector<KernelId> active_;  ///< active queue (admission order)
  std::vector<bool> slot_used_;   ///< KSRT entries in use
  std::vector<SmStatus> smst_;
  std::uint32_t active_capacity_;
};

}  // namespace gpumux
