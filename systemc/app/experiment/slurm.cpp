#include "app/experiment/slurm.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "app/baseline_key.h"
#include "app/experiment/plan.h"
#include "app/experiment/run.h"
#include "app/isolated_baselines.h"
#include "app/run_record.h"
#include "core/error.h"
#include "policy/registry.h"
#include "top/simulation.h"

namespace gpumux {

namespace fs = std::filesystem;

namespace {

/// manifest.json's "format": changed whenever a task of one gpumux could misread another's files.
constexpr const char* kManifestFormat = "gpumux-slurm-1";

/// One simulation of the array: an isolated baseline (seed, GPU variant, group, process of the group,
/// as run.cpp's BaselineTimes) or a run (a grid point).
struct Unit {
  bool baseline = false;
  std::size_t seed = 0;
  std::size_t variant = 0;
  std::size_t group = 0;
  std::size_t process = 0;
  std::size_t point = 0;
};

/// Everything the units are computed from, as a task, the submission and the collection each rebuild it.
struct Units {
  bool baselines = false;  ///< the analysis reads isolated baselines
  IsolatedPlan plan;
  GpuVariants variants;
  std::vector<Unit> list;  ///< baselines in BaselineTimes order, then the runs in grid order

  Units(const ExperimentConfig& config, const ExpandedExperiment& grid)
      : baselines(uses_isolated_baselines(config)), plan(plan_isolated(grid)), variants(gpu_variants(grid)) {
    if (baselines) {
      for (std::size_t s = 0; s < config.seeds.size(); ++s) {
        for (std::size_t v = 0; v < variants.gpus.size(); ++v) {
          for (std::size_t g = 0; g < plan.groups.size(); ++g) {
            for (std::size_t p = 0; p < plan.groups[g].processes.size(); ++p) {
              list.push_back({true, s, v, g, p, 0});
            }
          }
        }
      }
    }
    for (std::size_t i = 0; i < grid.points.size(); ++i) list.push_back({false, 0, 0, 0, 0, i});
  }
};

std::string unit_name(const ExperimentConfig& config, const ExpandedExperiment& grid, const Units& units,
                      const Unit& u) {
  if (!u.baseline) return grid_point_name(config, grid, grid.points[u.point]);
  std::string name = isolated_workload(units.plan.groups[u.group], u.process).name + " / seed " +
                     std::to_string(config.seeds[u.seed]);
  if (units.variants.gpus.size() > 1) {
    const GpuConfig& gpu = *units.variants.gpus[u.variant];
    name += gpu.sm_model == SmModel::kWarp ? " / warp SMs, " + gpu.warp.scheduler : " / TB-level SMs";
  }
  return name;
}

/// What determines the unit's result (the SHA-1s of baseline_key.h and run_record.h): a task and the
/// collection check that the experiment they load still makes what was submitted.
std::string unit_key(const ExperimentConfig& config, const ExpandedExperiment& grid, const Units& units,
                     const Unit& u) {
  if (u.baseline) {
    return baseline_cache_key(*units.variants.gpus[u.variant],
                              isolated_workload(units.plan.groups[u.group], u.process), config.seeds[u.seed],
                              kBaselineCopyPolicy);
  }
  const SimulationSpec spec = simulation_spec(config, grid, grid.points[u.point], 0);
  return config_hashes(spec.gpu, spec.workload, spec.policy,
                       effective_policy_options(spec.policy, spec.policy_options), spec.preemption,
                       spec.copy_policy, spec.seed)
      .config_sha1;
}

std::string work_dir(const std::string& out_dir) { return out_dir + "/slurm"; }
std::string manifest_path(const std::string& out_dir) { return work_dir(out_dir) + "/manifest.json"; }
std::string log_path(const std::string& out_dir, std::size_t task) {
  return work_dir(out_dir) + "/logs/task-" + std::to_string(task) + ".out";
}
std::string result_path(const std::string& out_dir, std::size_t task) {
  return work_dir(out_dir) + "/results/task-" + std::to_string(task) + ".json";
}
std::string failure_path(const std::string& out_dir, std::size_t task) {
  return work_dir(out_dir) + "/results/task-" + std::to_string(task) + ".failed";
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "host";
  return name;
}

/// Writes `text` to `path` through a temporary file renamed over it: a reader on another node of a
/// shared filesystem sees the whole file or none. The temporary name holds the host and the pid, which
/// alone may repeat across nodes.
void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + host_name() + "." + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    if (!(out << text) || !(out.flush())) throw InputError("cannot write '" + tmp + "'");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError("cannot write '" + path + "'");
  }
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read '" + path + "'");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError("'" + path + "' is not valid JSON: " + e.what());
  }
}

/// The executable file named `name` in one of $PATH's folders, or empty.
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream folders(path);
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    if (folder.empty()) folder = ".";
    std::string candidate = folder + "/" + name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

/// Runs `argv` (argv[0] a path) with stdout and stderr into one pipe; returns the exit status
/// (-1: did not run or was killed) and the output.
std::pair<int, std::string> run_program(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, std::string("pipe: ") + std::strerror(errno)};
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {-1, std::string("fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    const std::string message = "cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, message.data(), message.size());
    _exit(127);
  }
  close(fds[1]);
  std::string output;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

/// `text` as one word of a POSIX shell.
std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// "0-3, 7, 9-10" for sorted task indices.
std::string index_ranges(const std::vector<std::size_t>& tasks, const char* separator) {
  std::string text;
  for (std::size_t i = 0; i < tasks.size();) {
    std::size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    if (!text.empty()) text += separator;
    text += std::to_string(tasks[i]);
    if (j > i) text += "-" + std::to_string(tasks[j]);
    i = j + 1;
  }
  return text;
}

/// The manifest as a task and the collection read it.
struct Manifest {
  std::string submission;
  std::string binary;
  std::string experiment_file;
  std::string binary_identity;
  bool baselines = false;
  unsigned wall_timeout_s = 0;
  bool use_cache = true;
  std::size_t runs_per_task = 1;
  std::size_t tasks = 0;
  std::vector<std::string> keys;
  std::vector<std::string> names;
};

Manifest read_manifest(const std::string& out_dir) {
  const std::string path = manifest_path(out_dir);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw InputError("'" + out_dir + "' holds no Slurm submission (no " + path +
                     "; `gpumux experiment FILE --out DIR --backend slurm` writes one)");
  }
  Manifest m;
  const nlohmann::json json = read_json(path);
  try {
    if (json.at("format").get<std::string>() != kManifestFormat) {
      throw InputError(path + ": format '" + json.at("format").get<std::string>() + "', this gpumux reads '" +
                       kManifestFormat + "'");
    }
    m.submission = json.at("submission").get<std::string>();
    m.binary = json.at("binary").get<std::string>();
    m.experiment_file = json.at("experiment_file").get<std::string>();
    m.binary_identity = json.at("binary_identity").get<std::string>();
    m.baselines = json.at("isolated_baselines").get<bool>();
    m.wall_timeout_s = json.at("timeout_s").get<unsigned>();
    m.use_cache = json.at("use_cache").get<bool>();
    m.runs_per_task = json.at("runs_per_task").get<std::size_t>();
    m.tasks = json.at("tasks").get<std::size_t>();
    for (const nlohmann::json& u : json.at("units")) {
      m.keys.push_back(u.at("key").get<std::string>());
      m.names.push_back(u.at("name").get<std::string>());
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": " + e.what());
  }
  if (m.runs_per_task == 0 || m.tasks != slurm_task_count(m.keys.size(), m.runs_per_task)) {
    throw InputError(path + ": runs_per_task and tasks do not match its units");
  }
  return m;
}

/// InputError unless this process is the binary that submitted: a rebuilt gpumux may simulate or
/// report differently, and one report must come from one model.
void check_binary(const Manifest& m, const std::string& out_dir, const std::string& who) {
  if (m.binary_identity == binary_identity()) return;
  throw InputError(who + ": " + manifest_path(out_dir) + " was submitted by '" + m.binary + "' (" +
                   m.binary_identity + "); this is " + binary_identity() +
                   ". Tasks and the collection must run the gpumux that submitted: restore it, or submit "
                   "again (docs/cluster.md)");
}

/// InputError unless unit `i` of the expansion is what the manifest recorded.
void check_unit(const Manifest& m, const std::string& out_dir, std::size_t i, const std::string& key) {
  if (m.keys[i] == key) return;
  throw InputError("the experiment " + m.experiment_file +
                   " (or a file it reads) changed since it was submitted: " + "simulation " +
                   std::to_string(i) + " (" + m.names[i] + ") is not what " + manifest_path(out_dir) +
                   " recorded; submit it again");
}

std::size_t first_unit(const Manifest& m, std::size_t task) { return task * m.runs_per_task; }
std::size_t end_unit(const Manifest& m, std::size_t task) {
  return std::min(m.keys.size(), (task + 1) * m.runs_per_task);
}

}  // namespace

std::size_t slurm_unit_count(const ExperimentConfig& config, const ExpandedExperiment& grid) {
  return isolated_baseline_count(config, grid) + grid.points.size();
}

std::size_t slurm_task_count(std::size_t units, std::size_t runs_per_task) {
  return (units + runs_per_task - 1) / std::max<std::size_t>(runs_per_task, 1);
}

void check_slurm_submission(const SlurmSubmitOptions& options) {
  std::error_code ec;
  const std::string out = fs::absolute(options.out_dir, ec).lexically_normal().string();
  // #SBATCH lines are not shell words: a path with a blank, quote or backslash would be cut or
  // misread there, and '%' is Slurm's file-name pattern character.
  if (ec || out.find_first_of(" \t\n'\"\\%") != std::string::npos) {
    throw InputError("--out '" + options.out_dir +
                     "': with --backend slurm the output folder's path may not hold blanks, quotes, "
                     "backslashes or '%' (Slurm's #SBATCH lines carry it)");
  }
  if (fs::exists(manifest_path(out), ec)) {
    throw InputError("--out '" + options.out_dir + "' already holds a Slurm submission (" +
                     manifest_path(out) + "): collect it with `gpumux experiment --collect " +
                     options.out_dir + "`, or remove " + work_dir(out) + " to submit again");
  }
  if (find_on_path("sbatch").empty()) {
    throw InputError(
        "--backend slurm: 'sbatch' is not on PATH; submit from a machine with Slurm's commands (a "
        "cluster's login node; docs/cluster.md), or run the experiment here with --backend local");
  }
}

std::string submit_slurm_experiment(const ExperimentConfig& config, const ExpandedExperiment& grid,
                                    const SlurmSubmitOptions& options) {
  check_slurm_submission(options);
  std::error_code ec;
  const std::string out = fs::absolute(options.out_dir, ec).lexically_normal().string();
  const std::string dir = work_dir(out);
  const std::string sbatch = find_on_path("sbatch");
  const std::string experiment_file = fs::absolute(config.source_file, ec).lexically_normal().string();
  const std::string binary = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec || binary.empty()) throw InputError("cannot find the path of the running gpumux (/proc/self/exe)");

  const Units units(config, grid);
  const std::size_t tasks = slurm_task_count(units.list.size(), options.runs_per_task);
  // The name goes into job.sh's comment and #SBATCH line: word characters only.
  std::string name = config.name;
  for (char& c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '_' && c != '.') c = '_';
  }
  nlohmann::json unit_list = nlohmann::json::array();
  for (const Unit& u : units.list) {
    unit_list.push_back(
        {{"name", unit_name(config, grid, units, u)}, {"key", unit_key(config, grid, units, u)}});
  }
  // The submission's own name: results another submission left in a reused folder are not taken.
  const std::string submission =
      sha1_hex(host_name() + " " + std::to_string(getpid()) + " " + out + " " +
               std::to_string(std::chrono::system_clock::now().time_since_epoch().count()));
  const nlohmann::json manifest = {{"format", kManifestFormat},
                                   {"submission", submission},
                                   {"gpumux_version", GPUMUX_VERSION},
                                   {"binary", binary},
                                   {"binary_identity", binary_identity()},
                                   {"experiment", config.name},
                                   {"experiment_file", experiment_file},
                                   {"isolated_baselines", units.baselines},
                                   {"timeout_s", options.wall_timeout_s},
                                   {"use_cache", options.use_cache},
                                   {"runs_per_task", options.runs_per_task},
                                   {"tasks", tasks},
                                   {"units", unit_list}};

  fs::create_directories(dir + "/logs", ec);
  if (!ec) fs::create_directories(dir + "/results", ec);
  if (ec) throw InputError("--out: cannot create '" + dir + "': " + ec.message());
  std::string script = "#!/bin/sh\n";
  script += "# gpumux experiment " + name + " on Slurm: " + std::to_string(units.list.size()) +
            " simulations in " + std::to_string(tasks) + " array tasks of up to " +
            std::to_string(options.runs_per_task) + ".\n";
  script += "# Written by `gpumux experiment --backend slurm` (docs/cluster.md). To run tasks again (those\n";
  script += "# `gpumux experiment --collect` names): sbatch --array=LIST [the same --slurm-arg] " + dir +
            "/job.sh\n";
  script += "#SBATCH --job-name=gpumux-" + name + "\n";
  script += "#SBATCH --array=0-" + std::to_string(tasks - 1) + "\n";
  script += "#SBATCH --output=" + dir + "/logs/task-%a.out\n";
  script += "exec " + shell_quote(binary) + " experiment --task " + shell_quote(out) +
            " --task-index \"$SLURM_ARRAY_TASK_ID\" --jobs \"${SLURM_CPUS_PER_TASK:-1}\"\n";
  try {
    write_atomically(manifest_path(out), manifest.dump(2) + "\n");
    write_atomically(dir + "/job.sh", script);
  } catch (const InputError&) {
    fs::remove_all(dir, ec);
    throw;
  }
  fs::permissions(dir + "/job.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add, ec);

  std::vector<std::string> argv = {sbatch, "--parsable"};
  argv.insert(argv.end(), options.sbatch_args.begin(), options.sbatch_args.end());
  argv.push_back(dir + "/job.sh");
  const auto [status, output] = run_program(argv);
  // --parsable prints "ID" or "ID;CLUSTER" as its last line (warnings may come before it).
  std::string job_id;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const std::size_t digits = line.find_first_not_of("0123456789");
    if (digits != 0 && (digits == std::string::npos || line[digits] == ';')) job_id = line.substr(0, digits);
  }
  if (status != 0 || job_id.empty()) {
    // Nothing was queued: leave no submission behind, so the corrected command can run as it is.
    fs::remove_all(dir, ec);
    std::string message = "sbatch failed";
    message += status < 0 ? "" : " (exit " + std::to_string(status) + ")";
    message += ": " + (output.empty() ? std::string("no output") : output);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    if (tasks > 1000) {
      message +=
          "\n(" + std::to_string(tasks) +
          " array tasks: Slurm's MaxArraySize is 1001 by default; --runs-per-task N puts N simulations "
          "in each task)";
    }
    throw InputError(message);
  }
  write_atomically(dir + "/job_id", job_id + "\n");
  return job_id;
}

void run_slurm_task(const std::string& out_dir, std::size_t index, unsigned jobs) {
  const Manifest m = read_manifest(out_dir);
  if (index >= m.tasks) {
    throw InputError("--task-index " + std::to_string(index) + ": the submission in " + out_dir +
                     " has tasks 0 to " + std::to_string(m.tasks - 1));
  }
  std::error_code ec;
  fs::remove(failure_path(out_dir, index), ec);  // of an earlier attempt of this task
  try {
    check_binary(m, out_dir, "task " + std::to_string(index));
    // The same loading and expansion as at submission (paths in the file are relative to it).
    const ExperimentConfig config = load_experiment(m.experiment_file);
    const ExpandedExperiment grid = expand_experiment(config);
    const Units units(config, grid);
    if (units.list.size() != m.keys.size() || units.baselines != m.baselines) {
      throw InputError("the experiment " + m.experiment_file + " changed since it was submitted (" +
                       std::to_string(units.list.size()) + " simulations, " + std::to_string(m.keys.size()) +
                       " submitted); submit it again");
    }
    const std::size_t first = first_unit(m, index);
    const std::size_t end = end_unit(m, index);
    for (std::size_t i = first; i < end; ++i) {
      check_unit(m, out_dir, i, unit_key(config, grid, units, units.list[i]));
    }

    nlohmann::json results = nlohmann::json::array();
    for (std::size_t i = first; i < end; ++i) results.push_back({{"key", m.keys[i]}});

    // Baselines as the local backend simulates them: isolated_baselines of the group's processes
    // (those of this task only), which names and caches each one exactly as there.
    std::map<std::tuple<std::size_t, std::size_t, std::size_t>, std::vector<std::size_t>> baseline_sets;
    for (std::size_t i = first; i < end; ++i) {
      const Unit& u = units.list[i];
      if (u.baseline) baseline_sets[{u.seed, u.variant, u.group}].push_back(i);
    }
    for (const auto& [where, members] : baseline_sets) {
      const auto [s, v, g] = where;
      Workload group = units.plan.groups[g];
      group.processes.clear();
      for (const std::size_t i : members) {
        group.processes.push_back(units.plan.groups[g].processes[units.list[i].process]);
      }
      IsolatedOptions iso;
      iso.seed = config.seeds[s];
      iso.jobs = jobs;
      iso.use_cache = m.use_cache;
      iso.wall_timeout_s = m.wall_timeout_s;
      const std::vector<RunResult> alone = isolated_baselines(*units.variants.gpus[v], group, iso);
      for (std::size_t k = 0; k < members.size(); ++k) {
        results[members[k] - first]["isolated_ps"] = mean_turnaround_ps(alone.at(k).processes.at(0));
      }
    }

    // Runs: measured in the child as the local backend measures them.
    std::vector<std::size_t> run_units;
    std::vector<SimulationSpec> specs;
    for (std::size_t i = first; i < end; ++i) {
      if (units.list[i].baseline) continue;
      run_units.push_back(i);
      specs.push_back(simulation_spec(config, grid, grid.points[units.list[i].point], m.wall_timeout_s));
    }
    std::vector<nlohmann::json> measured;
    try {
      measured = simulate_all_reduced(specs, jobs, [&](std::size_t k, const RunResult& result) {
        const GridPoint& point = grid.points[units.list[run_units[k]].point];
        return nlohmann::json(measure_outcome(grid.workload_of(point), result, units.baselines));
      });
    } catch (const SimulationFailed& e) {
      std::string which;
      for (const std::size_t i : run_units) which += "\n  " + m.names[i];
      throw SimulationFailed(std::string(e.what()) + "\n(in one of the simulations:" + which + ")");
    }
    for (std::size_t k = 0; k < run_units.size(); ++k) results[run_units[k] - first]["outcome"] = measured[k];

    const nlohmann::json file = {{"submission", m.submission}, {"task", index}, {"units", results}};
    write_atomically(result_path(out_dir, index), file.dump() + "\n");
  } catch (const std::exception& e) {
    // For the collection to name (the log has it too, with whatever Slurm adds).
    std::ofstream failed(failure_path(out_dir, index));
    failed << e.what() << '\n';
    throw;
  }
}

SlurmSubmission read_slurm_submission(const std::string& out_dir) {
  const Manifest m = read_manifest(out_dir);
  SlurmSubmission s;
  s.out_dir = out_dir;
  s.experiment_file = m.experiment_file;
  std::ifstream job(work_dir(out_dir) + "/job_id");
  std::getline(job, s.job_id);
  return s;
}

ExperimentResults collect_slurm_results(const SlurmSubmission& submission, const ExperimentConfig& config,
                                        const ExpandedExperiment& grid) {
  const std::string& out = submission.out_dir;
  const Manifest m = read_manifest(out);
  check_binary(m, out, "--collect");
  const Units units(config, grid);
  if (units.list.size() != m.keys.size() || units.baselines != m.baselines) {
    throw InputError("the experiment " + m.experiment_file + " changed since it was submitted (" +
                     std::to_string(units.list.size()) + " simulations, " + std::to_string(m.keys.size()) +
                     " submitted); submit it again");
  }
  for (std::size_t i = 0; i < units.list.size(); ++i) {
    check_unit(m, out, i, unit_key(config, grid, units, units.list[i]));
  }

  BaselineTimes baselines(config.seeds.size());
  if (units.baselines) {
    for (auto& seed : baselines) {
      seed.resize(units.variants.gpus.size());
      for (auto& variant : seed) {
        for (const Workload& group : units.plan.groups) variant.emplace_back(group.processes.size(), 0.0);
      }
    }
  }
  std::vector<RunOutcome> measured(grid.points.size());
  std::vector<std::size_t> failed;
  std::vector<std::size_t> missing;
  std::string failures;
  for (std::size_t t = 0; t < m.tasks; ++t) {
    std::error_code ec;
    if (!fs::exists(result_path(out, t), ec)) {
      if (fs::exists(failure_path(out, t), ec)) {
        std::ifstream in(failure_path(out, t));
        std::string reason;
        std::getline(in, reason);
        failed.push_back(t);
        failures += "\n  task " + std::to_string(t) + ": " + reason + " (log " + log_path(out, t) + ")";
      } else {
        missing.push_back(t);
      }
      continue;
    }
    // A task's file is whole (written by rename); one of another submission or damaged is an error.
    const nlohmann::json file = read_json(result_path(out, t));
    try {
      if (file.at("submission").get<std::string>() != m.submission ||
          file.at("task").get<std::size_t>() != t) {
        throw InputError(result_path(out, t) + " belongs to another submission; remove it and run task " +
                         std::to_string(t) + " again");
      }
      const nlohmann::json& results = file.at("units");
      if (results.size() != end_unit(m, t) - first_unit(m, t)) {
        throw InputError(result_path(out, t) + " does not hold its task's " +
                         std::to_string(end_unit(m, t) - first_unit(m, t)) + " simulations");
      }
      for (std::size_t i = first_unit(m, t); i < end_unit(m, t); ++i) {
        const nlohmann::json& r = results[i - first_unit(m, t)];
        if (r.at("key").get<std::string>() != m.keys[i]) {
          throw InputError(result_path(out, t) + ": simulation " + std::to_string(i) + " is not " +
                           m.names[i]);
        }
        const Unit& u = units.list[i];
        if (u.baseline) {
          baselines[u.seed][u.variant][u.group][u.process] = r.at("isolated_ps").get<double>();
        } else {
          measured[u.point] = r.at("outcome").get<RunOutcome>();
        }
      }
    } catch (const nlohmann::json::exception& e) {
      throw InputError(result_path(out, t) + ": " + e.what());
    }
  }
  if (!failed.empty() || !missing.empty()) {
    const std::string job = submission.job_id.empty() ? std::string("the job") : "job " + submission.job_id;
    std::vector<std::size_t> rerun = failed;
    rerun.insert(rerun.end(), missing.begin(), missing.end());
    std::sort(rerun.begin(), rerun.end());
    std::string message;
    if (!failed.empty()) {
      message += std::to_string(failed.size()) + " of the " + std::to_string(m.tasks) + " Slurm tasks of " +
                 job + " failed (tasks " + index_ranges(failed, ", ") + "):" + failures + "\n";
    }
    if (!missing.empty()) {
      const bool one = missing.size() == 1;
      message += std::to_string(missing.size()) + " of the " + std::to_string(m.tasks) + " Slurm tasks of " +
                 job + (one ? " has" : " have") + " no results yet (" + (one ? "task " : "tasks ") +
                 index_ranges(missing, ", ") + "; log " + log_path(out, missing.front());
      message += one ? "" : " and the others' beside it";
      message += "): still queued or running";
      message += submission.job_id.empty() ? "" : " (squeue -j " + submission.job_id + ")";
      message +=
          ", or ended without results (killed by Slurm: time or memory limit, node failure; see the logs)\n";
    }
    message += "when " + job + " has finished, run the tasks without results again: sbatch --array=" +
               index_ranges(rerun, ",") + " [the same --slurm-arg] " + work_dir(out) +
               "/job.sh; then collect again";
    if (!failed.empty()) {
      message +=
          " (a failed task fails again unless its cause is gone: a simulation over --timeout needs a new "
          "submission with a larger one)";
    }
    throw SlurmTasksIncomplete(message, failed.empty() ? kExitBadInput : kExitInternal);
  }
  return finish_results(config, grid, std::move(measured), baselines);
}

}  // namespace gpumux
