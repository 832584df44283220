#include "app/experiment/report_markdown.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "app/analysis/registry.h"
#include "app/experiment/plan.h"
#include "config/gpu_loader.h"

namespace gpumux {

namespace {

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
/// The rows as tables: rows "a/b/c" one table per "a" (rows c, columns b); rows "a/b" one table (rows
/// a, columns b); other rows a list.
std::string generic_tables(const std::vector<ReportRow>& rows) {
  std::string md;
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
  return md;
}

/// Per workload: the simulated time of every run (first seed), for analyses without multiprogram
/// metrics.
std::string simulated_times(const ExperimentResults& results) {
  const ExperimentConfig& c = *results.config;
  const ExpandedExperiment& g = *results.grid;
  std::string md = "## Workloads\n\nSimulated time (us) of each run on each workload (seed " +
                   std::to_string(c.seeds.front()) + "); kernels and warp figures are in report.json.\n\n" +
                   "| workload |";
  std::string rule = "|---|";
  for (const ExperimentRun& run : c.runs) {
    md += " " + run.label + " |";
    rule += "---|";
  }
  md += "\n" + rule + "\n";
  for (std::size_t w = 0; w < g.workloads.size(); ++w) {
    md += "| " + g.workloads[w].workload.name + " |";
    for (std::size_t r = 0; r < c.runs.size(); ++r) {
      const RunOutcome* o = results.outcome(w, r, 0);
      md += " " + (o != nullptr ? format_number(o->simulated_ns / 1000.0) : std::string("n/a")) + " |";
    }
    md += "\n";
  }
  return md;
}
}  // namespace

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
    if (run.preemption_given) md += std::string(", ") + to_string(run.preemption);
    if (run.copy_policy_given) md += std::string(", copies ") + to_string(run.copy_policy);
    if (run.sm_model) md += run.sm_model == SmModel::kWarp ? ", warp-level SMs" : ", TB-level SMs";
    if (!run.warp_scheduler.empty()) md += ", warp scheduler " + run.warp_scheduler;
    if (run.max_thread_blocks) md += ", " + std::to_string(*run.max_thread_blocks) + " thread blocks per SM";
    if (run.perf_sat) md += std::string(", Perf-Sat ") + (*run.perf_sat ? "on" : "off");
    if (run.active_cores) md += ", active-core detector " + detector_name(*run.active_cores);
    if (run.power) md += std::string(", power model ") + (*run.power ? "on" : "off");
    if (run.sms) md += ", " + std::to_string(*run.sms) + " SMs";
    if (!run.only_workloads.empty()) {
      md += ", on " + std::to_string(run.only_workloads.size()) + " workload" +
            (run.only_workloads.size() == 1 ? "" : "s") + " only (";
      for (std::size_t w = 0; w < run.only_workloads.size(); ++w) {
        md += (w == 0 ? "" : ", ") + run.only_workloads[w];
      }
      md += ")";
    }
    if (r == 0) md += " (baseline)";
  }
  if (c.tb_rsd_percent) {
    std::ostringstream rsd;
    rsd << *c.tb_rsd_percent;
    md += "\n- Thread-block times: every kernel at " + rsd.str() +
          "% RSD around its mean (`tb_rsd_percent`; the kernel libraries' own spread is replaced)";
  }
  if (c.preemption_latency_scale) {
    std::ostringstream scale;
    scale << *c.preemption_latency_scale;
    md += "\n- Preemption latencies: the GPU's drain, trap and setup cycles x" + scale.str() +
          " (`preemption_latency_scale`)";
  }
  if (c.tb_interference) {
    md += std::string("\n- TB-level memory interference: ") + (*c.tb_interference ? "on" : "off") +
          " (`tb_interference`; Liang Eq. 3 on the kernels' measured bytes per thread block)";
  }
  if (c.memory_model) {
    md += std::string("\n- Memory model: ") + (*c.memory_model == MemoryModel::kDram ? "dram" : "simple") +
          " for every run (`memory_model`)";
  }
  if (c.kernel_launch) {
    md += std::string("\n- Kernel launches: ") + to_string(*c.kernel_launch) +
          " in every workload (`kernel_launch`)";
  }
  if (c.streams_per_application) {
    md += "\n- Streams per application: every process's kernels dealt over " +
          std::to_string(*c.streams_per_application) + " streams (`streams_per_application`)";
  }
  md += "\n- Seeds:";
  for (const std::uint64_t s : c.seeds) md += " " + std::to_string(s);
  const bool multiprogram = uses_isolated_baselines(c);
  if (multiprogram) {
    md += "\n- Simulations: " + std::to_string(g.points.size()) + " multiprogrammed + " +
          std::to_string(isolated_baseline_count(c, g)) + " isolated baselines\n\n";
  } else {
    md += "\n- Simulations: " + std::to_string(g.points.size()) +
          " (the analysis reads no STP or ANTT: no isolated baselines)\n\n";
  }

  md += "## Results (" + c.analysis + ")\n\n";
  if (analysis != nullptr) md += analysis->method + "\n\n";
  if (analysis != nullptr && analysis->tables) {
    md += analysis->tables(results, rows);
  } else {
    md +=
        "Cells are `model / paper`; `model` alone where the paper gives no figure; `n/a` where the grid "
        "has no data for the row.\n\n";
    md += generic_tables(rows);
  }

  if (!c.notes.empty()) md += "## Notes\n\n" + c.notes + (c.notes.back() == '\n' ? "" : "\n") + "\n";

  if (!multiprogram) return md + simulated_times(results);

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
