#pragma once
// Policies by name. The command line, experiments and tests create policies only through here.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/typed_options.h"
#include "policy/policy.h"

namespace gpumux {

/// Options as given (--policy-opt KEY=VALUE, an experiment run's `options:` map).
using PolicyOptions = OptionText;

struct PolicyInfo {
  std::string name;
  std::string summary;  ///< one line, with the paper section it comes from (options are in `options`)
  OptionSpecs options;  ///< declared next to the policy's implementation (core/typed_options.h)
  /// Builds the policy from values already parsed against `options`.
  std::function<std::unique_ptr<SchedulingPolicy>(const OptionValues&)> create;
};

/// Every built-in policy, sorted by name. Registration is explicit (no static self-registration
/// from a static library, whose object files the linker may drop).
[[nodiscard]] const std::vector<PolicyInfo>& policy_registry();

/// nullptr when `name` is not registered.
[[nodiscard]] const PolicyInfo* find_policy(const std::string& name);

/// Throws InputError naming the policy and the known names when `name` is unknown, and naming the
/// policy, the option and its range when an option is unknown or out of range.
[[nodiscard]] std::unique_ptr<SchedulingPolicy> create_policy(const std::string& name,
                                                              const PolicyOptions& options = {});

/// Every option `name` declares with its effective value (the given one, else the default), as a
/// JSON object by option name ({} for a policy without options); InputError as create_policy.
[[nodiscard]] nlohmann::json effective_policy_options(const std::string& name, const PolicyOptions& given);

}  // namespace gpumux
