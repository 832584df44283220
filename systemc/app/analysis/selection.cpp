#include "app/analysis/selection.h"

#include <cctype>
#include <cstdio>
#include <set>

namespace gpumux {

RunRole role_of(std::size_t run) { return run == 0 ? RunRole::kBaseline : RunRole::kUnderTest; }

std::vector<std::size_t> select_runs(const ExperimentConfig& config, const RunSelector& selector) {
  std::vector<std::size_t> runs;
  for (std::size_t run = 0; run < config.runs.size(); ++run) {
    if (selector.role != RunRole::kAny && role_of(run) != selector.role) continue;
    if (!selector.policy.empty() && config.runs[run].policy != selector.policy) continue;
    runs.push_back(run);
  }
  return runs;
}

std::optional<std::size_t> select_run(const ExperimentConfig& config, const RunSelector& selector) {
  const std::vector<std::size_t> runs = select_runs(config, selector);
  if (runs.empty()) return std::nullopt;
  return runs.front();
}

const GpuConfig& run_gpu(const ExpandedExperiment& grid, std::size_t run) {
  return run < grid.run_gpus.size() ? grid.run_gpus[run] : grid.gpu;
}

std::optional<std::size_t> select_warp_scheduler_run(const ExperimentConfig& config,
                                                     const ExpandedExperiment& grid,
                                                     const std::string& scheduler) {
  for (std::size_t run = 0; run < config.runs.size(); ++run) {
    const GpuConfig& gpu = run_gpu(grid, run);
    if (gpu.sm_model == SmModel::kWarp && gpu.warp.scheduler == scheduler) return run;
  }
  return std::nullopt;
}

std::vector<std::size_t> process_counts(const ExpandedExperiment& grid) {
  std::set<std::size_t> counts;
  for (const ExperimentWorkload& w : grid.workloads) counts.insert(w.workload.processes.size());
  return {counts.begin(), counts.end()};
}

std::string process_count_group(std::size_t processes) { return std::to_string(processes) + "proc"; }

std::vector<std::string> class_labels(const ExpandedExperiment& grid, bool class1) {
  std::set<std::string> found;
  for (const ExperimentWorkload& w : grid.workloads) {
    for (const ProcessSpec& p : w.workload.processes) {
      const std::string c = process_class(p, class1);
      if (!c.empty()) found.insert(c);
    }
  }
  std::vector<std::string> ordered;
  for (const char* known : {"SHORT", "MEDIUM", "LONG"}) {
    if (found.erase(known) > 0) ordered.emplace_back(known);
  }
  ordered.insert(ordered.end(), found.begin(), found.end());
  return ordered;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::optional<double> as_number(const std::optional<std::uint32_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

std::string number(const std::optional<double>& v, const char* format) {
  if (!v) return "-";
  char text[64];
  std::snprintf(text, sizeof text, format, *v);
  return text;
}

}  // namespace gpumux
