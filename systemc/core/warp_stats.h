#pragma once
// Warp-level statistics of one SM (sm/warp/), plain data so metrics/ can carry them without SystemC.

#include <cstdint>

namespace gpumux {

/// Warp-level figures of one SM (all zero for the TB-level model).
struct WarpSmStats {
  std::uint64_t instructions = 0;      ///< warp instructions issued
  std::uint64_t cycles = 0;            ///< core cycles with at least one resident warp
  std::uint64_t scheduler_cycles = 0;  ///< issue slots offered (schedulers x busy issue cycles)
  std::uint64_t idle_memory = 0;       ///< issue slots lost: every warp waiting on memory
  std::uint64_t idle_barrier = 0;      ///< issue slots lost: warps waiting at a barrier (none on memory)
  std::uint64_t idle_no_warp = 0;      ///< issue slots lost: no warp resident on the scheduler
  std::uint64_t idle_other = 0;        ///< issue slots lost: operands or units not ready
  std::uint64_t alu_busy_cycles = 0;
  std::uint64_t memory_unit_busy_cycles = 0;
  std::uint64_t memory_requests = 0;
  /// Per-SM L1 (memory.l1), global loads' sectors: found valid, fetched, already being fetched.
  std::uint64_t l1_sector_hits = 0;
  std::uint64_t l1_sector_misses = 0;
  std::uint64_t l1_sector_merges = 0;
};

/// Warp instructions an SM issued by operation class (the power model's dynamic energy,
/// metrics/power_model.h). Kept apart from WarpSmStats so stats.json's `sms[].warp` is unchanged.
struct OpCounts {
  std::uint64_t alu = 0;
  std::uint64_t sfu = 0;
  std::uint64_t shared = 0;  ///< shared-memory loads and stores
  std::uint64_t global = 0;  ///< global loads and stores
};

}  // namespace gpumux
