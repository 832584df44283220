#include "engine/scheduling_framework.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace gpumux {

SchedulingFramework::SchedulingFramework(std::uint32_t num_sms, std::uint32_t active_capacity)
    : slot_used_(active_capacity, false), smst_(num_sms), active_capacity_(active_capacity) {
  for (std::uint32_t s = 0; s < num_sms; ++s) smst_[s].id = SmId{s};
}

bool SchedulingFramework::buffer_free(ProcessId process) const {
  return index(process) >= command_buffer_.size() || !command_buffer_[index(process)];
}

KernelId SchedulingFramework::add_kernel(KernelStatus status) {
  const std::uint32_t p = index(status.process);
  if (!buffer_free(status.process)) {
    throw InvariantViolation("invariant violated: a kernel launch of process #" + std::to_string(p) +
                             " reached its command buffer while it held launch #" +
                             std::to_string(index(*command_buffer_[p])) +
                             " (each buffer stores one command)");
  }
  const KernelId id{static_cast<std::uint32_t>(kernels_.size())};
  status.id = id;
  kernels_.push_back(std::move(status));
  if (p >= command_buffer_.size()) command_buffer_.resize(p + 1);
  command_buffer_[p] = id;
  ++buffered_count_;
  return id;
}

std::vector<KernelId> SchedulingFramework::buffered() const {
  std::vector<KernelId> out;
  out.reserve(buffered_count_);
  for (const auto& b : command_buffer_) {
    if (b) out.push_back(*b);
  }
  return out;
}

void SchedulingFramework::admit(KernelId id, TimePs now) {
  KernelStatus& k = kernels_[index(id)];
  auto& buffer = command_buffer_[index(k.process)];
  if (buffer != id || active_.size() >= active_capacity_) {
    throw InvariantViolation(
        "invariant violated: kernel launch #" + std::to_string(index(id)) +
        " admitted to the active queue while not in a command buffer or with the queue full");
  }
  buffer.reset();
  --buffered_count_;
  k.active = true;
  // The lowest free KSRT entry: stable for the kernel's lifetime, as a hardware table index is.
  k.ksrt_slot = 0;
  while (slot_used_[k.ksrt_slot]) ++k.ksrt_slot;
  slot_used_[k.ksrt_slot] = true;
  k.admitted_ps = now;
  active_.push_back(id);
  note_tbs_to_issue_changed();
}

void SchedulingFramework::retire(KernelId kernel) {
  kernels_[index(kernel)].active = false;
  slot_used_[kernels_[index(kernel)].ksrt_slot] = false;
  active_.erase(std::remove(active_.begin(), active_.end(), kernel), active_.end());
  note_tbs_to_issue_changed();
}

}  // namespace gpumux
