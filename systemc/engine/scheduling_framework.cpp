#include "engine/scheduling_framework.h"

#include <algorithm>

namespace gpumux {

SchedulingFramework::SchedulingFramework(std::uint32_t num_sms, std::uint32_t active_capacity)
    : slot_used_(active_capacity, false), smst_(num_sms), active_capacity_(active_capacity) {
  for (std::uint32_t s = 0; s < num_sms; ++s) smst_[s].id = SmId{s};
}

KernelId SchedulingFramework::add_kernel(KernelStatus status) {
  const KernelId id{static_cast<std::uint32_t>(kernels_.size())};
  status.id = id;
  kernels_.push_back(std::move(status));
  execution_queue_.push_back(id);
  return id;
}

std::vector<KernelId> SchedulingFramework::admit_waiting(TimePs now) {
  std::vector<KernelId> admitted;
  while (!execution_queue_.empty() && active_.size() < active_capacity_) {
    const KernelId id = execution_queue_.front();
    execution_queue_.pop_front();
    KernelStatus& k = kernels_[index(id)];
    k.active = true;
    // The lowest free KSRT entry: stable for the kernel's lifetime, as a hardware table index is.
    k.ksrt_slot = 0;
    while (slot_used_[k.ksrt_slot]) ++k.ksrt_slot;
    slot_used_[k.ksrt_slot] = true;
    k.admitted_ps = now;
    active_.push_back(id);
    admitted.push_back(id);
  }
  return admitted;
}

void SchedulingFramework::retire(KernelId kernel) {
  kernels_[index(kernel)].active = false;
  slot_used_[kernels_[index(kernel)].ksrt_slot] = false;
  active_.erase(std::remove(active_.begin(), active_.end(), kernel), active_.end());
}

}  // namespace gpumux
