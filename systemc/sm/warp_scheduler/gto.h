#pragma once
// Greedy then oldest, single level (Awatramani 3.2: "always gives a higher priority to warps that are
// launched earlier"; Rogers et al. and GPGPU-Sim's `gto`): the warp that issued last keeps issuing
// while it can; otherwise the oldest warp (smallest launch age) that can issue goes.

#include <cstdint>
#include <optional>
#include <string>

#include "sm/warp_scheduler/resident_warps.h"
#include "sm/warp_scheduler/warp_scheduler.h"

namespace gpumux {

class GtoScheduler final : public WarpScheduler {
 public:
  explicit GtoScheduler(const WarpSchedulerSetup& setup);

  [[nodiscard]] std::string name() const override { return "gto"; }
  void add_warp(WarpSlot warp, std::uint64_t age, const WarpQuery& query) override;
  void remove_warp(WarpSlot warp) override;
  void long_latency_wait(WarpSlot warp) override;
  void long_latency_done(WarpSlot warp, const WarpQuery& query) override;
  [[nodiscard]] std::optional<WarpSlot> select(const WarpQuery& query) override;
  void issued(WarpSlot warp) override;

 private:
  ResidentWarps warps_;
  std::optional<WarpSlot> last_;  ///< the greedy warp: issued last and still resident
};

}  // namespace gpumux
