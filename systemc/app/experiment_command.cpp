// gpumux experiment: load an experiment file, simulate its grid (isolated baselines and
// multiprogrammed runs, in parallel), run its analysis and write report.md and report.json.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <boost/program_options.hpp>

#include "app/analysis/registry.h"
#include "app/commands.h"
#include "app/experiment/check.h"
#include "app/experiment/plan.h"
#include "app/experiment/report_json.h"
#include "app/experiment/report_markdown.h"
#include "app/experiment/run.h"
#include "core/error.h"
#include "sm/occupancy.h"
#include "top/simulation.h"

namespace gpumux {

namespace po = boost::program_options;

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!(out << text)) throw InputError("cannot write '" + path + "'");
}

std::string plan_text(const ExperimentConfig& config, const ExpandedExperiment& grid, unsigned jobs) {
  std::string text = "gpumux: experiment " + config.name + ": " + std::to_string(grid.workloads.size()) +
                     " workloads x " + std::to_string(config.runs.size()) + " runs x " +
                     std::to_string(config.seeds.size()) + (config.seeds.size() == 1 ? " seed" : " seeds") +
                     " = " + std::to_string(grid.points.size()) + " simulations, plus " +
                     std::to_string(isolated_baseline_count(config, grid)) + " isolated baselines; " +
                     std::to_string(jobs) + (jobs == 1 ? " job" : " jobs") + "\n";
  return text;
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

}  // namespace

int experiment_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux experiment options");
  std::string file;
  std::string out_dir;
  std::string jobs_text = std::to_string(std::max(1U, std::thread::hardware_concurrency()));
  std::string timeout_text = std::to_string(kDefaultWallTimeoutS);
  options.add_options()("help,h", "show this help")("file", po::value(&file),
                                                    "experiment (configs/experiments/*.yaml)")(
      "out", po::value(&out_dir),
      "output directory for report.md and report.json (required unless --dry-run)")(
      "jobs,j", po::value(&jobs_text), "simulations run in parallel, 1 to 1024 (default: cores)")(
      "no-cache", "always re-simulate isolated baselines")(
      "dry-run", "check the file, list the grid and the report rows; simulate nothing")(
      "timeout", po::value(&timeout_text)->default_value(timeout_text),
      "wall-clock limit per simulation in seconds, isolated baselines included; 0: none")(
      "quiet,q", "print nothing but errors");
  po::variables_map vm;
  std::uint64_t jobs = 1;
  std::uint64_t timeout = 0;
  try {
    po::parsed_options parsed = po::command_line_parser(args).options(options).run();
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
      std::cout << "usage: gpumux experiment FILE --out DIR [options]\n\n" << options << '\n';
      return kExitOk;
    }
    po::notify(vm);
    reject_positional_arguments("experiment", parsed);
    if (file.empty()) throw po::error("the experiment FILE is missing");
    if (out_dir.empty() && vm.count("dry-run") == 0U) {
      throw po::error("the option '--out' is required but missing");
    }
    jobs = parse_integer_option("--jobs", jobs_text, 1, kMaxJobs);
    timeout = parse_integer_option("--timeout", timeout_text, 0, kMaxWallTimeoutS);
  } catch (const po::error& e) {
    std::cerr << "gpumux experiment: " << e.what() << "\n(see gpumux experiment --help)\n";
    return kExitBadInput;
  } catch (const InputError& e) {
    std::cerr << "gpumux: error: " << e.what() << '\n';
    return kExitBadInput;
  }
  const bool quiet = vm.count("quiet") != 0U;

  try {
    const auto wall_start = std::chrono::steady_clock::now();
    const ExperimentConfig config = load_experiment(file);
    const ExpandedExperiment grid = expand_experiment(config);
    validate_experiment(config, grid);
    if (!quiet) {
      // The carve-out rule never lowers a kernel's occupancy silently (docs/config.md "Occupancy"):
      // each kernel it costs is named once, however many workloads launch it.
      std::vector<std::string> warned;
      for (const ExperimentWorkload& w : grid.workloads) {
        for (const std::string& warning : carveout_warnings(w.workload, grid.gpu)) {
          if (std::find(warned.begin(), warned.end(), warning) != warned.end()) continue;
          std::cerr << "gpumux: warning: " << warning << '\n';
          warned.push_back(warning);
        }
      }
    }
    if (vm.count("dry-run") == 0U) prepare_output_dir("--out", out_dir);  // before anything is simulated
    if (!quiet) std::cout << plan_text(config, grid, static_cast<unsigned>(jobs)) << std::flush;

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

    ExperimentOptions run_options;
    run_options.jobs = static_cast<unsigned>(jobs);
    run_options.use_cache = vm.count("no-cache") == 0U;
    run_options.progress = !quiet && isatty(STDERR_FILENO) != 0;
    run_options.wall_timeout_s = static_cast<unsigned>(timeout);
    const ExperimentResults results = run_experiment(config, grid, run_options);
    const std::vector<ReportRow> rows = experiment_rows(results);

    const std::string json_path = out_dir + "/report.json";
    const std::string md_path = out_dir + "/report.md";
    write_file(json_path, experiment_report_json(results, rows).dump(2) + "\n");
    write_file(md_path, experiment_report_markdown(results, rows));
    if (!quiet) {
      print_rows(rows);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      std::printf("\n  report:   %s\n  data:     %s\n  wall:     %.1f s\n", md_path.c_str(),
                  json_path.c_str(), wall);
    }
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
