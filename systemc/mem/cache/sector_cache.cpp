#include "mem/cache/sector_cache.h"

#include <algorithm>
#include <bitset>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/error.h"

namespace gpumux::cache {
namespace {

bool is_power_of_two(std::uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

std::uint32_t log2_exact(std::uint64_t x) {
  std::uint32_t shift = 0;
  while ((std::uint64_t{1} << shift) < x) ++shift;
  return shift;
}

std::uint64_t count(std::uint32_t mask) { return std::bitset<32>(mask).count(); }

/// Bits first..last (inclusive), both < 32.
std::uint32_t bit_range(std::uint32_t first, std::uint32_t last) {
  const std::uint64_t upto_last = (std::uint64_t{1} << (last + 1)) - 1;
  const std::uint64_t below_first = (std::uint64_t{1} << first) - 1;
  return static_cast<std::uint32_t>(upto_last & ~below_first);
}

std::string hex(std::uint64_t x) {
  std::ostringstream out;
  out << "0x" << std::hex << x;
  return out.str();
}

[[noreturn]] void bad_config(const std::string& parameter, const std::string& message) {
  throw std::invalid_argument("cache config: " + parameter + " " + message);
}

}  // namespace

void validate(const CacheConfig& config) {
  if (config.capacity_bytes == 0) bad_config("capacity_bytes", "must be non-zero");
  if (config.associativity == 0) bad_config("associativity", "must be non-zero");
  if (!is_power_of_two(config.line_bytes)) {
    bad_config("line_bytes", "(" + std::to_string(config.line_bytes) + ") must be a power of two");
  }
  if (!is_power_of_two(config.sector_bytes)) {
    bad_config("sector_bytes", "(" + std::to_string(config.sector_bytes) + ") must be a power of two");
  }
  if (config.sector_bytes > config.line_bytes) {
    bad_config("sector_bytes", "(" + std::to_string(config.sector_bytes) + ") must not exceed line_bytes (" +
                                   std::to_string(config.line_bytes) + ")");
  }
  if (config.line_bytes / config.sector_bytes > kMaxSectorsPerLine) {
    bad_config("sector_bytes", "(" + std::to_string(config.sector_bytes) + ") gives " +
                                   std::to_string(config.line_bytes / config.sector_bytes) +
                                   " sectors per line; at most " + std::to_string(kMaxSectorsPerLine) +
                                   " fit a sector mask");
  }
  // Both factors are below 2^32, so the product cannot overflow 64 bits.
  const std::uint64_t set_bytes = std::uint64_t{config.associativity} * config.line_bytes;
  if (config.capacity_bytes % set_bytes != 0) {
    bad_config("capacity_bytes", "(" + std::to_string(config.capacity_bytes) +
                                     ") must be a multiple of associativity * line_bytes (" +
                                     std::to_string(set_bytes) + ")");
  }
  if (config.capacity_bytes / config.line_bytes > kMaxCacheLines) {
    bad_config("capacity_bytes", "(" + std::to_string(config.capacity_bytes) + ") holds more than " +
                                     std::to_string(kMaxCacheLines) + " lines");
  }
}

SectorCache::SectorCache(const CacheConfig& config) : config_(config) {
  validate(config_);
  ways_ = config_.associativity;
  sets_ = config_.capacity_bytes / (std::uint64_t{ways_} * config_.line_bytes);
  sets_are_power_of_two_ = is_power_of_two(sets_);
  line_shift_ = log2_exact(config_.line_bytes);
  line_offset_mask_ = config_.line_bytes - 1;
  sector_shift_ = log2_exact(config_.sector_bytes);
  sectors_per_line_ = config_.line_bytes / config_.sector_bytes;
  full_mask_ = bit_range(0, sectors_per_line_ - 1);

  const std::size_t lines = static_cast<std::size_t>(sets_) * ways_;
  tags_.assign(lines, 0);
  valid_.assign(lines, 0);
  dirty_.assign(lines, 0);
  pending_.assign(lines, 0);
  lru_.assign(lines, 0);
  fill_time_.assign(lines * sectors_per_line_, kNever);
}

std::uint32_t SectorCache::sector_mask(std::uint64_t address, std::uint32_t bytes) const {
  const std::uint64_t offset = address & line_offset_mask_;
  if (bytes == 0 || offset + bytes > config_.line_bytes) {
    throw InvariantViolation("cache: access of " + std::to_string(bytes) + " bytes at " + hex(address) +
                             (bytes == 0 ? " is empty"
                                         : " crosses the end of its " + std::to_string(config_.line_bytes) +
                                               "-byte line at " + hex(line_address(address))) +
                             " (the caller must split requests at line boundaries)");
  }
  const auto first = static_cast<std::uint32_t>(offset >> sector_shift_);
  const auto last = static_cast<std::uint32_t>((offset + bytes - 1) >> sector_shift_);
  return bit_range(first, last);
}

std::size_t SectorCache::find(std::uint64_t set, std::uint64_t line) const {
  const std::size_t base = static_cast<std::size_t>(set) * ways_;
  for (std::size_t i = base; i < base + ways_; ++i) {
    if (tags_[i] == line && present(i)) return i;
  }
  return kNoWay;
}

std::size_t SectorCache::allocate(std::uint64_t set, std::uint64_t line, AccessResult& result) {
  const std::size_t base = static_cast<std::size_t>(set) * ways_;
  std::size_t victim = kNoWay;      // LRU line without pending sectors
  std::size_t any_victim = kNoWay;  // LRU line of all
  for (std::size_t i = base; i < base + ways_; ++i) {
    if (!present(i)) {
      victim = i;  // the lowest free way: nothing to evict
      break;
    }
    if (any_victim == kNoWay || lru_[i] < lru_[any_victim]) any_victim = i;
    if (pending_[i] == 0 && (victim == kNoWay || lru_[i] < lru_[victim])) victim = i;
  }
  if (victim == kNoWay) victim = any_victim;  // every way is waiting for a fill: evict the LRU anyway

  if (present(victim)) {
    ++stats_.evictions;
    if (pending_[victim] != 0) ++stats_.pending_evictions;
    if (dirty_[victim] != 0) {
      result.writeback_address = tags_[victim] << line_shift_;
      result.writeback_mask = dirty_[victim];
      ++stats_.writebacks;
      stats_.writeback_sectors += count(dirty_[victim]);
      --dirty_lines_;
    }
  }
  tags_[victim] = line;
  valid_[victim] = 0;
  dirty_[victim] = 0;
  pending_[victim] = 0;
  return victim;
}

AccessResult SectorCache::access(std::uint64_t address, std::uint32_t bytes, bool is_write) {
  const std::uint32_t mask = sector_mask(address, bytes);
  const std::uint64_t line = address >> line_shift_;
  const std::uint64_t set = set_of_line(line);
  std::size_t way = find(set, line);

  ++stats_.accesses;
  AccessResult result;
  const std::uint32_t valid = way == kNoWay ? 0 : valid_[way];
  const std::uint32_t pending = way == kNoWay ? 0 : pending_[way];
  result.hit_sectors = mask & valid;
  stats_.sector_hits += count(result.hit_sectors);

  if (!is_write) {
    ++stats_.load_accesses;
    result.merged_sectors = mask & pending;  // pending and valid are disjoint
    result.miss_sectors = mask & ~valid & ~pending;
    stats_.sector_merges += count(result.merged_sectors);
    stats_.sector_misses += count(result.miss_sectors);
    if (!config_.allocate_on_load) {
      if (way != kNoWay) touch(way);
      return result;
    }
    if (way == kNoWay) way = allocate(set, line, result);
    touch(way);
    pending_[way] |= result.miss_sectors;
    // The fetch time is unknown until the caller issues it (set_fill_time).
    const std::size_t sector_base = way * sectors_per_line_;
    for (std::uint32_t s = 0, m = result.miss_sectors; m != 0; ++s, m >>= 1) {
      if ((m & 1U) != 0) fill_time_[sector_base + s] = kNever;
    }
    return result;
  }

  ++stats_.store_accesses;
  stats_.sector_misses += count(mask & ~valid);
  if (config_.write_back) {
    if (way == kNoWay) way = allocate(set, line, result);
    touch(way);
    if (dirty_[way] == 0) ++dirty_lines_;
    valid_[way] |= mask;
    dirty_[way] |= mask;
    pending_[way] &= ~mask;  // the store's data is newer than any fill on its way
    return result;
  }
  // Write-through: the store goes on to the next level; never allocate.
  if (way == kNoWay) return result;
  // A fill requested before this store carries the old data: drop it for these sectors.
  pending_[way] &= ~mask;
  if (config_.write_through_invalidates) {
    valid_[way] &= ~mask;  // may leave the way free; no LRU update for a line being emptied
  } else {
    touch(way);  // updated in place: the sectors stay valid, as a write hit in GPGPU-Sim's wr_hit_wt
  }
  return result;
}

void SectorCache::fill(std::uint64_t address, std::uint32_t sector_mask) {
  if ((sector_mask & ~full_mask_) != 0) {
    throw InvariantViolation("cache: fill of sector mask " + hex(sector_mask) + " at " + hex(address) +
                             " names sectors beyond the " + std::to_string(sectors_per_line_) + " of a line");
  }
  if (sector_mask == 0) return;
  const std::uint64_t line = address >> line_shift_;
  const std::size_t way = find(set_of_line(line), line);
  if (way == kNoWay) {
    ++stats_.orphan_fills;
    stats_.stale_fill_sectors += count(sector_mask);
    return;
  }
  const std::uint32_t applied = sector_mask & pending_[way];
  pending_[way] &= ~applied;
  valid_[way] |= applied;
  stats_.filled_sectors += count(applied);
  stats_.stale_fill_sectors += count(sector_mask & ~applied);
}

void SectorCache::flush(const std::function<void(std::uint64_t, std::uint32_t)>& f) {
  for (std::size_t i = 0; i < dirty_.size(); ++i) {
    const std::uint32_t dirty = dirty_[i];
    if (dirty == 0) continue;
    // Clean before the call: if f throws, the lines already handed over are not handed over twice.
    dirty_[i] = 0;
    --dirty_lines_;
    ++stats_.flushed_lines;
    stats_.flushed_sectors += count(dirty);
    f(tags_[i] << line_shift_, dirty);
  }
}

SectorCache::LineState SectorCache::line_state(std::uint64_t address) const {
  const std::uint64_t line = address >> line_shift_;
  const std::size_t way = find(set_of_line(line), line);
  if (way == kNoWay) return {};
  return {valid_[way], dirty_[way], pending_[way]};
}

void SectorCache::set_fill_time(std::uint64_t address, std::uint32_t sector_mask, TimePs ready_ps) {
  const std::uint64_t line = address >> line_shift_;
  const std::size_t way = find(set_of_line(line), line);
  if (way == kNoWay) return;
  const std::size_t sector_base = way * sectors_per_line_;
  for (std::uint32_t s = 0, m = sector_mask & pending_[way]; m != 0; ++s, m >>= 1) {
    if ((m & 1U) != 0) fill_time_[sector_base + s] = ready_ps;
  }
}

TimePs SectorCache::fill_time_ps(std::uint64_t address, std::uint32_t sector_mask) const {
  const std::uint64_t line = address >> line_shift_;
  const std::size_t way = find(set_of_line(line), line);
  if (way == kNoWay) return 0;
  TimePs latest = 0;
  const std::size_t sector_base = way * sectors_per_line_;
  for (std::uint32_t s = 0, m = sector_mask & pending_[way]; m != 0; ++s, m >>= 1) {
    if ((m & 1U) != 0) latest = std::max(latest, fill_time_[sector_base + s]);
  }
  return latest;
}

void SectorCache::check_invariants() const {
  std::uint64_t dirty_lines = 0;
  for (std::size_t i = 0; i < tags_.size(); ++i) {
    const std::string where = "cache: set " + std::to_string(i / ways_) + " way " + std::to_string(i % ways_);
    if (((valid_[i] | dirty_[i] | pending_[i]) & ~full_mask_) != 0) {
      throw InvariantViolation(where + ": sector masks beyond the line");
    }
    if ((dirty_[i] & ~valid_[i]) != 0) throw InvariantViolation(where + ": dirty sectors that are not valid");
    if ((valid_[i] & pending_[i]) != 0) throw InvariantViolation(where + ": sectors both valid and pending");
    if (!config_.write_back && dirty_[i] != 0) {
      throw InvariantViolation(where + ": dirty sectors in a write-through cache");
    }
    if (dirty_[i] != 0) ++dirty_lines;
    if (!present(i)) continue;
    if (set_of_line(tags_[i]) != i / ways_) {
      throw InvariantViolation(where + ": holds line " + hex(tags_[i] << line_shift_) + " of set " +
                               std::to_string(set_of_line(tags_[i])));
    }
    const std::size_t base = i - i % ways_;
    for (std::size_t j = base; j < i; ++j) {
      if (present(j) && tags_[j] == tags_[i]) {
        throw InvariantViolation(where + ": line " + hex(tags_[i] << line_shift_) + " also in way " +
                                 std::to_string(j - base));
      }
    }
  }
  if (dirty_lines != dirty_lines_) {
    throw InvariantViolation("cache: " + std::to_string(dirty_lines) + " dirty lines, counted " +
                             std::to_string(dirty_lines_));
  }
}

}  // namespace gpumux::cache
