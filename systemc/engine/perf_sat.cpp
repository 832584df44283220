#include "engine/perf_sat.h"

#include <algorithm>

namespace gpumux {

PerfSat::PerfSat(std::uint32_t n_max, std::uint32_t max_toggles)
    : n_max_(std::max(n_max, 1U)), max_toggles_(max_toggles), limit_((std::max(n_max, 1U) + 1) / 2) {
  if (n_max_ == 1) settle(1, "optimum");
}

void PerfSat::settle(std::uint32_t count, const char* why) {
  state_ = State::kSettled;
  limit_ = count;
  settled_by_ = why;
}

bool PerfSat::toggle(std::uint32_t count, const char* why) {
  ++toggles_;
  if (toggles_ <= max_toggles_) return false;
  settle(count, why);
  return true;
}

void PerfSat::store_and_step(std::uint64_t stalled, bool up) {
  stored_ = stalled;
  if (up ? limit_ >= n_max_ : limit_ <= 1) {
    settle(up ? n_max_ : 1, "optimum");
  } else {
    limit_ = up ? limit_ + 1 : limit_ - 1;
  }
}

void PerfSat::sample(std::uint64_t stalled) {
  // Agrees with the state's direction (4.3.2.1: N+1 blocks are better only if the stalled cycle count
  // is lower than at N, a strict inequality): more blocks must give strictly fewer stalls, fewer blocks
  // no more. A tie favours fewer blocks: a kernel that stalls no more with fewer holds no more.
  const bool increasing = state_ == State::kWeakIncrease || state_ == State::kStrongIncrease;
  const bool coherent = increasing ? stalled < stored_ : stalled <= stored_;
  const std::uint32_t near_start = start() + 1;
  switch (state_) {
    case State::kSettled:
      return;
    case State::kStart:
      // 4.3.2.2 phase 2: store ceil(N_max/2)'s sample, try one block more (N_max >= 2 here).
      stored_ = stalled;
      state_ = State::kWeakIncrease;
      limit_ = near_start;
      return;
    case State::kWeakIncrease:
      if (!direction_) {
        if (coherent) {
          if (!history_) {
            history_ = true;  // the increase was right once: hold the count, keep the stored sample
            return;
          }
          // Twice: the direction is decided.
          direction_ = true;
          history_ = false;
          toggles_ = 0;
          state_ = State::kStrongIncrease;
          store_and_step(stalled, true);
          return;
        }
        // Worse with one block more: store this count's sample, go back down.
        history_ = false;
        if (toggle(near_start, "toggles-near-start")) return;
        state_ = State::kWeakDecrease;
        stored_ = stalled;
        --limit_;
        return;
      }
      // Detection: the held count was rejected once already.
      if (!coherent) {
        settle(limit_ - 1, "optimum");
        return;
      }
      if (toggle(limit_ - 1, "toggles-near-optimum")) return;
      state_ = State::kStrongIncrease;  // count held: it must pass in the strong state too
      return;
    case State::kStrongIncrease:
      if (coherent) {
        store_and_step(stalled, true);
        return;
      }
      // Worse: discard the sample, hold the count, weak-increase (history 0).
      history_ = false;
      if (toggle(limit_ - 1, "toggles-near-optimum")) return;
      state_ = State::kWeakIncrease;
      return;
    case State::kWeakDecrease:
      if (!direction_) {
        if (coherent) {
          if (!history_) {
            history_ = true;
            return;
          }
          direction_ = true;
          history_ = false;
          toggles_ = 0;
          state_ = State::kStrongDecrease;
          store_and_step(stalled, false);
          return;
        }
        history_ = false;
        if (toggle(near_start, "toggles-near-start")) return;
        state_ = State::kWeakIncrease;
        stored_ = stalled;
        ++limit_;
        return;
      }
      if (!coherent) {
        settle(limit_ + 1, "optimum");
        return;
      }
      if (toggle(limit_ + 1, "toggles-near-optimum")) return;
      state_ = State::kStrongDecrease;
      return;
    case State::kStrongDecrease:
      if (coherent) {
        store_and_step(stalled, false);
        return;
      }
      history_ = false;
      if (toggle(limit_ + 1, "toggles-near-optimum")) return;
      state_ = State::kWeakDecrease;
      return;
  }
}

const char* to_string(PerfSat::State state) {
  switch (state) {
    case PerfSat::State::kWeakIncrease:
      return "weak-increase";
    case PerfSat::State::kStrongIncrease:
      return "strong-increase";
    case PerfSat::State::kWeakDecrease:
      return "weak-decrease";
    case PerfSat::State::kStrongDecrease:
      return "strong-decrease";
    case PerfSat::State::kSettled:
      return "settled";
    case PerfSat::State::kStart:
      break;
  }
  return "start";
}

}  // namespace gpumux
