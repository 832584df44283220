#include "engine/active_cores/seq_det.h"

#include <cmath>
#include <stdexcept>

namespace gpumux {

SeqDetDetector::SeqDetDetector(double tolerance) : tolerance_(tolerance) {
  if (!(tolerance >= 0 && tolerance < 1)) throw std::invalid_argument("seq-det: tolerance must be in [0, 1)");
}

ActiveCoreDecision SeqDetDetector::start(std::uint32_t cores) {
  if (cores == 0) throw std::invalid_argument("seq-det: a GPU has at least one core");
  cores_ = cores;
  asked_ = cores;
  samples_.clear();
  done_ = false;
  return {cores, false};
}

ActiveCoreDecision SeqDetDetector::on_sample(double ipc) {
  if (done_) throw std::logic_error("seq-det: a sample after detection");
  if (!(ipc >= 0) || !std::isfinite(ipc)) {
    throw std::logic_error("seq-det: an IPC sample must be finite and >= 0");
  }
  samples_.push_back({asked_, ipc});
  if (asked_ == cores_) threshold_ = ipc_threshold(ipc, tolerance_);
  if (asked_ < cores_ && ipc < threshold_) {  // one core too few: back to the count before
    done_ = true;
    return {asked_ + 1, true};
  }
  if (asked_ == 1) {  // one core is enough
    done_ = true;
    return {1, true};
  }
  --asked_;
  return {asked_, false};
}

}  // namespace gpumux
