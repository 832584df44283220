#include "mem/dram/dram_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/types.h"

namespace gpumux::dram {
namespace {

[[noreturn]] void reject(const std::string& parameter, const std::string& why) {
  throw std::invalid_argument("DRAM config: " + parameter + " " + why);
}

void require_positive(const std::string& parameter, std::uint64_t value) {
  if (value == 0) reject(parameter, "must be at least 1");
}

void validate_mapping(const DramConfig& config) {
  static const std::array<std::string, 4> kFields = {"row", "bank", "column", "channel"};
  const auto& mapping = config.address_mapping;
  if (mapping.size() != kFields.size()) {
    reject("address_mapping",
           "must list the 4 fields row, bank, column, channel (got " + std::to_string(mapping.size()) + ")");
  }
  for (const std::string& field : kFields) {
    if (std::count(mapping.begin(), mapping.end(), field) != 1) {
      reject("address_mapping",
             "must be a permutation of row, bank, column, channel ('" + field + "' appears " +
                 std::to_string(std::count(mapping.begin(), mapping.end(), field)) + " times)");
    }
  }
  // The row count is not configured: the row is what is left of the address above the other fields,
  // which is only a mixed-radix number if the row is the most significant digit.
  if (mapping.front() != "row") reject("address_mapping", "must list \"row\" first (most significant)");
}

}  // namespace

std::uint64_t command_clock_period_ps(const DramConfig& config) {
  const double mhz = config.command_clock_mhz;
  // 1e6 MHz would round to a 1 ps period; anything faster cannot be represented on the ps grid.
  if (!std::isfinite(mhz) || mhz <= 0 || mhz > 1e6) {
    reject("command_clock_mhz",
           "must be a finite frequency in (0, 1e6] MHz (got " + std::to_string(mhz) + ")");
  }
  return round_to_ps(1e6 / mhz);
}

void validate(const DramConfig& config) {
  (void)command_clock_period_ps(config);
  require_positive("channels", config.channels);
  require_positive("banks", config.banks);
  require_positive("bus_bytes", config.bus_bytes);
  require_positive("row_bytes", config.row_bytes);
  require_positive("interleave_bytes", config.interleave_bytes);

  const DramTiming& t = config.timing;
  require_positive("timing.burst_length", t.burst_length);
  require_positive("timing.beats_per_clock", t.beats_per_clock);
  if (t.burst_length % t.beats_per_clock != 0) {
    reject("timing.burst_length", "must be a multiple of timing.beats_per_clock (a burst is a whole number " +
                                      std::string("of command cycles on the data bus)"));
  }
  // Other timings may be 0: a constraint that never binds (column commands are still a burst apart).

  const std::uint64_t atom = std::uint64_t{config.bus_bytes} * t.burst_length;
  if (config.interleave_bytes % atom != 0) {
    reject("interleave_bytes",
           "must be a multiple of the access atom bus_bytes * burst_length = " + std::to_string(atom) +
               " (got " + std::to_string(config.interleave_bytes) + ")");
  }
  if (config.row_bytes % config.interleave_bytes != 0) {
    reject("interleave_bytes", "must divide row_bytes = " + std::to_string(config.row_bytes) + " (got " +
                                   std::to_string(config.interleave_bytes) + ")");
  }
  validate_mapping(config);

  require_positive("read_queue", config.read_queue);
  require_positive("write_queue", config.write_queue);
  require_positive("write_drain_high", config.write_drain_high);
  if (config.write_drain_high > config.write_queue) {
    reject("write_drain_high", "must not exceed write_queue = " + std::to_string(config.write_queue) +
                                   " (got " + std::to_string(config.write_drain_high) + ")");
  }
  if (config.write_drain_low >= config.write_drain_high) {
    reject("write_drain_low", "must be below write_drain_high = " + std::to_string(config.write_drain_high) +
                                  " (got " + std::to_string(config.write_drain_low) + ")");
  }
  if (config.refresh) {
    require_positive("timing.tRFC", t.tRFC);
    // A channel must be able to do something besides refreshing.
    if (t.tREFI <= t.tRFC) {
      reject("timing.tREFI", "must exceed timing.tRFC = " + std::to_string(t.tRFC) +
                                 " when refresh is on (got " + std::to_string(t.tREFI) + ")");
    }
  }
}

}  // namespace gpumux::dram
