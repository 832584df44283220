#pragma once
// Loose round robin, single level (Awatramani 3.2, 3.4.2.2: "the RR scheduler rotates the priority
// after each selection"; GPGPU-Sim's `lrr`). Warps are ranked by slot, starting just after the warp
// that issued last; the first one that can issue goes. "Loose": a warp that cannot issue is skipped
// without losing its turn in the rotation order.

#include <cstdint>
#include <optional>
#include <string>

#include "sm/warp_scheduler/resident_warps.h"
#include "sm/warp_scheduler/warp_scheduler.h"

namespace gpumux {

class LrrScheduler final : public WarpScheduler {
 public:
  explicit LrrScheduler(const WarpSchedulerSetup& setup);

  [[nodiscard]] std::string name() const override { return "lrr"; }
  void add_warp(WarpSlot warp, std::uint64_t age, const WarpQuery& query) override;
  void remove_warp(WarpSlot warp) override;
  void long_latency_wait(WarpSlot warp) override;
  void long_latency_done(WarpSlot warp, const WarpQuery& query) override;
  [[nodiscard]] std::optional<WarpSlot> select(const WarpQuery& query) override;
  void issued(WarpSlot warp) override;

 private:
  ResidentWarps warps_;
  WarpSlot next_ = 0;  ///< the slot with the highest priority: one past the last warp that issued
};

}  // namespace gpumux
