// The sectored set-associative cache of the L2 slices and the optional L1 (mem/cache/sector_cache.h):
// sector granularity, MSHR merges of pending fills, LRU replacement that spares lines awaiting a fill,
// write-back and write-through stores, flush, set counts that are not powers of two (sets indexed
// modulo), and the errors for bad configurations and for accesses that leave their line.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/types.h"
#include "mem/cache/cache_config.h"
#include "mem/cache/sector_cache.h"

namespace gpumux::cache {
namespace {

constexpr std::uint32_t kLine = 128;
constexpr std::uint32_t kSector = 32;
constexpr std::uint32_t kAllSectors = 0xF;

/// 8 sets of 4 ways of 128 B lines with 32 B sectors: 4 KB.
CacheConfig small_config(bool write_back) {
  CacheConfig c;
  c.capacity_bytes = std::uint64_t{8} * 4 * kLine;
  c.associativity = 4;
  c.line_bytes = kLine;
  c.sector_bytes = kSector;
  c.write_back = write_back;
  return c;
}

/// Base address of the k-th distinct line that maps to set `set` of a cache with `sets` sets.
std::uint64_t line_in_set(std::uint64_t set, std::uint64_t k, std::uint64_t sets) {
  return (set + k * sets) * kLine;
}

/// A whole-line load that fills its misses at once; returns the result of the access.
AccessResult load_and_fill(SectorCache& cache, std::uint64_t address) {
  const AccessResult r = cache.access(address, kLine, false);
  cache.fill(address, r.miss_sectors);
  return r;
}

/// Loads every line of [0, bytes) in order, filling misses at once; returns the fraction of the
/// accessed sectors that hit.
double sequential_pass(SectorCache& cache, std::uint64_t bytes) {
  std::uint64_t hits = 0;
  std::uint64_t total = 0;
  for (std::uint64_t a = 0; a < bytes; a += kLine) {
    const AccessResult r = load_and_fill(cache, a);
    hits += static_cast<std::uint64_t>(__builtin_popcount(r.hit_sectors));
    total += kLine / kSector;
  }
  return static_cast<double>(hits) / static_cast<double>(total);
}

std::string config_error(const CacheConfig& config) {
  try {
    validate(config);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SectorCacheTest, ColdMissThenHit) {
  SectorCache cache(small_config(true));
  const AccessResult first = cache.access(0x1000, kLine, false);
  EXPECT_EQ(first.hit_sectors, 0U);
  EXPECT_EQ(first.miss_sectors, kAllSectors);
  EXPECT_EQ(first.merged_sectors, 0U);
  EXPECT_EQ(first.writeback_mask, 0U);
  EXPECT_EQ(cache.line_state(0x1000).pending, kAllSectors);
  cache.fill(0x1000, first.miss_sectors);

  const AccessResult second = cache.access(0x1000, kLine, false);
  EXPECT_EQ(second.hit_sectors, kAllSectors);
  EXPECT_EQ(second.miss_sectors, 0U);
  EXPECT_EQ(second.merged_sectors, 0U);

  const SectorCache::Stats& s = cache.stats();
  EXPECT_EQ(s.accesses, 2U);
  EXPECT_EQ(s.load_accesses, 2U);
  EXPECT_EQ(s.store_accesses, 0U);
  EXPECT_EQ(s.sector_misses, 4U);
  EXPECT_EQ(s.sector_hits, 4U);
  EXPECT_EQ(s.filled_sectors, 4U);
  EXPECT_EQ(s.evictions, 0U);
  cache.check_invariants();
}

TEST(SectorCacheTest, SectorGranularity) {
  SectorCache cache(small_config(true));
  const std::uint64_t base = 0x4000;
  // A 32 B load of sector 1 misses that sector only.
  const AccessResult a = cache.access(base + 32, 32, false);
  EXPECT_EQ(a.miss_sectors, 0b0010U);
  EXPECT_EQ(a.hit_sectors, 0U);
  cache.fill(base, a.miss_sectors);

  // Another sector of the same (now present) line misses alone; the line is not fetched whole.
  const AccessResult b = cache.access(base + 64, 32, false);
  EXPECT_EQ(b.miss_sectors, 0b0100U);
  EXPECT_EQ(b.hit_sectors, 0U);
  cache.fill(base, b.miss_sectors);

  // A load spanning sectors 1..2 hits both; one touching only bytes 24..63 covers sectors 0 and 1.
  EXPECT_EQ(cache.access(base + 32, 64, false).hit_sectors, 0b0110U);
  const AccessResult c = cache.access(base + 24, 40, false);
  EXPECT_EQ(c.hit_sectors, 0b0010U);
  EXPECT_EQ(c.miss_sectors, 0b0001U);
  // Ranges ending on a sector boundary touch no byte of the next sector; one byte over does.
  EXPECT_EQ(cache.sector_mask(base + 16, 16), 0b0001U);
  EXPECT_EQ(cache.sector_mask(base, 32), 0b0001U);
  EXPECT_EQ(cache.sector_mask(base + 31, 2), 0b0011U);
  EXPECT_EQ(cache.sector_mask(base + 96, 32), 0b1000U);
  EXPECT_EQ(cache.sector_mask(base, kLine), kAllSectors);
  // A 4 B load in the last sector.
  EXPECT_EQ(cache.sector_mask(base + 100, 4), 0b1000U);
  EXPECT_EQ(cache.access(base + 100, 4, false).miss_sectors, 0b1000U);
  EXPECT_EQ(cache.line_state(base).valid, 0b0110U);
  EXPECT_EQ(cache.line_state(base).pending, 0b1001U);
  EXPECT_EQ(cache.stats().sector_misses, 4U);
  EXPECT_EQ(cache.stats().sector_hits, 3U);
  cache.check_invariants();
}

TEST(SectorCacheTest, MshrMergeBeforeFill) {
  SectorCache cache(small_config(true));
  const AccessResult first = cache.access(0x2000, 32, false);
  ASSERT_EQ(first.miss_sectors, 0b0001U);

  // Same sector before the fill: wait for the outstanding fetch, do not fetch again.
  const AccessResult again = cache.access(0x2000, 32, false);
  EXPECT_EQ(again.miss_sectors, 0U);
  EXPECT_EQ(again.merged_sectors, 0b0001U);
  EXPECT_EQ(again.hit_sectors, 0U);

  // A whole-line load merges sector 0 and fetches the other three.
  const AccessResult whole = cache.access(0x2000, kLine, false);
  EXPECT_EQ(whole.merged_sectors, 0b0001U);
  EXPECT_EQ(whole.miss_sectors, 0b1110U);

  // The caller may record when each fetch arrives; merging requests ask for the latest.
  EXPECT_EQ(cache.fill_time_ps(0x2000, kAllSectors), kNever);  // not recorded yet
  cache.set_fill_time(0x2000, 0b0001, 5'000);
  cache.set_fill_time(0x2000, 0b1110, 7'000);
  EXPECT_EQ(cache.fill_time_ps(0x2000, 0b0001), 5'000U);
  EXPECT_EQ(cache.fill_time_ps(0x2000, kAllSectors), 7'000U);

  cache.fill(0x2000, 0b0001);
  const AccessResult after = cache.access(0x2000, kLine, false);
  EXPECT_EQ(after.hit_sectors, 0b0001U);
  EXPECT_EQ(after.merged_sectors, 0b1110U);
  EXPECT_EQ(after.miss_sectors, 0U);
  EXPECT_EQ(cache.fill_time_ps(0x2000, 0b0001), 0U);  // nothing pending any more
  cache.fill(0x2000, 0b1110);
  EXPECT_EQ(cache.access(0x2000, kLine, false).hit_sectors, kAllSectors);

  const SectorCache::Stats& s = cache.stats();
  EXPECT_EQ(s.sector_misses, 4U);  // each sector fetched once
  EXPECT_EQ(s.sector_merges, 1U + 1U + 3U);
  EXPECT_EQ(s.sector_hits, 1U + 4U);
  cache.check_invariants();
}

TEST(SectorCacheTest, LruEvictionOrderWithFourWays) {
  SectorCache cache(small_config(true));
  const std::uint64_t sets = cache.sets();
  ASSERT_EQ(sets, 8U);
  std::vector<std::uint64_t> line;  // A..G, all in set 3
  for (std::uint64_t k = 0; k < 7; ++k) line.push_back(line_in_set(3, k, sets));
  for (std::uint64_t k = 0; k < 4; ++k) load_and_fill(cache, line[k]);  // A B C D
  EXPECT_EQ(cache.stats().evictions, 0U);
  load_and_fill(cache, line[0]);  // A becomes the most recent: LRU order B C D A

  load_and_fill(cache, line[4]);  // E evicts B
  EXPECT_EQ(cache.line_state(line[1]).valid, 0U);
  EXPECT_EQ(cache.line_state(line[0]).valid, kAllSectors);
  EXPECT_EQ(cache.stats().evictions, 1U);

  load_and_fill(cache, line[5]);  // F evicts C
  EXPECT_EQ(cache.line_state(line[2]).valid, 0U);
  EXPECT_EQ(cache.line_state(line[3]).valid, kAllSectors);

  // B again misses (it was evicted) and evicts D, the oldest now; A, E, F stay.
  EXPECT_EQ(load_and_fill(cache, line[1]).miss_sectors, kAllSectors);
  EXPECT_EQ(cache.line_state(line[3]).valid, 0U);
  for (int k : {0, 4, 5, 1}) EXPECT_EQ(cache.line_state(line[k]).valid, kAllSectors) << k;
  EXPECT_EQ(cache.stats().evictions, 3U);
  // The other sets were never touched.
  EXPECT_EQ(cache.line_state(line_in_set(2, 0, sets)).valid, 0U);
  cache.check_invariants();
}

TEST(SectorCacheTest, LineAwaitingFillIsNotTheVictim) {
  SectorCache cache(small_config(true));
  const std::uint64_t sets = cache.sets();
  const std::uint64_t a = line_in_set(0, 0, sets);
  ASSERT_EQ(cache.access(a, kLine, false).miss_sectors, kAllSectors);  // A: oldest, still pending
  for (std::uint64_t k = 1; k < 4; ++k) load_and_fill(cache, line_in_set(0, k, sets));

  load_and_fill(cache, line_in_set(0, 4, sets));  // evicts B (LRU without pending), not A
  EXPECT_EQ(cache.line_state(a).pending, kAllSectors);
  EXPECT_EQ(cache.line_state(line_in_set(0, 1, sets)).valid, 0U);
  EXPECT_EQ(cache.stats().pending_evictions, 0U);
  cache.fill(a, kAllSectors);
  EXPECT_EQ(cache.line_state(a).valid, kAllSectors);
  EXPECT_EQ(cache.stats().orphan_fills, 0U);
  cache.check_invariants();
}

TEST(SectorCacheTest, EveryWayPendingEvictsLruAndItsFillIsIgnored) {
  SectorCache cache(small_config(true));
  const std::uint64_t sets = cache.sets();
  for (std::uint64_t k = 0; k < 4; ++k) cache.access(line_in_set(5, k, sets), 32, false);  // all pending

  const std::uint64_t a = line_in_set(5, 0, sets);
  const AccessResult e = cache.access(line_in_set(5, 4, sets), 32, false);
  EXPECT_EQ(e.miss_sectors, 0b0001U);
  EXPECT_EQ(cache.line_state(a).pending, 0U);  // the least recently used went
  EXPECT_EQ(cache.stats().pending_evictions, 1U);
  EXPECT_EQ(cache.stats().evictions, 1U);

  cache.fill(a, 0b0001);  // its fetch arrives later: safely ignored
  EXPECT_EQ(cache.stats().orphan_fills, 1U);
  EXPECT_EQ(cache.stats().stale_fill_sectors, 1U);
  EXPECT_EQ(cache.line_state(a).valid, 0U);
  EXPECT_EQ(cache.access(a, 32, false).miss_sectors, 0b0001U);  // and it misses again
  cache.check_invariants();
}

TEST(SectorCacheTest, WriteBackStoresDirtyAndEvictionsWriteBack) {
  SectorCache cache(small_config(true));
  const std::uint64_t sets = cache.sets();
  const std::uint64_t a = line_in_set(1, 0, sets);
  // Stores allocate without fetching (whole sectors) and mark only the written sectors dirty.
  const AccessResult s0 = cache.access(a, 32, true);
  EXPECT_EQ(s0.miss_sectors, 0U);
  EXPECT_EQ(s0.hit_sectors, 0U);
  cache.access(a + 64 + 8, 8, true);  // a partial sector counts as the whole sector 2
  EXPECT_EQ(cache.line_state(a).dirty, 0b0101U);
  EXPECT_EQ(cache.line_state(a).valid, 0b0101U);
  EXPECT_EQ(cache.line_state(a).pending, 0U);
  EXPECT_EQ(cache.access(a, 32, true).hit_sectors, 0b0001U);  // a store hit stays dirty
  EXPECT_EQ(cache.dirty_lines(), 1U);
  EXPECT_EQ(cache.access(a, kLine, false).hit_sectors, 0b0101U);  // stored data is readable
  cache.fill(a, 0b1010);

  for (std::uint64_t k = 1; k < 4; ++k) load_and_fill(cache, line_in_set(1, k, sets));  // clean B C D
  // A was touched last by the load above, before B C D: it is the LRU line.
  const AccessResult e = load_and_fill(cache, line_in_set(1, 4, sets));
  EXPECT_EQ(e.writeback_address, a);
  EXPECT_EQ(e.writeback_mask, 0b0101U);
  EXPECT_EQ(cache.stats().writebacks, 1U);
  EXPECT_EQ(cache.stats().writeback_sectors, 2U);
  EXPECT_EQ(cache.dirty_lines(), 0U);

  // Clean lines leave silently.
  const AccessResult f = load_and_fill(cache, line_in_set(1, 5, sets));
  EXPECT_EQ(f.writeback_mask, 0U);
  EXPECT_EQ(f.writeback_address, 0U);
  EXPECT_EQ(cache.stats().writebacks, 1U);
  EXPECT_EQ(cache.stats().evictions, 2U);
  cache.check_invariants();
}

TEST(SectorCacheTest, StoreOverPendingSectorWinsOverItsFill) {
  SectorCache cache(small_config(true));
  ASSERT_EQ(cache.access(0, kLine, false).miss_sectors, kAllSectors);
  cache.access(32, 32, true);  // sector 1 written while its fetch is in flight
  EXPECT_EQ(cache.line_state(0).dirty, 0b0010U);
  EXPECT_EQ(cache.line_state(0).pending, 0b1101U);
  cache.fill(0, kAllSectors);  // the fill must not overwrite the newer data
  EXPECT_EQ(cache.line_state(0).valid, kAllSectors);
  EXPECT_EQ(cache.line_state(0).dirty, 0b0010U);
  EXPECT_EQ(cache.stats().stale_fill_sectors, 1U);
  EXPECT_EQ(cache.stats().filled_sectors, 3U);
  cache.check_invariants();
}

TEST(SectorCacheTest, WriteThroughNeverAllocatesOnStores) {
  SectorCache cache(small_config(false));
  const std::uint64_t sets = cache.sets();
  const AccessResult s = cache.access(0x800, kLine, true);
  EXPECT_EQ(s.hit_sectors, 0U);
  EXPECT_EQ(s.miss_sectors, 0U);
  EXPECT_EQ(s.writeback_mask, 0U);
  EXPECT_EQ(cache.line_state(0x800).valid, 0U);
  EXPECT_EQ(cache.access(0x800, kLine, false).miss_sectors, kAllSectors);  // still not cached

  // A full set stays as it is when stores to other lines of it go through.
  for (std::uint64_t k = 0; k < 4; ++k) load_and_fill(cache, line_in_set(2, k, sets));
  for (std::uint64_t k = 4; k < 12; ++k) cache.access(line_in_set(2, k, sets), kLine, true);
  for (std::uint64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(cache.line_state(line_in_set(2, k, sets)).valid, kAllSectors);
  }
  EXPECT_EQ(cache.stats().evictions, 0U);

  // A store to a present line updates it in place: still valid, never dirty.
  const std::uint64_t a = line_in_set(2, 0, sets);
  EXPECT_EQ(cache.access(a, 32, true).hit_sectors, 0b0001U);
  EXPECT_EQ(cache.line_state(a).valid, kAllSectors);
  EXPECT_EQ(cache.line_state(a).dirty, 0U);
  EXPECT_EQ(cache.dirty_lines(), 0U);
  int flushed = 0;
  cache.flush([&](std::uint64_t, std::uint32_t) { ++flushed; });
  EXPECT_EQ(flushed, 0);
  cache.check_invariants();
}

TEST(SectorCacheTest, WriteThroughInvalidatingStoresDropSectors) {
  CacheConfig config = small_config(false);
  config.write_through_invalidates = true;
  SectorCache cache(config);
  load_and_fill(cache, 0);
  EXPECT_EQ(cache.access(32, 32, true).hit_sectors, 0b0010U);
  EXPECT_EQ(cache.line_state(0).valid, 0b1101U);
  EXPECT_EQ(cache.access(0, kLine, false).miss_sectors, 0b0010U);  // only the stored sector refetches
  cache.fill(0, 0b0010);
  cache.access(0, kLine, true);  // every sector: the way becomes free
  EXPECT_EQ(cache.line_state(0).valid, 0U);
  EXPECT_EQ(cache.stats().evictions, 0U);
  cache.check_invariants();
}

TEST(SectorCacheTest, NoAllocateOnLoadKeepsTheCacheUnchanged) {
  CacheConfig config = small_config(true);
  config.allocate_on_load = false;
  SectorCache cache(config);
  EXPECT_EQ(cache.access(0, kLine, false).miss_sectors, kAllSectors);
  EXPECT_EQ(cache.access(0, kLine, false).merged_sectors, 0U);  // nothing pending to merge with
  EXPECT_EQ(cache.line_state(0).pending, 0U);
  cache.access(0, 32, true);  // stores still allocate in a write-back cache
  EXPECT_EQ(cache.access(0, kLine, false).hit_sectors, 0b0001U);
  cache.check_invariants();
}

TEST(SectorCacheTest, StreamingBeyondCapacityMissesWhileHalfCapacityHits) {
  CacheConfig config = small_config(true);
  config.capacity_bytes = std::uint64_t{32} * 1024;  // 64 sets of 4 ways
  {
    SectorCache cache(config);
    sequential_pass(cache, 2 * config.capacity_bytes);
    // LRU and a cyclic footprint of twice the capacity: every line is evicted before its reuse.
    EXPECT_EQ(sequential_pass(cache, 2 * config.capacity_bytes), 0.0);
  }
  {
    SectorCache cache(config);
    EXPECT_EQ(sequential_pass(cache, config.capacity_bytes / 2), 0.0);
    EXPECT_EQ(sequential_pass(cache, config.capacity_bytes / 2), 1.0);
    EXPECT_EQ(cache.stats().evictions, 0U);
  }
  {
    // Exactly the capacity still fits: each set receives exactly `associativity` lines.
    SectorCache cache(config);
    sequential_pass(cache, config.capacity_bytes);
    EXPECT_EQ(sequential_pass(cache, config.capacity_bytes), 1.0);
  }
}

TEST(SectorCacheTest, SetCountsOfRealSlicings) {
  CacheConfig config;
  config.associativity = 16;
  config.line_bytes = kLine;
  config.sector_bytes = kSector;
  config.write_back = true;
  // 1.25 MB as one cache: 1310720 / (16 * 128) = 640 sets, not a power of two.
  config.capacity_bytes = 1310720;
  EXPECT_EQ(SectorCache(config).sets(), 640U);
  // Over 5 slices: 262144 B each, 128 sets per slice (640 in total).
  config.capacity_bytes = 1310720 / 5;
  EXPECT_EQ(SectorCache(config).sets(), 128U);
  // 768 KB as one cache: 786432 / 2048 = 384 sets; over 6 slices: 131072 B, 64 sets each.
  config.capacity_bytes = 786432;
  EXPECT_EQ(SectorCache(config).sets(), 384U);
  config.capacity_bytes = 786432 / 6;
  EXPECT_EQ(SectorCache(config).sets(), 64U);
  // 1.25 MB over 4 slices: 327680 B each, 160 sets (a slice need not have a power-of-two set count).
  config.capacity_bytes = 1310720 / 4;
  EXPECT_EQ(SectorCache(config).sets(), 160U);
}

/// Sets indexed modulo a count that is not a power of two: every set is used (a capacity-sized
/// footprint hits 100% on its second pass) and lines `sets` apart conflict.
void expect_modulo_sets(std::uint64_t capacity_bytes, std::uint64_t expected_sets) {
  CacheConfig config;
  config.capacity_bytes = capacity_bytes;
  config.associativity = 16;
  config.line_bytes = kLine;
  config.sector_bytes = kSector;
  config.write_back = true;
  SectorCache cache(config);
  ASSERT_EQ(cache.sets(), expected_sets);
  EXPECT_EQ(cache.set_index(expected_sets * kLine), 0U);
  EXPECT_EQ(cache.set_index((expected_sets + 7) * kLine + 5), 7U);

  sequential_pass(cache, capacity_bytes);
  EXPECT_EQ(sequential_pass(cache, capacity_bytes), 1.0);
  EXPECT_EQ(cache.stats().evictions, 0U);

  // 17 lines of one set: the 17th evicts the first.
  SectorCache conflict(config);
  for (std::uint64_t k = 0; k < 17; ++k) {
    load_and_fill(conflict, line_in_set(expected_sets - 1, k, expected_sets));
  }
  EXPECT_EQ(conflict.stats().evictions, 1U);
  EXPECT_EQ(conflict.line_state(line_in_set(expected_sets - 1, 0, expected_sets)).valid, 0U);
  EXPECT_EQ(conflict.line_state(line_in_set(expected_sets - 1, 1, expected_sets)).valid, kAllSectors);
  conflict.check_invariants();
}

TEST(SectorCacheTest, NonPowerOfTwoSetCount640) { expect_modulo_sets(1310720, 640); }
TEST(SectorCacheTest, NonPowerOfTwoSetCount384) { expect_modulo_sets(786432, 384); }

TEST(SectorCacheTest, InvalidConfigsThrowNamingTheParameter) {
  struct Case {
    const char* parameter;
    CacheConfig config;
  };
  std::vector<Case> cases;
  auto with = [](auto change) {
    CacheConfig c = small_config(true);
    change(c);
    return c;
  };
  cases.push_back({"capacity_bytes", with([](CacheConfig& c) { c.capacity_bytes = 0; })});
  cases.push_back({"capacity_bytes", with([](CacheConfig& c) { c.capacity_bytes = 4096 + 128; })});
  cases.push_back(
      {"capacity_bytes", with([](CacheConfig& c) { c.capacity_bytes = std::uint64_t{1} << 40; })});
  cases.push_back({"associativity", with([](CacheConfig& c) { c.associativity = 0; })});
  cases.push_back({"capacity_bytes", with([](CacheConfig& c) { c.associativity = 3; })});  // 4096 % 384
  cases.push_back({"line_bytes", with([](CacheConfig& c) { c.line_bytes = 0; })});
  cases.push_back({"line_bytes", with([](CacheConfig& c) { c.line_bytes = 96; })});
  cases.push_back({"sector_bytes", with([](CacheConfig& c) { c.sector_bytes = 0; })});
  cases.push_back({"sector_bytes", with([](CacheConfig& c) { c.sector_bytes = 24; })});
  cases.push_back({"sector_bytes", with([](CacheConfig& c) { c.sector_bytes = 256; })});
  cases.push_back({"sector_bytes", with([](CacheConfig& c) { c.sector_bytes = 2; })});  // 64 sectors
  for (const Case& c : cases) {
    const std::string message = config_error(c.config);
    EXPECT_NE(message.find(c.parameter), std::string::npos)
        << "expected " << c.parameter << ", got '" << message << "'";
    EXPECT_THROW(SectorCache{c.config}, std::invalid_argument) << c.parameter;
  }
  // The limits themselves are accepted: 32 sectors per line; not sectored; one set; direct mapped.
  EXPECT_EQ(config_error(with([](CacheConfig& c) { c.sector_bytes = 4; })), "");
  EXPECT_EQ(config_error(with([](CacheConfig& c) { c.sector_bytes = kLine; })), "");
  EXPECT_EQ(config_error(with([](CacheConfig& c) { c.associativity = 32; })), "");
  EXPECT_EQ(config_error(with([](CacheConfig& c) { c.associativity = 1; })), "");
}

TEST(SectorCacheTest, UnsectoredAndThirtyTwoSectorLines) {
  CacheConfig config = small_config(true);
  config.sector_bytes = kLine;  // one sector per line
  SectorCache whole(config);
  EXPECT_EQ(whole.access(0x40, 4, false).miss_sectors, 0b1U);
  config.sector_bytes = 4;  // 32 sectors per line: the full 32-bit mask
  SectorCache fine(config);
  EXPECT_EQ(fine.access(0, kLine, false).miss_sectors, 0xFFFFFFFFU);
  EXPECT_EQ(fine.access(124, 4, false).merged_sectors, 0x80000000U);
  fine.fill(0, 0xFFFFFFFFU);
  EXPECT_EQ(fine.line_state(0).valid, 0xFFFFFFFFU);
  fine.check_invariants();
}

TEST(SectorCacheTest, AccessCrossingALineThrows) {
  SectorCache cache(small_config(true));
  EXPECT_THROW(cache.access(120, 16, false), InvariantViolation);
  EXPECT_THROW(cache.access(kLine - 1, 2, true), InvariantViolation);
  EXPECT_THROW(cache.access(0x1000, 0, false), InvariantViolation);
  EXPECT_THROW(cache.access(0, kLine + 1, false), InvariantViolation);
  EXPECT_EQ(cache.stats().accesses, 0U);  // rejected accesses leave no trace
  EXPECT_EQ(cache.line_state(0).pending, 0U);
  EXPECT_NO_THROW(cache.access(kLine - 1, 1, false));
  EXPECT_NO_THROW(cache.access(std::uint64_t{1} << 50, kLine, false));
  EXPECT_THROW(cache.fill(0, 0x10), InvariantViolation);  // sector 4 of a 4-sector line
  try {
    cache.access(0x1078, 16, false);
    FAIL() << "no exception";
  } catch (const InvariantViolation& e) {
    EXPECT_NE(std::string(e.what()).find("0x1078"), std::string::npos) << e.what();
  }
}

TEST(SectorCacheTest, FlushVisitsEveryDirtyLineOnce) {
  SectorCache cache(small_config(true));
  const std::uint64_t sets = cache.sets();
  std::map<std::uint64_t, std::uint32_t> expected;
  for (std::uint64_t set = 0; set < sets; set += 2) {
    for (std::uint64_t k = 0; k < 3; ++k) {
      const std::uint64_t a = line_in_set(set, k, sets);
      cache.access(a + 32 * k, 32, true);
      cache.access(a + 96, 16, true);  // two stores to the same line
      expected[a] = (1U << k) | 0b1000U;
    }
    load_and_fill(cache, line_in_set(set, 3, sets));  // a clean line in the same set
  }
  EXPECT_EQ(cache.dirty_lines(), expected.size());

  std::map<std::uint64_t, std::uint32_t> seen;
  int calls = 0;
  cache.flush([&](std::uint64_t address, std::uint32_t mask) {
    ++calls;
    seen[address] |= mask;
  });
  EXPECT_EQ(calls, static_cast<int>(expected.size()));
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(cache.dirty_lines(), 0U);
  EXPECT_EQ(cache.stats().flushed_lines, expected.size());
  EXPECT_EQ(cache.stats().flushed_sectors, 2 * expected.size());
  EXPECT_EQ(cache.stats().writebacks, 0U);

  calls = 0;
  cache.flush([&](std::uint64_t, std::uint32_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  // Flushed lines stay valid and clean: evicting them now writes nothing back.
  const std::uint64_t a = line_in_set(0, 0, sets);
  EXPECT_EQ(cache.access(a, 32, false).hit_sectors, 0b0001U);
  for (std::uint64_t k = 4; k < 8; ++k) {
    EXPECT_EQ(load_and_fill(cache, line_in_set(0, k, sets)).writeback_mask, 0U);
  }
  cache.check_invariants();
}

/// A mixed random workload: the invariants hold after every step, the sector counts add up, and two
/// caches given the same requests agree exactly (no hidden nondeterminism).
TEST(SectorCacheTest, RandomMixIsConsistentAndDeterministic) {
  CacheConfig config = small_config(true);
  config.capacity_bytes = std::uint64_t{6} * 4 * kLine;  // 6 sets: modulo indexing
  SectorCache one(config);
  SectorCache two(config);
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;  // Knuth's MMIX LCG
    return state >> 33;
  };
  std::uint64_t sectors_accessed = 0;
  std::vector<std::uint64_t> outstanding;  // lines with fills not yet delivered
  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t line = next() % 64;
    const auto first = static_cast<std::uint32_t>(next() % 4);
    const auto length = static_cast<std::uint32_t>(1 + next() % (std::uint64_t{4 - first} * kSector));
    const std::uint64_t address = line * kLine + std::uint64_t{first} * kSector;
    const bool is_write = next() % 4 == 0;
    const AccessResult r1 = one.access(address, length, is_write);
    const AccessResult r2 = two.access(address, length, is_write);
    ASSERT_EQ(r1.hit_sectors, r2.hit_sectors);
    ASSERT_EQ(r1.miss_sectors, r2.miss_sectors);
    ASSERT_EQ(r1.merged_sectors, r2.merged_sectors);
    ASSERT_EQ(r1.writeback_address, r2.writeback_address);
    ASSERT_EQ(r1.writeback_mask, r2.writeback_mask);
    ASSERT_EQ(r1.hit_sectors & (r1.miss_sectors | r1.merged_sectors), 0U);
    sectors_accessed += static_cast<std::uint64_t>(__builtin_popcount(one.sector_mask(address, length)));
    if (r1.miss_sectors != 0) outstanding.push_back(address);
    if (!outstanding.empty() && next() % 3 == 0) {
      const std::uint64_t a = outstanding[next() % outstanding.size()];
      one.fill(a, 0xF);
      two.fill(a, 0xF);
    }
    if (step % 97 == 0) {
      ASSERT_NO_THROW(one.check_invariants()) << step;
    }
  }
  const SectorCache::Stats& s = one.stats();
  EXPECT_EQ(s.sector_hits + s.sector_misses + s.sector_merges, sectors_accessed);
  EXPECT_EQ(s.accesses, s.load_accesses + s.store_accesses);
  EXPECT_LE(s.writebacks, s.evictions);
  EXPECT_GT(s.sector_hits, 0U);
  EXPECT_GT(s.sector_merges, 0U);
  EXPECT_GT(s.writebacks, 0U);
  EXPECT_EQ(s.writebacks, two.stats().writebacks);
  EXPECT_EQ(s.evictions, two.stats().evictions);
  EXPECT_EQ(s.orphan_fills, two.stats().orphan_fills);
  one.check_invariants();
}

}  // namespace
}  // namespace gpumux::cache
