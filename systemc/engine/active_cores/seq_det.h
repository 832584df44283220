#pragma once
// Seq-Det, the sequential detector the thesis compares ONAC with (Awatramani 4.4: the technique of its
// reference [67] as the thesis implemented it, "directly using IPC as an indicator of performance"):
// from every core active, one core fewer per sample while the IPC stays within the threshold of IPC_all;
// the first count whose sample falls below it sends the kernel back to the count before, the optimal
// one (a kernel that needs every core: one sample at N - 1, back to N, 4.4.3.4).
#include "engine/active_cores/active_core_detector.h"

namespace gpumux {

class SeqDetDetector final : public ActiveCoreDetector {
 public:
  /// `tolerance` as OnacDetector's.
  explicit SeqDetDetector(double tolerance = 0.02);
  [[nodiscard]] ActiveCoreDecision start(std::uint32_t cores) override;
  [[nodiscard]] ActiveCoreDecision on_sample(double ipc) override;
  [[nodiscard]] std::string name() const override { return "seq-det"; }

 private:
  double tolerance_;
  std::uint32_t cores_ = 0;
  std::uint32_t asked_ = 0;  ///< the count whose sample comes next
  double threshold_ = 0;
  bool done_ = true;
};

}  // namespace gpumux
