// The `awatramani-perf-sat` analysis (Awatramani, PhD thesis, 4.3.3: Table 4.2, Figs. 4.5-4.7): each
// workload is one kernel alone on warp-level SMs. The sweep runs (`max_thread_blocks: N`) give the
// kernel's time at every thread-block count per SM; its optimal count Opt is the thesis's 2% rule
// (4.3.3.2) over them. The Perf-Sat run (`perf_sat: on`, the GPU's full count) gives the count Perf-Sat
// detected on each SM, its time against the baseline's at Max (Fig. 4.6) and the resources it saves,
// 1 - detected / Max (Fig. 4.7). Runs are found by these settings, never by label; rows whose runs the
// grid lacks are null.

#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"
#include "metrics/workload_class.h"

namespace gpumux {

namespace {

constexpr std::array<const char*, 3> kClasses = {"C-strong", "C-weak", "MEM"};

/// One kernel (workload): the sweep's times, Perf-Sat's figures, the classes.
struct KernelFigures {
  std::string name;         ///< the workload's first process (scripts/perf-sat names it after the kernel)
  std::string thesis_type;  ///< class1 of its first process's kernel: Table 4.2's Type on this GPU
  std::optional<std::uint32_t> max;           ///< its occupancy alone (the Perf-Sat run's tbs_per_sm)
  std::map<std::uint32_t, double> time_ns;    ///< sweep: count -> kernel time, mean over seeds
  std::optional<std::uint32_t> opt;           ///< the 2% rule over the sweep
  std::string sweep_type;                     ///< C-strong, C-weak or MEM from the sweep; empty: none
  std::optional<double> detected;             ///< Perf-Sat, mean over SMs and seeds
  std::optional<double> settled_share;        ///< SMs where Perf-Sat settled / SMs, mean over seeds
  std::optional<double> perf_sat_time_ns;     ///< the kernel's time under Perf-Sat, mean over seeds
  std::string run_type;                       ///< the Perf-Sat run's workload class (first seed)
  std::optional<double> time_vs_max_percent;  ///< Perf-Sat's time against the sweep's at Max
  std::optional<double> saved_percent;        ///< 1 - detected / Max
};

/// The first run with Perf-Sat on (in the run's GPU, whether the run or the GPU file turns it on).
std::optional<std::size_t> perf_sat_run(const ExperimentResults& r) {
  for (std::size_t run = 0; run < r.config->runs.size(); ++run) {
    if (run_gpu(*r.grid, run).perf_sat.enabled) return run;
  }
  return std::nullopt;
}

/// Sweep runs: Perf-Sat off and `max_thread_blocks` set; count -> the first such run.
std::map<std::uint32_t, std::size_t> sweep_runs(const ExperimentResults& r) {
  std::map<std::uint32_t, std::size_t> runs;
  for (std::size_t run = 0; run < r.config->runs.size(); ++run) {
    const auto& n = r.config->runs[run].max_thread_blocks;
    if (n && !run_gpu(*r.grid, run).perf_sat.enabled) runs.emplace(*n, run);
  }
  return runs;
}

/// The smallest count from which no larger count is more than 2% faster (4.3.3.2: "the count after which
/// increasing the number of blocks resulted in less than 2% performance improvement").
std::uint32_t optimum(const std::map<std::uint32_t, double>& times) {
  for (const auto& [n, t] : times) {
    bool saturated = true;
    for (const auto& [m, u] : times) {
      if (m > n && t / u - 1.0 >= kSaturationThreshold) saturated = false;
    }
    if (saturated) return n;
  }
  return times.rbegin()->first;
}

/// 4.3.1.2 from the sweep: Opt = Max: C-strong; else Max more than 2% slower than Opt: MEM; else C-weak.
std::string sweep_class(const std::map<std::uint32_t, double>& times, std::uint32_t opt, std::uint32_t max) {
  if (opt == max) return "C-strong";
  return times.at(max) / times.at(opt) - 1.0 > kSaturationThreshold ? "MEM" : "C-weak";
}

double kernel_time_ns(const RunOutcome& o) {
  return static_cast<double>(o.kernels.front().end_ps - o.kernels.front().start_ps) / 1000.0;
}

std::vector<KernelFigures> kernel_figures(const ExperimentResults& r) {
  const std::optional<std::size_t> ps_run = perf_sat_run(r);
  const std::map<std::uint32_t, std::size_t> sweep = sweep_runs(r);
  std::vector<KernelFigures> kernels;
  for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
    const Workload& workload = r.grid->workloads[w].workload;
    KernelFigures k;
    k.name = workload.processes.empty() ? workload.name : workload.processes.front().name;
    if (!workload.processes.empty()) k.thesis_type = process_class(workload.processes.front(), true);
    if (ps_run) {
      Mean detected;
      Mean settled;
      Mean time;
      for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
        const RunOutcome* o = r.outcome(w, *ps_run, s);
        if (o == nullptr || o->kernels.empty() || !o->kernels.front().perf_sat) continue;
        const KernelOutcome& launch = o->kernels.front();
        k.max = launch.tbs_per_sm;
        detected.add(launch.perf_sat_detected_mean);
        if (launch.perf_sat_sms > 0) {
          settled.add(static_cast<double>(launch.perf_sat_settled_sms) / launch.perf_sat_sms);
        }
        time.add(kernel_time_ns(*o));
        if (k.run_type.empty()) k.run_type = launch.workload_class;
      }
      k.detected = detected.value();
      k.settled_share = settled.value();
      k.perf_sat_time_ns = time.value();
    }
    for (const auto& [n, run] : sweep) {
      if (k.max && n > *k.max) continue;  // above the occupancy: the same run as at Max
      Mean time;
      for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
        const RunOutcome* o = r.outcome(w, run, s);
        if (o != nullptr && !o->kernels.empty()) time.add(kernel_time_ns(*o));
      }
      if (const auto t = time.value()) k.time_ns[n] = *t;
    }
    // Opt needs every count 1 .. Max.
    const bool complete = k.max && *k.max > 0 && k.time_ns.size() == *k.max &&
                          k.time_ns.begin()->first == 1 && k.time_ns.rbegin()->first == *k.max;
    if (complete) {
      k.opt = optimum(k.time_ns);
      k.sweep_type = sweep_class(k.time_ns, *k.opt, *k.max);
    }
    if (k.max && *k.max > 0 && k.detected) k.saved_percent = 100.0 * (1.0 - *k.detected / *k.max);
    if (k.max && k.perf_sat_time_ns) {
      const auto at_max = k.time_ns.find(*k.max);
      if (at_max != k.time_ns.end() && at_max->second > 0) {
        k.time_vs_max_percent = 100.0 * (*k.perf_sat_time_ns / at_max->second - 1.0);
      }
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

std::vector<ReportRow> analyze_perf_sat(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  const std::vector<KernelFigures> kernels = kernel_figures(r);
  Mean saved_all;
  Mean time_all;
  for (const KernelFigures& k : kernels) {
    const std::string p = k.name + "/";
    rows.push_back({p + "max", as_number(k.max), std::nullopt, "TBs/SM"});
    rows.push_back({p + "opt", as_number(k.opt), std::nullopt, "TBs/SM"});
    rows.push_back({p + "detected", k.detected, std::nullopt, "TBs/SM"});
    rows.push_back({p + "settled_share", k.settled_share, std::nullopt, "fraction"});
    rows.push_back({p + "time_vs_max_percent", k.time_vs_max_percent, std::nullopt, "%"});
    rows.push_back({p + "resources_saved_percent", k.saved_percent, std::nullopt, "%"});
    if (k.saved_percent) saved_all.add(*k.saved_percent);
    if (k.time_vs_max_percent) time_all.add(*k.time_vs_max_percent);
  }
  rows.push_back({"all/kernels", static_cast<double>(kernels.size()), std::nullopt, "kernels"});
  rows.push_back({"all/resources_saved_percent", saved_all.value(), std::nullopt, "%"});
  rows.push_back({"all/time_vs_max_percent", time_all.value(), std::nullopt, "%"});
  // Figs. 4.6-4.7 group the kernels by Table 4.2's type (class1), not by the model's.
  for (const char* c : kClasses) {
    Mean saved;
    Mean time;
    std::size_t count = 0;
    for (const KernelFigures& k : kernels) {
      if (k.thesis_type != c) continue;
      ++count;
      if (k.saved_percent) saved.add(*k.saved_percent);
      if (k.time_vs_max_percent) time.add(*k.time_vs_max_percent);
    }
    const std::string p = std::string("class/") + c + "/";
    rows.push_back({p + "kernels", static_cast<double>(count), std::nullopt, "kernels"});
    rows.push_back({p + "resources_saved_percent", saved.value(), std::nullopt, "%"});
    rows.push_back({p + "time_vs_max_percent", time.value(), std::nullopt, "%"});
  }
  return rows;
}

// ---- report.md ----------------------------------------------------------------------------------

std::string perf_sat_tables(const ExperimentResults& r, const std::vector<ReportRow>& rows) {
  std::map<std::string, const ReportRow*> by_name;
  for (const ReportRow& row : rows) by_name[row.name] = &row;
  const auto paper = [&](const std::string& name) -> std::optional<double> {
    const auto it = by_name.find(name);
    return it == by_name.end() ? std::nullopt : it->second->paper;
  };
  const auto model = [&](const std::string& name) -> std::optional<double> {
    const auto it = by_name.find(name);
    return it == by_name.end() ? std::nullopt : it->second->model;
  };
  std::string md;
  const std::optional<std::size_t> ps_run = perf_sat_run(r);
  md += "Perf-Sat run: " + (ps_run ? "`" + r.config->runs[*ps_run].label + "`" : std::string("none")) +
        "; sweep runs (max_thread_blocks):";
  for (const auto& [n, run] : sweep_runs(r)) {
    md += " " + std::to_string(n) + " = `" + r.config->runs[run].label + "`";
  }
  md +=
      ".\n\n| kernel | Max | thesis Max | Opt | thesis Opt | detected | settled | thesis type | sweep type | "
      "run type | Perf-Sat time vs Max | resources saved |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  const std::vector<KernelFigures> kernels = kernel_figures(r);
  std::size_t opt_match = 0;
  std::size_t opt_known = 0;
  std::size_t sweep_match = 0;
  std::size_t run_match = 0;
  for (const KernelFigures& k : kernels) {
    const std::string p = k.name + "/";
    const std::optional<double> thesis_opt = paper(p + "opt");
    if (k.opt && thesis_opt) {
      ++opt_known;
      if (static_cast<double>(*k.opt) == *thesis_opt) ++opt_match;
    }
    if (!k.sweep_type.empty() && k.sweep_type == k.thesis_type) ++sweep_match;
    if (!k.run_type.empty() && k.run_type == k.thesis_type) ++run_match;
    md += "| " + k.name + " | " + number(as_number(k.max), "%.0f") + " | " +
          number(paper(p + "max"), "%.0f") + " | " + number(as_number(k.opt), "%.0f") + " | " +
          number(thesis_opt, "%.0f") + " | " + number(k.detected, "%.2f") + " | " +
          number(k.settled_share ? std::optional<double>(*k.settled_share * 100) : std::nullopt, "%.0f%%") +
          " | " + (k.thesis_type.empty() ? "-" : k.thesis_type) + " | " +
          (k.sweep_type.empty() ? "-" : k.sweep_type) + " | " + (k.run_type.empty() ? "-" : k.run_type) +
          " | " + number(k.time_vs_max_percent, "%+.2f%%") + " | " + number(k.saved_percent, "%.1f%%") +
          " |\n";
  }
  md += "\nOpt as the thesis's: " + std::to_string(opt_match) + " of " + std::to_string(opt_known) +
        "; sweep type as the thesis's: " + std::to_string(sweep_match) + " of " +
        std::to_string(kernels.size()) +
        "; run type (Perf-Sat's workload class) as the thesis's: " + std::to_string(run_match) + " of " +
        std::to_string(kernels.size()) + ".\n\n| summary | model | thesis |\n|---|---|---|\n";
  for (const char* name : {"all/resources_saved_percent", "all/time_vs_max_percent"}) {
    md += std::string("| ") + name + " | " + number(model(name), "%+.2f%%") + " | " +
          number(paper(name), "%+.2f%%") + " |\n";
  }
  for (const char* c : kClasses) {
    for (const char* metric : {"resources_saved_percent", "time_vs_max_percent"}) {
      const std::string name = std::string("class/") + c + "/" + metric;
      md += "| " + name + " (" + number(model(std::string("class/") + c + "/kernels"), "%.0f") +
            " kernels) | " + number(model(name), "%+.2f%%") + " | " + number(paper(name), "%+.2f%%") + " |\n";
    }
  }
  md += "\nKernel times (us) at N thread blocks per SM, and under Perf-Sat:\n\n";
  for (const KernelFigures& k : kernels) {
    md += "- " + k.name + ":";
    for (const auto& [n, t] : k.time_ns) {
      md += " " + std::to_string(n) + ": " + number(t / 1000.0, "%.1f") + ";";
    }
    md += " Perf-Sat: " +
          number(k.perf_sat_time_ns ? std::optional<double>(*k.perf_sat_time_ns / 1000.0) : std::nullopt,
                 "%.1f") +
          "\n";
  }
  return md + "\n";
}

}  // namespace

AnalysisInfo awatramani_perf_sat_analysis() {
  AnalysisInfo info{
      "awatramani-perf-sat",
      "Perf-Sat per kernel alone: the detected thread-block count beside the sweep's optimum, resources "
      "saved and time (Awatramani 4.3.3, Table 4.2, Figs. 4.5-4.7)",
      "Each workload is one kernel alone on warp-level SMs. Runs are found by their settings, whatever their "
      "labels: the sweep runs set `max_thread_blocks: N` (Perf-Sat off), the Perf-Sat run has Perf-Sat on "
      "(`perf_sat: on`, or the GPU file's). A kernel K's Max is its occupancy alone (the Perf-Sat run's "
      "thread blocks per SM; sweep runs above it are the same simulation and are not read); T(N) is its time "
      "from its first thread block to its last in the sweep run at N (mean over seeds). `K/opt` is the "
      "smallest N from which no larger count is 2% or more faster (4.3.3.2), null unless every N in 1 .. Max "
      "was run; the sweep type is C-strong when Opt = Max, MEM when T(Max) is more than 2% above T(Opt), "
      "else C-weak (4.3.1.2). `K/detected` is the count Perf-Sat left on each SM when the kernel finished, "
      "mean over its SMs (Fig. 4.5), `K/settled_share` the share of SMs where it settled; "
      "`K/time_vs_max_percent` = (time under Perf-Sat / T(Max) - 1) x 100 (Fig. 4.6: the baseline issues "
      "Max); `K/resources_saved_percent` = (1 - detected / Max) x 100 (Fig. 4.7: the kernels are limited "
      "by threads or registers, which scale with the count). `all/*` are the means over the kernels and "
      "`class/T/*` over the kernels whose `class1` is T, Table 4.2's type on this GPU (Figs. 4.6-4.7 group "
      "by it). The run type in report.md is Perf-Sat's own workload class (docs/user-guide.md \"Perf-Sat and "
      "workload classes\").",
      analyze_perf_sat};
  info.isolated_baselines = false;
  info.tables = perf_sat_tables;
  return info;
}

}  // namespace gpumux
