#pragma once
// Running an experiment grid: simulate every isolated baseline and every multiprogrammed run in forked
// children (`jobs` at a time) and compute each run's metrics.

#include <string>
#include <vector>

#include "app/experiment/plan.h"
#include "app/experiment/results.h"
#include "config/experiment_loader.h"
#include "top/simulation.h"

namespace gpumux {

struct ExperimentOptions {
  unsigned jobs = 1;
  bool use_cache = true;  ///< isolated baselines from the on-disk cache (see isolated_baselines.h)
  std::string cache_dir;  ///< empty: the default cache folder
  bool progress = false;  ///< progress line on stderr
  unsigned wall_timeout_s = kDefaultWallTimeoutS;  ///< per simulation, baselines included; 0: none
};

/// Simulates the grid and returns every outcome (metrics of each simulation). Throws
/// SimulationFailed when a simulation fails.
[[nodiscard]] ExperimentResults run_experiment(const ExperimentConfig& config, const ExpandedExperiment& grid,
                                               const ExperimentOptions& options);

/// "workload / label / seed S": names a grid point in messages.
[[nodiscard]] std::string grid_point_name(const ExperimentConfig& config, const ExpandedExperiment& grid,
                                          const GridPoint& point);

// The steps both backends share (the local one above, the Slurm one of experiment/slurm.h), so that
// their reports are the same bytes by construction: a simulation's outcome is measured where it ran
// (measure_outcome, in the child or the Slurm task), and completed with the isolated baselines once all
// are known (finish_results, in the process that writes the report).

/// Isolated turnaround time T^SP of every baseline: [seed index][GPU variant][group][process of the
/// group] (plan_isolated, gpu_variants); empty when the analysis reads no baselines.
using BaselineTimes = std::vector<std::vector<std::vector<std::vector<double>>>>;

/// What a simulation of `workload` measured, without its isolated baselines: not yet valid, no
/// multiprogram metrics. `multiprogram`: the analysis reads baselines (finish_results computes them).
[[nodiscard]] RunOutcome measure_outcome(const Workload& workload, const RunResult& result,
                                         bool multiprogram);

/// The isolated turnaround times of the processes of `workload`, simulated at grid point `point`.
[[nodiscard]] std::vector<double> isolated_times(const IsolatedPlan& plan, const GpuVariants& variants,
                                                 const BaselineTimes& baselines, const Workload& workload,
                                                 const GridPoint& point);

/// The results of the grid from every point's measured outcome (parallel to grid.points) and the
/// baselines (ignored when the analysis reads none): validity, NTT, STP, ANTT and fairness.
[[nodiscard]] ExperimentResults finish_results(const ExperimentConfig& config, const ExpandedExperiment& grid,
                                               std::vector<RunOutcome> measured,
                                               const BaselineTimes& baselines);

}  // namespace gpumux
