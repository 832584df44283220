// gpumux experiment: load an experiment file, simulate its grid (isolated baselines and
// multiprogrammed runs, in parallel), run its analysis and write report.md and report.json.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include <boost/program_options.hpp>

#include "app/analysis/registry.h"
#include "app/commands.h"
#include "app/experiment/check.h"
#include "app/experiment/plan.h"
#include "app/experiment/report_json.h"
#include "app/experiment/report_markdown.h"
#include "app/experiment/run.h"
#include "app/experiment/slurm.h"
#include "core/error.h"
#include "sm/occupancy.h"
#include "top/simulation.h"

namespace gpumux {

namespace po = boost::program_options;

namespace {

/// Largest --runs-per-task, and largest --task-index (Slurm's own limit on array indices is far lower).
constexpr std::uint64_t kMaxRunsPerTask = 1000000;
constexpr std::uint64_t kMaxTaskIndex = 100000000;

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!(out << text)) throw InputError("cannot write '" + path + "'");
}

/// The plan line; `how` says where the simulations run ("2 jobs", "9 Slurm tasks of up to 1 simulation").
std::string plan_text(const ExperimentConfig& config, const ExpandedExperiment& grid,
                      const std::string& how) {
  std::string text = "gpumux: experiment " + config.name + ": " + std::to_string(grid.workloads.size()) +
                     " workloads x " + std::to_string(config.runs.size()) + " runs x " +
                     std::to_string(config.seeds.size()) + (config.seeds.size() == 1 ? " seed" : " seeds") +
                     " = " + std::to_string(grid.points.size()) + " simulations, plus " +
                     std::to_string(isolated_baseline_count(config, grid)) + " isolated baselines; " + how +
                     "\n";
  return text;
}

std::string slurm_plan(const ExperimentConfig& config, const ExpandedExperiment& grid,
                       std::size_t runs_per_task) {
  const std::size_t tasks = slurm_task_count(slurm_unit_count(config, grid), runs_per_task);
  return std::to_string(tasks) + " Slurm array " + (tasks == 1 ? "task" : "tasks") + " of up to " +
         std::to_string(runs_per_task) + (runs_per_task == 1 ? " simulation" : " simulations");
}

void print_rows(const std::vector<ReportRow>& rows) {
  std::size_t width = 4;
  for (const ReportRow& row : rows) width = std::max(width, row.name.size());
  std::printf("\n  %-*s %10s %10s\n", static_cast<int>(width), "row", "model", "paper");
  for (const ReportRow& row : rows) {
    char model[32] = "n/a";
    char paper[32] = "";
    if (row.model) std::snprintf(model, sizeof model, "%.3f", *row.model);
    if (row.paper) std::snprintf(paper, sizeof paper, "%g", *row.paper);
    std::printf("  %-*s %10s %10s %s\n", static_cast<int>(width), row.name.c_str(), model, paper,
                row.unit.c_str());
  }
}

/// report.json and report.md of `results` in `out_dir`, and the rows on stdout: the local backend and
/// the Slurm collection alike.
void write_reports(const ExperimentResults& results, const std::string& out_dir, bool quiet,
                   std::chrono::steady_clock::time_point wall_start) {
  const std::vector<ReportRow> rows = experiment_rows(results);
  const std::string json_path = out_dir + "/report.json";
  const std::string md_path = out_dir + "/report.md";
  write_file(json_path, experiment_report_json(results, rows).dump(2) + "\n");
  write_file(md_path, experiment_report_markdown(results, rows));
  if (!quiet) {
    print_rows(rows);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    std::printf("\n  report:   %s\n  data:     %s\n  wall:     %.1f s\n", md_path.c_str(), json_path.c_str(),
                wall);
  }
}

/// An experiment and its grid, at a fixed address (ExperimentResults points into both).
struct LoadedExperiment {
  ExperimentConfig config;
  ExpandedExperiment grid;
};

/// Loads, expands and checks the experiment, printing the carve-out warnings when `warn`.
std::unique_ptr<LoadedExperiment> load_checked(const std::string& file, bool warn) {
  auto loaded = std::make_unique<LoadedExperiment>();
  loaded->config = load_experiment(file);
  loaded->grid = expand_experiment(loaded->config);
  validate_experiment(loaded->config, loaded->grid);
  if (warn) {
    // The carve-out rule never lowers a kernel's occupancy silently (docs/config.md "Occupancy"):
    // each kernel it costs is named once, however many workloads launch it.
    std::vector<std::string> warned;
    for (const ExperimentWorkload& w : loaded->grid.workloads) {
      for (const std::string& warning : carveout_warnings(w.workload, loaded->grid.gpu)) {
        if (std::find(warned.begin(), warned.end(), warning) != warned.end()) continue;
        std::cerr << "gpumux: warning: " << warning << '\n';
        warned.push_back(warning);
      }
    }
  }
  return loaded;
}

/// The hidden `--task OUT --task-index I` a Slurm array task runs (experiment/slurm.h).
int task_command(const std::string& out_dir, std::size_t index, unsigned jobs) {
  try {
    run_slurm_task(out_dir, index, jobs);
    return kExitOk;
  } catch (const InputError& e) {
    std::cerr << "gpumux: error: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const SimulationFailed& e) {
    std::cerr << "gpumux: simulation failed: " << e.what() << '\n';
    return kExitInternal;
  }
}

/// `--collect OUT`: the Slurm tasks' results into OUT/report.json and OUT/report.md.
int collect_command(const std::string& out_dir, bool quiet) {
  try {
    const auto wall_start = std::chrono::steady_clock::now();
    const SlurmSubmission submission = read_slurm_submission(out_dir);
    const std::unique_ptr<LoadedExperiment> loaded =
        load_checked(submission.experiment_file, false);  // told at submission
    prepare_output_dir("--collect", out_dir);
    const ExperimentResults results = collect_slurm_results(submission, loaded->config, loaded->grid);
    write_reports(results, out_dir, quiet, wall_start);
    return kExitOk;
  } catch (const InputError& e) {
    std::cerr << "gpumux: error: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const SlurmTasksIncomplete& e) {
    std::cerr << "gpumux: error: " << e.what() << '\n';
    return e.exit_code();
  }
}

}  // namespace

int experiment_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux experiment options");
  std::string file;
  std::string out_dir;
  std::string jobs_text = std::to_string(std::max(1U, std::thread::hardware_concurrency()));
  std::string timeout_text = std::to_string(kDefaultWallTimeoutS);
  std::string backend = "local";
  std::string runs_per_task_text = "1";
  std::vector<std::string> slurm_args;
  std::string collect_dir;
  options.add_options()("help,h", "show this help")("file", po::value(&file),
                                                    "experiment (configs/experiments/*.yaml)")(
      "out", po::value(&out_dir),
      "output directory for report.md and report.json (required unless --dry-run)")(
      "jobs,j", po::value(&jobs_text), "simulations run in parallel, 1 to 1024 (default: cores)")(
      "no-cache", "always re-simulate isolated baselines")(
      "dry-run", "check the file, list the grid and the report rows; simulate nothing")(
      "timeout", po::value(&timeout_text)->default_value(timeout_text),
      "wall-clock limit per simulation in seconds, isolated baselines included; 0: none")(
      "quiet,q", "print nothing but errors")(
      "backend", po::value(&backend)->default_value(backend),
      "where the simulations run: local (forked processes here) or slurm (a Slurm job array, submitted "
      "with sbatch; then --collect DIR; docs/cluster.md)")(
      "runs-per-task", po::value(&runs_per_task_text)->default_value(runs_per_task_text),
      "--backend slurm: simulations (runs and isolated baselines) per array task, 1 to 1000000")(
      "slurm-arg", po::value(&slurm_args)->composing(),
      "--backend slurm: an argument for sbatch, repeatable, written with '=': --slurm-arg=--partition=short "
      "--slurm-arg=--time=30")(
      "collect", po::value(&collect_dir),
      "write DIR/report.json and DIR/report.md from the finished Slurm job submitted with --out DIR");
  // What each array task runs (job.sh): not for people, so not in --help.
  std::string task_dir;
  std::string task_index_text;
  po::options_description hidden;
  hidden.add_options()("task", po::value(&task_dir))("task-index", po::value(&task_index_text));
  po::options_description all;
  all.add(options).add(hidden);
  po::variables_map vm;
  std::uint64_t jobs = 1;
  std::uint64_t timeout = 0;
  std::uint64_t runs_per_task = 1;
  std::uint64_t task_index = 0;
  try {
    po::parsed_options parsed = po::command_line_parser(args).options(all).run();
    // The first positional argument is FILE; any other is an error (reject_positional_arguments).
    for (auto it = parsed.options.begin(); it != parsed.options.end(); ++it) {
      if (it->position_key < 0 || !it->string_key.empty()) continue;
      if (file.empty() && std::none_of(parsed.options.begin(), parsed.options.end(),
                                       [](const po::option& o) { return o.string_key == "file"; })) {
        file = it->value.empty() ? "" : it->value.front();
        parsed.options.erase(it);
      }
      break;
    }
    po::store(parsed, vm);
    if (vm.count("help") != 0U) {
      std::cout << "usage: gpumux experiment FILE --out DIR [options]\n"
                   "       gpumux experiment FILE --out DIR --backend slurm [--runs-per-task N] "
                   "[--slurm-arg=ARG]...\n"
                   "       gpumux experiment --collect DIR [--quiet]\n\n"
                << options << '\n';
      return kExitOk;
    }
    po::notify(vm);
    reject_positional_arguments("experiment", parsed);
    const auto given = [&](const char* name) { return vm.count(name) != 0U && !vm[name].defaulted(); };
    if (given("task")) {
      if (!given("task-index")) throw po::error("--task needs --task-index");
      if (vm.count("jobs") != 0U) jobs = parse_integer_option("--jobs", jobs_text, 1, kMaxJobs);
      task_index = parse_integer_option("--task-index", task_index_text, 0, kMaxTaskIndex);
    } else if (given("collect")) {
      // The submission records the experiment and how it ran; only --quiet applies.
      const char* const kRecorded =
          " does not go with --collect (the submission in DIR records the experiment and how it ran)";
      if (!file.empty()) throw po::error(std::string("an experiment FILE") + kRecorded);
      for (const char* other : {"out", "jobs", "no-cache", "dry-run", "timeout", "backend", "runs-per-task",
                                "slurm-arg", "task-index"}) {
        if (given(other)) throw po::error("--" + std::string(other) + kRecorded);
      }
      if (collect_dir.empty()) throw po::error("--collect needs the DIR given to --out at submission");
    } else {
      if (backend != "local" && backend != "slurm") {
        throw po::error("--backend must be local or slurm, not '" + backend + "'");
      }
      if (file.empty()) throw po::error("the experiment FILE is missing");
      if (out_dir.empty() && vm.count("dry-run") == 0U) {
        throw po::error("the option '--out' is required but missing");
      }
      if (backend == "local") {
        if (given("runs-per-task") || given("slurm-arg")) {
          throw po::error(std::string(given("runs-per-task") ? "--runs-per-task" : "--slurm-arg") +
                          " is for --backend slurm");
        }
        jobs = parse_integer_option("--jobs", jobs_text, 1, kMaxJobs);
      } else {
        if (given("jobs")) {
          throw po::error(
              "--jobs is for --backend local; a Slurm task runs as many simulations at a time as it has "
              "CPUs (--slurm-arg=--cpus-per-task=N with --runs-per-task N or more)");
        }
        runs_per_task = parse_integer_option("--runs-per-task", runs_per_task_text, 1, kMaxRunsPerTask);
      }
      if (given("task-index")) throw po::error("--task-index goes with --task");
      timeout = parse_integer_option("--timeout", timeout_text, 0, kMaxWallTimeoutS);
    }
  } catch (const po::error& e) {
    std::cerr << "gpumux experiment: " << e.what() << "\n(see gpumux experiment --help)\n";
    return kExitBadInput;
  } catch (const InputError& e) {
    std::cerr << "gpumux: error: " << e.what() << '\n';
    return kExitBadInput;
  }
  const bool quiet = vm.count("quiet") != 0U;
  if (vm.count("task") != 0U) return task_command(task_dir, task_index, static_cast<unsigned>(jobs));
  if (vm.count("collect") != 0U) return collect_command(collect_dir, quiet);
  const bool slurm = backend == "slurm";

  try {
    const auto wall_start = std::chrono::steady_clock::now();
    const std::unique_ptr<LoadedExperiment> loaded = load_checked(file, !quiet);
    const ExperimentConfig& config = loaded->config;
    const ExpandedExperiment& grid = loaded->grid;
    if (vm.count("dry-run") == 0U) prepare_output_dir("--out", out_dir);  // before anything is simulated
    SlurmSubmitOptions submit;
    submit.out_dir = out_dir;
    submit.runs_per_task = runs_per_task;
    submit.sbatch_args = slurm_args;
    submit.wall_timeout_s = static_cast<unsigned>(timeout);
    submit.use_cache = vm.count("no-cache") == 0U;
    if (slurm && vm.count("dry-run") == 0U) check_slurm_submission(submit);
    if (!quiet) {
      const std::string how = slurm ? slurm_plan(config, grid, runs_per_task)
                                    : std::to_string(jobs) + (jobs == 1 ? " job" : " jobs");
      std::cout << plan_text(config, grid, how) << std::flush;
    }

    if (vm.count("dry-run") != 0U) {
      ExperimentResults dry;
      dry.config = &config;
      dry.grid = &grid;
      dry.outcomes.assign(grid.points.size(), std::nullopt);
      if (!quiet) {
        for (const ExperimentWorkload& w : grid.workloads) {
          std::string names;
          for (const ProcessSpec& p : w.workload.processes) names += (names.empty() ? "" : ", ") + p.name;
          std::printf("  %-16s %s\n", w.workload.name.c_str(), names.c_str());
        }
        print_rows(experiment_rows(dry));
      }
      return kExitOk;
    }

    if (slurm) {
      const std::string job_id = submit_slurm_experiment(config, grid, submit);
      if (!quiet) {
        const std::size_t tasks = slurm_task_count(slurm_unit_count(config, grid), runs_per_task);
        std::printf(
            "gpumux: submitted Slurm job %s: tasks 0-%zu, logs %s/slurm/logs/task-N.out\n"
            "  when it has finished (squeue -j %s lists nothing), write the reports with\n"
            "  gpumux experiment --collect %s\n",
            job_id.c_str(), tasks - 1, out_dir.c_str(), job_id.c_str(), out_dir.c_str());
      }
      return kExitOk;
    }

    ExperimentOptions run_options;
    run_options.jobs = static_cast<unsigned>(jobs);
    run_options.use_cache = vm.count("no-cache") == 0U;
    run_options.progress = !quiet && isatty(STDERR_FILENO) != 0;
    run_options.wall_timeout_s = static_cast<unsigned>(timeout);
    write_reports(run_experiment(config, grid, run_options), out_dir, quiet, wall_start);
    return kExitOk;
  } catch (const InputError& e) {
    std::cerr << "gpumux: error: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const SimulationFailed& e) {
    std::cerr << "gpumux: simulation failed: " << e.what() << '\n';
    return kExitInternal;
  }
}

}  // namespace gpumux
