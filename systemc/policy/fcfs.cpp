#include "policy/fcfs.h"

namespace gpumux {

std::optional<KernelId> FcfsPolicy::head_kernel(const EngineControl& control) {
  for (KernelId k : control.active_kernels()) {
    if (control.kernel(k).has_tbs_to_issue()) return k;
  }
  return std::nullopt;
}

bool FcfsPolicy::context_allows(KernelId kernel, const EngineControl& control) const {
  if (variant_ == Variant::kFifo) return true;
  const ProcessId process = control.kernel(kernel).process;
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    const SmStatus& sm = control.sm(SmId{s});
    // The SM's context (set when it is set up for a kernel, before its thread blocks are issued),
    // then the kernels on it.
    if (sm.state != SmState::kIdle && sm.context && *sm.context != process) return false;
    for (const ResidentKernel& r : sm.residents) {
      if (control.kernel(r.kernel).process != process) return false;
    }
  }
  return true;
}

void FcfsPolicy::fill_idle_sms(EngineControl& control) {
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    const SmId sm{s};
    if (control.sm(sm).state != SmState::kIdle) continue;
    const std::optional<KernelId> head = head_kernel(control);
    if (!head || !context_allows(*head, control)) return;
    control.assign_sm(sm, *head);
  }
}

void FcfsPolicy::backfill_running_sms(EngineControl& control) {
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    if (control.sm(SmId{s}).state == SmState::kRunning) control.request_issue(SmId{s});
  }
}

void FcfsPolicy::on_kernel_arrival(KernelId /*kernel*/, EngineControl& control) {
  fill_idle_sms(control);
  backfill_running_sms(control);
}

void FcfsPolicy::on_sm_idle(SmId /*sm*/, EngineControl& control) { fill_idle_sms(control); }

void FcfsPolicy::on_kernel_finished(KernelId /*kernel*/, EngineControl& control) { fill_idle_sms(control); }

std::optional<KernelId> FcfsPolicy::select_kernel(SmId sm, const EngineControl& control) {
  const SmStatus& status = control.sm(sm);
  // Keep issuing the kernel the SM is set up for (Tanasic Fig. 3) while it has thread blocks; when
  // the SM is full, stop (the common case on every thread-block completion: keep it cheap).
  if (status.kernel && control.kernel(*status.kernel).has_tbs_to_issue()) {
    return control.can_issue(sm, *status.kernel) ? status.kernel : std::nullopt;
  }
  // Back to back: once that kernel has no thread blocks left, the oldest kernel with thread blocks
  // may use the room left on the SM, where the hardware allows several kernels per SM.
  const std::optional<KernelId> head = head_kernel(control);
  if (head && control.can_issue(sm, *head) && context_allows(*head, control)) return head;
  return std::nullopt;
}

}  // namespace gpumux
