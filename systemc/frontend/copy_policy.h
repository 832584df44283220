#pragma once
// The scheduling policy of the data transfer engine (Tanasic Fig. 1 item 5): the order in which a free
// DMA engine takes the copies waiting in its DMA queue. Tanasic 4.2 runs the priority experiments with
// "NPQ, in all cases" on the data transfer engine, 4.4 the DSS experiments with "FCFS, in all cases".
// Plain C++: the command line, experiment files, stats.json and report.json use the names below.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gpumux {

enum class CopyPolicy : std::uint8_t {
  kFcfs,  ///< first come first served: copies in the order they reached the DMA queue (the default)
  kNpq,   ///< non-preemptive priority queues: the waiting copy of the highest process priority, ties in
          ///< arrival order; a copy in progress always completes
};

/// "fcfs" or "npq": the one spelling of `--copy-policy`, an experiment run's `copy_policy`, stats.json
/// and report.json.
[[nodiscard]] const char* to_string(CopyPolicy policy);

/// The policy `text` names, or nullopt when it names none (callers word the error for their input).
[[nodiscard]] std::optional<CopyPolicy> copy_policy_named(std::string_view text);

/// A copy policy with its one line of help (`gpumux list policies`).
struct CopyPolicyInfo {
  CopyPolicy policy;
  const char* summary;
};

/// Every copy policy, in the order `gpumux list policies` prints them.
[[nodiscard]] const std::vector<CopyPolicyInfo>& copy_policies();

}  // namespace gpumux
