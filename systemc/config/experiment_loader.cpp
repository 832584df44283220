#include "config/experiment_loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "config/gpu_loader.h"
#include "config/limits.h"
#include "config/tanasic_mixes.h"
#include "config/workload_loader.h"
#include "config/yaml_reader.h"
#include "policy/registry.h"
#include "sm/warp_scheduler/registry.h"

namespace gpumux {

namespace {

using config::YamlMap;
using config::YamlNode;

/// Mixes per process count, processes per mix and simulations per experiment: generous bounds on
/// Tanasic's 30 mixes of up to 8 processes that stop a typo from planning billions of runs (which
/// hung even `--dry-run`).
constexpr std::uint32_t kMaxMixesPerCount = 10'000;
constexpr std::uint32_t kMaxProcessesPerMix = 256;
constexpr std::uint64_t kMaxGridPoints = 1'000'000;
constexpr std::size_t kMaxListed = 1000;  ///< runs, seeds, process counts

/// `value` as a path relative to the experiment file's folder; the file must exist.
std::string resolve_file(const YamlNode& value, const std::filesystem::path& base, const char* what) {
  const std::filesystem::path given(value.as_string());
  std::string resolved = (given.is_absolute() ? given : base / given).lexically_normal().string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(resolved, ec)) {
    value.fail(std::string(what) + " '" + given.string() + "' not found (looked for '" + resolved +
               "'; paths are relative to the experiment file)");
  }
  return resolved;
}

/// Free text (description, notes): a string, possibly multi-line.
std::string read_text(const YamlMap& m, std::string_view key) {
  const auto node = m.optional(key);
  return node ? node->as_string() : std::string();
}

MixGeneratorConfig read_generator(const YamlMap& m, const std::filesystem::path& base) {
  const YamlNode kind = m.required("generate");
  if (kind.as_string() != "tanasic-mixes") {
    kind.fail("unknown workload generator '" + kind.as_string() + "'; known: tanasic-mixes");
  }
  MixGeneratorConfig g;
  const YamlNode apps = m.required("applications");
  g.applications = resolve_file(apps, base, "applications workload");
  g.applications_where = apps.where();
  const std::vector<YamlNode> counts = m.required("process_counts").as_list();
  if (counts.size() > kMaxListed) {
    m.required("process_counts").fail("at most " + std::to_string(kMaxListed) + " counts");
  }
  for (const YamlNode& item : counts) {
    const std::uint32_t n = item.as_u32_in(1, kMaxProcessesPerMix, "processes");
    if (std::find(g.process_counts.begin(), g.process_counts.end(), n) != g.process_counts.end()) {
      item.fail("process count " + std::to_string(n) + " is listed twice");
    }
    g.process_counts.push_back(n);
  }
  g.mixes_per_count = m.required_u32_in("mixes_per_count", 1, kMaxMixesPerCount, "mixes");
  g.mix_seed = m.required("mix_seed").as_u64(0);
  if (const auto offset = m.optional("arrival_offset_max_us")) {
    g.arrival_offset_max_us = offset->as_nonnegative_number();
    if (g.arrival_offset_max_us >= 1000) offset->fail("must be below 1000 us (arrival offsets are small)");
  }
  if (const auto hp = m.optional("high_priority")) {
    const std::string text = hp->as_string();
    if (text == "none") {
      g.high_priority = HighPriority::kNone;
    } else if (text == "first") {
      g.high_priority = HighPriority::kFirst;
    } else {
      hp->fail("unknown value '" + text + "'; expected none or first");
    }
  }
  return g;
}

/// A run's `sm_model` and `warp_scheduler` (checked against the warp-scheduler registry). Whether
/// the GPU file can build the SMs is checked by expand_experiment, which loads it.
void read_run_sm(const YamlMap& m, ExperimentRun& run) {
  if (const auto model = m.optional("sm_model")) {
    const std::string text = model->as_string();
    if (text == "tb") {
      run.sm_model = SmModel::kThreadBlock;
    } else if (text == "warp") {
      run.sm_model = SmModel::kWarp;
    } else {
      model->fail("unknown SM model '" + text +
                  "'; expected tb (a thread block runs for its profiled time) or warp (warps execute the "
                  "kernel's program under a warp scheduler)");
    }
    run.sm_model_where = model->where();
  }
  if (const auto scheduler = m.optional("warp_scheduler")) {
    run.warp_scheduler = scheduler->as_name();
    run.warp_scheduler_where = scheduler->where();
    if (find_warp_scheduler(run.warp_scheduler) == nullptr) {
      const std::vector<std::string> known = warp_scheduler_names();
      const std::string hint = config::closest_name(run.warp_scheduler, known);
      scheduler->fail("unknown warp scheduler '" + run.warp_scheduler + "'" +
                      (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)") +
                      "; known: " + config::join_choices(known, " and ") + " (gpumux list warp-schedulers)");
    }
    if (run.sm_model == SmModel::kThreadBlock) {
      scheduler->fail(
          "a warp scheduler needs warp-level SMs, but this run sets sm_model: tb, whose SMs time whole "
          "thread blocks; drop warp_scheduler or set sm_model: warp");
    }
  }
}

ExperimentRun read_run(const YamlNode& node, const std::vector<ExperimentRun>& earlier,
                       const std::filesystem::path& base) {
  const YamlMap m(node,
                  {"label", "policy", "preemption", "options", "copy_policy", "sm_model", "warp_scheduler",
                   "max_thread_blocks", "perf_sat", "active_cores", "power", "sms", "workloads"});
  ExperimentRun run;
  run.where = node.where();
  run.key = node.key();
  const YamlNode label = m.required("label");
  run.label = label.as_name();
  if (run.label.find_first_of("/ \t\n") != std::string::npos) {
    label.fail("a label names report rows ('" + run.label + "/...'): no '/' or spaces");
  }
  for (const ExperimentRun& other : earlier) {
    if (other.label == run.label) {
      label.fail("duplicate run label '" + run.label + "' (first at line " +
                 std::to_string(other.where.line) + ")");
    }
  }
  run.policy = m.required("policy").as_name();
  if (const auto mech = m.optional("preemption")) {
    run.preemption_given = true;
    const std::string text = mech->as_string();
    const auto mechanism = preemption_mechanism_named(text);
    if (!mechanism) mech->fail("unknown value '" + text + "'; expected context-switch or drain");
    run.preemption = *mechanism;
  }
  if (const auto copies = m.optional("copy_policy")) {
    run.copy_policy_given = true;
    const std::string text = copies->as_string();
    const auto policy = copy_policy_named(text);
    if (!policy) {
      copies->fail("unknown copy policy '" + text +
                   "'; expected fcfs (copies in arrival order) or npq (the highest process priority first)");
    }
    run.copy_policy = *policy;
  }
  if (const auto options = m.optional("options")) {
    if (!options->is_map()) {
      options->fail("expected a map of policy options {key: value}, got " + options->describe());
    }
    const YamlMap map = YamlMap::any_keys(*options);
    const PolicyInfo* info = find_policy(run.policy);  // unknown policies are reported by the grid's check
    for (const auto& [key, value] : map.entries()) {
      run.options[key] = value.as_name();
      // A policy option that names a file (stm's profiles) is relative to the experiment file, as
      // workloads are; the run carries the resolved path.
      if (info == nullptr) continue;
      const std::string name = key;  // a structured binding cannot be captured (C++17)
      const auto spec = std::find_if(info->options.begin(), info->options.end(),
                                     [&](const OptionSpec& o) { return o.name == name; });
      if (spec != info->options.end() && spec->is_path) {
        run.options[key] = resolve_file(value, base, "policy option file");
      }
    }
  }
  read_run_sm(m, run);
  if (const auto slots = m.optional("max_thread_blocks")) {
    // The upper bound is the GPU file's slots, checked by run_gpu once the file is loaded.
    run.max_thread_blocks = slots->as_u32_in(1, 1024, "thread blocks");
    run.max_thread_blocks_where = slots->where();
  }
  if (const auto perf_sat = m.optional("perf_sat")) {
    run.perf_sat = perf_sat->as_on_off("Perf-Sat throttles each SM's thread blocks, Awatramani 4.3");
    run.perf_sat_where = perf_sat->where();
  }
  if (const auto detector = m.optional("active_cores")) {
    run.active_cores = read_active_core_detector(*detector);
    run.active_cores_where = detector->where();
  }
  if (const auto power = m.optional("power")) {
    run.power = power->as_on_off("the power and energy model, docs/config.md \"Power\"");
    run.power_where = power->where();
  }
  if (const auto sms = m.optional("sms")) {
    // The upper bound is the GPU file's SM count, checked by run_gpu once the file is loaded.
    run.sms = sms->as_u32_in(1, 1024, "SMs");
    run.sms_where = sms->where();
  }
  if (const auto only = m.optional("workloads")) {
    run.only_workloads_where = only->where();
    for (const YamlNode& name : only->as_list()) {
      run.only_workloads.push_back(name.as_string());
      if (std::count(run.only_workloads.begin(), run.only_workloads.end(), run.only_workloads.back()) > 1) {
        name.fail("workload '" + run.only_workloads.back() + "' is listed twice");
      }
    }
  }
  return run;
}

void check_grid_size(const ExperimentConfig& c, const YamlNode& where) {
  const std::uint64_t workloads =
      c.generator ? std::uint64_t{c.generator->mixes_per_count} * c.generator->process_counts.size()
                  : c.workload_files.size();
  const std::uint64_t points = workloads * c.runs.size() * c.seeds.size();
  if (points > kMaxGridPoints) {
    where.fail("the grid has " + std::to_string(workloads) + " workloads x " + std::to_string(c.runs.size()) +
               " runs x " + std::to_string(c.seeds.size()) + " seeds = " + std::to_string(points) +
               " simulations, more than the " + std::to_string(kMaxGridPoints) + " an experiment may plan");
  }
}

/// Loads a workload of the grid and applies the experiment's `tb_rsd_percent`, `kernel_launch` and
/// `streams_per_application`, once per loaded file
/// (mixes and prioritized variants copy its processes, and with them the overridden kernels).
Workload load_grid_workload(const std::string& file, const ExperimentConfig& config, const GpuConfig& gpu) {
  Workload w = load_workload(file, gpu);
  if (config.tb_rsd_percent) {
    if (w.tb_duration == TbDurationMode::kFixed) {
      throw InputError(config.tb_rsd_where, "tb_rsd_percent",
                       "has no effect on workload '" + w.name + "', which sets tb_duration: fixed (" +
                           w.source_file + ")");
    }
    override_tb_rsd(w, *config.tb_rsd_percent);
  }
  if (config.kernel_launch) w.kernel_launch = *config.kernel_launch;
  if (config.streams_per_application) {
    const std::string several = split_kernels_over_streams(w, *config.streams_per_application);
    if (!several.empty()) {
      throw InputError(config.streams_per_application_where, "streams_per_application",
                       "process '" + several + "' of workload '" + w.name + "' (" + w.source_file +
                           ") already has several streams; the key deals one stream's kernels over "
                           "several and applies only to workloads whose processes have one stream each");
    }
  }
  return w;
}

/// The GPU `run` simulates on: `gpu` with the run's sm_model, warp_scheduler, max_thread_blocks and
/// perf_sat. InputError naming the run's key when the GPU cannot build its SMs, a warp scheduler or
/// Perf-Sat is given for TB-level SMs, or the run asks for more thread-block slots than the GPU has.
GpuConfig run_gpu(const GpuConfig& gpu, const ExperimentRun& run) {
  GpuConfig g = gpu;
  if (run.perf_sat) {
    // Before apply_sm_settings checks Perf-Sat against the SM model: a run may turn the file's off.
    if (*run.perf_sat && run.sm_model.value_or(gpu.sm_model) != SmModel::kWarp) {
      throw InputError(run.perf_sat_where, run.key + ".perf_sat",
                       "run '" + run.label +
                           "' turns Perf-Sat on, which reads each SM's stalled cycles, but its SMs are "
                           "thread-block level; add sm_model: warp (docs/config.md \"Perf-Sat\")");
    }
    g.perf_sat.enabled = *run.perf_sat;
    g.perf_sat.where = run.perf_sat_where;
  }
  apply_sm_settings(g, run.sm_model, run.warp_scheduler);
  if (g.sm_model == SmModel::kWarp && g.warp.alu.count == 0) {
    throw InputError(
        run.sm_model ? run.sm_model_where : run.where, run.key + (run.sm_model ? ".sm_model" : ""),
        "run '" + run.label + "' uses warp-level SMs, but GPU '" + gpu.name + "' (" + gpu.source_file +
            ") has no sm.warp section (execution units, latencies, warp schedulers); see "
            "docs/config.md");
  }
  if (!run.warp_scheduler.empty() && g.sm_model != SmModel::kWarp) {
    throw InputError(run.warp_scheduler_where, run.key + ".warp_scheduler",
                     "run '" + run.label +
                         "' names a warp scheduler, but its SMs are thread-block level (GPU '" + gpu.name +
                         "' has sm.model tb and the run sets no sm_model); add sm_model: warp");
  }
  if (run.active_cores) {
    if (*run.active_cores != ActiveCoreDetectorKind::kNone) {
      if (g.sm_model != SmModel::kWarp) {
        throw InputError(run.active_cores_where, run.key + ".active_cores",
                         "run '" + run.label +
                             "' detects active cores, which samples the kernel's IPC, but its SMs are "
                             "thread-block level; add sm_model: warp (docs/config.md \"Active cores\")");
      }
      if (!active_cores_policy_supported(run.policy)) {
        throw InputError(run.active_cores_where, run.key + ".active_cores",
                         "run '" + run.label + "' detects active cores under policy '" + run.policy +
                             "': detection runs under fcfs and fifo only, whose SM choice leaves a paused SM "
                             "idle (docs/config.md \"Active cores\")");
      }
    }
    g.active_cores.detector = *run.active_cores;
    g.active_cores.where = run.active_cores_where;
  }
  if (run.power) {
    if (*run.power && g.sm_model != SmModel::kWarp) {
      throw InputError(run.power_where, run.key + ".power",
                       "run '" + run.label +
                           "' turns the power model on, whose dynamic energy counts warp instructions, but "
                           "its SMs are thread-block level; add sm_model: warp (docs/config.md \"Power\")");
    }
    g.power.enabled = *run.power;
    g.power.where = run.power_where;
  }
  if (run.sms) {
    if (*run.sms > gpu.num_sms) {
      throw InputError(run.sms_where, run.key + ".sms",
                       std::to_string(*run.sms) + " SMs, but GPU '" + gpu.name + "' (" + gpu.source_file +
                           ") has " + std::to_string(gpu.num_sms) +
                           "; a run may lower the count, not raise it");
    }
    g.num_sms = *run.sms;
  }
  if (run.max_thread_blocks) {
    if (*run.max_thread_blocks > gpu.sm.max_thread_blocks) {
      throw InputError(run.max_thread_blocks_where, run.key + ".max_thread_blocks",
                       std::to_string(*run.max_thread_blocks) + " thread blocks per SM, but GPU '" +
                           gpu.name + "' (" + gpu.source_file + ") has " +
                           std::to_string(gpu.sm.max_thread_blocks) +
                           " slots; a run may lower the count, not raise it");
    }
    g.sm.max_thread_blocks = *run.max_thread_blocks;
    // A kernel resident on an SM holds at least one slot, so an SM with N slots holds at most N kernels
    // (the GPU loader's rule for a file).
    g.sm.max_resident_kernels = std::min(g.sm.max_resident_kernels, g.sm.max_thread_blocks);
  }
  return g;
}

/// A run's `workloads:` names workloads of the grid (by their `name:`); runs[0], the baseline the
/// analyses compare against, simulates every workload.
void check_run_workloads(const ExperimentConfig& config, const ExpandedExperiment& e) {
  for (std::size_t r = 0; r < config.runs.size(); ++r) {
    const ExperimentRun& run = config.runs[r];
    if (run.only_workloads.empty()) continue;
    if (r == 0) {
      throw InputError(run.only_workloads_where, run.key + ".workloads",
                       "the first run is the baseline every analysis compares against and simulates every "
                       "workload; restrict a later run instead");
    }
    std::vector<std::string> names;
    for (const ExperimentWorkload& w : e.workloads) names.push_back(w.workload.name);
    for (const std::string& wanted : run.only_workloads) {
      if (std::find(names.begin(), names.end(), wanted) != names.end()) continue;
      throw InputError(
          run.only_workloads_where, run.key + ".workloads",
          "run '" + run.label + "' names workload '" + wanted +
              "', which is not in the grid; its workloads: " + config::join_choices(names, " and "));
    }
  }
}

/// Warp-level SMs execute kernel programs: every kernel of every workload a warp-level run simulates
/// needs one (checked here, before any simulation, rather than by the SM mid-run).
void check_warp_programs(const ExperimentConfig& config, const ExpandedExperiment& e) {
  for (std::size_t r = 0; r < config.runs.size(); ++r) {
    if (e.run_gpus[r].sm_model != SmModel::kWarp) continue;
    const ExperimentRun& run = config.runs[r];
    for (const ExperimentWorkload& w : e.workloads) {
      for (const ProcessSpec& p : w.workload.processes) {
        for (const StreamSpec& stream : p.streams) {
          for (const CommandSpec& c : stream.commands) {
            if (c.kind != CommandKind::kKernel || !c.kernel || c.kernel->program) continue;
            throw InputError(c.kernel->where, "program",
                             "kernel '" + c.kernel->name + "' (workload '" + w.workload.name +
                                 "') has no program, which run '" + run.label + "' (" + run.where.file + ":" +
                                 std::to_string(run.where.line) +
                                 ") executes on warp-level SMs; give it a `program:` (docs/config.md "
                                 "\"Kernel programs\") or run it with sm_model: tb");
          }
        }
      }
    }
  }
}

}  // namespace

namespace {

/// The keys of an experiment file, and of one that extends another (docs/config.md "Extending an
/// experiment"): the same, every one optional, plus `extends` and the list edits.
const std::vector<std::string_view> kExperimentKeys = {"name",
                                                       "description",
                                                       "notes",
                                                       "gpu",
                                                       "analysis",
                                                       "workloads",
                                                       "runs",
                                                       "seeds",
                                                       "paper",
                                                       "tb_rsd_percent",
                                                       "preemption_latency_scale",
                                                       "tb_interference",
                                                       "memory_model",
                                                       "kernel_launch",
                                                       "streams_per_application"};
const std::vector<std::string_view> kExtensionKeys = [] {
  std::vector<std::string_view> keys = kExperimentKeys;
  keys.insert(keys.end(), {"extends", "add_workloads", "remove_workloads", "add_runs", "remove_runs"});
  return keys;
}();
/// Experiments extending experiments: a chain longer than this is a mistake, not a design.
constexpr std::size_t kMaxExtendsDepth = 16;

WorkloadEntry read_workload_entry(const YamlNode& entry, const std::filesystem::path& base) {
  WorkloadEntry w;
  w.where = entry.where();
  if (entry.is_map()) {
    const YamlMap e(entry, {"file", "group"});
    w.file = resolve_file(e.required("file"), base, "workload");
    if (const auto group = e.optional("group")) w.group = group->as_name();
  } else {
    w.file = resolve_file(entry, base, "workload");
  }
  return w;
}

void read_workloads(const YamlNode& workloads, const std::filesystem::path& base, ExperimentConfig& c) {
  c.generator.reset();
  c.workload_files.clear();
  if (workloads.is_map()) {
    c.generator =
        read_generator(YamlMap(workloads, {"generate", "applications", "process_counts", "mixes_per_count",
                                           "mix_seed", "arrival_offset_max_us", "high_priority"}),
                       base);
  } else if (workloads.is_list()) {
    for (const YamlNode& entry : workloads.as_list()) {
      c.workload_files.push_back(read_workload_entry(entry, base));
    }
  } else {
    workloads.fail(
        "expected a list of workload files (or {file, group} maps) or a generator map {generate: "
        "tanasic-mixes, ...}, got " +
        workloads.describe());
  }
}

std::vector<std::uint64_t> read_seeds(const YamlNode& seeds) {
  std::vector<std::uint64_t> list;
  const std::vector<YamlNode> items = seeds.as_list();
  if (items.size() > kMaxListed) seeds.fail("at most " + std::to_string(kMaxListed) + " seeds");
  for (const YamlNode& item : items) {
    const std::uint64_t seed = item.as_u64(0);
    if (std::find(list.begin(), list.end(), seed) != list.end()) {
      item.fail("seed " + std::to_string(seed) + " is listed twice");
    }
    list.push_back(seed);
  }
  return list;
}

std::vector<PaperEntry> read_paper(const YamlNode& paper) {
  std::vector<PaperEntry> entries;
  if (paper.is_null()) return entries;
  if (!paper.is_map()) {
    paper.fail("expected a map of report row -> number (or null), got " + paper.describe());
  }
  const YamlMap map = YamlMap::any_keys(paper);
  for (const auto& [row, value] : map.entries()) {
    PaperEntry entry;
    entry.row = row;
    entry.where = value.where();
    if (!value.is_null()) entry.value = value.as_number();
    entries.push_back(std::move(entry));
  }
  return entries;
}

/// `remove_runs: [label, ...]`: the parent's runs by label, never the baseline (runs[0], what the
/// analyses compare against). The paper figures of a removed run's rows ("<label>/...") go with it.
void remove_runs(const YamlNode& list, ExperimentConfig& c) {
  std::vector<std::string> removed;
  for (const YamlNode& item : list.as_list()) {
    const std::string label = item.as_name();
    std::vector<std::string> labels;
    for (const ExperimentRun& run : c.runs) labels.push_back(run.label);
    const auto it = std::find(labels.begin(), labels.end(), label);
    if (std::find(removed.begin(), removed.end(), label) != removed.end()) {
      item.fail("run '" + label + "' is listed twice");
    }
    if (it == labels.end()) {
      const std::string hint = config::closest_name(label, labels);
      item.fail("the extended experiment has no run '" + label + "'" +
                (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)") +
                "; its runs: " + config::join_choices(labels, " and "));
    }
    if (it == labels.begin()) {
      item.fail("run '" + label +
                "' is the baseline (the first run, which the analyses compare against) and cannot be "
                "removed; give `runs:` to list the runs anew");
    }
    c.runs.erase(c.runs.begin() + (it - labels.begin()));
    removed.push_back(label);
    c.paper.erase(std::remove_if(c.paper.begin(), c.paper.end(),
                                 [&](const PaperEntry& e) { return e.row.rfind(label + "/", 0) == 0; }),
                  c.paper.end());
  }
}

/// `remove_workloads: [file, ...]` (paths relative to the extending file): entries of the parent's
/// list, matched by the file they name.
void remove_workloads(const YamlNode& list, const std::filesystem::path& base, ExperimentConfig& c) {
  if (c.generator) {
    list.fail("the extended experiment generates its workloads; there is no list to remove from");
  }
  for (const YamlNode& item : list.as_list()) {
    const std::string file = resolve_file(item, base, "workload");
    const auto it =
        std::find_if(c.workload_files.begin(), c.workload_files.end(), [&](const WorkloadEntry& w) {
          std::error_code ec;
          return std::filesystem::equivalent(w.file, file, ec);
        });
    if (it == c.workload_files.end()) {
      item.fail("'" + item.as_string() + "' is not a workload of the extended experiment");
    }
    c.workload_files.erase(it);
  }
  if (c.workload_files.empty()) list.fail("removes every workload of the extended experiment");
}

void add_workloads(const YamlNode& list, const std::filesystem::path& base, ExperimentConfig& c) {
  if (c.generator) {
    list.fail("the extended experiment generates its workloads; give `workloads:` to list them instead");
  }
  for (const YamlNode& item : list.as_list()) {
    WorkloadEntry w = read_workload_entry(item, base);
    for (const WorkloadEntry& other : c.workload_files) {
      std::error_code ec;
      if (std::filesystem::equivalent(other.file, w.file, ec)) {
        item.fail("workload '" + w.file + "' is already in the grid (" + other.where.file + ":" +
                  std::to_string(other.where.line) + ")");
      }
    }
    c.workload_files.push_back(std::move(w));
  }
}

ExperimentConfig load_experiment_at(const std::string& path, std::vector<std::string>& chain) {
  const YamlNode root = config::load_yaml_file(path);
  const bool extends = YamlMap::any_keys(root).has("extends");
  const YamlMap m(root, extends ? kExtensionKeys : kExperimentKeys);
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  ExperimentConfig c;
  if (extends) {
    // The extended experiment, loaded as if run alone (its paths relative to its own file), then edited.
    const YamlNode parent = m.required("extends");
    const std::string parent_path = resolve_file(parent, base, "extended experiment");
    chain.push_back(path);
    for (const std::string& seen : chain) {
      std::error_code ec;
      if (std::filesystem::equivalent(seen, parent_path, ec)) {
        parent.fail("extends '" + parent_path + "', which extends this file again (a cycle)");
      }
    }
    if (chain.size() > kMaxExtendsDepth) {
      parent.fail("more than " + std::to_string(kMaxExtendsDepth) + " experiments extend one another");
    }
    c = load_experiment_at(parent_path, chain);
    chain.pop_back();
    c.extends.insert(c.extends.begin(), parent_path);
  }
  c.source_file = path;
  if (const auto name = m.optional("name")) {
    c.name = name->as_name();
  } else {
    c.name = std::filesystem::path(path).stem().string();
  }
  if (m.has("description") || !extends) c.description = read_text(m, "description");
  if (m.has("notes") || !extends) c.notes = read_text(m, "notes");
  if (const auto gpu = extends ? m.optional("gpu") : std::optional<YamlNode>(m.required("gpu"))) {
    c.gpu_path = resolve_file(*gpu, base, "GPU file");
  }
  if (const auto analysis =
          extends ? m.optional("analysis") : std::optional<YamlNode>(m.required("analysis"))) {
    c.analysis = analysis->as_string();
    c.analysis_where = analysis->where();
  }

  const auto workloads = extends ? m.optional("workloads") : std::optional<YamlNode>(m.required("workloads"));
  if (workloads) read_workloads(*workloads, base, c);
  for (const char* edit : {"add_workloads", "remove_workloads"}) {
    if (workloads && m.has(edit)) {
      m.required(edit).fail("give either `workloads:` or `" + std::string(edit) + ":`");
    }
  }
  if (const auto removed = m.optional("remove_workloads")) remove_workloads(*removed, base, c);
  if (const auto added = m.optional("add_workloads")) add_workloads(*added, base, c);

  const auto runs = extends ? m.optional("runs") : std::optional<YamlNode>(m.required("runs"));
  if (runs) {
    const std::vector<YamlNode> items = runs->as_list();
    if (items.size() > kMaxListed) runs->fail("at most " + std::to_string(kMaxListed) + " runs");
    c.runs.clear();
    for (const YamlNode& run : items) c.runs.push_back(read_run(run, c.runs, base));
  }
  for (const char* edit : {"add_runs", "remove_runs"}) {
    if (runs && m.has(edit)) m.required(edit).fail("give either `runs:` or `" + std::string(edit) + ":`");
  }
  if (const auto removed = m.optional("remove_runs")) remove_runs(*removed, c);
  if (const auto added = m.optional("add_runs")) {
    for (const YamlNode& run : added->as_list()) c.runs.push_back(read_run(run, c.runs, base));
    if (c.runs.size() > kMaxListed) added->fail("at most " + std::to_string(kMaxListed) + " runs in all");
  }

  if (const auto seeds = m.optional("seeds")) {
    c.seeds = read_seeds(*seeds);
  } else if (!extends) {
    c.seeds = {1};
  }
  if (const auto rsd = m.optional("tb_rsd_percent")) {
    c.tb_rsd_percent = config::read_rsd_percent(*rsd);
    c.tb_rsd_where = rsd->where();
  }

  if (const auto scale = m.optional("preemption_latency_scale")) {
    // 0 makes preemption free of latencies; a thousand times the shipped ones is already absurd.
    c.preemption_latency_scale = scale->as_number_in(0, 1000, "times");
  }
  if (const auto interference = m.optional("tb_interference")) {
    c.tb_interference = interference->as_on_off("TB-level memory interference, Liang Eq. 3");
  }
  if (const auto memory = m.optional("memory_model")) {
    const std::string value = memory->as_string();
    if (value == "simple") {
      c.memory_model = MemoryModel::kSimple;
    } else if (value == "dram") {
      c.memory_model = MemoryModel::kDram;
    } else {
      memory->fail("must be simple (one bandwidth pipe) or dram (L2 and GDDR5 channels), not '" + value +
                   "'");
    }
    c.memory_model_where = memory->where();
  }
  if (const auto launch = m.optional("kernel_launch")) c.kernel_launch = read_kernel_launch_mode(*launch);
  if (const auto streams = m.optional("streams_per_application")) {
    // 1 is every shipped application already; more streams than a GPU has hardware queues would share
    // queues across processes (Hyper-Q has 32).
    c.streams_per_application = streams->as_u32_in(2, 32, "streams");
    c.streams_per_application_where = streams->where();
  }

  check_grid_size(c, runs ? *runs : m.node());

  if (const auto paper = m.optional("paper")) c.paper = read_paper(*paper);
  return c;
}

}  // namespace

ExperimentConfig load_experiment(const std::string& path) {
  std::vector<std::string> chain;
  return load_experiment_at(path, chain);
}

const Workload& ExpandedExperiment::workload_of(const GridPoint& point) const {
  const ExperimentWorkload& w = workloads.at(point.workload);
  return (point.run > 0 && w.prioritized) ? *w.prioritized : w.workload;
}

void scale_preemption_latencies(GpuConfig& gpu, double scale) {
  ContextSwitchConfig& cs = gpu.context_switch;
  for (std::uint32_t* cycles : {&cs.drain_cycles, &cs.trap_cycles, &cs.setup_cycles}) {
    *cycles = static_cast<std::uint32_t>(std::llround(*cycles * scale));
  }
}

ExpandedExperiment expand_experiment(const ExperimentConfig& config) {
  ExpandedExperiment e;
  e.gpu = load_gpu_config(config.gpu_path);
  if (config.preemption_latency_scale) scale_preemption_latencies(e.gpu, *config.preemption_latency_scale);
  if (config.tb_interference) e.gpu.memory.tb_interference = *config.tb_interference;
  if (config.memory_model) {
    if (*config.memory_model == MemoryModel::kDram &&
        (e.gpu.memory.dram.channels == 0 || e.gpu.memory.l2.cache.capacity_bytes == 0)) {
      throw InputError(config.memory_model_where, "memory_model",
                       "dram, but GPU '" + e.gpu.name + "' (" + e.gpu.source_file +
                           ") has no memory.dram and memory.l2 sections; see docs/config.md \"Memory\"");
    }
    e.gpu.memory.model = *config.memory_model;
  }
  for (const ExperimentRun& run : config.runs) e.run_gpus.push_back(run_gpu(e.gpu, run));
  if (config.generator) {
    const MixGeneratorConfig& g = *config.generator;
    const Workload apps = load_grid_workload(g.applications, config, e.gpu);
    for (TanasicMix& mix : generate_tanasic_mixes(apps, g.process_counts, g.mixes_per_count, g.mix_seed,
                                                  g.arrival_offset_max_us)) {
      ExperimentWorkload w;
      w.workload = std::move(mix.workload);
      w.applications = std::move(mix.applications);
      if (g.high_priority == HighPriority::kFirst) {
        Workload prioritized = w.workload;
        for (ProcessSpec& p : prioritized.processes) p.priority = 0;
        prioritized.processes.front().priority = 1;
        w.prioritized = std::move(prioritized);
      }
      e.workloads.push_back(std::move(w));
    }
  } else {
    for (const WorkloadEntry& entry : config.workload_files) {
      ExperimentWorkload w;
      w.workload = load_grid_workload(entry.file, config, e.gpu);
      w.group = entry.group;
      e.workloads.push_back(std::move(w));
    }
  }
  check_warp_programs(config, e);
  check_run_workloads(config, e);
  for (std::size_t w = 0; w < e.workloads.size(); ++w) {
    for (std::size_t r = 0; r < config.runs.size(); ++r) {
      const std::vector<std::string>& only = config.runs[r].only_workloads;
      const bool simulated =
          only.empty() || std::find(only.begin(), only.end(), e.workloads[w].workload.name) != only.end();
      for (std::size_t s = 0; s < config.seeds.size(); ++s) {
        e.point_index.push_back(simulated ? e.points.size() : ExpandedExperiment::kNoPoint);
        if (simulated) e.points.push_back({w, r, s});
      }
    }
  }
  return e;
}

}  // namespace gpumux
