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
    } else if (name == "column") {
      fields_lsb_first_[i] = Field::kColumn;
      radix_[i] = config.row_bytes / config.interleave_bytes;
    } else {
      fields_lsb_first_[i] = Field::kChannel;
      radix_[i] = config.channels;
    }
  }
}

DramAddress AddressMapping::decode(std::uint64_t address) const {
  std::uint64_t high = address / interleave_bytes_;
  const auto low = static_cast<std::uint32_t>(address % interleave_bytes_);
  DramAddress out;
  for (std::size_t i = 0; i < fields_lsb_first_.size(); ++i) {
    const auto digit = static_cast<std::uint32_t>(high % radix_[i]);
    high /= radix_[i];
    switch (fields_lsb_first_[i]) {
      case Field::kBank:
        out.bank = digit;
        break;
      case Field::kColumn:
        out.column = static_cast<std::uint32_t>(digit * interleave_bytes_ + low);
        break;
      case Field::kChannel:
        out.channel = digit;
        break;
    }
  }
  out.row = high;
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
        digit = where.bank;
        break;
      case Field::kColumn:
        digit = where.column / interleave_bytes_;
        break;
      case Field::kChannel:
        digit = where.channel;
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
