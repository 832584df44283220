#pragma once
// A multiprogrammed workload: processes (GPU contexts), each a set of streams of commands.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/kernel_desc.h"
#include "core/types.h"

namespace gpumux {

/// kSync: the host waits until every command its stream submitted has completed
/// (cudaStreamSynchronize); only meaningful with asynchronous kernel launches.
/// kJoin: every stream of the process waits here until all its streams have reached their matching
/// join with nothing outstanding (a host that drives the streams from one thread and calls
/// cudaDeviceSynchronize); every stream of a process has the same number of joins.
enum class CommandKind : std::uint8_t { kCpu, kHostToDevice, kDeviceToHost, kKernel, kSync, kJoin };

const char* to_string(CommandKind kind);

/// One entry of a stream as written in the workload file.
struct CommandSpec {
  CommandKind kind = CommandKind::kCpu;
  TimePs cpu_ps = 0;                         ///< kCpu: host computation time
  std::uint64_t bytes = 0;                   ///< kHostToDevice / kDeviceToHost
  std::shared_ptr<const KernelDesc> kernel;  ///< kKernel
  std::uint32_t launches = 1;                ///< kKernel: back-to-back launches
  SourceLocation where;
};

struct StreamSpec {
  std::vector<CommandSpec> commands;
};

struct ProcessSpec {
  std::string name;
  int priority = 0;           ///< higher is more important
  std::optional<int> tokens;  ///< DSS token budget (OS priority); default is equal sharing
  TimePs arrival_ps = 0;
  std::uint32_t repeat = 1;  ///< number of runs (executions from first to last command)
  std::vector<StreamSpec> streams;
  SourceLocation where;
};

/// fixed: each process runs exactly `repeat` times. until_all_done: processes keep replaying
/// until every process has completed `repeat` runs (Tanasic 4.1); in-flight runs then finish.
enum class ReplayMode : std::uint8_t { kFixed, kUntilAllDone };

/// How the host submits kernel launches (workload key `kernel_launch`).
///  - kSynchronous: a stream waits for each kernel command (all its launches) to complete before it
///    moves on, as if every launch were followed by a synchronisation.
///  - kAsynchronous: as CUDA launches kernels (Tanasic 2.1: commands are sent to the GPU "as soon as
///    possible"): the stream moves on once the launch is in a hardware queue (blocking only while that
///    queue is full). Copies stay synchronous (cudaMemcpy: the host waits for the copy, which its
///    queue runs after the stream's earlier kernels), a `sync` step waits for everything the stream
///    submitted, and a stream's end waits for its last commands.
enum class KernelLaunchMode : std::uint8_t { kSynchronous, kAsynchronous };

const char* to_string(KernelLaunchMode mode);

/// Which TB-duration model the SMs use.
enum class TbDurationMode : std::uint8_t {
  kProfile,  ///< seeded lognormal draw with the kernel's mean and %RSD
  kFixed,    ///< always the mean (staircase validation, Pai Eq. 1)
};

struct Workload {
  std::string name;
  std::string source_file;
  std::vector<std::string> kernel_libraries;  ///< resolved paths
  std::vector<ProcessSpec> processes;
  ReplayMode replay = ReplayMode::kFixed;
  /// until_all_done: no process starts more than this many runs. Guarantees the run ends when a
  /// policy starves a process (e.g. exclusive priority) while the others keep replaying.
  std::uint32_t replay_limit = 100;
  TbDurationMode tb_duration = TbDurationMode::kProfile;
  KernelLaunchMode kernel_launch = KernelLaunchMode::kSynchronous;
  /// Set by `tb_rsd_percent`: every kernel's thread-block times use this %RSD instead of its
  /// profile's (a sensitivity study of thread-block time spread, without editing kernel libraries).
  std::optional<double> tb_rsd_percent;
  /// `gpus:`: names of the GPUs (their files' `name:`) the workload is meant for; empty: every GPU.
  /// Not part of what is simulated: it selects where the shipped-config test loads the workload and
  /// makes gpumux run warn on another GPU (docs/config.md "Which GPUs a workload is for").
  std::vector<std::string> gpus;
  SourceLocation gpus_where;
};

/// Give every kernel the workload launches a thread-block time spread of `rsd_percent` (its mean
/// is kept) and record it in `workload.tb_rsd_percent`. Kernels are copied, never modified in
/// place: libraries and other workloads may share them.
void override_tb_rsd(Workload& workload, double rsd_percent);

/// Deal each process's kernels over `streams` streams, as if its consecutive kernels were independent
/// (a sensitivity study of streams per application; experiment key `streams_per_application`). One
/// rule for every process: the kernel commands of each run of consecutive kernel commands go to
/// streams 0, 1, ..., streams-1, 0, ... in order (a command's launches stay together: they are one
/// kernel's back-to-back iterations); every other command (CPU phase, copy, sync) stays in stream 0;
/// a join before and after each run of kernels keeps the runs ordered against the copies and CPU
/// phases around them. Every process must have exactly one stream; `streams` is at least 2.
/// Returns the name of the first process that has more than one stream (nothing changed), or "".
[[nodiscard]] std::string split_kernels_over_streams(Workload& workload, std::uint32_t streams);

}  // namespace gpumux
