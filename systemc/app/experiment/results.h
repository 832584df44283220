#pragma once
// What an experiment grid produced: the metrics of every simulation (RunOutcome, per process
// ProcessOutcome) and the rows of its report (ReportRow). Written by experiment/run.h, read by the
// analyses (app/analysis/) and the report writers (experiment/report_*.h).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment_loader.h"

namespace gpumux {

struct ProcessOutcome {
  std::string name;
  std::string class1;  ///< grouping labels of the process's kernels (Tanasic Table 1 Class 1 / Class 2)
  std::string class2;
  int priority = 0;
  double isolated_ps = 0;    ///< T^SP
  double turnaround_ps = 0;  ///< T^MP, mean over completed runs
  double ntt = 0;
  std::size_t runs = 0;  ///< completed runs
};

/// The metrics of one simulation of the grid.
struct RunOutcome {
  bool valid = false;  ///< false when some process completed no run (no metrics)
  double stp = 0;
  double antt = 0;
  double fairness = 0;
  double simulated_ns = 0;
  std::size_t preemptions = 0;
  std::vector<ProcessOutcome> processes;
};

struct ExperimentResults {
  const ExperimentConfig* config = nullptr;
  const ExpandedExperiment* grid = nullptr;
  /// Parallel to grid->points; nullopt where not simulated (the dry run that lists the rows).
  std::vector<std::optional<RunOutcome>> outcomes;

  /// The valid outcome of (workload, run, seed index), or nullptr.
  [[nodiscard]] const RunOutcome* outcome(std::size_t workload, std::size_t run, std::size_t seed) const;
};

/// One row of a report: an analysis's figure beside the paper's.
struct ReportRow {
  std::string name;  ///< "label/group/metric" or "label/metric"
  std::optional<double> model;
  std::optional<double> paper;
  std::string unit;
};

/// Class label of a process: the `class1` or `class2` of its first kernel (empty when it has none).
[[nodiscard]] std::string process_class(const ProcessSpec& process, bool class1);

}  // namespace gpumux
