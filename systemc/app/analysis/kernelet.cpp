// The `kernelet` analysis (Zhong and He 5.4, Fig. 13 and Fig. 14): each workload's total execution time
// under Kernelet against BASE (the first run: kernel consolidation) and OPT (the run with choice=measured),
// and the distribution of the MC(s) runs (choice=random, one run per draw seed).

#include <algorithm>
#include <optional>

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"

namespace gpumux {

namespace {

/// The run whose `options:` has choice=`choice`, of policy kernelet.
std::vector<std::size_t> kernelet_runs(const ExperimentConfig& config, const std::string& choice) {
  std::vector<std::size_t> runs;
  for (const std::size_t run : select_runs(config, {RunRole::kUnderTest, "kernelet"})) {
    const auto it = config.runs[run].options.find("choice");
    const std::string value = it == config.runs[run].options.end() ? "model" : it->second;
    if (value == choice) runs.push_back(run);
  }
  return runs;
}

/// The mean over the seeds of the workload's simulated time under `run`, ms.
std::optional<double> time_ms(const ExperimentResults& r, std::size_t workload, std::size_t run) {
  Mean mean;
  for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
    if (const RunOutcome* o = r.outcome(workload, run, s)) mean.add(o->simulated_ns / 1e6);
  }
  return mean.value();
}

/// 100 (T_base / T - 1): the throughput gained over `base` (the same kernels in less time).
std::optional<double> gain(std::optional<double> base, std::optional<double> t) {
  if (!base || !t || *t <= 0) return std::nullopt;
  return 100.0 * (*base / *t - 1.0);
}

/// min and max of the present values.
void add_range(const std::string& prefix, const std::vector<std::optional<double>>& values,
               const std::string& unit, std::vector<ReportRow>& rows) {
  std::optional<double> low;
  std::optional<double> high;
  for (const auto& v : values) {
    if (!v) continue;
    low = low ? std::min(*low, *v) : *v;
    high = high ? std::max(*high, *v) : *v;
  }
  rows.push_back({prefix + "/min", low, std::nullopt, unit});
  rows.push_back({prefix + "/max", high, std::nullopt, unit});
}

std::vector<ReportRow> analyze_kernelet(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  const ExperimentConfig& config = *r.config;
  const std::vector<std::size_t> kernelet = kernelet_runs(config, "model");
  const std::vector<std::size_t> opt = kernelet_runs(config, "measured");
  const std::vector<std::size_t> mc = kernelet_runs(config, "random");
  std::vector<std::optional<double>> over_base;
  std::vector<std::optional<double>> opt_over_base;
  std::vector<std::optional<double>> from_opt;
  std::size_t mc_better_total = 0;
  bool mc_measured = false;
  for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
    const std::string& name = r.grid->workloads[w].workload.name;
    const std::optional<double> base = time_ms(r, w, 0);
    rows.push_back({config.runs[0].label + "/" + name + "/time_ms", base, std::nullopt, "ms"});
    std::optional<double> t_kernelet;
    std::optional<double> t_opt;
    if (!kernelet.empty()) {
      t_kernelet = time_ms(r, w, kernelet.front());
      rows.push_back({"kernelet/" + name + "/time_ms", t_kernelet, std::nullopt, "ms"});
      over_base.push_back(gain(base, t_kernelet));
      rows.push_back({"kernelet/" + name + "/over_base", over_base.back(), std::nullopt, "%"});
    }
    if (!opt.empty()) {
      t_opt = time_ms(r, w, opt.front());
      rows.push_back({"opt/" + name + "/time_ms", t_opt, std::nullopt, "ms"});
      opt_over_base.push_back(gain(base, t_opt));
      rows.push_back({"opt/" + name + "/over_base", opt_over_base.back(), std::nullopt, "%"});
    }
    if (!kernelet.empty() && !opt.empty()) {
      // How far Kernelet is from OPT: 100 (T_kernelet / T_opt - 1).
      std::optional<double> gap;
      if (t_kernelet && t_opt && *t_opt > 0) gap = 100.0 * (*t_kernelet / *t_opt - 1.0);
      from_opt.push_back(gap);
      rows.push_back({"kernelet/" + name + "/from_opt", gap, std::nullopt, "%"});
    }
    if (!mc.empty()) {
      // Fig. 14: the MC(s) schedules' times, as gains over BASE, and how many beat Kernelet.
      std::vector<double> gains;
      std::size_t better = 0;
      for (const std::size_t run : mc) {
        const std::optional<double> t = time_ms(r, w, run);
        if (const auto g = gain(base, t)) gains.push_back(*g);
        if (t && t_kernelet && *t < *t_kernelet) ++better;
      }
      std::sort(gains.begin(), gains.end());
      const bool any = !gains.empty();
      rows.push_back({"mc/" + name + "/worst_over_base", any ? std::optional(gains.front()) : std::nullopt,
                      std::nullopt, "%"});
      rows.push_back({"mc/" + name + "/median_over_base",
                      any ? std::optional(gains[gains.size() / 2]) : std::nullopt, std::nullopt, "%"});
      rows.push_back({"mc/" + name + "/best_over_base", any ? std::optional(gains.back()) : std::nullopt,
                      std::nullopt, "%"});
      rows.push_back({"mc/" + name + "/better_than_kernelet",
                      any ? std::optional(static_cast<double>(better)) : std::nullopt, std::nullopt, "runs"});
      mc_better_total += better;
      mc_measured = mc_measured || any;
    }
  }
  if (!kernelet.empty()) add_range("kernelet/over_base", over_base, "%", rows);
  if (!opt.empty()) add_range("opt/over_base", opt_over_base, "%", rows);
  if (!kernelet.empty() && !opt.empty()) add_range("kernelet/from_opt", from_opt, "%", rows);
  if (!mc.empty()) {
    rows.push_back({"mc/better_than_kernelet",
                    mc_measured ? std::optional(static_cast<double>(mc_better_total)) : std::nullopt,
                    std::nullopt, "runs"});
  }
  return rows;
}

}  // namespace

AnalysisInfo kernelet_analysis() {
  AnalysisInfo info{
      "kernelet",
      "total execution time of a workload's kernels under Kernelet against BASE, OPT and MC(s) (Kernelet "
      "5.4, "
      "Figs. 13-14)",
      "A workload is a stream of kernel instances (Table 5's applications, Poisson arrivals); its time T is "
      "the "
      "simulated time until the last kernel finishes. The first run is BASE (kernel consolidation); the run "
      "of policy kernelet with choice=model is Kernelet, choice=measured is OPT, and every choice=random run "
      "is one MC sample. Per workload: `<run>/<workload>/time_ms`; `kernelet/<workload>/over_base` = 100 "
      "(T_base / T_kernelet - 1), the throughput Kernelet gains (and `opt/...` the same for OPT); "
      "`kernelet/<workload>/from_opt` = 100 (T_kernelet / T_opt - 1); `mc/<workload>/worst_over_base`, "
      "`median_over_base`, `best_over_base` over the MC runs and `better_than_kernelet`, how many of them "
      "finish before Kernelet (Fig. 14: none). `kernelet/over_base/min` and `max` over the workloads are "
      "the paper's ranges (5.0-31.1% on the C2050), `kernelet/from_opt/min` and `max` its distance from OPT "
      "(0.7-3.1%). Times are means over the seeds.",
      analyze_kernelet};
  info.isolated_baselines = false;
  return info;
}

}  // namespace gpumux
