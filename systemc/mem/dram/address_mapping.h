#pragma once
// Physical address -> (channel, bank, row, column) of the DRAM model.
//
// Mixed radix, so that channel counts that are not a power of two (5 or 6 on the shipped GPUs) use every
// channel evenly without dropping address bits. With interleave = DramConfig::interleave_bytes:
//
//   address = high * interleave + low,  low < interleave
//
// `low` is the byte offset inside one interleave chunk, which therefore always lies in one channel and one
// row. `high` is read as a mixed-radix number whose digits are the fields of DramConfig::address_mapping,
// listed MSB -> LSB, with radices channel = channels, bank = banks, column = row_bytes / interleave and
// row = unbounded (whatever is left, hence row must be listed first). The access's byte column in its row
// is column_digit * interleave + low.
//
// Example, [row, bank, column, channel] with 6 channels and 256 B chunks: consecutive 256 B chunks go to
// channels 0..5, then the next column chunk of the same rows, and so on; a channel's row of 4096 B is 16
// chunks; after all 16 chunks of all 6 channels comes the next bank.

#include <array>
#include <cstdint>

#include "mem/dram/dram_config.h"

namespace gpumux::dram {

struct DramAddress {
  std::uint32_t channel = 0;
  std::uint32_t bank = 0;
  std::uint64_t row = 0;
  std::uint32_t column = 0;  ///< byte offset in the row
};

[[nodiscard]] inline bool operator==(const DramAddress& a, const DramAddress& b) {
  return a.channel == b.channel && a.bank == b.bank && a.row == b.row && a.column == b.column;
}

class AddressMapping {
 public:
  /// Throws std::invalid_argument (validate()) if `config` is not valid.
  explicit AddressMapping(const DramConfig& config);

  [[nodiscard]] DramAddress decode(std::uint64_t address) const;
  /// The inverse of decode() (for tests and tools: the address of a given bank and row). The fields must
  /// be in range (channel < channels, bank < banks, column < row_bytes); std::invalid_argument otherwise,
  /// and std::overflow_error if the row is too large for 64-bit addresses.
  [[nodiscard]] std::uint64_t encode(const DramAddress& where) const;

 private:
  enum class Field : std::uint8_t { kBank, kColumn, kChannel };

  std::uint64_t interleave_bytes_;
  std::uint32_t channels_;
  std::uint32_t banks_;
  std::uint32_t row_bytes_;
  // The three bounded fields from the least significant digit up, and their radices (row is above them).
  std::array<Field, 3> fields_lsb_first_{};
  std::array<std::uint64_t, 3> radix_{};
  // log2 of radix_[i] and of interleave_bytes_ when a power of two, else -1 (decode() shifts then).
  std::array<int, 3> shift_{};
  int interleave_shift_ = -1;
  // Which digit (index into fields_lsb_first_) holds each field, so that decode() computes the three
  // digits in a row and picks the fields out without a branch per digit.
  std::size_t bank_digit_ = 0;
  std::size_t column_digit_ = 0;
  std::size_t channel_digit_ = 0;
  bool rotate_ = false;  ///< DramConfig::address_rotate

  /// How far DramConfig::address_rotate turns the bank and the channel index of `row`'s accesses.
  struct Rotation {
    std::uint32_t bank = 0;
    std::uint32_t channel = 0;
  };
  [[nodiscard]] Rotation rotation(std::uint64_t row) const;

  static int log2_if_power_of_two(std::uint64_t value);
};

}  // namespace gpumux::dram
