#pragma once
// The report of one `gpumux run`: stats.json (machine-readable, byte-identical for the same
// inputs and seed) and the summary table printed on stdout.

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu_config.h"
#include "core/workload.h"
#include "metrics/multiprogram_metrics.h"
#include "metrics/run_result.h"

namespace gpumux {

struct RunReport {
  const GpuConfig* gpu = nullptr;
  const Workload* workload = nullptr;
  const RunResult* multiprogram = nullptr;
  std::vector<double> isolated_ps;  ///< T^SP per process
  MultiprogramMetrics metrics;
  /// Every option the policy declares, with its effective value (policy/registry.h
  /// effective_policy_options); written as stats.json "policy_options".
  nlohmann::json policy_options = nlohmann::json::object();
  /// "context-switch" or "drain": how preempting policies took SMs (stats.json "preemption").
  std::string preemption;
  /// What repeats the run (app/run_record.h): stats.json "inputs" {gpu_file, workload_file, gpu_sha1,
  /// workload_sha1} and "config_sha1"; empty when the caller has none (tests of the writer).
  nlohmann::json inputs = nlohmann::json::object();
  std::string config_sha1;
};

/// Builds the report: computes T^MP from the multiprogram run and the metrics.
[[nodiscard]] RunReport make_report(const GpuConfig& gpu, const Workload& workload,
                                    const RunResult& multiprogram, const std::vector<RunResult>& isolated);

/// Version of the stats.json layout (docs/user-guide.md, "stats.json"). Raise it when a key is
/// removed, renamed or changes meaning; adding a key keeps it (readers ignore keys they do not know).
inline constexpr int kStatsSchemaVersion = 1;

[[nodiscard]] nlohmann::json stats_json(const RunReport& report);
void print_summary(std::ostream& out, const RunReport& report);

}  // namespace gpumux
