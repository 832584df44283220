#pragma once
// ONAC, the Optimal Number of Active Cores detector (Awatramani 4.4.2): an estimation model of IPC
// against the active core count, in the states of Fig. 4.13's control logic.
//   Init  sample IPC_all with every core active (observation 1: the kernel's maximum), then IPC_1 with
//         one core (the others paused).
//   Est   the first estimate is where the line through the origin and IPC_1 meets IPC_threshold
//         (observation 2: IPC at N cores <= N x IPC_1); every later one where the line through the
//         previous and the current estimate's samples meets it (observation 3: IPC per core falls or
//         stays as cores are added), rounded up.
//   OptDet the estimate's sample meets IPC_threshold: it is the optimal count; otherwise Est again.
// Where the thesis is silent, what this does: an estimate is at least one core above the current one
// (a line that does not rise, which observation 3 allows only as sampling noise, would never meet the
// threshold: one more core, as a sequential search would) and at most every core, where detection
// stops whatever the sample (no more cores to add); IPC_1 already meeting the threshold detects 1.
#include "engine/active_cores/active_core_detector.h"

namespace gpumux {

class OnacDetector final : public ActiveCoreDetector {
 public:
  /// `tolerance`: 4.4.1.1's 2% as 0.02; 0 <= tolerance < 1.
  explicit OnacDetector(double tolerance = 0.02);
  [[nodiscard]] ActiveCoreDecision start(std::uint32_t cores) override;
  [[nodiscard]] ActiveCoreDecision on_sample(double ipc) override;
  [[nodiscard]] std::string name() const override { return "onac"; }

 private:
  enum class State : std::uint8_t { kSampleAll, kSampleOne, kSampleEstimate, kDone };
  [[nodiscard]] ActiveCoreDecision ask(std::uint32_t cores);
  [[nodiscard]] ActiveCoreDecision detect(std::uint32_t cores);
  [[nodiscard]] std::uint32_t bounded(double estimate, std::uint32_t above) const;

  double tolerance_;
  State state_ = State::kDone;
  std::uint32_t cores_ = 0;  ///< the GPU's
  double threshold_ = 0;
  CoreCountSample previous_;  ///< the Estimation Records' pre-est entry
  CoreCountSample current_;   ///< cur-est
};

}  // namespace gpumux
