#pragma once
// Experiments (configs/experiments/*.yaml): a grid of simulations - workloads x runs (policy,
// preemption mechanism, policy options, copy policy, SM model and warp scheduler) x seeds - on one GPU,
// and the analysis
// that turns the grid's results into the rows of a report, beside the paper's figures. This file loads and
// validates the YAML (the schema is in docs/config.md, "Experiment files") and expands the grid; running it
// and the analyses live in systemc/app/experiment*.
//
// Workloads are either listed files or generated: `generate: tanasic-mixes` draws random
// multiprogrammed mixes of the applications of one workload file (Tanasic 4.1), see tanasic_mixes.h.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/gpu_config.h"
#include "core/workload.h"
#include "frontend/copy_policy.h"
#include "policy/registry.h"

namespace gpumux {

/// One entry of `runs:`: how every workload of the grid is simulated once per seed.
struct ExperimentRun {
  std::string label;  ///< unique; names report rows ("dss-cs/2proc/...")
  std::string policy;
  PreemptionMechanism preemption = PreemptionMechanism::kContextSwitch;
  bool preemption_given = false;  ///< written in the file (else the default, context-switch)
  PolicyOptions options;
  /// `copy_policy:` how the DMA engines order waiting copies (frontend/copy_policy.h); fcfs by default.
  CopyPolicy copy_policy = CopyPolicy::kFcfs;
  bool copy_policy_given = false;  ///< written in the file
  /// `sm_model:` (tb or warp); nullopt: the GPU file's sm.model.
  std::optional<SmModel> sm_model;
  SourceLocation sm_model_where;
  /// `warp_scheduler:` (a name of sm/warp_scheduler/registry.h); empty: the GPU file's
  /// sm.warp.scheduler. Only with warp-level SMs (the loader refuses it beside `sm_model: tb`,
  /// expand_experiment beside a GPU whose sm.model is tb).
  std::string warp_scheduler;
  SourceLocation warp_scheduler_where;
  /// `max_thread_blocks:` the GPU's thread-block slots per SM for this run (a sweep of the count per
  /// core, Awatramani 4.3.3.2); nullopt: the GPU file's. At most the file's value.
  std::optional<std::uint32_t> max_thread_blocks;
  SourceLocation max_thread_blocks_where;
  /// `perf_sat:` on or off, the GPU's `perf_sat.enabled` for this run (Awatramani 4.3); nullopt: the
  /// GPU file's. On needs warp-level SMs.
  std::optional<bool> perf_sat;
  SourceLocation perf_sat_where;
  /// `active_cores:` none, onac or seq-det, the GPU's `active_cores.detector` for this run (Awatramani
  /// 4.4); nullopt: the GPU file's. A detector needs warp-level SMs and fcfs or fifo.
  std::optional<ActiveCoreDetectorKind> active_cores;
  SourceLocation active_cores_where;
  /// `power:` on or off, the GPU's `power.enabled` for this run; nullopt: the GPU file's.
  std::optional<bool> power;
  SourceLocation power_where;
  /// `sms:` the GPU's SM count for this run (ONAC's oracle runs a kernel on N cores, Awatramani
  /// 4.4.3.2); nullopt: the GPU file's. At most the file's value.
  std::optional<std::uint32_t> sms;
  SourceLocation sms_where;
  /// `workloads:` the names of the grid's workloads this run simulates (the others get no simulation of
  /// it: a search such as ONAC's oracle needs only the core counts that bracket each kernel's answer);
  /// empty: every workload.
  std::vector<std::string> only_workloads;
  SourceLocation only_workloads_where;
  SourceLocation where;  ///< the run's map
  std::string key;       ///< "runs[i]"
};

/// Which process of a generated mix is the high-priority one.
enum class HighPriority : std::uint8_t {
  kNone,   ///< all processes priority 0
  kFirst,  ///< the first process of each mix gets priority 1 in the non-baseline runs
};

/// `workloads: {generate: tanasic-mixes, ...}`.
struct MixGeneratorConfig {
  std::string applications;  ///< resolved path of the workload file whose processes are the applications
  SourceLocation applications_where;
  std::vector<std::uint32_t> process_counts;
  std::uint32_t mixes_per_count = 1;
  std::uint64_t mix_seed = 1;
  double arrival_offset_max_us = 0;  ///< arrivals uniform in [0, this); 0: all arrive at time 0
  HighPriority high_priority = HighPriority::kNone;
};

/// One entry of a `workloads:` list: a file, or a map {file, group}.
struct WorkloadEntry {
  std::string file;  ///< resolved
  SourceLocation where;
  std::string group;  ///< `group:` (e.g. Pai Table 6's arrival offset "25pct"); empty when not given
};

/// One `paper:` entry: a row name and the paper's figure (nullopt: explicitly none).
struct PaperEntry {
  std::string row;
  std::optional<double> value;
  SourceLocation where;
};

struct ExperimentConfig {
  std::string name;
  std::string source_file;
  /// `extends:`: the experiments this one is built on, nearest first (resolved paths); empty when it
  /// extends none (docs/config.md "Extending an experiment").
  std::vector<std::string> extends;
  std::string description;  ///< explanation printed at the top of report.md
  std::string notes;        ///< printed after the tables of report.md
  std::string gpu_path;     ///< resolved
  std::string analysis;
  SourceLocation analysis_where;
  std::vector<WorkloadEntry> workload_files;
  std::optional<MixGeneratorConfig> generator;
  std::vector<ExperimentRun> runs;  ///< runs[0] is the baseline the analyses compare against
  std::vector<std::uint64_t> seeds;
  std::vector<PaperEntry> paper;  ///< in file order
  /// `tb_rsd_percent`: every kernel of every workload (and its isolated baseline) gets this
  /// thread-block time spread (a sensitivity study; see override_tb_rsd).
  std::optional<double> tb_rsd_percent;
  SourceLocation tb_rsd_where;
  /// `preemption_latency_scale`: the GPU's drain, trap and setup cycles times this (a sensitivity
  /// study of the preemption latencies; scale_preemption_latencies).
  std::optional<double> preemption_latency_scale;
  /// `tb_interference`: every run's GPU (and its isolated baselines) with memory.tb_interference on or
  /// off (issue 12 item 8: what TB-level memory interference moves in the paper experiments).
  std::optional<bool> tb_interference;
  /// `memory_model`: every run's GPU (and its isolated baselines) with this memory.model (simple or
  /// dram), as `gpumux run --memory-model`; the GPU file must have the dram sections for dram.
  std::optional<MemoryModel> memory_model;
  SourceLocation memory_model_where;
  /// `kernel_launch`: every workload of the grid (and its isolated baselines) submits its kernel
  /// launches this way (a sensitivity study of launch asynchrony, Tanasic 2.1 and 4.3).
  std::optional<KernelLaunchMode> kernel_launch;
  /// `streams_per_application`: every process's kernels dealt over this many streams (a sensitivity
  /// study of streams per application; split_kernels_over_streams).
  std::optional<std::uint32_t> streams_per_application;
  SourceLocation streams_per_application_where;
};

/// Loads and checks an experiment file. Paths in it are relative to the file. Does not load the GPU or
/// workload files (expand_experiment does) and does not check policy or analysis names (the command
/// does, against the registries).
[[nodiscard]] ExperimentConfig load_experiment(const std::string& path);

/// One workload of the grid.
struct ExperimentWorkload {
  Workload workload;  ///< what the baseline run (runs[0]) simulates
  /// What the other runs simulate when it differs (generated mixes with `high_priority: first`).
  std::optional<Workload> prioritized;
  std::vector<std::string> applications;  ///< generated mixes: the application of each process
  std::string group;  ///< the `group:` of its entry in `workloads:`; empty when none (and for mixes)
};

/// One simulation of the grid.
struct GridPoint {
  std::size_t workload = 0;
  std::size_t run = 0;
  std::size_t seed = 0;  ///< index into ExperimentConfig::seeds
};

struct ExpandedExperiment {
  GpuConfig gpu;  ///< the GPU file as loaded
  /// Parallel to ExperimentConfig::runs: the GPU that run's simulations and its isolated baselines
  /// use, `gpu` with the run's sm_model and warp_scheduler applied (apply_sm_settings).
  std::vector<GpuConfig> run_gpus;
  std::vector<ExperimentWorkload> workloads;
  /// workload-major, then run, then seed; a run with `workloads:` has points only for those.
  std::vector<GridPoint> points;
  /// Index into `points` of (workload, run, seed) (workload-major, then run, then seed), or kNoPoint
  /// where a run's `workloads:` leaves the workload out; empty: every point is in `points`, in that order
  /// (a grid made by hand).
  std::vector<std::size_t> point_index;
  static constexpr std::size_t kNoPoint = static_cast<std::size_t>(-1);

  /// The workload a grid point simulates (the prioritized variant for non-baseline runs).
  [[nodiscard]] const Workload& workload_of(const GridPoint& point) const;
};

/// Multiplies the GPU's context_switch drain, trap and setup cycles by `scale`, rounded to whole cycles.
void scale_preemption_latencies(GpuConfig& gpu, double scale);

/// Loads the GPU and the workloads (or generates the mixes) and lists every simulation. InputError
/// (naming the run's key) when a run asks for warp-level SMs the GPU file cannot build (no sm.warp
/// section) or whose kernels have no program, or names a warp scheduler while its SMs are TB level.
[[nodiscard]] ExpandedExperiment expand_experiment(const ExperimentConfig& config);

}  // namespace gpumux
