#pragma once
// The SM as the SM driver sees it, at every fidelity level (TB-level today, warp-level later):
// resources to check, thread blocks to start, completions reported back. Plain C++ so the driver
// and policies can be unit-tested without SystemC.

#include <cstdint>

#include "core/types.h"
#include "sm/occupancy.h"

namespace gpumux {

/// Receives thread-block completions from the SMs.
class TbCompletionListener {
 public:
  virtual ~TbCompletionListener() = default;
  virtual void on_tb_complete(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps) = 0;
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
};

class SmPort {
 public:
  virtual ~SmPort() = default;
  /// Would one more thread block with this footprint fit? `shared_memory_config` is the carve-out
  /// the kernel needs; an SM holding TBs keeps its carve-out until it empties.
  [[nodiscard]] virtual bool fits(const TbFootprint& footprint, std::uint32_t shared_memory_config) const = 0;
  /// Start a thread block now; it completes after `duration_ps` (TB-level model).
  virtual void start_tb(KernelId kernel, std::uint32_t tb, const TbFootprint& footprint,
                        std::uint32_t shared_memory_config, TimePs duration_ps) = 0;
  [[nodiscard]] virtual const SmUsage& usage() const = 0;
};

}  // namespace gpumux
