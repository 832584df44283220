#pragma once
// Phase-aware, single level (Awatramani 3.4.1, 3.4.2.2): "the warp at an instruction with the lowest
// distance from the next phase is chosen. For warps that are at the same distance, the oldest warp is
// chosen first." The distance is the compiler's per-instruction annotation (3.4.2.1), read through
// WarpQuery::phase_distance. Choosing the warp closest to its phase's end moves warps to the shortest
// next phase first, which mitigates RR's pile-up at short phases (type A kernels) and GTO's
// monopoly of long phases (type B).

#include <cstdint>
#include <optional>
#include <string>

#include "sm/warp_scheduler/resident_warps.h"
#include "sm/warp_scheduler/warp_scheduler.h"

namespace gpumux {

class PhaseAwareScheduler final : public WarpScheduler {
 public:
  explicit PhaseAwareScheduler(const WarpSchedulerSetup& setup);

  [[nodiscard]] std::string name() const override { return "phase-aware"; }
  void add_warp(WarpSlot warp, std::uint64_t age, const WarpQuery& query) override;
  void remove_warp(WarpSlot warp) override;
  void long_latency_wait(WarpSlot warp) override;
  void long_latency_done(WarpSlot warp, const WarpQuery& query) override;
  [[nodiscard]] std::optional<WarpSlot> select(const WarpQuery& query) override;
  void issued(WarpSlot warp) override;

 private:
  ResidentWarps warps_;
};

}  // namespace gpumux
