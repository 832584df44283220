// The `tanasic-priority` analysis (Tanasic et al. 4.2-4.3, Figs. 5 and 6): the high-priority process's
// turnaround and the throughput of every run, by process count; the overhead against the npq run.

#include <map>

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"

namespace gpumux {

namespace {

/// The high-priority process of workload `w` as run `run` simulates it: the one process whose priority
/// is above every other's; nullopt when there is none.
std::optional<std::size_t> high_priority_process(const ExpandedExperiment& grid, std::size_t w,
                                                 std::size_t run) {
  const Workload& workload = grid.workload_of({w, run, 0});
  std::optional<std::size_t> best;
  bool unique = false;
  for (std::size_t p = 0; p < workload.processes.size(); ++p) {
    const int prio = workload.processes[p].priority;
    if (!best || prio > workload.processes[*best].priority) {
      best = p;
      unique = true;
    } else if (prio == workload.processes[*best].priority) {
      unique = false;
    }
  }
  return unique ? best : std::nullopt;
}

std::vector<ReportRow> analyze_priority(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  const auto counts = process_counts(*r.grid);
  const auto classes = class_labels(*r.grid, true);
  const std::optional<std::size_t> baseline = select_run(*r.config, {RunRole::kBaseline, ""});
  const std::optional<std::size_t> npq = select_run(*r.config, {RunRole::kUnderTest, "npq"});
  for (const std::size_t run : select_runs(*r.config, {RunRole::kAny, ""})) {
    const ExperimentRun& spec = r.config->runs[run];
    for (const std::size_t n : counts) {
      const std::string prefix = spec.label + "/" + process_count_group(n) + "/";
      Mean stp;
      for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
        if (r.grid->workloads[w].workload.processes.size() != n) continue;
        for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
          if (const RunOutcome* o = r.outcome(w, run, s)) stp.add(o->stp);
        }
      }
      rows.push_back({prefix + "stp", stp.value(), std::nullopt, ""});
      if (role_of(run) == RunRole::kBaseline || !baseline) continue;

      Mean improvement;
      std::map<std::string, Mean> by_class;
      Mean degradation;
      for_each_pair(
          r, n, *baseline, run, [&](std::size_t w, const RunOutcome& base, const RunOutcome& other) {
            degradation.add(base.stp / other.stp);
            const auto hp = high_priority_process(*r.grid, w, run);
            if (!hp) return;
            const double gain = base.processes[*hp].turnaround_ps / other.processes[*hp].turnaround_ps;
            improvement.add(gain);
            by_class[other.processes[*hp].class1].add(gain);
          });
      rows.push_back({prefix + "hp_improvement", improvement.value(), std::nullopt, "x"});
      for (const std::string& c : classes) {
        rows.push_back({prefix + "hp_improvement_" + lower(c), by_class[c].value(), std::nullopt, "x"});
      }
      rows.push_back({prefix + "stp_degradation", degradation.value(), std::nullopt, "x"});
      if (npq && run != *npq) {
        Mean overhead;
        for_each_pair(r, n, *npq, run,
                      [&](std::size_t, const RunOutcome& reference, const RunOutcome& other) {
                        overhead.add(reference.stp / other.stp);
                      });
        rows.push_back({prefix + "stp_overhead_vs_npq", overhead.value(), std::nullopt, "x"});
      }
    }
  }
  return rows;
}

}  // namespace

AnalysisInfo tanasic_priority_analysis() {
  return {"tanasic-priority",
          "high-priority turnaround and throughput under priority scheduling (Tanasic 4.2-4.3, Figs. 5-6)",
          "In every workload one process has the highest priority (generated mixes: the first process, "
          "priority 1 in every run but the baseline). For every run label and process count n, over the "
          "workloads with n processes and every seed: `stp` is the mean STP (Fig. 6); for runs other than "
          "the baseline, `hp_improvement` is the mean of the high-priority process's turnaround under the "
          "baseline (the first run, without priorities) / its turnaround in this run (Fig. 5), "
          "`hp_improvement_<class>` the same over the workloads whose high-priority process is in that "
          "Class 1 group (Table 1: kernel times), `stp_degradation` the mean of baseline STP / run STP, and, "
          "when an npq run is present, `stp_overhead_vs_npq` the mean of npq STP / run STP (the overhead "
          "Tanasic 4.3 quotes).",
          analyze_priority};
}

}  // namespace gpumux
