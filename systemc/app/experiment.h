#pragma once
// Running an experiment grid (configs/experiments/*.yaml): check it against the registries, simulate
// every isolated baseline and every multiprogrammed run in forked children (`jobs` at a time), compute
// each run's metrics, run the named analysis and write report.md and report.json.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment_analysis.h"
#include "config/experiment_loader.h"
#include "top/simulation.h"

namespace gpumux {

/// Checks what the loader cannot: the analysis and policy names and policy options (against the
/// registries) and that every `paper:` key names a row the analysis produces. InputError with the
/// file, line and key otherwise. Simulates nothing.
void validate_experiment(const ExperimentConfig& config, const ExpandedExperiment& grid);

/// The analysis's rows, each with its `paper:` figure (null where the file gives none).
[[nodiscard]] std::vector<ReportRow> experiment_rows(const ExperimentResults& results);

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

/// report.json: experiment, grid, rows[] {name, model, paper, unit} and runs[] (per-simulation metrics).
[[nodiscard]] nlohmann::json experiment_report_json(const ExperimentResults& results,
                                                    const std::vector<ReportRow>& rows);

/// report.md: the description, the rows as tables (model beside paper), the notes and the workloads.
[[nodiscard]] std::string experiment_report_markdown(const ExperimentResults& results,
                                                     const std::vector<ReportRow>& rows);

/// Number of distinct isolated baselines the grid needs (processes alone, per seed).
[[nodiscard]] std::size_t isolated_baseline_count(const ExperimentConfig& config,
                                                  const ExpandedExperiment& grid);

}  // namespace gpumux
