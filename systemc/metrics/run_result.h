#pragma once
// What one simulation produces: per-process runs, per-launch kernel records, per-SM and memory
// statistics and invariant counters. Plain data with a JSON form, which is also how a forked
// simulation child returns its result to the parent (one process per simulation).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"

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
  std::uint32_t tbs_per_sm = 0;   ///< occupancy alone
  std::uint32_t preemptions = 0;  ///< times an SM running it was preempted
};

/// One preemption of an SM.
struct PreemptionTrace {
  std::uint32_t sm = 0;
  std::uint32_t kernel = 0;    ///< launch index of the kernel the SM was running
  std::uint8_t mechanism = 0;  ///< PreemptionMechanism
  TimePs requested_ps = 0;
  TimePs done_ps = 0;
  std::uint64_t bytes = 0;  ///< context saved
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
};

struct MemoryRecord {
  std::uint64_t bytes = 0;
  std::uint64_t transactions = 0;
  TimePs busy_ps = 0;
  std::uint64_t pcie_down_bytes = 0;
  std::uint64_t pcie_up_bytes = 0;
};

struct RunResult {
  std::string policy;
  std::uint64_t seed = 0;
  TimePs end_ps = 0;  ///< simulated time when the last process finished
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
  double wall_seconds = 0;  ///< host time; never written to stats.json (determinism)
};

void to_json(nlohmann::json& j, const RunResult& r);
void from_json(const nlohmann::json& j, RunResult& r);

/// Mean turnaround of a process's completed runs, in ps (0 when it has none).
[[nodiscard]] double mean_turnaround_ps(const ProcessResult& process);

}  // namespace gpumux
