#include "policy/policy.h"

#include <algorithm>

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

KernelId SchedulingPolicy::select_admission(const std::vector<KernelId>& waiting,
                                            const EngineControl& control) {
  return earliest_arrival(waiting, control);
}

KernelId earliest_arrival(const std::vector<KernelId>& waiting, const EngineControl& control) {
  return *std::min_element(waiting.begin(), waiting.end(), [&](KernelId a, KernelId b) {
    const TimePs ta = control.kernel(a).arrival_ps;
    const TimePs tb = control.kernel(b).arrival_ps;
    return ta != tb ? ta < tb : index(a) < index(b);
  });
}

}  // namespace gpumux
