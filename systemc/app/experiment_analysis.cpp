#include "app/experiment_analysis.h"
#include "app/pai_analysis.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace gpumux {

const RunOutcome* ExperimentResults::outcome(std::size_t workload, std::size_t run, std::size_t seed) const {
  const std::size_t runs = config->runs.size();
  const std::size_t seeds = config->seeds.size();
  const std::size_t index = (workload * runs + run) * seeds + seed;
  if (index >= outcomes.size() || !outcomes[index] || !outcomes[index]->valid) return nullptr;
  return &*outcomes[index];
}

std::string process_class(const ProcessSpec& process, bool class1) {
  for (const StreamSpec& stream : process.streams) {
    for (const CommandSpec& command : stream.commands) {
      if (command.kind == CommandKind::kKernel && command.kernel) {
        return class1 ? command.kernel->class1 : command.kernel->class2;
      }
    }
  }
  return "";
}

namespace {

/// Accumulates a mean; empty means "no data" (a null in the report).
class Mean {
 public:
  void add(double value) {
    sum_ += value;
    ++count_;
  }
  [[nodiscard]] std::optional<double> value() const {
    if (count_ == 0) return std::nullopt;
    return sum_ / static_cast<double>(count_);
  }

 private:
  double sum_ = 0;
  std::size_t count_ = 0;
};

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string group_name(std::size_t processes) { return std::to_string(processes) + "proc"; }

/// Process counts of the grid's workloads, ascending.
std::vector<std::size_t> process_counts(const ExpandedExperiment& grid) {
  std::set<std::size_t> counts;
  for (const ExperimentWorkload& w : grid.workloads) counts.insert(w.workload.processes.size());
  return {counts.begin(), counts.end()};
}

/// Class labels present in the grid (Tanasic's SHORT, MEDIUM, LONG first, in that order).
std::vector<std::string> class_labels(const ExpandedExperiment& grid, bool class1) {
  std::set<std::string> found;
  for (const ExperimentWorkload& w : grid.workloads) {
    for (const ProcessSpec& p : w.workload.processes) {
      const std::string c = process_class(p, class1);
      if (!c.empty()) found.insert(c);
    }
  }
  std::vector<std::string> ordered;
  for (const char* known : {"SHORT", "MEDIUM", "LONG"}) {
    if (found.erase(known) > 0) ordered.emplace_back(known);
  }
  ordered.insert(ordered.end(), found.begin(), found.end());
  return ordered;
}

/// Pairs (baseline, run) of valid outcomes over the workloads with `count` processes and every seed.
template <typename Visit>
void for_each_pair(const ExperimentResults& r, std::size_t count, std::size_t run, Visit visit) {
  for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
    if (r.grid->workloads[w].workload.processes.size() != count) continue;
    for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
      const RunOutcome* base = r.outcome(w, 0, s);
      const RunOutcome* other = r.outcome(w, run, s);
      if (base != nullptr && other != nullptr) visit(w, *base, *other);
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// tanasic-dss (Tanasic 4.4, Fig. 7)

std::vector<ReportRow> analyze_dss(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  const auto counts = process_counts(*r.grid);
  const auto classes = class_labels(*r.grid, false);
  for (std::size_t run = 1; run < r.config->runs.size(); ++run) {
    const std::string& label = r.config->runs[run].label;
    for (const std::size_t n : counts) {
      std::map<std::string, Mean> ntt;
      Mean antt;
      Mean fairness;
      Mean stp;
      for_each_pair(r, n, run, [&](std::size_t, const RunOutcome& base, const RunOutcome& other) {
        antt.add(base.antt / other.antt);
        fairness.add(other.fairness / base.fairness);
        stp.add(base.stp / other.stp);
        for (std::size_t p = 0; p < other.processes.size(); ++p) {
          ntt[other.processes[p].class2].add(base.processes[p].ntt / other.processes[p].ntt);
        }
      });
      const std::string prefix = label + "/" + group_name(n) + "/";
      for (const std::string& c : classes) {
        rows.push_back({prefix + "ntt_improvement_" + lower(c), ntt[c].value(), std::nullopt, "x"});
      }
      rows.push_back({prefix + "antt_improvement", antt.value(), std::nullopt, "x"});
      rows.push_back({prefix + "fairness_improvement", fairness.value(), std::nullopt, "x"});
      rows.push_back({prefix + "stp_degradation", stp.value(), std::nullopt, "x"});
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------
// tanasic-priority (Tanasic 4.2-4.3, Figs. 5 and 6)

/// The high-priority process of a workload as the non-baseline runs simulate it: the one process whose
/// priority is above every other's; nullopt when there is none.
std::optional<std::size_t> high_priority_process(const ExpandedExperiment& grid, std::size_t w) {
  const Workload& workload = grid.workload_of({w, 1, 0});
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
  std::optional<std::size_t> npq;
  for (std::size_t run = 1; run < r.config->runs.size(); ++run) {
    if (r.config->runs[run].policy == "npq") {
      npq = run;
      break;
    }
  }
  for (std::size_t run = 0; run < r.config->runs.size(); ++run) {
    const ExperimentRun& spec = r.config->runs[run];
    for (const std::size_t n : counts) {
      const std::string prefix = spec.label + "/" + group_name(n) + "/";
      Mean stp;
      for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
        if (r.grid->workloads[w].workload.processes.size() != n) continue;
        for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
          if (const RunOutcome* o = r.outcome(w, run, s)) stp.add(o->stp);
        }
      }
      rows.push_back({prefix + "stp", stp.value(), std::nullopt, ""});
      if (run == 0) continue;

      Mean improvement;
      std::map<std::string, Mean> by_class;
      Mean degradation;
      for_each_pair(r, n, run, [&](std::size_t w, const RunOutcome& base, const RunOutcome& other) {
        degradation.add(base.stp / other.stp);
        const auto hp = high_priority_process(*r.grid, w);
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
        for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
          if (r.grid->workloads[w].workload.processes.size() != n) continue;
          for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
            const RunOutcome* reference = r.outcome(w, *npq, s);
            const RunOutcome* other = r.outcome(w, run, s);
            if (reference != nullptr && other != nullptr) overhead.add(reference->stp / other->stp);
          }
        }
        rows.push_back({prefix + "stp_overhead_vs_npq", overhead.value(), std::nullopt, "x"});
      }
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------
// summary

std::vector<ReportRow> analyze_summary(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  for (std::size_t run = 0; run < r.config->runs.size(); ++run) {
    Mean stp;
    Mean antt;
    Mean fairness;
    for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
      for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
        if (const RunOutcome* o = r.outcome(w, run, s)) {
          stp.add(o->stp);
          antt.add(o->antt);
          fairness.add(o->fairness);
        }
      }
    }
    const std::string& label = r.config->runs[run].label;
    rows.push_back({label + "/stp", stp.value(), std::nullopt, ""});
    rows.push_back({label + "/antt", antt.value(), std::nullopt, ""});
    rows.push_back({label + "/fairness", fairness.value(), std::nullopt, ""});
  }
  return rows;
}

}  // namespace

const std::vector<AnalysisInfo>& analysis_registry() {
  static const std::vector<AnalysisInfo> registry = {
      {"summary", "per run label: mean STP, ANTT and fairness over all workloads and seeds",
       "`<label>/stp`, `<label>/antt`, `<label>/fairness`: the mean, over every workload and seed, of "
       "that run's STP, ANTT and fairness (Eyerman and Eeckhout; docs/user-guide.md, Metrics).",
       analyze_summary},
      {"tanasic-dss", "equal spatial sharing against the baseline, by process count (Tanasic 4.4, Fig. 7)",
       "For every run label other than the baseline (the first run) and every process count n, over the "
       "workloads with n processes and every seed, comparing the run with the baseline on the same "
       "workload: `ntt_improvement_<class>` is the mean of baseline NTT / run NTT over all processes of "
       "that Class 2 group (Table 1: SHORT < 5 ms, MEDIUM 30-115 ms, LONG > 400 ms; Fig. 7a); "
       "`antt_improvement` the mean of baseline ANTT / run ANTT; `fairness_improvement` the mean of run "
       "fairness / baseline fairness (Fig. 7b); `stp_degradation` the mean of baseline STP / run STP "
       "(Fig. 7c). Above 1 is better for the improvements, worse for the degradation.",
       analyze_dss},
      {"tanasic-priority",
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
       analyze_priority},
      pai_table_analysis(),  // Pai et al. Tables 5-6 (app/pai_analysis.*)
  };
  return registry;
}

const AnalysisInfo* find_analysis(const std::string& name) {
  for (const AnalysisInfo& a : analysis_registry()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

}  // namespace gpumux
