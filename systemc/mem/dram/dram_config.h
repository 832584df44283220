#pragma once
// Configuration of the cycle-level GDDR5 DRAM model (mem/dram/dram_channel.h): plain data, filled by the
// GPU config loader, which validates the user's file first (naming file, line and key); validate() here is
// a second line of defence for code that builds a DramConfig directly (tests, tools), so a bad value fails
// loudly at construction instead of producing a nonsensical schedule.
//
// Timing names follow the GDDR5 SGRAM standard, JEDEC JESD212. The model is simplified where the standard
// has several variants of one parameter: one tRCD for reads and writes, one tWTR, no bank groups (so one
// tCCD), all-bank refresh only.

#include <cstdint>
#include <string>
#include <vector>

namespace gpumux::dram {

/// Every timing is in command-clock cycles (tCK).
struct DramTiming {
  std::uint32_t tRCD = 0;             ///< ACT -> RD/WR, same bank
  std::uint32_t tRP = 0;              ///< PRE -> ACT, same bank
  std::uint32_t tRAS = 0;             ///< ACT -> PRE, same bank
  std::uint32_t tCL = 0;              ///< RD -> first data beat
  std::uint32_t tWL = 0;              ///< WR -> first data beat
  std::uint32_t tCCD = 0;             ///< column command -> column command, any banks of the channel
  std::uint32_t tRRD = 0;             ///< ACT -> ACT, different banks
  std::uint32_t tFAW = 0;             ///< window holding at most four ACTs
  std::uint32_t tWTR = 0;             ///< end of write data -> RD
  std::uint32_t tRTP = 0;             ///< RD -> PRE, same bank
  std::uint32_t tWR = 0;              ///< end of write data -> PRE, same bank (write recovery)
  std::uint32_t tRFC = 0;             ///< REF -> any ACT (the channel is refreshing)
  std::uint32_t tREFI = 0;            ///< mean interval between REF commands
  std::uint32_t burst_length = 0;     ///< data beats per burst (GDDR5: 8)
  std::uint32_t beats_per_clock = 0;  ///< data beats per tCK (GDDR5: 4, data at DDR on WCK = 2 x CK)
  // => a burst occupies burst_length / beats_per_clock tCK on the data bus (GDDR5: 2); must divide evenly.
};

struct DramConfig {
  double command_clock_mhz = 0;  ///< CK
  std::uint32_t channels = 0;    ///< any count >= 1 (5 or 6 on the shipped GPUs: not a power of two)
  std::uint32_t banks = 0;       ///< per channel
  std::uint32_t row_bytes = 0;   ///< bytes of one row (page) across the channel's devices
  std::uint32_t bus_bytes = 0;   ///< channel data bus width in bytes (8 = 64-bit, two x32 GDDR5 devices)
  // => one burst (the access atom) moves bus_bytes * burst_length bytes (64-bit x BL8 = 64 B).
  DramTiming timing;
  /// MSB -> LSB, a permutation of {"row", "bank", "column", "channel"}; "row" must come first, since the
  /// row has no configured count and takes whatever is left of the address (address_mapping.h).
  std::vector<std::string> address_mapping;
  /// Lowest-order bytes always in one channel and one row: a multiple of the atom that divides row_bytes.
  std::uint32_t interleave_bytes = 0;
  std::uint32_t read_queue = 0;        ///< scheduler window: the oldest N pending reads of a channel
  std::uint32_t write_queue = 0;       ///< the same for writes
  std::uint32_t write_drain_high = 0;  ///< start draining writes at this many pending (<= write_queue)
  std::uint32_t write_drain_low = 0;   ///< stop draining at this many (< write_drain_high)
  /// FR-FCFS: at most this many consecutive row hits to a bank while an older request to that bank waits
  /// for another row (0 = no cap).
  std::uint32_t row_hit_cap = 0;
  bool refresh = false;  ///< model all-bank refresh every tREFI (tRFC long)
  /// Permutation-based interleaving (after Zhang, Zhu and Zhang, MICRO 2000; GPUs hash their memory
  /// partitions alike): the bank and the channel index are each rotated by a hash of the row number, so
  /// that streams whose addresses differ only in high bits (the same offset in different arrays) spread
  /// over the channels and banks instead of meeting in one. A rotation is a permutation for any count.
  bool address_rotate = false;
};

/// Throws std::invalid_argument naming the offending parameter when `config` cannot be modelled.
void validate(const DramConfig& config);

/// The command-clock period in whole picoseconds: 1e6 / command_clock_mhz rounded to the nearest ps
/// (1300 MHz: 769 ps, 0.03% fast). Every time of the model is a multiple of it, so the rounding error does
/// not accumulate differently in different parts of the model. Validates the clock.
[[nodiscard]] std::uint64_t command_clock_period_ps(const DramConfig& config);

/// Cycles one burst occupies on the data bus: burst_length / beats_per_clock.
[[nodiscard]] inline std::uint32_t burst_cycles(const DramTiming& timing) {
  return timing.burst_length / timing.beats_per_clock;
}

/// Bytes one burst moves: the unit of every request.
[[nodiscard]] inline std::uint32_t atom_bytes(const DramConfig& config) {
  return config.bus_bytes * config.timing.burst_length;
}

}  // namespace gpumux::dram
