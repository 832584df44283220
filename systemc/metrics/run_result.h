#pragma once
// What one simulation produces: per-process runs, per-launch kernel records, per-SM and memory
// statistics and invariant counters. Plain data with a JSON form, which is also how a forked
// simulation child returns its result to the parent (one process per simulation).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/active_core_record.h"
#include "core/field_count.h"
#include "core/types.h"
#include "core/warp_stats.h"
#include "metrics/power_model.h"

namespace gpumux {

struct ProcessRun {
  TimePs start_ps = 0;
  TimePs end_ps = 0;
};

struct ProcessResult {
  std::string name;
  std::vector<ProcessRun> runs;
};

struct KernelRecord {
  std::string name;
  std::uint32_t process = 0;
  TimePs launch_ps = 0;  ///< entered the hardware queue
  TimePs start_ps = 0;   ///< first thread block issued
  TimePs end_ps = 0;     ///< last thread block completed
  std::uint32_t thread_blocks = 0;
  std::uint32_t tbs_per_sm = 0;    ///< occupancy alone
  std::uint32_t preemptions = 0;   ///< times an SM running it was preempted
  std::uint64_t instructions = 0;  ///< warp instructions issued (warp-level SMs; 0 at TB level)
  /// Sum of its completed thread blocks' run times (mean thread-block latency: / thread_blocks). Not in
  /// stats.json; `gpumux profile` reads it (Liang 3.2).
  TimePs tb_time_ps = 0;
};

/// One preemption of an SM.
struct PreemptionTrace {
  std::uint32_t sm = 0;
  std::uint32_t kernel = 0;    ///< launch index of the kernel the SM was running
  std::uint8_t mechanism = 0;  ///< PreemptionMechanism
  TimePs requested_ps = 0;
  TimePs done_ps = 0;
  std::uint64_t bytes = 0;   ///< context saved
  TimePs drain_ps = 0;       ///< context switch: pipeline drain (Tanasic 3.2)
  TimePs trap_ps = 0;        ///< context switch: trap routine entry
  TimePs save_start_ps = 0;  ///< context switch: first context write (0 for draining)
  TimePs setup_ps = 0;       ///< the SM's setup before its next thread block
};

/// One GPU command's passage: queued in its hardware queue, issued by the dispatcher, completed.
struct CommandTrace {
  std::uint8_t kind = 0;  ///< CommandKind
  std::uint32_t process = 0;
  std::uint32_t stream = 0;
  std::uint32_t queue = 0;
  std::uint64_t bytes = 0;
  TimePs queued_ps = 0;
  TimePs issued_ps = 0;
  TimePs done_ps = 0;
};

struct SmRecord {
  std::uint32_t id = 0;
  TimePs busy_ps = 0;
  std::uint64_t thread_blocks = 0;
  WarpSmStats warp;          ///< warp-level SMs only (zero at TB level)
  std::uint64_t setups = 0;  ///< times the SM was set up for a kernel (sm/sm_setup.h)
  TimePs setup_ps = 0;       ///< thread blocks' waits for those setups
};

// nlohmann::json's destructor may allocate (its iterative teardown), so the implicit noexcept members
// of the two records holding one "may throw"; an allocation failure there ends the run either way.
struct MemoryRecord {  // NOLINT(bugprone-exception-escape)
  std::uint64_t bytes = 0;
  std::uint64_t transactions = 0;
  TimePs busy_ps = 0;
  std::uint64_t pcie_down_bytes = 0;
  std::uint64_t pcie_up_bytes = 0;
  /// The dram model's statistics (mem/dram_memory_system.h), null for the simple model.
  nlohmann::json dram;
  /// TB-level memory interference (sm/tb/bandwidth_penalty.h): time oversubscribed, work lost; null when off.
  nlohmann::json tb_interference;
};

/// One Perf-Sat sample period of one SM (Awatramani 4.3.2.2; engine/sm_driver.h PerfSatSample).
struct PerfSatSampleTrace {
  TimePs end_ps = 0;
  std::uint32_t blocks = 0;        ///< the thread-block limit during the period
  std::uint64_t stalled = 0;       ///< stalled cycles read over it
  std::uint64_t instructions = 0;  ///< warp instructions issued over it
  std::uint64_t cycles = 0;        ///< core cycles with a resident warp
  std::uint32_t next = 0;          ///< the limit after it
  std::string state;               ///< Fig. 4.4's state after it (engine/perf_sat.h to_string)
};

/// Perf-Sat on one SM for one kernel launch (engine/sm_driver.h PerfSatRecord).
struct PerfSatTrace {
  std::uint32_t sm = 0;
  std::uint32_t launch = 0;  ///< index into RunResult::kernels
  std::uint32_t n_max = 0;
  std::uint32_t start = 0;
  TimePs bound_ps = 0;   ///< the kernel's first thread block on the SM
  TimePs period_ps = 0;  ///< the sample period (0: the kernel finished before it was known)
  std::uint32_t detected = 0;
  bool settled = false;
  TimePs settled_ps = 0;
  std::string settled_by;
  std::vector<PerfSatSampleTrace> samples;
};

/// A run's Perf-Sat (present only when `perf_sat.enabled`): the settings it ran with and every record.
struct PerfSatResult {
  std::uint32_t sample_period_cycles = 0;  ///< as configured (0: the thesis's rule)
  std::uint32_t max_toggles = 0;
  std::vector<PerfSatTrace> records;  ///< in the order the kernels were bound to SMs
};

struct RunResult {  // NOLINT(bugprone-exception-escape): holds a MemoryRecord (above)
  std::string policy;
  std::string copy_policy;  ///< the DMA engines' copy policy: "fcfs" or "npq" (frontend/copy_policy.h)
  std::uint64_t seed = 0;
  std::string sm_model;        ///< "tb" or "warp"
  std::string warp_scheduler;  ///< warp level: the warp scheduler; empty at TB level
  TimePs end_ps = 0;           ///< simulated time when the last process finished
  std::uint64_t tbs_issued = 0;
  std::uint64_t tbs_completed = 0;
  std::uint64_t commands_completed = 0;
  std::uint64_t tbs_reissued = 0;  ///< preempted thread blocks issued again (context switch)
  std::vector<PreemptionTrace> preemptions;
  std::vector<ProcessResult> processes;
  std::vector<KernelRecord> kernels;
  std::vector<CommandTrace> commands;  ///< copies and kernel launches, in completion order
  std::vector<SmRecord> sms;
  MemoryRecord memory;
  /// Perf-Sat (Awatramani 4.3): per SM its detections and samples; absent (JSON null) when off.
  std::optional<PerfSatResult> perf_sat;
  /// Active-core detection (Awatramani 4.4): one record per kernel it ran for; empty when off.
  std::vector<ActiveCoreRecord> active_cores;
  /// The power model (metrics/power_model.h); enabled false when off.
  PowerReport power;
  double wall_seconds = 0;  ///< host time; never written to stats.json (determinism)
};

// Every record is serialised by field name (nlohmann's type macros): a field added to a struct and to
// its macro line cannot shift another field's value, and a record missing a field is rejected by
// from_json (json::at) instead of being read as a default. This form travels from a simulation
// child to its parent and is what the isolated-baseline cache stores; stats.json is written from it
// by metrics/stats_writer.cpp. Each macro line names every field of its struct; the static_asserts
// beside them fail to compile when a field is added to a struct and not to its line.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProcessRun, start_ps, end_ps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProcessResult, name, runs)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(KernelRecord, name, process, launch_ps, start_ps, end_ps, thread_blocks,
                                   tbs_per_sm, preemptions, instructions, tb_time_ps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PreemptionTrace, sm, kernel, mechanism, requested_ps, done_ps, bytes,
                                   drain_ps, trap_ps, save_start_ps, setup_ps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CommandTrace, kind, process, stream, queue, bytes, queued_ps, issued_ps,
                                   done_ps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WarpSmStats, instructions, cycles, scheduler_cycles, idle_memory,
                                   idle_barrier, idle_no_warp, idle_other, alu_busy_cycles,
                                   memory_unit_busy_cycles, memory_requests, l1_sector_hits, l1_sector_misses,
                                   l1_sector_merges)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SmRecord, id, busy_ps, thread_blocks, warp, setups, setup_ps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ActiveCoreSample, active_cores, start_ps, end_ps, instructions,
                                   thread_blocks, ipc)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ActiveCoreRecord, launch, detector, cores, start_ps, detected, detected_ps,
                                   n_opt, ended_by, samples)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SmEnergy, sm, gated_ns, static_j, dynamic_j, total_j)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PowerReport, enabled, time_ns, core_static_j, uncore_static_j, static_j,
                                   sm_dynamic_j, dram_j, dynamic_j, total_j, average_w, sms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MemoryRecord, bytes, transactions, busy_ps, pcie_down_bytes, pcie_up_bytes,
                                   dram, tb_interference)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PerfSatSampleTrace, end_ps, blocks, stalled, instructions, cycles, next,
                                   state)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PerfSatTrace, sm, launch, n_max, start, bound_ps, period_ps, detected,
                                   settled, settled_ps, settled_by, samples)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PerfSatResult, sample_period_cycles, max_toggles, records)
static_assert(field_count<ProcessRun>() == 2, "ProcessRun changed: update its JSON line");
static_assert(field_count<ProcessResult>() == 2, "ProcessResult changed: update its JSON line");
static_assert(field_count<KernelRecord>() == 10, "KernelRecord changed: update its JSON line");
static_assert(field_count<PreemptionTrace>() == 10, "PreemptionTrace changed: update its JSON line");
static_assert(field_count<CommandTrace>() == 8, "CommandTrace changed: update its JSON line");
static_assert(field_count<WarpSmStats>() == 13, "WarpSmStats changed: update its JSON line");
static_assert(field_count<SmRecord>() == 6, "SmRecord changed: update its JSON line");
static_assert(field_count<MemoryRecord>() == 7, "MemoryRecord changed: update its JSON line");
static_assert(field_count<PerfSatSampleTrace>() == 7, "PerfSatSampleTrace changed: update its JSON line");
static_assert(field_count<PerfSatTrace>() == 11, "PerfSatTrace changed: update its JSON line");
static_assert(field_count<PerfSatResult>() == 3, "PerfSatResult changed: update its JSON line");
static_assert(field_count<ActiveCoreSample>() == 6, "ActiveCoreSample changed: update its JSON line");
static_assert(field_count<ActiveCoreRecord>() == 9, "ActiveCoreRecord changed: update its JSON line");
static_assert(field_count<SmEnergy>() == 5, "SmEnergy changed: update its JSON line");
static_assert(field_count<PowerReport>() == 11, "PowerReport changed: update its JSON line");
static_assert(field_count<RunResult>() == 20, "RunResult changed: update to_json/from_json (run_result.cpp)");

/// Version of the RunResult JSON form (the child-to-parent transport and the baseline cache); from_json
/// refuses any other version. Raise it whenever a field is added, removed or changes meaning.
inline constexpr int kRunResultSchemaVersion = 7;

void to_json(nlohmann::json& j, const RunResult& r);
void from_json(const nlohmann::json& j, RunResult& r);

/// Mean turnaround of a process's completed runs, in ps (0 when it has none).
[[nodiscard]] double mean_turnaround_ps(const ProcessResult& process);

}  // namespace gpumux
