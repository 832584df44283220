#pragma once
// Perf-Sat's state machine (Awatramani 4.3.2, Fig. 4.4): finds the thread-block count at which one SM's
// performance saturates from the stalled cycles of successive sample periods. Plain C++, no SystemC: the
// SM driver (engine/sm_driver.h) owns one per SM, feeds it a sample at the end of each period and
// applies limit() to the SM; tb/unit/perf_sat_test.cpp walks it through the thesis's example.
//
// Hypothesis (4.3.2.1): N+1 blocks beat N when Pipeline_{N+1} - Pipeline_N < Scoreboard_N -
// Scoreboard_{N+1}, i.e. when the stalled cycle count (scoreboard plus pipeline stalls) falls.
//
// The machine as read from 4.3.2.2 (the figure itself is not in the text we have; where the text leaves
// a choice open, the choice is named here and in docs/config.md "Perf-Sat"):
//  - Start: ceil(N_max/2) blocks. The first sample is stored and the count goes to ceil(N_max/2)+1, state
//    weak-increase, direction bit 0, history bit 0.
//  - Direction of throttle (direction bit 0). A sample "coherent" with the state's direction: in an
//    increase state one lower than the stored one, in a decrease state one not greater. 4.3.2.1's
//    hypothesis is strict (N+1 blocks are better "if the sum of the pipeline and scoreboarding stalls is
//    lower than at N"), so a tie favours fewer blocks; the text's "until the stalled cycle count is
//    greater" would favour more, and would take a kernel that never stalls (issue-bound: every sample
//    0) to N_max, where the hypothesis says its blocks beyond the first that stall none buy nothing. In a
//    weak state a coherent sample with history 0 sets the history bit (count and stored sample kept); a
//    second one sets the direction bit, enters the strong state and steps the count. A sample against the
//    direction resets the history bit and toggles weak-increase <-> weak-decrease: the sample (of the
//    count just left) is stored and the count moves to the other side. After more than `max_toggles`
//    toggles the count is settled, conservatively, at ceil(N_max/2)+1.
//  - Detection (direction bit 1). In a strong state every coherent sample is stored and the count steps on
//    (settling at N_max or 1 when it can go no further). A sample against the direction is discarded, the
//    count is held, and the machine goes back to the weak state (history 0). There, a second sample
//    against the direction settles the count at the previous value (the last one whose sample was stored);
//    a coherent one returns to the strong state with the count still held, so a count must give two
//    coherent samples to be passed. Each weak <-> strong change is a toggle; after more than `max_toggles`
//    of them the count is settled, optimistically, at the previous value.
//  Worked example of the text: N_max = 15, N_opt = 12: 8 -> 9 (twice, direction set) -> 10 -> 11 -> 12
//  -> 13 (worse: weak-increase, held) -> 13 worse again -> settled at 12.

#include <cstdint>

namespace gpumux {

class PerfSat {
 public:
  enum class State : std::uint8_t {
    kStart,           ///< before the first sample: ceil(N_max/2) blocks
    kWeakIncrease,    ///< Fig. 4.4
    kStrongIncrease,  ///< Fig. 4.4
    kWeakDecrease,    ///< Fig. 4.4
    kStrongDecrease,  ///< Fig. 4.4
    kSettled,         ///< the count is detected; limit() holds it
  };

  /// `n_max`: the SM's thread-block count by its resources (at least 1). `max_toggles`: toggles tolerated
  /// (thesis: 3). With N_max = 1 there is nothing to detect: settled at 1.
  explicit PerfSat(std::uint32_t n_max, std::uint32_t max_toggles = 3);

  /// The end of a sample period run at limit() blocks, with `stalled` stalled cycles counted in it. Moves
  /// the state and limit(); ignored once settled.
  void sample(std::uint64_t stalled);

  /// Thread blocks the SM may hold during the next sample period (once settled: the detected count).
  [[nodiscard]] std::uint32_t limit() const { return limit_; }
  [[nodiscard]] bool settled() const { return state_ == State::kSettled; }
  [[nodiscard]] State state() const { return state_; }
  [[nodiscard]] bool direction() const { return direction_; }  ///< the direction bit
  [[nodiscard]] bool history() const { return history_; }      ///< the history bit
  [[nodiscard]] std::uint32_t toggles() const { return toggles_; }
  [[nodiscard]] std::uint32_t n_max() const { return n_max_; }
  /// ceil(N_max/2): the count of the first sample period.
  [[nodiscard]] std::uint32_t start() const { return (n_max_ + 1) / 2; }
  /// Why it settled: "optimum" (a count rejected twice, or N_max / 1 reached), "toggles-near-start"
  /// (conservative ceil(N_max/2)+1), "toggles-near-optimum" (optimistic previous value); "" before.
  [[nodiscard]] const char* settled_by() const { return settled_by_; }

 private:
  void settle(std::uint32_t count, const char* why);
  /// One more toggle; true (and settled at `count`) when there have now been more than max_toggles.
  bool toggle(std::uint32_t count, const char* why);
  /// A coherent sample in a strong state (or the one that sets the direction): store it and move one
  /// block on (`up`: more), settling at the end of the range (N_max or 1) instead of passing it.
  void store_and_step(std::uint64_t stalled, bool up);

  std::uint32_t n_max_;
  std::uint32_t max_toggles_;
  std::uint32_t limit_;
  State state_ = State::kStart;
  bool direction_ = false;
  bool history_ = false;
  std::uint32_t toggles_ = 0;    ///< in the current phase (reset when the direction bit is set)
  std::uint64_t stored_ = 0;     ///< the previous sample
  const char* settled_by_ = "";  ///< static strings only
};

/// "start", "weak-increase", "strong-increase", "weak-decrease", "strong-decrease", "settled".
[[nodiscard]] const char* to_string(PerfSat::State state);

}  // namespace gpumux
