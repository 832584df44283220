#pragma once
// The SM as the SM driver sees it, at every fidelity level (sm/tb/ thread-block level, sm/warp/
// warp level): resources to check, thread blocks to start, completions reported back. Plain C++ so the driver
// and policies can be unit-tested without SystemC.

#include <cstdint>
#include <vector>

#include "core/kernel_desc.h"
#include "core/types.h"
#include "sm/occupancy.h"

namespace gpumux {

/// Where one warp of a thread block stopped when a context switch saved it (warp-level SM): enough
/// to continue from the same instruction with the same loop counters once the context is restored.
struct WarpResume {
  std::uint32_t pc = 0;
  std::vector<std::uint32_t> loop_counters;  ///< per loop depth
  std::uint32_t barriers_passed = 0;
  bool done = false;
};

/// What a preempted thread block still has to run, as the SM model that saved it recorded it.
struct ResumeContext {
  TimePs remaining_ps = 0;        ///< TB-level: run time left
  std::vector<WarpResume> warps;  ///< warp-level: each warp's position (empty at TB level)
};

/// A thread block stopped by a context switch: what it still has to run.
struct PreemptedTb {
  KernelId kernel{};
  std::uint32_t tb = 0;
  ResumeContext resume;
  /// The stretch it was resident for (timeline): from its restore or first instruction (after the SM's
  /// setup) until the save stopped it; equal when it was stopped before it began.
  TimePs resident_ps = 0;
  TimePs stopped_ps = 0;
};

/// What the SM driver hands an SM to start one thread block. The SM decides how long it runs: the
/// TB-level SM draws a duration keyed by (seed, process, process_launch, tb), so the same thread
/// block runs equally long under every policy; the warp-level SM executes the kernel's program.
struct TbLaunch {
  KernelId kernel{};
  const KernelDesc* desc = nullptr;
  ProcessId process{};
  std::uint32_t process_launch = 0;  ///< the process's n-th kernel launch (0-based)
  std::uint32_t tb = 0;
  TbFootprint footprint{};
  std::uint32_t shared_memory_config = 0;
  bool resumed = false;  ///< a preempted TB re-issued: `resume` says where it stopped
  ResumeContext resume;
  std::uint64_t restore_bytes = 0;  ///< context read back from memory before it runs again
  /// The SM was preempted since its last thread block: setting it up for a kernel it is not set up for
  /// costs context_switch.setup_cycles (sm/sm_setup.h says why only then).
  bool after_preemption = false;
};

/// How a context save went (Tanasic 3.2): issue stopped at the request, the pipeline drained, the trap
/// routine ran, then the context was written. stats.json's preemption records show each part.
struct ContextSave {
  std::uint64_t bytes = 0;    ///< registers and shared memory of every saved thread block
  TimePs drain_ps = 0;        ///< request to drained pipeline (and to restores under way landing)
  TimePs trap_ps = 0;         ///< the trap routine's entry
  TimePs write_start_ps = 0;  ///< absolute time the context writes began
};

/// Receives thread-block completions and finished context saves from the SMs.
class TbCompletionListener {
 public:
  virtual ~TbCompletionListener() = default;
  virtual void on_tb_complete(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps) = 0;
  /// A context save started by SmPort::save_context() finished: every TB on the SM was stopped and
  /// its registers and shared memory (`save.bytes` in all) are in memory; the SM is empty.
  virtual void on_context_saved(SmId sm, const std::vector<PreemptedTb>& saved, const ContextSave& save) = 0;
  /// A resumed thread block's context is back on chip (`start_ps`: the restore began); for the
  /// timeline only, so listeners that do not draw one need not implement it.
  virtual void on_tb_restored(SmId /*sm*/, KernelId /*kernel*/, std::uint32_t /*tb*/, TimePs /*start_ps*/,
                              TimePs /*done_ps*/) {}
};

/// Resources in use on an SM (all zero when it is empty).
struct SmUsage {
  std::uint32_t thread_blocks = 0;
  std::uint32_t registers = 0;
  std::uint32_t shared_memory = 0;
  std::uint32_t threads = 0;
  std::uint32_t warps = 0;

  [[nodiscard]] bool empty() const {
    return thread_blocks == 0 && registers == 0 && shared_memory == 0 && threads == 0 && warps == 0;
  }
  /// Would one more thread block of footprint `f` fit beside what is in use, within `limits` and a
  /// shared-memory carve-out of `shared_memory_capacity` bytes?
  [[nodiscard]] bool fits(const SmResources& limits, const TbFootprint& f,
                          std::uint32_t shared_memory_capacity) const {
    return thread_blocks + 1 <= limits.max_thread_blocks && registers + f.registers <= limits.registers &&
           threads + f.threads <= limits.max_threads && warps + f.warps <= limits.max_warps &&
           shared_memory + f.shared_memory <= shared_memory_capacity;
  }
  /// fits() with the carve-out rule every SM model follows: an empty SM takes the kernel's carve-out
  /// `shared_memory_config`; one holding TBs keeps `current_capacity` until it empties.
  [[nodiscard]] bool admits(const SmResources& limits, const TbFootprint& f,
                            std::uint32_t shared_memory_config, std::uint32_t current_capacity) const {
    const std::uint32_t capacity = thread_blocks == 0 ? shared_memory_config : current_capacity;
    return shared_memory_config <= capacity && fits(limits, f, capacity);
  }
  void add(const TbFootprint& f) {
    thread_blocks += 1;
    registers += f.registers;
    shared_memory += f.shared_memory;
    threads += f.threads;
    warps += f.warps;
  }
  void remove(const TbFootprint& f) {
    thread_blocks -= 1;
    registers -= f.registers;
    shared_memory -= f.shared_memory;
    threads -= f.threads;
    warps -= f.warps;
  }
};

/// What Perf-Sat (Awatramani 4.3, engine/perf_sat.h) reads from an SM: counters since the SM was built,
/// up to now. The driver subtracts two readings to get one sample period's figures.
struct StallReading {
  /// The thesis's stalled cycles (4.3.1.3: scoreboard stalls plus pipeline stalls) as the warp-level SM
  /// counts them: issue slots lost with some warp waiting for a global load (idle_memory: memory
  /// scoreboard stalls) or for an ALU/SFU/shared result or a busy unit (idle_other: ALU scoreboard stalls
  /// and pipeline stalls). Slots with no warp or every warp at a barrier are the thesis's idle stalls.
  std::uint64_t stalled = 0;
  std::uint64_t instructions = 0;  ///< warp instructions issued
  std::uint64_t cycles = 0;        ///< core cycles with a resident warp
};

class SmPort {
 public:
  virtual ~SmPort() = default;
  /// Would one more thread block with this footprint fit? `shared_memory_config` is the carve-out
  /// the kernel needs; an SM holding TBs keeps its carve-out until it empties. Monotone: when a footprint
  /// and carve-out fit, so does any no larger in every field (the SM driver relies on it to tell that no
  /// kernel fits from the least of their needs, SmDriver::room_for_any_kernel).
  [[nodiscard]] virtual bool fits(const TbFootprint& footprint, std::uint32_t shared_memory_config) const = 0;
  /// Start a thread block now. After a preemption, an SM not set up for its kernel is set up first
  /// (GpuConfig context_switch.setup_cycles, sm/sm_setup.h). A re-issued preempted TB then restores
  /// `launch.restore_bytes` of context from memory, and continues from `launch.resume`. Returns how
  /// long the thread block waits for the setup (0 on an SM set up for its kernel).
  virtual TimePs start_tb(const TbLaunch& launch) = 0;
  /// Context switch (Tanasic 3.2): stop every resident thread block now and save its context to
  /// memory; TbCompletionListener::on_context_saved reports the end. Resources stay held until then.
  virtual void save_context() = 0;
  [[nodiscard]] virtual const SmUsage& usage() const = 0;
  /// Perf-Sat's reading (warp-level SMs; brings their counters up to now). The TB-level SM has no
  /// stalls to count: all zero (Perf-Sat refuses to run on it, config/gpu_loader.h).
  [[nodiscard]] virtual StallReading stall_reading() { return {}; }
};

}  // namespace gpumux
