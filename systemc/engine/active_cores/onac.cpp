#include "engine/active_cores/onac.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpumux {

OnacDetector::OnacDetector(double tolerance) : tolerance_(tolerance) {
  if (!(tolerance >= 0 && tolerance < 1)) throw std::invalid_argument("onac: tolerance must be in [0, 1)");
}

ActiveCoreDecision OnacDetector::start(std::uint32_t cores) {
  if (cores == 0) throw std::invalid_argument("onac: a GPU has at least one core");
  cores_ = cores;
  samples_.clear();
  state_ = State::kSampleAll;
  return ask(cores);
}

ActiveCoreDecision OnacDetector::ask(std::uint32_t cores) {
  current_.active_cores = cores;
  return {cores, false};
}

ActiveCoreDecision OnacDetector::detect(std::uint32_t cores) {
  state_ = State::kDone;
  return {cores, true};
}

std::uint32_t OnacDetector::bounded(double estimate, std::uint32_t above) const {
  // Rounded up (the least count on or above the line's crossing), at least above + 1, at most every core.
  if (!std::isfinite(estimate)) return cores_;  // a line that never meets the threshold: every core
  const double count = std::max(std::ceil(estimate), static_cast<double>(above) + 1);
  return count >= cores_ ? cores_ : static_cast<std::uint32_t>(count);
}

ActiveCoreDecision OnacDetector::on_sample(double ipc) {
  if (state_ == State::kDone) throw std::logic_error("onac: a sample after detection");
  if (!(ipc >= 0) || !std::isfinite(ipc)) {
    throw std::logic_error("onac: an IPC sample must be finite and >= 0");
  }
  current_.ipc = ipc;
  samples_.push_back(current_);
  switch (state_) {
    case State::kSampleAll:
      threshold_ = ipc_threshold(ipc, tolerance_);
      if (cores_ == 1) return detect(1);
      state_ = State::kSampleOne;
      return ask(1);  // Init: pause every core but one
    case State::kSampleOne: {
      if (ipc >= threshold_) return detect(1);
      // Observation 2: N x IPC_1 meets the threshold at N = threshold / IPC_1 (infinite for IPC_1 = 0).
      const double crossing = ipc > 0 ? threshold_ / ipc : HUGE_VAL;
      previous_ = current_;
      state_ = State::kSampleEstimate;
      return ask(bounded(crossing, 1));
    }
    case State::kSampleEstimate: {
      if (ipc >= threshold_ || current_.active_cores == cores_) return detect(current_.active_cores);
      // Observation 3: the line through the previous and the current estimate's samples.
      const double slope = (current_.ipc - previous_.ipc) /
                           (static_cast<double>(current_.active_cores) - previous_.active_cores);
      const double crossing =
          slope > 0 ? current_.active_cores + (threshold_ - current_.ipc) / slope : HUGE_VAL;
      const std::uint32_t above = current_.active_cores;
      previous_ = current_;
      return ask(slope > 0 ? bounded(crossing, above) : bounded(above + 1, above));
    }
    case State::kDone:
      break;
  }
  throw std::logic_error("onac: unreachable state");
}

}  // namespace gpumux
