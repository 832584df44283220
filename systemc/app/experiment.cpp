#include "app/experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>

#include "app/isolated_baselines.h"
#include "config/yaml_reader.h"
#include "core/error.h"
#include "core/progress_line.h"
#include "metrics/multiprogram_metrics.h"
#include "policy/registry.h"
#include "top/simulation.h"

namespace gpumux {

namespace {

const char* mechanism_name(PreemptionMechanism m) {
  return m == PreemptionMechanism::kDrain ? "drain" : "context-switch";
}

std::vector<std::string> analysis_names() {
  std::vector<std::string> names;
  for (const AnalysisInfo& a : analysis_registry()) names.push_back(a.name);
  return names;
}

/// Everything that determines a process's isolated run except its name, priority, tokens and arrival
/// (isolated runs use fcfs, alone, from time 0): its commands, repeat count and the TB-duration mode.
std::string isolated_identity(const Workload& workload, const ProcessSpec& p) {
  nlohmann::json j;
  j["tb_duration"] = static_cast<int>(workload.tb_duration);
  j["repeat"] = p.repeat;
  nlohmann::json streams = nlohmann::json::array();
  for (const StreamSpec& s : p.streams) {
    nlohmann::json commands = nlohmann::json::array();
    for (const CommandSpec& c : s.commands) {
      nlohmann::json kernel;
      if (c.kernel) {
        kernel = {c.kernel->library,          c.kernel->name,
                  c.kernel->thread_blocks,    c.kernel->threads_per_tb,
                  c.kernel->registers_per_tb, c.kernel->shared_memory_per_tb,
                  c.kernel->tb_time.mean_ps,  c.kernel->tb_time.rsd_percent};
      }
      commands.push_back({static_cast<int>(c.kind), c.cpu_ps, c.bytes, c.launches, kernel});
    }
    streams.push_back(commands);
  }
  j["streams"] = streams;
  return j.dump();
}

/// The distinct processes of the grid, for isolated baselines, and where each process of each
/// workload finds its baseline.
struct IsolatedPlan {
  /// One synthetic workload per TB-duration mode holding the distinct processes (priority 0, no tokens).
  std::vector<Workload> groups;
  /// identity -> (group, process index in the group)
  std::map<std::string, std::pair<std::size_t, std::size_t>> index;
};

IsolatedPlan plan_isolated(const ExpandedExperiment& grid) {
  IsolatedPlan plan;
  std::map<int, std::size_t> group_of_mode;
  for (const ExperimentWorkload& w : grid.workloads) {
    for (const ProcessSpec& p : w.workload.processes) {
      const std::string id = isolated_identity(w.workload, p);
      if (plan.index.count(id) != 0) continue;
      const int mode = static_cast<int>(w.workload.tb_duration);
      if (group_of_mode.count(mode) == 0) {
        group_of_mode[mode] = plan.groups.size();
        Workload group = w.workload;
        group.name = w.workload.name;
        group.processes.clear();
        plan.groups.push_back(std::move(group));
      }
      const std::size_t g = group_of_mode[mode];
      ProcessSpec alone = p;
      alone.priority = 0;
      alone.tokens.reset();
      alone.arrival_ps = 0;
      plan.index[id] = {g, plan.groups[g].processes.size()};
      plan.groups[g].processes.push_back(std::move(alone));
    }
  }
  return plan;
}

/// Rough cost of a simulation in thread blocks, to run the longest first and to estimate progress.
double estimated_cost(const Workload& w, const std::vector<double>& isolated_ps) {
  std::vector<double> tbs(w.processes.size(), 0.0);
  double longest = 0;
  for (std::size_t p = 0; p < w.processes.size(); ++p) {
    for (const StreamSpec& s : w.processes[p].streams) {
      for (const CommandSpec& c : s.commands) {
        if (c.kind == CommandKind::kKernel && c.kernel) {
          tbs[p] += double(c.launches) * c.kernel->thread_blocks;
        }
      }
    }
    longest = std::max(longest, isolated_ps[p] * w.processes[p].repeat);
  }
  double cost = 0;
  for (std::size_t p = 0; p < w.processes.size(); ++p) {
    double runs = w.processes[p].repeat;
    if (w.replay == ReplayMode::kUntilAllDone && isolated_ps[p] > 0) {
      runs = std::max(runs, std::ceil(longest / isolated_ps[p]));
      runs = std::min(runs, double(std::max(w.replay_limit, w.processes[p].repeat)));
    }
    cost += tbs[p] * runs;
  }
  return std::max(cost, 1.0);
}

/// "what: done/total simulations, elapsed, estimate of what is left" (by the cost estimates above).
class GridProgress {
 public:
  GridProgress(bool enabled, std::string what, std::size_t total, double total_cost)
      : line_(enabled), what_(std::move(what)), total_(total), total_cost_(total_cost) {}
  void update(std::size_t done, double done_cost) {
    if (!line_.enabled()) return;
    const double elapsed = line_.elapsed_s();
    char text[256];
    int n = std::snprintf(text, sizeof text, "%s: %zu/%zu simulations, %.0f s", what_.c_str(), done, total_,
                          elapsed);
    if (done_cost > 0 && done < total_ && n > 0 && n < int(sizeof text)) {
      std::snprintf(text + n, sizeof text - std::size_t(n), ", ~%.0f s left",
                    elapsed * (total_cost_ - done_cost) / done_cost);
    }
    line_.show(text);
  }

 private:
  ProgressLine line_;
  std::string what_;
  std::size_t total_;
  double total_cost_;
};

RunOutcome make_outcome(const Workload& w, const RunResult& result, const std::vector<double>& isolated_ps) {
  RunOutcome o;
  o.simulated_ns = ns_from_ps(result.end_ps);
  o.preemptions = result.preemptions.size();
  std::vector<ProcessTimes> times;
  bool complete = true;
  for (std::size_t p = 0; p < w.processes.size(); ++p) {
    ProcessOutcome po;
    po.name = w.processes[p].name;
    po.class1 = process_class(w.processes[p], true);
    po.class2 = process_class(w.processes[p], false);
    po.priority = w.processes[p].priority;
    po.isolated_ps = isolated_ps[p];
    po.turnaround_ps = mean_turnaround_ps(result.processes.at(p));
    po.runs = result.processes[p].runs.size();
    if (!(po.turnaround_ps > 0) || !(po.isolated_ps > 0)) complete = false;
    times.push_back({po.isolated_ps, po.turnaround_ps});
    o.processes.push_back(std::move(po));
  }
  if (complete) {
    const MultiprogramMetrics m = compute_metrics(times);
    o.valid = true;
    o.stp = m.stp;
    o.antt = m.antt;
    o.fairness = m.fairness;
    for (std::size_t p = 0; p < o.processes.size(); ++p) o.processes[p].ntt = m.ntt[p];
  }
  return o;
}

}  // namespace

void validate_experiment(const ExperimentConfig& config, const ExpandedExperiment& grid) {
  if (find_analysis(config.analysis) == nullptr) {
    std::string message = "unknown analysis '" + config.analysis + "'";
    if (const std::string hint = config::closest_name(config.analysis, analysis_names()); !hint.empty()) {
      message += " (did you mean '" + hint + "'?)";
    }
    throw InputError(config.analysis_where, "analysis",
                     message + "; known: " + config::join_choices(analysis_names()));
  }
  for (const ExperimentRun& run : config.runs) {
    try {
      (void)create_policy(run.policy, run.options);
    } catch (const InputError& e) {
      throw InputError(run.where, run.key, e.what());
    }
  }
  ExperimentResults dry;
  dry.config = &config;
  dry.grid = &grid;
  dry.outcomes.assign(grid.points.size(), std::nullopt);
  std::vector<std::string> names;
  for (const ReportRow& row : find_analysis(config.analysis)->analyze(dry)) names.push_back(row.name);
  for (const PaperEntry& entry : config.paper) {
    if (std::find(names.begin(), names.end(), entry.row) == names.end()) {
      std::string message = "analysis " + config.analysis + " has no row '" + entry.row + "'";
      if (const std::string hint = config::closest_name(entry.row, names); !hint.empty()) {
        message += " (did you mean '" + hint + "'?)";
      }
      if (!names.empty()) message += "; its rows look like '" + names.front() + "'";
      throw InputError(entry.where, "paper." + entry.row, message);
    }
  }
}

std::vector<ReportRow> experiment_rows(const ExperimentResults& results) {
  const AnalysisInfo* analysis = find_analysis(results.config->analysis);
  if (analysis == nullptr) throw InputError("unknown analysis '" + results.config->analysis + "'");
  std::vector<ReportRow> rows = analysis->analyze(results);
  for (ReportRow& row : rows) {
    for (const PaperEntry& entry : results.config->paper) {
      if (entry.row == row.name) row.paper = entry.value;
    }
  }
  return rows;
}

std::size_t isolated_baseline_count(const ExperimentConfig& config, const ExpandedExperiment& grid) {
  const IsolatedPlan plan = plan_isolated(grid);
  return plan.index.size() * config.seeds.size();
}

ExperimentResults run_experiment(const ExperimentConfig& config, const ExpandedExperiment& grid,
                                 const ExperimentOptions& options) {
  // 1. Isolated baselines: each distinct process alone (fcfs), once per seed; cached on disk.
  const IsolatedPlan plan = plan_isolated(grid);
  std::vector<std::vector<std::vector<RunResult>>> isolated(config.seeds.size());  // [seed][group][process]
  {
    std::size_t total = 0;
    for (const Workload& g : plan.groups) total += g.processes.size() * config.seeds.size();
    GridProgress progress(options.progress, "isolated baselines", total, double(total));
    std::size_t done = 0;
    progress.update(0, 0);
    for (std::size_t s = 0; s < config.seeds.size(); ++s) {
      for (const Workload& group : plan.groups) {
        IsolatedOptions iso;
        iso.seed = config.seeds[s];
        iso.jobs = options.jobs;
        iso.use_cache = options.use_cache;
        iso.cache_dir = options.cache_dir;
        iso.wall_timeout_s = options.wall_timeout_s;
        isolated[s].push_back(isolated_baselines(grid.gpu, group, iso));
        done += group.processes.size();
        progress.update(done, double(done));
      }
    }
  }
  auto isolated_of = [&](const Workload& w, std::size_t seed) {
    std::vector<double> times;
    for (const ProcessSpec& p : w.processes) {
      const auto [g, index] = plan.index.at(isolated_identity(w, p));
      times.push_back(mean_turnaround_ps(isolated[seed][g][index].processes.at(0)));
    }
    return times;
  };

  // 2. The multiprogrammed runs, most expensive first (fewer idle cores at the end).
  const std::size_t n = grid.points.size();
  std::vector<SimulationSpec> specs(n);
  std::vector<double> cost(n);
  for (std::size_t i = 0; i < n; ++i) {
    const GridPoint& point = grid.points[i];
    const ExperimentRun& run = config.runs[point.run];
    SimulationSpec& spec = specs[i];
    spec.gpu = grid.gpu;
    spec.workload = grid.workload_of(point);
    spec.policy = run.policy;
    spec.policy_options = run.options;
    spec.preemption = run.preemption;
    spec.seed = config.seeds[point.seed];
    spec.wall_timeout_s = options.wall_timeout_s;
    cost[i] = estimated_cost(spec.workload, isolated_of(spec.workload, point.seed));
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });

  std::vector<RunResult> results(n);
  const double total_cost = std::accumulate(cost.begin(), cost.end(), 0.0);
  GridProgress progress(options.progress, config.name, n, total_cost);
  progress.update(0, 0);
  // Without a progress line, one batch (simulate_all balances the load itself); with one, batches of
  // twice the job count, so the line advances as simulations finish.
  const std::size_t batch = options.progress ? std::max<std::size_t>(std::size_t{2} * options.jobs, 1)
                                             : std::max<std::size_t>(n, 1);
  std::size_t done = 0;
  double done_cost = 0;
  for (std::size_t first = 0; first < n; first += batch) {
    const std::size_t last = std::min(n, first + batch);
    std::vector<SimulationSpec> chunk;
    for (std::size_t k = first; k < last; ++k) chunk.push_back(specs[order[k]]);
    std::vector<RunResult> out;
    try {
      out = simulate_all(chunk, options.jobs);
    } catch (const SimulationFailed& e) {
      std::string which;
      for (std::size_t k = first; k < last; ++k) {
        const GridPoint& p = grid.points[order[k]];
        which += "\n  " + grid.workloads[p.workload].workload.name + " / " + config.runs[p.run].label +
                 " / seed " + std::to_string(config.seeds[p.seed]);
      }
      throw SimulationFailed(std::string(e.what()) + "\n(in one of the simulations:" + which + ")");
    }
    for (std::size_t k = first; k < last; ++k) {
      results[order[k]] = std::move(out[k - first]);
      done_cost += cost[order[k]];
    }
    done = last;
    progress.update(done, done_cost);
  }

  // 3. Metrics of every run.
  ExperimentResults r;
  r.config = &config;
  r.grid = &grid;
  r.outcomes.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Workload& w = grid.workload_of(grid.points[i]);
    r.outcomes[i] = make_outcome(w, results[i], isolated_of(w, grid.points[i].seed));
  }
  return r;
}

// ---------------------------------------------------------------------------------------------------
// Reports

namespace {

nlohmann::json number_or_null(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

std::string format_number(double v) {
  char text[64];
  const double a = std::fabs(v);
  std::snprintf(text, sizeof text, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
  return text;
}

std::string cell(const ReportRow& row) {
  std::string text = row.model ? format_number(*row.model) : "n/a";
  if (row.paper) {
    char paper[64];
    std::snprintf(paper, sizeof paper, "%g", *row.paper);
    text += " / " + std::string(paper);
  }
  return text;
}

std::vector<std::string> split(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

void add_unique(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

/// A table with `rows` x `columns`, cells from `cells` ((row, column) -> text); missing cells blank.
std::string pivot_table(const std::string& corner, const std::vector<std::string>& rows,
                        const std::vector<std::string>& columns,
                        const std::map<std::pair<std::string, std::string>, std::string>& cells) {
  std::string out = "| " + corner + " |";
  std::string rule = "|---|";
  for (const std::string& c : columns) {
    out += " " + c + " |";
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const std::string& r : rows) {
    out += "| " + r + " |";
    for (const std::string& c : columns) {
      const auto it = cells.find({r, c});
      out += " " + (it == cells.end() ? std::string() : it->second) + " |";
    }
    out += "\n";
  }
  return out;
}

std::string options_text(const PolicyOptions& options) {
  std::string text;
  for (const auto& [k, v] : options) text += (text.empty() ? "" : ", ") + k + "=" + v;
  return text;
}

/// Who gains and who loses: the mean NTT of each application under each run, over the workloads of
/// each size (first seed) - the per-application view behind the group rows (validation.md 10 uses it).
std::string application_ntt_tables(const ExperimentResults& results) {
  const ExperimentConfig& c = *results.config;
  const ExpandedExperiment& g = *results.grid;
  // process count -> application -> run -> (sum of NTT, samples)
  std::map<std::size_t, std::map<std::string, std::vector<std::pair<double, std::size_t>>>> table;
  for (std::size_t w = 0; w < g.workloads.size(); ++w) {
    const std::size_t size = g.workloads[w].workload.processes.size();
    for (std::size_t r = 0; r < c.runs.size(); ++r) {
      const RunOutcome* o = results.outcome(w, r, 0);
      if (o == nullptr) continue;
      for (const ProcessOutcome& p : o->processes) {
        auto& cells = table[size][p.name];
        cells.resize(c.runs.size());
        cells[r].first += p.ntt;
        ++cells[r].second;
      }
    }
  }
  if (table.empty()) return "";
  std::string md =
      "## Applications\n\nMean NTT of each application under each run, over the workloads with that many "
      "processes (seed " +
      std::to_string(c.seeds.front()) +
      "; whatever its priority in the workload; in brackets the number of workloads it is in). Lower is "
      "better.\n\n";
  for (const auto& [size, apps] : table) {
    md += "### " + std::to_string(size) + (size == 1 ? " process" : " processes") + "\n\n| application |";
    std::string rule = "|---|";
    for (const ExperimentRun& run : c.runs) {
      md += " " + run.label + " |";
      rule += "---|";
    }
    md += "\n" + rule + "\n";
    for (const auto& [app, cells] : apps) {
      std::size_t appearances = 0;
      for (const auto& cell : cells) appearances = std::max(appearances, cell.second);
      md += "| " + app + " (" + std::to_string(appearances) + ") |";
      for (const auto& [sum, samples] : cells) {
        md += " " + (samples > 0 ? format_number(sum / static_cast<double>(samples)) : std::string("n/a")) +
              " |";
      }
      md += "\n";
    }
    md += "\n";
  }
  return md;
}
}  // namespace

nlohmann::json experiment_report_json(const ExperimentResults& results, const std::vector<ReportRow>& rows) {
  using nlohmann::json;
  const ExperimentConfig& c = *results.config;
  const ExpandedExperiment& g = *results.grid;
  json j;
  j["gpumux_version"] = GPUMUX_VERSION;
  j["experiment"] = c.name;
  j["description"] = c.description;
  j["analysis"] = c.analysis;
  j["gpu"] = g.gpu.name;
  json runs_spec = json::array();
  for (const ExperimentRun& run : c.runs) {
    runs_spec.push_back({{"label", run.label},
                         {"policy", run.policy},
                         {"preemption", mechanism_name(run.preemption)},
                         {"options", run.options}});
  }
  j["grid"] = {{"workloads", g.workloads.size()},
               {"runs", runs_spec},
               {"seeds", c.seeds},
               {"simulations", g.points.size()},
               {"baseline", c.runs.front().label}};
  if (c.tb_rsd_percent) j["grid"]["tb_rsd_percent"] = *c.tb_rsd_percent;
  json row_list = json::array();
  for (const ReportRow& row : rows) {
    row_list.push_back({{"name", row.name},
                        {"model", number_or_null(row.model)},
                        {"paper", number_or_null(row.paper)},
                        {"unit", row.unit}});
  }
  j["rows"] = row_list;
  json runs = json::array();
  for (std::size_t i = 0; i < g.points.size(); ++i) {
    const GridPoint& point = g.points[i];
    const ExperimentRun& run = c.runs[point.run];
    json entry = {{"workload", g.workloads[point.workload].workload.name},
                  {"label", run.label},
                  {"policy", run.policy},
                  {"options", run.options},
                  {"preemption", mechanism_name(run.preemption)},
                  {"seed", c.seeds[point.seed]}};
    if (i < results.outcomes.size() && results.outcomes[i]) {
      const RunOutcome& o = *results.outcomes[i];
      const auto metric = [&](double v) { return o.valid ? json(v) : json(nullptr); };
      entry["stp"] = metric(o.stp);
      entry["antt"] = metric(o.antt);
      entry["fairness"] = metric(o.fairness);
      entry["simulated_ns"] = o.simulated_ns;
      entry["preemptions"] = o.preemptions;
      json processes = json::array();
      for (const ProcessOutcome& p : o.processes) {
        processes.push_back({{"name", p.name},
                             {"class1", p.class1},
                             {"class2", p.class2},
                             {"priority", p.priority},
                             {"runs", p.runs},
                             {"isolated_ns", p.isolated_ps / 1000.0},
                             {"turnaround_ns", p.turnaround_ps / 1000.0},
                             {"ntt", metric(p.ntt)}});
      }
      entry["processes"] = processes;
    }
    runs.push_back(entry);
  }
  j["runs"] = runs;
  return j;
}

std::string experiment_report_markdown(const ExperimentResults& results, const std::vector<ReportRow>& rows) {
  const ExperimentConfig& c = *results.config;
  const ExpandedExperiment& g = *results.grid;
  const AnalysisInfo* analysis = find_analysis(c.analysis);
  std::string md = "# Experiment: " + c.name + "\n\n";
  if (!c.description.empty()) md += c.description + (c.description.back() == '\n' ? "" : "\n") + "\n";

  md += "## Setup\n\n";
  md += "- GPU: " + g.gpu.name + "\n";
  if (c.generator) {
    const MixGeneratorConfig& gen = *c.generator;
    std::string counts;
    for (const std::uint32_t n : gen.process_counts) {
      counts += (counts.empty() ? "" : ", ") + std::to_string(n);
    }
    md += "- Workloads: " + std::to_string(g.workloads.size()) + " random mixes (tanasic-mixes of " +
          std::filesystem::path(gen.applications).filename().string() + "; " + counts + " processes; " +
          std::to_string(gen.mixes_per_count) + " mixes per count; mix seed " + std::to_string(gen.mix_seed) +
          (gen.high_priority == HighPriority::kFirst ? "; the first process of each mix has high priority"
                                                     : "") +
          ")\n";
  } else {
    md += "- Workloads: " + std::to_string(g.workloads.size()) + "\n";
  }
  md += "- Runs:";
  for (std::size_t r = 0; r < c.runs.size(); ++r) {
    const ExperimentRun& run = c.runs[r];
    md += std::string(r == 0 ? " " : "; ") + "`" + run.label + "` = " + run.policy;
    if (!run.options.empty()) md += " (" + options_text(run.options) + ")";
    if (run.preemption_given) md += std::string(", ") + mechanism_name(run.preemption);
    if (r == 0) md += " (baseline)";
  }
  if (c.tb_rsd_percent) {
    std::ostringstream rsd;
    rsd << *c.tb_rsd_percent;
    md += "\n- Thread-block times: every kernel at " + rsd.str() +
          "% RSD around its mean (`tb_rsd_percent`; the kernel libraries' own spread is replaced)";
  }
  md += "\n- Seeds:";
  for (const std::uint64_t s : c.seeds) md += " " + std::to_string(s);
  md += "\n- Simulations: " + std::to_string(g.points.size()) + " multiprogrammed + " +
        std::to_string(isolated_baseline_count(c, g)) + " isolated baselines\n\n";

  md += "## Results (" + c.analysis + ")\n\n";
  if (analysis != nullptr) md += analysis->method + "\n\n";
  md +=
      "Cells are `model / paper`; `model` alone where the paper gives no figure; `n/a` where the grid has "
      "no data for the row.\n\n";

  // Rows "a/b/c": one table per "a" (rows c, columns b). Rows "a/b": one table (rows a, columns b).
  std::vector<std::string> groups;
  std::vector<std::string> flat_rows;
  std::vector<std::string> flat_columns;
  std::map<std::pair<std::string, std::string>, std::string> flat_cells;
  std::vector<const ReportRow*> other;
  for (const ReportRow& row : rows) {
    const auto parts = split(row.name);
    if (parts.size() == 3) {
      add_unique(groups, parts[0]);
    } else if (parts.size() == 2) {
      add_unique(flat_rows, parts[0]);
      add_unique(flat_columns, parts[1]);
      flat_cells[{parts[0], parts[1]}] = cell(row);
    } else {
      other.push_back(&row);
    }
  }
  if (!flat_rows.empty()) md += pivot_table("run", flat_rows, flat_columns, flat_cells) + "\n";
  for (const std::string& group : groups) {
    std::vector<std::string> metrics;
    std::vector<std::string> columns;
    std::map<std::pair<std::string, std::string>, std::string> cells;
    for (const ReportRow& row : rows) {
      const auto parts = split(row.name);
      if (parts.size() != 3 || parts[0] != group) continue;
      const std::string metric = parts[2] + (row.unit.empty() ? "" : " (" + row.unit + ")");
      add_unique(metrics, metric);
      add_unique(columns, parts[1]);
      cells[{metric, parts[1]}] = cell(row);
    }
    md += "### " + group + "\n\n" + pivot_table("metric", metrics, columns, cells) + "\n";
  }
  if (!other.empty()) {
    md += "| row | model | paper | unit |\n|---|---|---|---|\n";
    for (const ReportRow* row : other) {
      md += "| " + row->name + " | " + (row->model ? format_number(*row->model) : "n/a") + " | " +
            (row->paper ? format_number(*row->paper) : "") + " | " + row->unit + " |\n";
    }
    md += "\n";
  }

  if (!c.notes.empty()) md += "## Notes\n\n" + c.notes + (c.notes.back() == '\n' ? "" : "\n") + "\n";

  // Per workload: ANTT and STP of every run (first seed), as Tanasic Fig. 8 plots ANTT per workload.
  md += "## Workloads\n\nANTT / STP of each run on each workload (seed " + std::to_string(c.seeds.front()) +
        "); per-process NTTs are in report.json.\n\n| workload | processes |";
  std::string rule = "|---|---|";
  for (const ExperimentRun& run : c.runs) {
    md += " " + run.label + " |";
    rule += "---|";
  }
  md += "\n" + rule + "\n";
  for (std::size_t w = 0; w < g.workloads.size(); ++w) {
    const Workload& workload = g.workloads[w].workload;
    std::string names;
    for (const ProcessSpec& p : workload.processes) names += (names.empty() ? "" : ", ") + p.name;
    if (g.workloads[w].prioritized) names += " (high priority: " + workload.processes.front().name + ")";
    md += "| " + workload.name + " | " + names + " |";
    for (std::size_t r = 0; r < c.runs.size(); ++r) {
      const RunOutcome* o = results.outcome(w, r, 0);
      md += " " +
            (o != nullptr ? format_number(o->antt) + " / " + format_number(o->stp) : std::string("n/a")) +
            " |";
    }
    md += "\n";
  }
  const std::string applications = application_ntt_tables(results);
  if (!applications.empty()) md += "\n" + applications;
  return md;
}

}  // namespace gpumux
