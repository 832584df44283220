#pragma once
// Deterministic random numbers. One generator per component, seeded from the run seed and the
// component's index, so results are byte-identical across runs and platforms (no <random>
// distributions, whose algorithms differ between standard libraries).

#include <cmath>
#include <cstdint>

namespace gpumux {

/// SplitMix64: used to derive independent seeds from (run seed, component id).
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

/// xoshiro256** generator (Blackman & Vigna).
class Rng {
 public:
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) {
    std::uint64_t s = seed ^ (stream * kStreamMultiplier);
    for (auto& word : state_) word = splitmix64(s);
  }

  std::uint64_t next() {
    const std::uint64_t result = scramble(state_[1]);
    const std::uint64_t t = state_[1] << 17U;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11U) * 0x1.0p-53; }

  /// Uniform integer in [0, bound).
  std::uint64_t below(std::uint64_t bound) { return bound == 0 ? 0 : next() % bound; }

  /// Standard normal by Box-Muller (one value per call, the second discarded for simplicity).
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return box_muller(u1, u2);
  }

  /// Rng(seed, stream).normal(), bit for bit, without building the generator: a keyed draw (one
  /// generator per thread block, sm/tb/tb_duration.h) reads only the first two outputs, and those
  /// depend on the first three state words alone, so the fourth is never derived and no state is
  /// stored. A first output that normal() rejects (u1 = 0, one in 2^53) takes the generator's path.
  static double first_normal(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t s = seed ^ (stream * kStreamMultiplier);
    const std::uint64_t s0 = splitmix64(s);
    const std::uint64_t s1 = splitmix64(s);
    const std::uint64_t s2 = splitmix64(s);
    const std::uint64_t first = scramble(s1) >> 11U;
    if (first == 0) return Rng(seed, stream).normal();
    // next() after the first output: state_[1] becomes s1 ^ (s2 ^ s0).
    const std::uint64_t second = scramble(s1 ^ s2 ^ s0) >> 11U;
    return box_muller(static_cast<double>(first) * 0x1.0p-53, static_cast<double>(second) * 0x1.0p-53);
  }

 private:
  static constexpr std::uint64_t kStreamMultiplier = 0xD1B54A32D192ED03ULL;
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  /// The output function of xoshiro256** applied to state word 1.
  static std::uint64_t scramble(std::uint64_t s1) { return rotl(s1 * 5, 7) * 9; }
  static double box_muller(double u1, double u2) {
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::uint64_t state_[4]{};
};

}  // namespace gpumux
