#pragma once
// The gpumux subcommands. Each returns the process exit code (0 ok, 1 internal error or invariant
// violation, 2 bad input or usage) and reports errors itself on stderr.

#include <string>
#include <vector>

#include "policy/registry.h"

namespace gpumux {

int run_command(const std::vector<std::string>& args);
int list_command(const std::vector<std::string>& args);
int bench_command(const std::vector<std::string>& args);
int experiment_command(const std::vector<std::string>& args);

/// KEY=VALUE strings (--policy-opt) as a map; InputError on a malformed item.
[[nodiscard]] PolicyOptions parse_policy_options(const std::vector<std::string>& items);

/// "context-switch" or "drain"; InputError otherwise.
[[nodiscard]] PreemptionMechanism parse_preemption(const std::string& text);

/// Directory holding gpus/, kernels/, workloads/: $GPUMUX_CONFIG_DIR, else the source tree's configs/.
[[nodiscard]] std::string config_dir();

}  // namespace gpumux
