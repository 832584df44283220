// The `awatramani-warp-schedulers` analysis (Awatramani, PhD thesis, 3.5: Figs. 3.7 and 3.8): each
// workload is one kernel alone on warp-level SMs, run under the six warp schedulers; per kernel the
// speedups of GTO and phase-aware over loose round robin, single- and two-level, and the scheduler idle
// time, then the averages over the thesis's kernel types A (GTO better) and B (RR better) beside the
// thesis's. The runs are found by their effective warp scheduler (select_warp_scheduler_run), never by
// label; rows whose runs the grid lacks are null. Fig. 3.11's intra-block tail needs each SM's active
// warps over time, which the runs' results do not hold: scripts/awatramani-warp-schedulers reads it
// from VCDs.

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string>

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"

namespace gpumux {

namespace {

constexpr std::array<const char*, 6> kSchedulers = {
    "lrr", "gto", "phase-aware", "two-level-lrr", "two-level-gto", "two-level-phase-aware"};

/// The three schedulers of one level: round robin, GTO, phase-aware.
struct Level {
  const char* name;  ///< "single" or "two" in row names
  const char* rr;
  const char* gto;
  const char* pa;
};
constexpr std::array<Level, 2> kLevels = {
    Level{"single", "lrr", "gto", "phase-aware"},
    Level{"two", "two-level-lrr", "two-level-gto", "two-level-phase-aware"}};

/// A model type within 1% of RR counts as neither ("=").
constexpr double kTypeMargin = 1.01;

/// One kernel (workload) under each scheduler: means over the seeds with a valid outcome.
struct KernelFigures {
  std::string name;         ///< the workload's name
  std::string thesis_type;  ///< class1 of its first process's kernel: A, B or A/B
  std::uint64_t thread_blocks = 0;
  std::map<std::string, std::optional<double>> cycles;      ///< scheduler -> core cycles of the kernel
  std::map<std::string, std::optional<double>> idle_share;  ///< scheduler -> idle / offered issue slots
};

std::optional<double> ratio(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b || !(*b > 0)) return std::nullopt;
  return *a / *b;
}

/// (idle of GTO / idle of RR - 1) x 100: Fig. 3.8's normalisation to RR.
std::optional<double> idle_vs_pct(const std::optional<double>& gto, const std::optional<double>& rr) {
  if (!gto || !rr || !(*rr > 0)) return std::nullopt;
  return (*gto / *rr - 1) * 100;
}

/// The thesis's type of `kernel` at `level`: A/B kernels are A single-level and B two-level (3.5.2.1).
std::string type_at(const KernelFigures& kernel, const Level& level) {
  if (kernel.thesis_type == "A/B") return std::string(level.name) == "single" ? "A" : "B";
  return kernel.thesis_type;
}

/// "A" when GTO beats RR by more than 1%, "B" when RR beats GTO by more than 1%, "=" otherwise.
std::string model_type(const std::optional<double>& gto_over_rr) {
  if (!gto_over_rr) return "-";
  if (*gto_over_rr > kTypeMargin) return "A";
  if (*gto_over_rr < 1 / kTypeMargin) return "B";
  return "=";
}

std::vector<KernelFigures> kernel_figures(const ExperimentResults& r) {
  const double mhz = r.grid->gpu.core_clock_mhz;
  std::map<std::string, std::optional<std::size_t>> runs;
  for (const char* s : kSchedulers) runs[s] = select_warp_scheduler_run(*r.config, *r.grid, s);
  std::vector<KernelFigures> kernels;
  for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
    const Workload& workload = r.grid->workloads[w].workload;
    KernelFigures k;
    k.name = workload.name;
    if (!workload.processes.empty()) k.thesis_type = process_class(workload.processes.front(), true);
    for (const ProcessSpec& p : workload.processes) {
      for (const StreamSpec& stream : p.streams) {
        for (const CommandSpec& c : stream.commands) {
          if (c.kind == CommandKind::kKernel && c.kernel) {
            k.thread_blocks += std::uint64_t{c.launches} * c.kernel->thread_blocks;
          }
        }
      }
    }
    for (const char* s : kSchedulers) {
      if (!runs[s]) continue;
      Mean cycles;
      Mean idle;
      for (std::size_t seed = 0; seed < r.config->seeds.size(); ++seed) {
        const RunOutcome* o = r.outcome(w, *runs[s], seed);
        if (o == nullptr || o->kernels.empty()) continue;
        // From the first thread block of the first launch to the end of the last.
        TimePs start = o->kernels.front().start_ps;
        TimePs end = o->kernels.front().end_ps;
        for (const KernelOutcome& launch : o->kernels) {
          start = std::min(start, launch.start_ps);
          end = std::max(end, launch.end_ps);
        }
        cycles.add(static_cast<double>(end - start) * mhz / 1e6);
        const WarpSmStats& ws = o->warp;
        if (ws.scheduler_cycles > 0) {
          const std::uint64_t lost = ws.idle_memory + ws.idle_barrier + ws.idle_no_warp + ws.idle_other;
          idle.add(static_cast<double>(lost) / static_cast<double>(ws.scheduler_cycles));
        }
      }
      k.cycles[s] = cycles.value();
      k.idle_share[s] = idle.value();
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

std::optional<double> at(const std::map<std::string, std::optional<double>>& m, const char* key) {
  const auto it = m.find(key);
  return it == m.end() ? std::nullopt : it->second;
}

std::vector<ReportRow> analyze_awatramani(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  const std::vector<KernelFigures> kernels = kernel_figures(r);
  std::vector<const char*> present;
  for (const char* s : kSchedulers) {
    if (select_warp_scheduler_run(*r.config, *r.grid, s)) present.push_back(s);
  }
  for (const KernelFigures& k : kernels) {
    for (const Level& level : kLevels) {
      const std::string prefix = k.name + "/" + level.name + "/";
      const auto rr = at(k.cycles, level.rr);
      const auto gto = at(k.cycles, level.gto);
      const auto pa = at(k.cycles, level.pa);
      rows.push_back({prefix + "gto_over_rr", ratio(rr, gto), std::nullopt, "x"});
      rows.push_back({prefix + "pa_over_rr", ratio(rr, pa), std::nullopt, "x"});
      rows.push_back({prefix + "pa_over_gto", ratio(gto, pa), std::nullopt, "x"});
      rows.push_back({prefix + "idle_gto_vs_rr_pct",
                      idle_vs_pct(at(k.idle_share, level.gto), at(k.idle_share, level.rr)), std::nullopt,
                      "%"});
    }
    for (const char* s : present) {
      rows.push_back({k.name + "/" + s + "/cycles", at(k.cycles, s), std::nullopt, "cycles"});
      rows.push_back({k.name + "/" + s + "/idle_share", at(k.idle_share, s), std::nullopt, "fraction"});
    }
  }
  for (const char* type : {"A", "B"}) {
    for (const Level& level : kLevels) {
      Mean gto_over_rr;
      Mean rr_over_gto;
      Mean pa_over_rr;
      Mean pa_over_gto;
      Mean idle_rr;
      Mean idle_gto;
      std::size_t count = 0;
      std::size_t agree = 0;
      for (const KernelFigures& k : kernels) {
        if (type_at(k, level) != type) continue;
        ++count;
        const auto rr = at(k.cycles, level.rr);
        const auto gto = at(k.cycles, level.gto);
        const auto pa = at(k.cycles, level.pa);
        if (const auto v = ratio(rr, gto)) {
          gto_over_rr.add(*v);
          rr_over_gto.add(1 / *v);
          if (model_type(v) == type) ++agree;
        }
        if (const auto v = ratio(rr, pa)) pa_over_rr.add(*v);
        if (const auto v = ratio(gto, pa)) pa_over_gto.add(*v);
        if (const auto v = at(k.idle_share, level.rr)) idle_rr.add(*v);
        if (const auto v = at(k.idle_share, level.gto)) idle_gto.add(*v);
      }
      const std::string prefix = std::string(type) + "/" + level.name + "/";
      rows.push_back({prefix + "kernels", static_cast<double>(count), std::nullopt, "kernels"});
      rows.push_back({prefix + "gto_over_rr", gto_over_rr.value(), std::nullopt, "x"});
      rows.push_back({prefix + "rr_over_gto", rr_over_gto.value(), std::nullopt, "x"});
      rows.push_back({prefix + "pa_over_rr", pa_over_rr.value(), std::nullopt, "x"});
      rows.push_back({prefix + "pa_over_gto", pa_over_gto.value(), std::nullopt, "x"});
      rows.push_back(
          {prefix + "idle_gto_vs_rr_pct", idle_vs_pct(idle_gto.value(), idle_rr.value()), std::nullopt, "%"});
      std::optional<double> agreeing;
      if (gto_over_rr.value()) agreeing = static_cast<double>(agree);
      rows.push_back({prefix + "model_type_agrees", agreeing, std::nullopt, "kernels"});
    }
  }
  return rows;
}

// ---- report.md ----------------------------------------------------------------------------------

std::string awatramani_tables(const ExperimentResults& r, const std::vector<ReportRow>& rows) {
  std::map<std::string, const ReportRow*> by_name;
  for (const ReportRow& row : rows) by_name[row.name] = &row;
  const auto model = [&](const std::string& name) -> std::optional<double> {
    const auto it = by_name.find(name);
    return it == by_name.end() ? std::nullopt : it->second->model;
  };
  std::string md;
  std::string runs;
  std::string missing;
  for (const char* s : kSchedulers) {
    if (const auto run = select_warp_scheduler_run(*r.config, *r.grid, s)) {
      runs += std::string(runs.empty() ? "" : ", ") + s + " = `" + r.config->runs[*run].label + "`";
    } else {
      missing += std::string(missing.empty() ? "" : ", ") + s;
    }
  }
  md += "Runs by warp scheduler: " + (runs.empty() ? std::string("none") : runs) + ".";
  if (!missing.empty()) md += " No run for " + missing + ": the rows that need them are null (`-`).";
  md +=
      "\n\n| kernel | thesis type | TBs | single GTO/RR | single PA/RR | single PA/GTO | two GTO/RR | two "
      "PA/RR | "
      "two PA/GTO | idle RR | idle GTO | idle 2RR | idle 2GTO | model type single/two |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const KernelFigures& k : kernel_figures(r)) {
    const std::string p = k.name + "/";
    md += "| " + k.name + " | " + k.thesis_type + " | " + std::to_string(k.thread_blocks) + " |";
    for (const char* level : {"single", "two"}) {
      for (const char* metric : {"gto_over_rr", "pa_over_rr", "pa_over_gto"}) {
        md += " " + number(model(p + level + "/" + metric), "%.3f") + " |";
      }
    }
    for (const char* s : {"lrr", "gto", "two-level-lrr", "two-level-gto"}) {
      const auto idle = at(k.idle_share, s);
      md += " " + number(idle ? std::optional<double>(*idle * 100) : std::nullopt, "%.1f%%") + " |";
    }
    md += " " + model_type(model(p + "single/gto_over_rr")) + "/" + model_type(model(p + "two/gto_over_rr")) +
          " |\n";
  }
  md += "\n| averaged over the thesis's type | model | thesis |\n|---|---|---|\n";
  std::vector<const ReportRow*> summary;
  for (const ReportRow& row : rows) {
    if (row.name.rfind("A/", 0) == 0 || row.name.rfind("B/", 0) == 0) {
      if (row.name.size() < 8 || row.name.compare(row.name.size() - 8, 8, "/kernels") != 0) {
        summary.push_back(&row);
      }
    }
  }
  std::sort(summary.begin(), summary.end(),
            [](const ReportRow* a, const ReportRow* b) { return a->name < b->name; });
  for (const ReportRow* row : summary) {
    const std::string& name = row->name;
    if (name.size() >= 18 && name.compare(name.size() - 18, 18, "/model_type_agrees") == 0) {
      const auto n = model(name.substr(0, name.size() - 18) + "/kernels");
      md += "| " + name + " | " + number(row->model, "%.0f") + " of " + number(n, "%.0f") + " | - |\n";
      continue;
    }
    const char* format = row->unit == "%" ? "%+.2f%%" : "%.3f";
    md += "| " + name + " | " + number(row->model, format) + " | " + number(row->paper, format) + " |\n";
  }
  return md + "\n";
}

}  // namespace

AnalysisInfo awatramani_warp_schedulers_analysis() {
  AnalysisInfo info{
      "awatramani-warp-schedulers",
      "warp schedulers per kernel alone: speedups over round robin and idle time (Awatramani 3.5, Figs. "
      "3.7-3.8)",
      "Each workload is one kernel alone; the runs are found by their warp scheduler (lrr, gto, phase-aware "
      "and the two-level-* variants, on warp-level SMs), whatever their labels. A kernel's time under a "
      "scheduler is the core cycles from its first thread block to its last (the mean over seeds); its idle "
      "share is the idle issue slots (all causes) over the issue slots offered, summed over the SMs "
      "(3.5.3's scheduler idle time). Per kernel K and level L (single: lrr, gto, phase-aware; two: the "
      "two-level-* schedulers): `K/L/gto_over_rr` = time RR / time GTO, `K/L/pa_over_rr` = time RR / time "
      "phase-aware, `K/L/pa_over_gto` = time GTO / time phase-aware (above 1: faster, Fig. 3.7), "
      "`K/L/idle_gto_vs_rr_pct` = (idle GTO / idle RR - 1) x 100 (Fig. 3.8); `K/S/cycles` and "
      "`K/S/idle_share` per scheduler S of the grid. Per thesis type T (the kernel's `class1`: A = GTO "
      "better, B = RR better; A/B kernels count as A single-level and B two-level, 3.5.2.1) and level L: "
      "`T/L/kernels`, the means over those kernels of `gto_over_rr`, `rr_over_gto`, `pa_over_rr` and "
      "`pa_over_gto` (3.5.2.1-3.5.2.3), `T/L/idle_gto_vs_rr_pct` from the type's mean idle shares (Fig. "
      "3.8), and `T/L/model_type_agrees`, the kernels whose model type (GTO faster than RR by more than 1%: "
      "A; slower by more than 1%: B) is the thesis's. Fig. 3.11's intra-block tail needs each SM's active "
      "warps over time, which the runs' results do not hold: scripts/awatramani-warp-schedulers reads it "
      "from VCDs.",
      analyze_awatramani};
  info.isolated_baselines = false;
  info.tables = awatramani_tables;
  return info;
}

}  // namespace gpumux
