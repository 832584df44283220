#include "frontend/copy_policy.h"

namespace gpumux {

const char* to_string(CopyPolicy policy) { return policy == CopyPolicy::kNpq ? "npq" : "fcfs"; }

std::optional<CopyPolicy> copy_policy_named(std::string_view text) {
  for (const CopyPolicyInfo& info : copy_policies()) {
    if (text == to_string(info.policy)) return info.policy;
  }
  return std::nullopt;
}

const std::vector<CopyPolicyInfo>& copy_policies() {
  static const std::vector<CopyPolicyInfo> policies = {
      {CopyPolicy::kFcfs,
       "first come first served: a free DMA engine takes the copy that reached its DMA queue first (the "
       "default; Tanasic 4.4's DSS runs)"},
      {CopyPolicy::kNpq,
       "non-preemptive priority queues: a free DMA engine takes the waiting copy of the highest process "
       "priority, ties in arrival order; a copy in progress is never interrupted (Tanasic 4.2's priority "
       "runs)"},
  };
  return policies;
}

}  // namespace gpumux
