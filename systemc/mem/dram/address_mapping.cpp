#include "mem/dram/address_mapping.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace gpumux::dram {

AddressMapping::AddressMapping(const DramConfig& config)
    : interleave_bytes_(config.interleave_bytes),
      channels_(config.channels),
      banks_(config.banks),
      row_bytes_(config.row_bytes) {
  validate(config);
  // validate() guarantees a permutation with "row" first: the remaining three, read from the back, are
  // the bounded digits from the least significant up.
  for (std::size_t i = 0; i < fields_lsb_first_.size(); ++i) {
    const std::string& name = config.address_mapping[config.address_mapping.size() - 1 - i];
    if (name == "bank") {
      fields_lsb_first_[i] = Field::kBank;
      radix_[i] = config.banks;
      bank_digit_ = i;
    } else if (name == "column") {
      fields_lsb_first_[i] = Field::kColumn;
      radix_[i] = config.row_bytes / config.interleave_bytes;
      column_digit_ = i;
    } else {
      fields_lsb_first_[i] = Field::kChannel;
      radix_[i] = config.channels;
      channel_digit_ = i;
    }
    shift_[i] = log2_if_power_of_two(radix_[i]);
  }
  interleave_shift_ = log2_if_power_of_two(interleave_bytes_);
  rotate_ = config.address_rotate;
}

AddressMapping::Rotation AddressMapping::rotation(std::uint64_t row) const {
  if (!rotate_) return {};
  // SplitMix64's finaliser: every row bit moves both rotations, so rows that differ only in high bits
  // (arrays at aligned bases) turn differently.
  std::uint64_t h = row + 0x9E3779B97F4A7C15ULL;
  h = (h ^ (h >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27U)) * 0x94D049BB133111EBULL;
  h ^= h >> 31U;
  return {static_cast<std::uint32_t>(h % banks_), static_cast<std::uint32_t>((h >> 32U) % channels_)};
}

int AddressMapping::log2_if_power_of_two(std::uint64_t value) {
  if (value == 0 || (value & (value - 1)) != 0) return -1;
  int log2 = 0;
  while ((value >> log2) != 1) ++log2;
  return log2;
}

DramAddress AddressMapping::decode(std::uint64_t address) const {
  // A division by a radix that is a power of two (most are) is a shift: a 64-bit division takes tens of
  // cycles, a noticeable part of a request's cost.
  const auto divide = [](std::uint64_t& value, std::uint64_t divisor, int shift) {
    std::uint64_t remainder = 0;
    if (shift >= 0) {
      remainder = value & (divisor - 1);
      value >>= static_cast<unsigned>(shift);
    } else {
      remainder = value % divisor;
      value /= divisor;
    }
    return remainder;
  };
  std::uint64_t high = address;
  const auto low = static_cast<std::uint32_t>(divide(high, interleave_bytes_, interleave_shift_));
  // The three digits in a row, then each field picked out by its place (a switch per digit took about as
  // many instructions as the divisions).
  std::array<std::uint64_t, 3> digits{};
  digits[0] = divide(high, radix_[0], shift_[0]);
  digits[1] = divide(high, radix_[1], shift_[1]);
  digits[2] = divide(high, radix_[2], shift_[2]);
  DramAddress out;
  out.bank = static_cast<std::uint32_t>(digits[bank_digit_]);
  out.column = static_cast<std::uint32_t>(digits[column_digit_] * interleave_bytes_ + low);
  out.channel = static_cast<std::uint32_t>(digits[channel_digit_]);
  out.row = high;
  if (rotate_) {
    const Rotation r = rotation(out.row);
    out.bank = (out.bank + r.bank) % banks_;
    out.channel = (out.channel + r.channel) % channels_;
  }
  return out;
}

std::uint64_t AddressMapping::encode(const DramAddress& where) const {
  if (where.channel >= channels_) throw std::invalid_argument("encode: channel out of range");
  if (where.bank >= banks_) throw std::invalid_argument("encode: bank out of range");
  if (where.column >= row_bytes_) throw std::invalid_argument("encode: column out of range");
  std::uint64_t high = where.row;
  for (std::size_t k = fields_lsb_first_.size(); k-- > 0;) {
    std::uint64_t digit = 0;
    switch (fields_lsb_first_[k]) {
      case Field::kBank:
        digit = (where.bank + banks_ - rotation(where.row).bank) % banks_;  // decode()'s rotation undone
        break;
      case Field::kColumn:
        digit = where.column / interleave_bytes_;
        break;
      case Field::kChannel:
        digit = (where.channel + channels_ - rotation(where.row).channel) % channels_;
        break;
    }
    if (high > (std::numeric_limits<std::uint64_t>::max() - digit) / radix_[k]) {
      throw std::overflow_error("encode: row too large for a 64-bit address");
    }
    high = high * radix_[k] + digit;
  }
  const std::uint64_t low = where.column % interleave_bytes_;
  if (high > (std::numeric_limits<std::uint64_t>::max() - low) / interleave_bytes_) {
    throw std::overflow_error("encode: row too large for a 64-bit address");
  }
  return high * interleave_bytes_ + low;
}

}  // namespace gpumux::dram
