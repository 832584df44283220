#include "policy/policy.h"

namespace gpumux {

const char* to_string(PreemptionMechanism mechanism) {
  return mechanism == PreemptionMechanism::kDrain ? "drain" : "context-switch";
}

std::optional<PreemptionMechanism> preemption_mechanism_named(std::string_view text) {
  for (const auto mechanism : {PreemptionMechanism::kContextSwitch, PreemptionMechanism::kDrain}) {
    if (text == to_string(mechanism)) return mechanism;
  }
  return std::nullopt;
}

void SchedulingPolicy::on_tb_finished(SmId /*sm*/, KernelId /*kernel*/, TimePs /*duration_ps*/,
                                      EngineControl& /*control*/) {}

void SchedulingPolicy::on_kernel_finished(KernelId /*kernel*/, EngineControl& /*control*/) {}

void SchedulingPolicy::on_preemption_done(SmId /*sm*/, KernelId /*preempted*/, EngineControl& /*control*/) {}

std::optional<KernelId> SchedulingPolicy::select_kernel(SmId sm, const EngineControl& control) {
  const SmStatus& status = control.sm(sm);
  if (status.kernel && control.can_issue(sm, *status.kernel)) return status.kernel;
  return std::nullopt;
}

}  // namespace gpumux
