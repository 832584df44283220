#pragma once
// A sectored set-associative cache: the tag and state model of one L2 slice or one SM's L1. Plain C++
// (no SystemC, no TLM): the SystemC wrapper owns time, the next level and the waiting requests; this
// class only answers "which sectors hit, which must be fetched, which are already on their way, and
// what must be written back", and keeps the statistics.
//
// State per line: a tag (the full line number, address / line_bytes, so a write-back address needs no
// reconstruction) and three sector masks: valid (data present), dirty (a subset of valid: written, not
// yet in the next level) and pending (fetched by an earlier load miss, data not yet delivered; disjoint
// from valid). A way is free when it has neither valid nor pending sectors.
//
// Replacement: LRU within a set, as GPGPU-Sim's caches with the 'L' replacement letter (e.g. the L2 of
// its QV100 config, `-gpgpu_cache:dl2 S:32:128:24,L:B:m:L:L`; tag_array::probe in
// src/gpgpu-sim/gpu-cache.cc). Every access that finds or allocates a line stamps it with a counter
// (hits, merges and stores alike); fill() does not, so a line's age counts from its last request.
// The victim is: the lowest-numbered free way; else the least recently used line without pending
// sectors (GPGPU-Sim's probe likewise never picks a RESERVED line, one awaiting its fill); else, when
// every way has pending sectors, the least recently used line anyway. GPGPU-Sim answers that last
// case with RESERVATION_FAIL and retries the access next cycle; this interface cannot stall, so the
// line is evicted, its pending sectors are forgotten (counted in Stats::pending_evictions) and the
// fill() that later arrives for it finds no line and is ignored (Stats::orphan_fills). The requests
// waiting for that fill are the caller's and still complete when it arrives; only the caching of the
// data is lost.
//
// Pending fills (MSHR merge: Kroft, "Lockup-free instruction fetch/prefetch cache organization",
// ISCA 1981; GPGPU-Sim's mshr_table): a load miss leaves its missed sectors pending until fill()
// delivers them, so a later load of a pending sector reports it in merged_sectors (wait for the
// outstanding fill) instead of miss_sectors (fetch again). fill() only
// validates sectors that are still pending: a store that overwrote a pending sector meanwhile holds
// newer data than the fill (write-back), or has made the fetched data stale (write-through), so the
// fill is dropped for that sector (Stats::stale_fill_sectors). Optionally the caller records when each
// pending sector's data will arrive (set_fill_time) so that merging requests can ask (fill_time_ps).
//
// Stores write whole sectors: byte masks are not modelled, so a partial-sector store to a write-back
// cache allocates the sector without fetching it (as GPGPU-Sim's lazy fetch-on-read 'L' write-allocate
// policy, which keeps a byte mask instead and fetches only if a later read needs the missing bytes).
//
// Determinism and cost: no randomness, and all state lives in flat vectors indexed by
// set * associativity + way allocated once at construction; an access or fill scans one set (O(ways))
// and allocates nothing. Only flush() and check_invariants() scan the whole cache, in index order.

#include <cstdint>
#include <functional>
#include <vector>

#include "core/types.h"
#include "mem/cache/cache_config.h"

namespace gpumux::cache {

/// The outcome of one access of one sector-aligned range inside one line.
struct AccessResult {
  /// Accessed sectors that were valid before the access.
  std::uint32_t hit_sectors = 0;
  /// Accessed sectors to fetch from the next level (loads only; 0 for stores). With
  /// allocate_on_load they are now pending in this cache and the caller calls fill() when they arrive.
  std::uint32_t miss_sectors = 0;
  /// Accessed sectors already being fetched for an earlier load (an outstanding miss on the same
  /// sector): the caller waits for that fill instead of fetching again (MSHR merge). Loads only.
  std::uint32_t merged_sectors = 0;
  /// A dirty line evicted to make room: its base address and dirty-sector mask (write-back), or
  /// writeback_mask 0 when nothing has to be written back (writeback_address is then 0).
  std::uint64_t writeback_address = 0;
  std::uint32_t writeback_mask = 0;
};

class SectorCache {
 public:
  struct Stats {
    /// Calls of access(): all, loads, stores.
    std::uint64_t accesses = 0;
    std::uint64_t load_accesses = 0;
    std::uint64_t store_accesses = 0;
    /// Accessed sectors by outcome, loads and stores together; they sum to the sectors accessed.
    /// sector_hits: valid. sector_merges: pending, loads only. sector_misses: the rest (for loads
    /// the sectors fetched; for stores every accessed sector that was not valid, pending or not).
    std::uint64_t sector_hits = 0;
    std::uint64_t sector_misses = 0;
    std::uint64_t sector_merges = 0;
    /// Dirty lines evicted to make room, and their dirty sectors (flush() is counted apart).
    std::uint64_t writebacks = 0;
    std::uint64_t writeback_sectors = 0;
    /// Lines evicted to make room, clean or dirty (write-through invalidations are not evictions).
    std::uint64_t evictions = 0;
    // Additions to the interface agreed with the wrapper:
    /// fill() calls whose line was no longer present (evicted while its sectors were pending).
    std::uint64_t orphan_fills = 0;
    /// Sectors a fill() delivered that were not pending: orphan fills, and sectors a store wrote or
    /// invalidated while their fetch was in flight.
    std::uint64_t stale_fill_sectors = 0;
    /// Sectors made valid by fill().
    std::uint64_t filled_sectors = 0;
    /// Evictions of a line that still had pending sectors (every way of its set had some).
    std::uint64_t pending_evictions = 0;
    /// Lines and sectors written back by flush().
    std::uint64_t flushed_lines = 0;
    std::uint64_t flushed_sectors = 0;
  };

  /// The state of one line as a debugging and test aid; all masks 0 when the line is not present.
  struct LineState {
    std::uint32_t valid = 0;
    std::uint32_t dirty = 0;
    std::uint32_t pending = 0;
  };

  /// Throws std::invalid_argument (naming the parameter) for a configuration validate() rejects.
  explicit SectorCache(const CacheConfig& config);

  /// One load or store of `bytes` bytes at byte address `address`; the range must stay inside one
  /// line (the caller splits requests at line boundaries) and bytes must be non-zero, else
  /// InvariantViolation. Every sector the range touches is accessed as a whole.
  /// is_write: a store. write_back: allocates (evicting if needed) and marks the sectors valid and
  /// dirty, hit or not. Write-through: never allocates; a present line's sectors are updated (or
  /// invalidated, write_through_invalidates). A store cancels the pending state of the sectors it writes.
  /// Load: valid sectors hit, pending sectors merge, the rest miss; with allocate_on_load the missed
  /// sectors become pending (allocating the line if needed) until fill() is called.
  AccessResult access(std::uint64_t address, std::uint32_t bytes, bool is_write);

  /// The next level delivered these sectors of the line holding `address` (any byte address in it):
  /// those still pending become valid. A line no longer present makes this a no-op (counted in
  /// Stats::orphan_fills), so calling fill() for every fetched miss is always safe. Bits beyond the
  /// line's sectors are an InvariantViolation.
  void fill(std::uint64_t address, std::uint32_t sector_mask);

  [[nodiscard]] std::uint64_t sets() const { return sets_; }
  [[nodiscard]] const Stats& stats() const { return stats_; }

  /// Calls f(line base address, dirty-sector mask) once per line holding dirty sectors, in set and way
  /// order, and cleans each line (its sectors stay valid). Counted in Stats::flushed_*, not in
  /// writebacks. f must not call back into this cache.
  void flush(const std::function<void(std::uint64_t, std::uint32_t)>& f);

  // Additions to the interface agreed with the wrapper.

  [[nodiscard]] const CacheConfig& config() const { return config_; }
  [[nodiscard]] std::uint32_t sectors_per_line() const { return sectors_per_line_; }
  /// Lines holding dirty sectors now (what a final flush would write back).
  [[nodiscard]] std::uint64_t dirty_lines() const { return dirty_lines_; }
  /// Dirty sectors now: what a final flush would write back, in sectors.
  [[nodiscard]] std::uint64_t dirty_sectors() const {
    std::uint64_t sectors = 0;
    for (const std::uint32_t mask : dirty_) sectors += static_cast<std::uint64_t>(__builtin_popcount(mask));
    return sectors;
  }
  /// Base address of the line holding `address`.
  [[nodiscard]] std::uint64_t line_address(std::uint64_t address) const {
    return address & ~std::uint64_t{line_offset_mask_};
  }
  /// The set `address` maps to: (address / line_bytes) modulo sets().
  [[nodiscard]] std::uint64_t set_index(std::uint64_t address) const {
    return set_of_line(address >> line_shift_);
  }
  /// Mask of the sectors that `bytes` bytes at `address` touch; InvariantViolation if the range is
  /// empty or leaves the line (the check access() makes).
  [[nodiscard]] std::uint32_t sector_mask(std::uint64_t address, std::uint32_t bytes) const;
  /// The line holding `address` as it is now (no LRU update, no statistics).
  [[nodiscard]] LineState line_state(std::uint64_t address) const;

  /// Records that the pending sectors in `sector_mask` of the line holding `address` will be delivered
  /// at `ready_ps` (the caller knows once it has issued the fetch). Sectors not pending are ignored.
  void set_fill_time(std::uint64_t address, std::uint32_t sector_mask, TimePs ready_ps);
  /// When the pending sectors among `sector_mask` will all have arrived: the latest recorded
  /// set_fill_time, kNever if one of them has none recorded yet, 0 if none of them is pending.
  [[nodiscard]] TimePs fill_time_ps(std::uint64_t address, std::uint32_t sector_mask) const;

  /// Checks every line (masks inside the line, dirty within valid, valid and pending disjoint, no
  /// dirty data in a write-through cache, tags in their own set and unique, the dirty-line count);
  /// throws InvariantViolation naming the set and way. O(lines): for tests and debug builds.
  void check_invariants() const;

 private:
  static constexpr std::size_t kNoWay = static_cast<std::size_t>(-1);

  [[nodiscard]] std::uint64_t set_of_line(std::uint64_t line) const {
    // A mask instead of a 64-bit division when the set count allows it; modulo otherwise (640 sets).
    return sets_are_power_of_two_ ? (line & (sets_ - 1)) : (line % sets_);
  }
  [[nodiscard]] bool present(std::size_t i) const { return (valid_[i] | pending_[i]) != 0; }
  /// Index of the way of `set` holding `line`, or kNoWay.
  [[nodiscard]] std::size_t find(std::uint64_t set, std::uint64_t line) const;
  /// Chooses a victim in `set` (see the file comment), evicts it (reporting a dirty victim in
  /// `result`) and claims the way for `line`; returns its index.
  std::size_t allocate(std::uint64_t set, std::uint64_t line, AccessResult& result);
  void touch(std::size_t i) { lru_[i] = ++clock_; }

  CacheConfig config_;
  std::uint64_t sets_ = 0;
  bool sets_are_power_of_two_ = false;
  std::uint32_t ways_ = 0;
  std::uint32_t line_shift_ = 0;
  std::uint32_t line_offset_mask_ = 0;
  std::uint32_t sector_shift_ = 0;
  std::uint32_t sectors_per_line_ = 0;
  std::uint32_t full_mask_ = 0;

  // One entry per way, index set * ways_ + way.
  std::vector<std::uint64_t> tags_;  // line number (address >> line_shift_)
  std::vector<std::uint32_t> valid_;
  std::vector<std::uint32_t> dirty_;
  std::vector<std::uint32_t> pending_;
  std::vector<std::uint64_t> lru_;  // clock_ at the last access; larger is more recent
  // One entry per sector, index (set * ways_ + way) * sectors_per_line_ + sector; read only for
  // pending sectors.
  std::vector<TimePs> fill_time_;

  std::uint64_t clock_ = 0;
  std::uint64_t dirty_lines_ = 0;
  Stats stats_;
};

}  // namespace gpumux::cache
