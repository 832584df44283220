#pragma once
// The Slurm backend of `gpumux experiment` (docs/cluster.md). The grid's simulations - its isolated
// baselines and its runs, in that order, the "units" - are dealt to the tasks of one Slurm job array,
// `runs_per_task` consecutive units each. Submitting writes OUT/slurm/: manifest.json (the experiment
// file by absolute path, the binary, every unit's name and configuration hash), job.sh (the sbatch
// script; each array task runs `gpumux experiment --task OUT --task-index I`), logs/ and results/.
// A task loads and expands the experiment as the submission did, simulates its units exactly as the
// local backend does and writes what each measured to results/task-I.json (or why it failed to
// results/task-I.failed). Collecting reads them back and completes the outcomes with the baselines
// through the local backend's own finish_results, so report.json and report.md are the local backend's
// bytes.
//
// Baselines are units of the array (not computed at submission or collection): they cost as much as
// runs, and a login node is no place to simulate. A run's outcome does not need its baselines until
// the metrics are made, which is why the runs wait for nothing.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/experiment/results.h"
#include "config/experiment_loader.h"

namespace gpumux {

struct SlurmSubmitOptions {
  std::string out_dir;                   ///< --out: reports at collection, the work folder OUT/slurm now
  std::size_t runs_per_task = 1;         ///< --runs-per-task: units (baselines and runs) per array task
  std::vector<std::string> sbatch_args;  ///< --slurm-arg, in order, before the script
  unsigned wall_timeout_s = 0;           ///< --timeout: per simulation, in every task
  bool use_cache = true;                 ///< --no-cache: false
};

/// Simulations of the grid as Slurm units: its isolated baselines (isolated_baseline_count) and runs.
[[nodiscard]] std::size_t slurm_unit_count(const ExperimentConfig& config, const ExpandedExperiment& grid);

/// Array tasks for `units` units at `runs_per_task` each.
[[nodiscard]] std::size_t slurm_task_count(std::size_t units, std::size_t runs_per_task);

/// Before anything is written: InputError (exit 2) when OUT cannot hold a submission (a path Slurm's
/// #SBATCH lines cannot carry, a submission already there) or sbatch is not on PATH.
void check_slurm_submission(const SlurmSubmitOptions& options);

/// Writes OUT/slurm/ and submits job.sh with the `sbatch` found on PATH (`sbatch --parsable ARGS...
/// job.sh`); returns the job id. InputError (exit 2) as check_slurm_submission, or when sbatch fails
/// (its message quoted; OUT/slurm is removed again so the corrected command can run as it is).
[[nodiscard]] std::string submit_slurm_experiment(const ExperimentConfig& config,
                                                  const ExpandedExperiment& grid,
                                                  const SlurmSubmitOptions& options);

/// The hidden `--task OUT --task-index I`: simulates task I's units and writes results/task-I.json.
/// On failure writes the message to results/task-I.failed and rethrows (InputError, SimulationFailed).
void run_slurm_task(const std::string& out_dir, std::size_t index, unsigned jobs);

/// What `--collect OUT` needs of a submission before it loads the experiment.
struct SlurmSubmission {
  std::string out_dir;          ///< as given to --collect
  std::string experiment_file;  ///< absolute
  std::string job_id;           ///< empty when OUT/slurm/job_id is missing
};

/// Reads OUT/slurm/manifest.json. InputError when OUT holds no submission.
[[nodiscard]] SlurmSubmission read_slurm_submission(const std::string& out_dir);

/// Some tasks have no results: `exit_code` is kExitInternal when one of them failed (a simulation
/// failed or a task could not run), kExitBadInput when they are only missing (still running, or
/// killed by Slurm); the message names every such task with its log file.
class SlurmTasksIncomplete : public std::runtime_error {
 public:
  SlurmTasksIncomplete(const std::string& message, int exit_code)
      : std::runtime_error(message), exit_code_(exit_code) {}
  [[nodiscard]] int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

/// The grid's results from the tasks' files. InputError when the experiment's simulations or the
/// binary are not those submitted; SlurmTasksIncomplete when some task has no results.
[[nodiscard]] ExperimentResults collect_slurm_results(const SlurmSubmission& submission,
                                                      const ExperimentConfig& config,
                                                      const ExpandedExperiment& grid);

}  // namespace gpumux
