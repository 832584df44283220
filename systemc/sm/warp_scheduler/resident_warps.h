#pragma once
// The warps resident on one warp scheduler and their launch order: the bookkeeping every scheduler
// shares (single-level GTO and phase-aware scan it oldest first; the two-level schedulers sort their
// active queue by it). Fixed-size arrays indexed by slot, sized once: no allocation after
// construction, so a scheduler's select() never allocates.

#include <cstdint>
#include <vector>

#include "sm/warp_scheduler/warp_scheduler.h"

namespace gpumux {

class ResidentWarps {
 public:
  /// Throws std::invalid_argument for capacity 0 (a scheduler with no slots is a configuration bug).
  explicit ResidentWarps(std::uint32_t capacity);

  [[nodiscard]] std::uint32_t capacity() const { return static_cast<std::uint32_t>(age_.size()); }
  [[nodiscard]] bool resident(WarpSlot warp) const { return warp < capacity() && resident_[warp] != 0; }
  [[nodiscard]] std::uint64_t age(WarpSlot warp) const { return age_[warp]; }
  /// Resident warps, oldest (smallest age) first.
  [[nodiscard]] const std::vector<WarpSlot>& oldest_first() const { return by_age_; }

  /// std::logic_error when the slot is out of range or already resident: the SM broke the contract
  /// of WarpScheduler::add_warp, a programming error rather than bad input.
  void add(WarpSlot warp, std::uint64_t age);
  /// std::logic_error when the warp is not resident.
  void remove(WarpSlot warp);
  /// std::logic_error naming `event` when the warp is not resident.
  void require(WarpSlot warp, const char* event) const;

 private:
  std::vector<std::uint8_t> resident_;  ///< per slot (uint8_t, not vector<bool>: plain loads)
  std::vector<std::uint64_t> age_;      ///< per slot, valid while resident
  std::vector<WarpSlot> by_age_;        ///< resident slots, ascending age; capacity reserved
};

}  // namespace gpumux
