// The `awatramani-onac` analysis (Awatramani, PhD thesis, 4.4.3-4.4.4: Table 4.4, Figs. 4.14-4.16): each
// workload is one kernel alone on warp-level SMs with the power model on. The N_max run (every core, no
// detector) is what everything is measured against; the detector runs (`active_cores: onac` and
// `seq-det`) give the count each detector found, when, and the energy it saved; the oracle runs (`sms: N`,
// no detector) give the kernel's IPC on N cores, from which N_oracle is the least N within the detectors'
// tolerance of N_max's IPC (4.4.3.2: "executing them separately at each core count"). Runs are found by
// these settings, never by label; rows whose runs the grid lacks are null.

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"

namespace gpumux {

namespace {

/// The detectors in report order, with the row-name spelling of each.
struct DetectorColumn {
  ActiveCoreDetectorKind kind;
  const char* row;    ///< in row names
  const char* title;  ///< in report.md
};
constexpr std::array<DetectorColumn, 2> kDetectors = {
    {{ActiveCoreDetectorKind::kOnac, "onac", "ONAC"},
     {ActiveCoreDetectorKind::kSeqDet, "seq_det", "Seq-Det"}}};

/// Where the grid's runs stand: N_max, one run per detector, the oracle's core counts.
struct OnacRuns {
  std::optional<std::size_t> n_max;                     ///< every core, no detector
  std::array<std::optional<std::size_t>, 2> detectors;  ///< parallel to kDetectors, every core
  std::map<std::uint32_t, std::size_t> oracle;          ///< fewer cores, no detector: N -> run
  std::uint32_t cores = 0;                              ///< the GPU file's SMs
  double tolerance = 0.02;                              ///< active_cores.tolerance (4.4.1.1)
};

OnacRuns find_runs(const ExperimentResults& r) {
  OnacRuns runs;
  runs.cores = r.grid->gpu.num_sms;
  runs.tolerance = r.grid->gpu.active_cores.tolerance;
  for (std::size_t run = 0; run < r.config->runs.size(); ++run) {
    const GpuConfig& gpu = run_gpu(*r.grid, run);
    const ActiveCoreDetectorKind kind = gpu.active_cores.detector;
    if (kind == ActiveCoreDetectorKind::kNone) {
      if (gpu.num_sms == runs.cores) {
        if (!runs.n_max) runs.n_max = run;
      } else {
        runs.oracle.emplace(gpu.num_sms, run);
      }
      continue;
    }
    if (gpu.num_sms != runs.cores) continue;  // a detector on fewer cores is no figure of 4.4.3
    for (std::size_t d = 0; d < kDetectors.size(); ++d) {
      if (kDetectors[d].kind == kind && !runs.detectors[d]) runs.detectors[d] = run;
    }
  }
  return runs;
}

/// One run's figures of the kernel (the grid's first seed: one kernel alone draws nothing at random).
struct RunFigures {
  double time_ns = 0;  ///< the kernel: first thread block to last
  double ipc = 0;      ///< warp instructions per nanosecond
  std::optional<double> power_w;
  std::optional<double> energy_j;
};

std::optional<RunFigures> figures_of(const RunOutcome* o) {
  if (o == nullptr || o->kernels.empty()) return std::nullopt;
  const KernelOutcome& k = o->kernels.front();
  RunFigures f;
  f.time_ns = static_cast<double>(k.end_ps - k.start_ps) / 1000.0;
  if (!(f.time_ns > 0)) return std::nullopt;
  f.ipc = static_cast<double>(k.instructions) / f.time_ns;
  if (o->power.enabled) {
    f.power_w = o->power.average_w;
    f.energy_j = o->power.total_j;
  }
  return f;
}

/// `value / base`, when both are known and the base is positive.
std::optional<double> ratio(const std::optional<double>& value, const std::optional<double>& base) {
  if (!value || !base || !(*base > 0)) return std::nullopt;
  return *value / *base;
}

struct DetectorFigures {
  std::optional<double> n_opt;
  bool detected = false;
  std::string ended_by;
  std::optional<double> detection_us;     ///< first thread block to the detecting sample's end
  std::optional<double> detection_share;  ///< of the kernel's time
  std::optional<double> ipc_rel;          ///< against N_max
  std::optional<double> power_rel;
  std::optional<double> energy_rel;
  std::vector<ActiveCoreSample> samples;
};

struct KernelFigures {
  std::string name;  ///< the workload's first process (scripts/onac names it after the kernel)
  std::string type;  ///< Table 4.4's type: the workload's `group:` (A or B)
  std::optional<RunFigures> n_max;
  std::map<std::uint32_t, double> ipc_rel_by_cores;  ///< N -> IPC / N_max's, N_max itself included
  /// The least N within the tolerance, when the grid has the run at N - 1 (or N is 1) to show it is the
  /// least; null otherwise.
  std::optional<std::uint32_t> n_oracle;
  std::optional<std::uint32_t> n_oracle_unbracketed;  ///< the least N found, bracketed or not
  std::optional<double> oracle_ipc_rel;
  std::optional<double> oracle_power_rel;
  std::optional<double> oracle_energy_rel;
  std::array<DetectorFigures, 2> detectors;  ///< parallel to kDetectors
};

std::vector<KernelFigures> kernel_figures(const ExperimentResults& r, const OnacRuns& runs) {
  std::vector<KernelFigures> kernels;
  for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
    const ExperimentWorkload& ew = r.grid->workloads[w];
    KernelFigures k;
    k.name = ew.workload.processes.empty() ? ew.workload.name : ew.workload.processes.front().name;
    k.type = ew.group;
    if (runs.n_max) k.n_max = figures_of(r.outcome(w, *runs.n_max, 0));
    if (k.n_max) {
      std::map<std::uint32_t, RunFigures> by_cores;
      by_cores.emplace(runs.cores, *k.n_max);
      for (const auto& [n, run] : runs.oracle) {
        if (const auto f = figures_of(r.outcome(w, run, 0))) by_cores.emplace(n, *f);
      }
      for (const auto& [n, f] : by_cores) {
        k.ipc_rel_by_cores[n] = f.ipc / k.n_max->ipc;
        if (k.n_oracle_unbracketed || f.ipc < (1.0 - runs.tolerance) * k.n_max->ipc) continue;
        k.n_oracle_unbracketed = n;
        // N is the least within the tolerance only if N - 1 was run (and, being less, missed it);
        // scripts/onac --ship lists the bracketing counts its bisection found.
        if (n == 1 || by_cores.count(n - 1) != 0) {
          k.n_oracle = n;
          k.oracle_ipc_rel = f.ipc / k.n_max->ipc;
          k.oracle_power_rel = ratio(f.power_w, k.n_max->power_w);
          k.oracle_energy_rel = ratio(f.energy_j, k.n_max->energy_j);
        }
      }
    }
    for (std::size_t d = 0; d < kDetectors.size(); ++d) {
      if (!runs.detectors[d]) continue;
      const RunOutcome* o = r.outcome(w, *runs.detectors[d], 0);
      const std::optional<RunFigures> f = figures_of(o);
      if (!f || o->active_cores.empty()) continue;
      const ActiveCoreRecord& rec = o->active_cores.front();
      DetectorFigures& df = k.detectors[d];
      df.n_opt = static_cast<double>(rec.n_opt);
      df.detected = rec.detected;
      df.ended_by = rec.ended_by;
      df.samples = rec.samples;
      if (rec.detected) {
        df.detection_us = static_cast<double>(rec.detected_ps - rec.start_ps) / 1e6;
        df.detection_share = *df.detection_us * 1000.0 / f->time_ns;
      }
      if (k.n_max) {
        df.ipc_rel = f->ipc / k.n_max->ipc;
        df.power_rel = ratio(f->power_w, k.n_max->power_w);
        df.energy_rel = ratio(f->energy_j, k.n_max->energy_j);
      }
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

std::optional<double> percent(const std::optional<double>& fraction) {
  if (!fraction) return std::nullopt;
  return 100.0 * *fraction;
}

std::vector<ReportRow> analyze_onac(const ExperimentResults& r) {
  const OnacRuns runs = find_runs(r);
  const std::vector<KernelFigures> kernels = kernel_figures(r, runs);
  std::vector<ReportRow> rows;
  for (const KernelFigures& k : kernels) {
    const std::string p = k.name + "/";
    rows.push_back({p + "n_oracle", as_number(k.n_oracle), std::nullopt, "cores"});
    for (std::size_t d = 0; d < kDetectors.size(); ++d) {
      const DetectorFigures& df = k.detectors[d];
      const std::string det = kDetectors[d].row;
      rows.push_back({p + "n_opt_" + det, df.n_opt, std::nullopt, "cores"});
      rows.push_back({p + "detection_us_" + det, df.detection_us, std::nullopt, "us"});
      rows.push_back({p + "ipc_percent_" + det, percent(df.ipc_rel), std::nullopt, "% of N_max"});
      rows.push_back({p + "energy_percent_" + det, percent(df.energy_rel), std::nullopt, "% of N_max"});
    }
    rows.push_back({p + "energy_percent_oracle", percent(k.oracle_energy_rel), std::nullopt, "% of N_max"});
  }
  // 4.4.4 averages over the type A kernels (N_opt < 32 in the thesis).
  Mean reduction;
  std::array<Mean, 2> energy_saving;
  std::array<Mean, 2> ipc;
  Mean oracle_saving;
  std::size_t type_a = 0;
  for (const KernelFigures& k : kernels) {
    if (k.type != "A") continue;
    ++type_a;
    const DetectorFigures& onac = k.detectors[0];
    const DetectorFigures& seq = k.detectors[1];
    if (onac.detection_us && seq.detection_us && *seq.detection_us > 0) {
      reduction.add(100.0 * (1.0 - *onac.detection_us / *seq.detection_us));
    }
    for (std::size_t d = 0; d < kDetectors.size(); ++d) {
      if (k.detectors[d].energy_rel) energy_saving[d].add(100.0 * (1.0 - *k.detectors[d].energy_rel));
      if (k.detectors[d].ipc_rel) ipc[d].add(100.0 * *k.detectors[d].ipc_rel);
    }
    if (k.oracle_energy_rel) oracle_saving.add(100.0 * (1.0 - *k.oracle_energy_rel));
  }
  rows.push_back({"type_a/kernels", static_cast<double>(type_a), std::nullopt, "kernels"});
  rows.push_back({"type_a/detection_reduction_percent", reduction.value(), std::nullopt, "%"});
  for (std::size_t d = 0; d < kDetectors.size(); ++d) {
    const std::string det = kDetectors[d].row;
    rows.push_back({"type_a/energy_saving_percent_" + det, energy_saving[d].value(), std::nullopt, "%"});
    rows.push_back({"type_a/ipc_percent_" + det, ipc[d].value(), std::nullopt, "% of N_max"});
  }
  rows.push_back({"type_a/energy_saving_percent_oracle", oracle_saving.value(), std::nullopt, "%"});
  rows.push_back({"all/kernels", static_cast<double>(kernels.size()), std::nullopt, "kernels"});
  for (std::size_t d = 0; d < kDetectors.size(); ++d) {
    const std::string det = kDetectors[d].row;
    double matches = 0;
    double detected = 0;
    Mean ipc_all;
    for (const KernelFigures& k : kernels) {
      const DetectorFigures& df = k.detectors[d];
      if (df.n_opt && k.n_oracle && *df.n_opt == static_cast<double>(*k.n_oracle)) matches += 1;
      if (df.detected) detected += 1;
      if (df.ipc_rel) ipc_all.add(100.0 * *df.ipc_rel);
    }
    rows.push_back({"all/matches_oracle_" + det, matches, std::nullopt, "kernels"});
    rows.push_back({"all/detected_" + det, detected, std::nullopt, "kernels"});
    rows.push_back({"all/ipc_percent_" + det, ipc_all.value(), std::nullopt, "% of N_max"});
  }
  return rows;
}

// ---- report.md ----------------------------------------------------------------------------------

std::string detection(const DetectorFigures& d) {
  if (!d.detected) return d.ended_by.empty() ? "-" : "- (" + d.ended_by + ")";
  return number(d.detection_us, "%.1f us") + " (" + number(percent(d.detection_share), "%.1f%%") + ")";
}

std::string onac_tables(const ExperimentResults& r, const std::vector<ReportRow>& rows) {
  std::map<std::string, const ReportRow*> by_name;
  for (const ReportRow& row : rows) by_name[row.name] = &row;
  const auto cell = [&](const std::string& name, bool paper) -> std::optional<double> {
    const auto it = by_name.find(name);
    if (it == by_name.end()) return std::nullopt;
    return paper ? it->second->paper : it->second->model;
  };
  const OnacRuns runs = find_runs(r);
  const auto label = [&](const std::optional<std::size_t>& run) {
    return run ? "`" + r.config->runs[*run].label + "`" : std::string("none");
  };
  std::string md = "N_max run: " + label(runs.n_max) + " (" + std::to_string(runs.cores) +
                   " cores); ONAC: " + label(runs.detectors[0]) + "; Seq-Det: " + label(runs.detectors[1]) +
                   "; oracle runs (sms):";
  for (const auto& [n, run] : runs.oracle) {
    md += " " + std::to_string(n) + " = `" + r.config->runs[run].label + "`";
  }
  md +=
      ".\n\nIPC, power and energy relative to N_max; detection time from the kernel's first thread block to "
      "the "
      "detecting sample's end, and its share of the kernel's time.\n\n"
      "| kernel | type | TBs | N_oracle | N_opt ONAC | N_opt Seq-Det | detection ONAC | detection Seq-Det | "
      "IPC oracle / ONAC / Seq-Det | power oracle / ONAC / Seq-Det | energy oracle / ONAC / Seq-Det |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  const std::vector<KernelFigures> kernels = kernel_figures(r, runs);
  for (std::size_t w = 0; w < kernels.size(); ++w) {
    const KernelFigures& k = kernels[w];
    const DetectorFigures& a = k.detectors[0];
    const DetectorFigures& s = k.detectors[1];
    std::uint32_t tbs = 0;
    for (const ProcessSpec& p : r.grid->workloads[w].workload.processes) {
      for (const StreamSpec& stream : p.streams) {
        for (const CommandSpec& c : stream.commands) {
          if (c.kind == CommandKind::kKernel && c.kernel) tbs += c.kernel->thread_blocks * c.launches;
        }
      }
    }
    const auto three = [](const std::optional<double>& x, const std::optional<double>& y,
                          const std::optional<double>& z) {
      return number(percent(x), "%.1f%%") + " / " + number(percent(y), "%.1f%%") + " / " +
             number(percent(z), "%.1f%%");
    };
    std::string oracle = number(as_number(k.n_oracle), "%.0f");
    if (!k.n_oracle && k.n_oracle_unbracketed) {
      oracle = "(" + std::to_string(*k.n_oracle_unbracketed) + "?)";
    }
    md += "| " + k.name + " | " + (k.type.empty() ? "-" : k.type) + " | " + std::to_string(tbs) + " | " +
          oracle + " | " + number(a.n_opt, "%.0f") + " | " + number(s.n_opt, "%.0f") + " | " + detection(a) +
          " | " + detection(s) + " | " + three(k.oracle_ipc_rel, a.ipc_rel, s.ipc_rel) + " | " +
          three(k.oracle_power_rel, a.power_rel, s.power_rel) + " | " +
          three(k.oracle_energy_rel, a.energy_rel, s.energy_rel) + " |\n";
  }
  md += "\nN_oracle `(N?)`: N is the least core count run that is within " +
        number(100.0 * runs.tolerance, "%.0f") +
        "% of N_max's IPC, but N - 1 was not run, so N is not shown to be the least (rerun scripts/onac "
        "--ship).\n";
  md += "\nType A kernels (" + number(cell("type_a/kernels", false), "%.0f") +
        "), means, the model beside the thesis (4.4.4):\n\n| figure | model | thesis |\n|---|---|---|\n";
  const std::array<std::pair<const char*, const char*>, 6> summary = {{
      {"type_a/detection_reduction_percent",
       "detection time, ONAC shorter than Seq-Det by (kernels both detected)"},
      {"type_a/energy_saving_percent_onac", "energy below N_max, ONAC"},
      {"type_a/energy_saving_percent_seq_det", "energy below N_max, Seq-Det"},
      {"type_a/energy_saving_percent_oracle", "energy below N_max, oracle"},
      {"type_a/ipc_percent_onac", "IPC of N_max, ONAC"},
      {"type_a/ipc_percent_seq_det", "IPC of N_max, Seq-Det"},
  }};
  for (const auto& [name, title] : summary) {
    md += std::string("| ") + title + " | " + number(cell(name, false), "%.1f%%") + " | " +
          number(cell(name, true), "%.0f%%") + " |\n";
  }
  md += "\nAll kernels: IPC of N_max " + number(cell("all/ipc_percent_onac", false), "%.1f%%") + " (ONAC), " +
        number(cell("all/ipc_percent_seq_det", false), "%.1f%%") +
        " (Seq-Det); N_opt equal to N_oracle: " + number(cell("all/matches_oracle_onac", false), "%.0f") +
        " (ONAC), " + number(cell("all/matches_oracle_seq_det", false), "%.0f") + " (Seq-Det) of " +
        number(cell("all/kernels", false), "%.0f") +
        "; detected before the thread blocks ran out: " + number(cell("all/detected_onac", false), "%.0f") +
        " (ONAC), " + number(cell("all/detected_seq_det", false), "%.0f") +
        " (Seq-Det).\n\nSamples (active cores: IPC, "
        "warp instructions per cycle of the GPU) per detector:\n\n";
  for (const KernelFigures& k : kernels) {
    for (std::size_t d = 0; d < kDetectors.size(); ++d) {
      md += "- " + k.name + " " + kDetectors[d].title + ":";
      for (const ActiveCoreSample& s : k.detectors[d].samples) {
        md += " " + std::to_string(s.active_cores) + ": " + number(s.ipc, "%.4f") + ";";
      }
      md += "\n";
    }
  }
  md += "\nOracle runs (N: IPC relative to N_max):\n\n";
  for (const KernelFigures& k : kernels) {
    md += "- " + k.name + ":";
    for (const auto& [n, v] : k.ipc_rel_by_cores) {
      md += " " + std::to_string(n) + ": " + number(v, "%.3f") + ";";
    }
    md += "\n";
  }
  return md + "\n";
}

}  // namespace

AnalysisInfo awatramani_onac_analysis() {
  AnalysisInfo info{
      "awatramani-onac",
      "ONAC against Seq-Det per kernel alone: the detected active-core count beside the oracle's, detection "
      "time, IPC and energy against every core (Awatramani 4.4.3-4.4.4, Table 4.4, Figs. 4.14-4.16)",
      "Each workload is one kernel alone on warp-level SMs with the power model on; its `group:` is Table "
      "4.4's type (A or B). Runs are found by their settings, whatever their labels: N_max is the first run "
      "on every core of the GPU file with no detector; the detector runs have `active_cores: onac` or "
      "`seq-det` (or the GPU file's) on every core; the oracle runs have no detector and `sms: N` below the "
      "file's count. Figures are the first seed's (one kernel alone draws nothing at random). IPC is the "
      "kernel's warp instructions over its time (first thread block to last); `K/n_oracle` is the least N "
      "whose IPC is within active_cores.tolerance (2%, 4.4.1.1) of N_max's (4.4.3.2), given only when the "
      "grid also ran N - 1 (or N is 1), which shows N is the least under the premise that IPC does not fall "
      "as cores are added (4.4.2.1); scripts/onac --ship finds the bracketing counts by bisection and lists "
      "only those. `K/n_opt_D` is the count detector D chose (its active_cores record), `K/detection_us_D` "
      "the time from the kernel's first thread block to the end of the sample that decided (null when the "
      "thread blocks ran out first), `K/ipc_percent_D` and `K/energy_percent_D` its IPC and the run's "
      "energy (the power model's total) against N_max's. `type_a/*` are means over the type A kernels: "
      "`detection_reduction_percent` = mean of (1 - ONAC's detection / Seq-Det's) x 100 over the kernels "
      "both detected (4.4.3.3: 45%), `energy_saving_percent_D` = mean of (1 - energy / N_max's) x 100 "
      "(4.4.3.4: 20% ONAC, 10% Seq-Det), `ipc_percent_D` the mean IPC against N_max (Fig. 4.14).",
      analyze_onac};
  info.isolated_baselines = false;
  info.tables = onac_tables;
  return info;
}

}  // namespace gpumux
