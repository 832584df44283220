#pragma once
// Running an experiment grid: simulate every isolated baseline and every multiprogrammed run in forked
// children (`jobs` at a time) and compute each run's metrics.

#include <string>

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

}  // namespace gpumux
