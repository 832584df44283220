#pragma once
// Reading and writing the ports of Verilated models whatever width Verilator chose for them
// (CData/SData/IData/QData up to 64 bits, VlWide<N> above).

#include <cstdint>
#include <type_traits>

namespace gpumux::rtl {

inline std::uint64_t low_mask(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

/// Bits [lsb, lsb + width) of a port, width <= 64.
template <typename Port>
std::uint64_t get_bits(const Port& port, unsigned lsb, unsigned width) {
  if constexpr (std::is_integral_v<Port>) {
    return lsb >= 64 ? 0 : (static_cast<std::uint64_t>(port) >> lsb) & low_mask(width);
  } else {
    std::uint64_t value = 0;
    for (unsigned b = 0; b < width; ++b) {
      const unsigned pos = lsb + b;
      if (((port.at(pos / 32) >> (pos % 32)) & 1U) != 0) value |= std::uint64_t{1} << b;
    }
    return value;
  }
}

/// Sign-extends the low `width` bits of `value`.
inline std::int64_t sign_extend(std::uint64_t value, unsigned width) {
  const std::uint64_t sign = std::uint64_t{1} << (width - 1);
  value &= low_mask(width);
  return static_cast<std::int64_t>(value ^ sign) - static_cast<std::int64_t>(sign);
}

/// Writes `value` into bits [lsb, lsb + width) of an input port of any width, width <= 64 (the
/// testbench tops' flat expected-table buses).
template <typename Port>
void put_bits(Port& port, unsigned lsb, unsigned width, std::uint64_t value) {
  if constexpr (std::is_integral_v<Port>) {
    if (lsb >= 64) return;
    const std::uint64_t mask = low_mask(width) << lsb;
    const std::uint64_t bits = (static_cast<std::uint64_t>(port) & ~mask) | ((value << lsb) & mask);
    port = static_cast<Port>(bits);
  } else {
    for (unsigned b = 0; b < width; ++b) {
      const unsigned pos = lsb + b;
      auto& word = port.at(pos / 32);
      const auto bit = static_cast<std::uint32_t>(1U) << (pos % 32);
      word = ((value >> b) & 1U) != 0 ? (word | bit) : (word & ~bit);
    }
  }
}

/// Assigns an integral input port (Verilator's CData/SData/IData/QData) from any integer.
template <typename Port, typename Value>
void set_port(Port& port, Value value) {
  static_assert(std::is_integral_v<Port>, "wide input ports are not used");
  port = static_cast<Port>(value);
}

}  // namespace gpumux::rtl
