#pragma once
// What an experiment grid produced: the metrics of every simulation (RunOutcome, per process
// ProcessOutcome) and the rows of its report (ReportRow). Written by experiment/run.h, read by the
// analyses (app/analysis/) and the report writers (experiment/report_*.h).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment_loader.h"
#include "core/field_count.h"
#include "core/types.h"
#include "core/warp_stats.h"
#include "metrics/run_result.h"

namespace gpumux {

struct ProcessOutcome {
  std::string name;
  std::string class1;  ///< grouping labels of the process's kernels (Tanasic Table 1 Class 1 / Class 2)
  std::string class2;
  int priority = 0;
  double isolated_ps = 0;    ///< T^SP
  double turnaround_ps = 0;  ///< T^MP, mean over completed runs
  double ntt = 0;
  std::size_t runs = 0;  ///< completed runs
};

/// One kernel launch of a simulation (RunResult's KernelRecord).
struct KernelOutcome {
  std::string name;
  std::size_t process = 0;
  TimePs start_ps = 0;  ///< first thread block issued
  TimePs end_ps = 0;    ///< last thread block completed
  std::uint32_t thread_blocks = 0;
  std::uint32_t tbs_per_sm = 0;
  std::uint64_t instructions = 0;  ///< warp instructions issued (warp-level SMs; 0 at TB level)
  // Perf-Sat (Awatramani 4.3; metrics/workload_class.h KernelPerfSat), when the run had it on.
  bool perf_sat = false;
  double perf_sat_detected_mean = 0;  ///< the count detected, mean over the SMs the kernel ran on
  std::uint32_t perf_sat_sms = 0;
  std::uint32_t perf_sat_settled_sms = 0;
  std::string workload_class;  ///< C-strong, C-weak, MEM; empty: not classified
};

/// The metrics of one simulation of the grid.
/// Kernel launches a simulation may have for report.json to list them one by one. A Tanasic mix
/// replays its short applications hundreds of times (tens of thousands of launches per simulation):
/// listing them all made tanasic-dss's report.json 590 MB and ran tanasic-priority (720 simulations)
/// out of 24 GB while it was built. `gpumux run` of the workload lists every one in stats.json.
inline constexpr std::size_t kMaxKernelsListed = 1000;

struct RunOutcome {
  /// Every process completed a run (and, where the analysis reads them, has its isolated baseline);
  /// false: no metrics.
  bool valid = false;
  /// stp, antt, fairness and the processes' ntt are computed; false when the analysis reads no
  /// isolated baselines (AnalysisInfo::isolated_baselines): they are 0 and report.json has nulls.
  bool multiprogram = true;
  double stp = 0;
  double antt = 0;
  double fairness = 0;
  double simulated_ns = 0;
  std::size_t preemptions = 0;
  std::vector<ProcessOutcome> processes;
  /// Every launch, in launch order, when there are at most kMaxKernelsListed of them; else empty.
  std::vector<KernelOutcome> kernels;
  std::size_t kernel_launches = 0;  ///< all of them, listed or not
  WarpSmStats warp;                 ///< the SMs' warp-level figures summed (zero at TB level)
  TimePs memory_busy_ps = 0;        ///< memory controller busy time
  /// Active-core detection (Awatramani 4.4), one record per kernel launch it ran on; empty when off.
  std::vector<ActiveCoreRecord> active_cores;
  PowerReport power;  ///< the power model's figures; enabled false when off
};

// By named fields: a grid's simulations make their outcomes in the child (run.cpp) and send them as JSON.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProcessOutcome, name, class1, class2, priority, isolated_ps, turnaround_ps,
                                   ntt, runs)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(KernelOutcome, name, process, start_ps, end_ps, thread_blocks, tbs_per_sm,
                                   instructions, perf_sat, perf_sat_detected_mean, perf_sat_sms,
                                   perf_sat_settled_sms, workload_class)
static_assert(field_count<KernelOutcome>() == 12, "KernelOutcome changed: update its JSON line");
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RunOutcome, valid, multiprogram, stp, antt, fairness, simulated_ns,
                                   preemptions, processes, kernels, kernel_launches, warp, memory_busy_ps,
                                   active_cores, power)
static_assert(field_count<RunOutcome>() == 14, "RunOutcome changed: update its JSON line");

struct ExperimentResults {
  const ExperimentConfig* config = nullptr;
  const ExpandedExperiment* grid = nullptr;
  /// Parallel to grid->points; nullopt where not simulated (the dry run that lists the rows).
  std::vector<std::optional<RunOutcome>> outcomes;

  /// The valid outcome of (workload, run, seed index), or nullptr.
  [[nodiscard]] const RunOutcome* outcome(std::size_t workload, std::size_t run, std::size_t seed) const;
};

/// One row of a report: an analysis's figure beside the paper's.
struct ReportRow {
  std::string name;  ///< "label/group/metric" or "label/metric"
  std::optional<double> model;
  std::optional<double> paper;
  std::string unit;
};

/// Class label of a process: the `class1` or `class2` of its first kernel (empty when it has none).
[[nodiscard]] std::string process_class(const ProcessSpec& process, bool class1);

}  // namespace gpumux
