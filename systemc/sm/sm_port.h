#pragma once
// The SM as the SM driver sees it, at every fidelity level (TB-level today, warp-level later):
// resources to check, thread blocks to start, completions reported back. Plain C++ so the driver
// and policies can be unit-tested without SystemC.

#include <cstdint>
#include <vector>

#include "core/types.h"
#include "sm/occupancy.h"

namespace gpumux {

/// A thread block stopped by a context switch: what it still has to run.
struct PreemptedTb {
  KernelId kernel{};
  std::uint32_t tb = 0;
  TimePs remaining_ps = 0;
};

/// Receives thread-block completions and finished context saves from the SMs.
class TbCompletionListener {
 public:
  virtual ~TbCompletionListener() = default;
  virtual void on_tb_complete(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps) = 0;
  /// A context save started by SmPort::save_context() finished: every TB on the SM was stopped and
  /// its registers and shared memory (`bytes` in all) are in memory; the SM is empty.
  virtual void on_context_saved(SmId sm, const std::vector<PreemptedTb>& saved, std::uint64_t bytes) = 0;
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

class SmPort {
 public:
  virtual ~SmPort() = default;
  /// Would one more thread block with this footprint fit? `shared_memory_config` is the carve-out
  /// the kernel needs; an SM holding TBs keeps its carve-out until it empties.
  [[nodiscard]] virtual bool fits(const TbFootprint& footprint, std::uint32_t shared_memory_config) const = 0;
  /// Start a thread block now; it completes after `duration_ps` (TB-level model). A re-issued
  /// preempted TB first restores `restore_bytes` of context from memory.
  virtual void start_tb(KernelId kernel, std::uint32_t tb, const TbFootprint& footprint,
                        std::uint32_t shared_memory_config, TimePs duration_ps,
                        std::uint64_t restore_bytes) = 0;
  /// Context switch (Tanasic 3.2): stop every resident thread block now and save its context to
  /// memory; TbCompletionListener::on_context_saved reports the end. Resources stay held until then.
  virtual void save_context() = 0;
  [[nodiscard]] virtual const SmUsage& usage() const = 0;
};

}  // namespace gpumux
