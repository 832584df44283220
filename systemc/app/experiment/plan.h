#pragma once
// Planning an experiment grid: which isolated baselines it needs (each distinct process alone, shared
// among the workloads that hold it), what each multiprogrammed simulation is, and what it roughly costs.

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/experiment_loader.h"
#include "top/simulation.h"

namespace gpumux {

/// The distinct processes of the grid, for isolated baselines, and where each process of each
/// workload finds its baseline.
struct IsolatedPlan {
  /// One synthetic workload per TB-duration mode holding the distinct processes (priority 0, no tokens).
  std::vector<Workload> groups;
  /// isolated_process_document (app/baseline_key.h) as text -> (group, process index in the group)
  std::map<std::string, std::pair<std::size_t, std::size_t>> index;

  /// Where process `process` of `workload` finds its baseline: (group, process index in the group).
  [[nodiscard]] std::pair<std::size_t, std::size_t> baseline_of(const Workload& workload,
                                                                const ProcessSpec& process) const;
};

[[nodiscard]] IsolatedPlan plan_isolated(const ExpandedExperiment& grid);

/// The distinct GPUs of the grid's runs (ExpandedExperiment::run_gpus; runs that differ only in policy,
/// options, preemption or copy policy share one: baselines run one process, whose copies fcfs and npq
/// order alike). A process's isolated baseline is simulated on its run's GPU, so
/// once per variant: a run on warp-level SMs under GTO is normalised to the process alone under GTO.
struct GpuVariants {
  std::vector<const GpuConfig*> gpus;  ///< into grid.run_gpus, in order of first use
  std::vector<std::size_t> of_run;     ///< per entry of runs: index into gpus
};

[[nodiscard]] GpuVariants gpu_variants(const ExpandedExperiment& grid);

/// Whether the experiment's analysis reads isolated baselines (AnalysisInfo::isolated_baselines); an
/// unknown analysis counts as reading them.
[[nodiscard]] bool uses_isolated_baselines(const ExperimentConfig& config);

/// Number of distinct isolated baselines the grid needs (processes alone, per seed and GPU variant;
/// none when the analysis reads none).
[[nodiscard]] std::size_t isolated_baseline_count(const ExperimentConfig& config,
                                                  const ExpandedExperiment& grid);

/// The simulation of grid point `point`.
[[nodiscard]] SimulationSpec simulation_spec(const ExperimentConfig& config, const ExpandedExperiment& grid,
                                             const GridPoint& point, unsigned wall_timeout_s);

/// Rough cost of a simulation in thread blocks, to run the longest first and to estimate progress;
/// `isolated_ps` are the processes' isolated turnaround times.
[[nodiscard]] double estimated_cost(const Workload& workload, const std::vector<double>& isolated_ps);

}  // namespace gpumux
