#pragma once
// The shape and policies of one sectored set-associative cache: one L2 slice (the caller splits the
// GPU's total L2 over its slices) or one SM's L1. Plain C++ (no SystemC) so the cache model and its
// unit tests build without the simulation kernel.
//
// Sectors: NVIDIA's L1 and L2 lines are 128 B made of four 32 B sectors, and a sector is the unit
// that is valid and moved (Nsight Compute Kernel Profiling Guide, "Memory Tables": a sector is an
// "aligned 32 byte-chunk of memory in a cache line or device memory"; "an L1 or L2 cache line is four
// sectors"). GPGPU-Sim 4.x / Accel-Sim model this as a sector cache (config letter S, e.g.
// `-gpgpu_cache:dl2 S:32:128:24,L:B:m:L:L` in gpgpu-sim_distribution
// configs/tested-cfgs/SM7_QV100/gpgpusim.config).

#include <cstdint>

namespace gpumux::cache {

/// A sector mask is a std::uint32_t (bit i: sector i of the line), so a line holds at most 32 sectors.
inline constexpr std::uint32_t kMaxSectorsPerLine = 32;
/// Upper bound on capacity_bytes / line_bytes. Not an architectural limit: a guard so that a typo in a
/// config (an extra zero or two) fails with a message naming the parameter instead of allocating
/// gigabytes of tag state. 2^24 lines of 128 B are 2 GB, 40 times an H100's 50 MB L2.
inline constexpr std::uint64_t kMaxCacheLines = std::uint64_t{1} << 24;

struct CacheConfig {
  /// Capacity of THIS cache in bytes (one L2 slice, not the whole L2).
  std::uint64_t capacity_bytes = 0;
  /// Ways per set.
  std::uint32_t associativity = 0;
  /// Bytes per line (the tag granularity), e.g. 128. A power of two.
  std::uint32_t line_bytes = 0;
  /// Bytes per sector (the valid/dirty and transfer granularity), e.g. 32; == line_bytes: not
  /// sectored. A power of two dividing line_bytes, at most kMaxSectorsPerLine sectors per line.
  std::uint32_t sector_bytes = 0;
  /// true: write-back, write-allocate without fetch (a store writes whole sectors, marks them valid and
  /// dirty; evicting a dirty line writes its dirty sectors back). GPGPU-Sim's L2 'B' write policy with
  /// the 'L' (lazy fetch-on-read) write-allocate policy, which also allocates without fetching.
  /// false: write-through, no allocate on store (L1 style): the store goes on to the next level and
  /// only a line already present is touched (see write_through_invalidates).
  bool write_back = false;
  /// Load misses allocate a line (GPGPU-Sim 'm', allocate on miss) whose missed sectors wait in the
  /// pending-fill state. false: loads never change the contents (no line, no pending sectors).
  bool allocate_on_load = true;
  /// Write-through only: what a store does to the accessed sectors of a line that is present.
  /// false (default): they are updated in place and stay valid (GPGPU-Sim's write-through hit,
  /// data_cache::wr_hit_wt, which keeps the block and updates its LRU stamp). true: they are
  /// invalidated (GPGPU-Sim's write-evict, data_cache::wr_hit_we; Fermi-style L1 for global stores).
  bool write_through_invalidates = false;
};

/// Checks `config`; throws std::invalid_argument naming the offending parameter. Requirements: every
/// size non-zero; line_bytes and sector_bytes powers of two (the line offset and the sector index are
/// bit fields); sector_bytes <= line_bytes and line_bytes / sector_bytes <= kMaxSectorsPerLine;
/// capacity_bytes a multiple of associativity * line_bytes (whole sets) and at most kMaxCacheLines
/// lines. The number of sets need NOT be a power of two (sets are indexed modulo their count).
void validate(const CacheConfig& config);

}  // namespace gpumux::cache
