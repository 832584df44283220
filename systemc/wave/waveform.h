#pragma once
// The run's waveform (`--vcd FILE`): the scheduler's state and the blocks' activity as integer signals
// in a hierarchy that follows the block diagram, built from what the run recorded once it has ended
// (metrics/activity_log.h, the run's records): gpu.host, gpu.frontend (hardware queues), gpu.dispatcher,
// gpu.engine (running kernels, PTBQ), gpu.sm_NN (SMST entry, activity, kernel, thread blocks,
// preemptions; warps at the warp level) and gpu.mem (with memory.model dram also gpu.mem.dram.chNN:
// each channel's queue depth and each bank's state). Beside it: a GTKWave save file (FILE stem
// .gtkw) grouping the signals by block and decoding the enumerations through translate filter files,
// so `gtkwave FILE FILE.gtkw` opens a readable view. docs/user-guide.md "Debugging with waveforms".

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/command_dispatcher.h"
#include "metrics/activity_log.h"
#include "metrics/run_result.h"

namespace gpumux {

/// What an SM is doing (the `activity` signal), most specific first when several hold.
enum class SmActivity : std::uint8_t {
  kIdle = 0,
  kRunning = 1,        ///< thread blocks resident and running
  kRestoring = 2,      ///< only resumed thread blocks whose contexts are coming back (Tanasic 3.2)
  kSetup = 3,          ///< setting itself up for a new context after a preemption (3.1)
  kDraining = 4,       ///< preempted by draining: resident blocks finish, none issued (3.2)
  kPipelineDrain = 5,  ///< context switch, first step: the pipeline drains
  kTrap = 6,           ///< context switch: the trap routine
  kSaving = 7,         ///< context switch: the contexts are written to memory
};
const char* to_string(SmActivity activity);

/// The value the kernel signals show for "no kernel" (all ones in 32 bits).
constexpr std::uint64_t kNoKernelValue = 0xFFFFFFFFULL;

struct WaveformInput {
  const ActivityLog& log;
  const RunResult& result;
  const std::vector<CommandRecord>& commands;
  std::uint32_t num_sms = 0;
  std::uint32_t command_queues = 0;
  std::uint32_t active_kernels = 0;  ///< KSRT entries
  bool warp_level = false;
};

/// The translate filter files beside a waveform, one per enumeration it decodes.
struct WaveformFilters {
  std::string sm_activity;  ///< SmActivity
  std::string smst_state;   ///< SmState
  std::string kernel;       ///< launch index -> name#launch(process); "no kernel" -> "-"
  std::string tokens;       ///< the empty token entry -> "-"
  std::string issue_units;  ///< a bit per UnitKind -> alu+ldst, ...
  std::string ksrt_state;   ///< KsrtState
  std::string bank_state;   ///< a DRAM bank: closed, open, refresh
  [[nodiscard]] std::vector<std::string> all() const {
    return {sm_activity, smst_state, kernel, tokens, issue_units, ksrt_state, bank_state};
  }
};

/// The files `write_waveform` writes for `path`.
struct WaveformFiles {
  std::string wave;         ///< the VCD, or the FST converted from it
  std::string save;         ///< the GTKWave save file
  WaveformFilters filters;  ///< translate filter files
};

/// The file names for `path`: `path` itself for the waveform (FST when it ends in .fst), the save file
/// and filters beside it (stem.gtkw, stem.sm_activity.txt, ...).
[[nodiscard]] WaveformFiles waveform_files(const std::string& path);

/// Writes the waveform and its GTKWave files. An FST goes through the distribution's vcd2fst
/// (package gtkwave). Throws std::runtime_error when a file cannot be written or vcd2fst fails.
void write_waveform(const std::string& path, const WaveformInput& input, const std::string& version);

/// True when `path` asks for FST (it ends in .fst).
[[nodiscard]] bool wants_fst(const std::string& path);

}  // namespace gpumux
