#pragma once
// Policies by name. The command line, experiments and tests create policies only through here.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace gpumux {

using PolicyOptions = std::map<std::string, std::string>;

struct PolicyInfo {
  std::string name;
  std::string summary;  ///< one line, with the paper section it comes from
  std::function<std::unique_ptr<SchedulingPolicy>(const PolicyOptions&)> create;
};

/// Every built-in policy, sorted by name. Registration is explicit (no static self-registration
/// from a static library, whose object files the linker may drop).
[[nodiscard]] const std::vector<PolicyInfo>& policy_registry();

/// nullptr when `name` is not registered.
[[nodiscard]] const PolicyInfo* find_policy(const std::string& name);

/// Throws InputError naming the policy and the known names when `name` is unknown.
[[nodiscard]] std::unique_ptr<SchedulingPolicy> create_policy(const std::string& name,
                                                              const PolicyOptions& options = {});

}  // namespace gpumux
