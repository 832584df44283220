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

enum class CommandKind : std::uint8_t { kCpu, kHostToDevice, kDeviceToHost, kKernel };

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

}  // namespace gpumux
