#pragma once
// Deterministic random numbers. One generator per component, seeded from the run seed and the
// component's index, so results are byte-identical across runs and platforms (no <random>
// distributions, whose algorithms differ between standard libraries; the normal is Boost.Random's,
// whose algorithm is Boost's own and the same wherever it builds).

#include <cstdint>

#include <boost/random/normal_distribution.hpp>

namespace gpumux {

/// SplitMix64: used to derive independent seeds from (run seed, component id).
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

/// Multiplier that spreads a stream number over the seed's bits (a generator's or a keyed draw's).
inline constexpr std::uint64_t kStreamMultiplier = 0xD1B54A32D192ED03ULL;

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

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  /// The output function of xoshiro256** applied to state word 1.
  static std::uint64_t scramble(std::uint64_t s1) { return rotl(s1 * 5, 7) * 9; }
  std::uint64_t state_[4]{};
};

/// The 64-bit words of one keyed draw: SplitMix64 (Steele, Lea & Flood, OOPSLA 2014) from the state
/// seed ^ (stream * kStreamMultiplier), word after word. A UniformRandomBitGenerator, so that a Boost.Random
/// distribution can read it.
class KeyedBits {
 public:
  using result_type = std::uint64_t;
  KeyedBits(std::uint64_t seed, std::uint64_t stream) : state_(seed ^ (stream * kStreamMultiplier)) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return splitmix64(state_); }

 private:
  std::uint64_t state_;
};

/// A standard normal keyed by (seed, stream): Boost.Random's normal_distribution (a 128-layer ziggurat,
/// Marsaglia & Tsang, J. Stat. Softw. 5(8), 2000, with tables that are constants in its header) reading
/// KeyedBits(seed, stream). About 99% of draws read one word and take the ziggurat's fast path: a
/// multiply and a compare (Box-Muller, used before, paid a log, a square root and a cosine per draw;
/// docs/performance.md). The stream is Boost 1.74's algorithm over SplitMix64, fixed by
/// tb/unit/rng_test.cpp's pinned values.
inline double keyed_normal(std::uint64_t seed, std::uint64_t stream) {
  KeyedBits bits(seed, stream);
  return boost::random::normal_distribution<double>(0.0, 1.0)(bits);
}

}  // namespace gpumux
