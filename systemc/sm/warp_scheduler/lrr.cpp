#include "sm/warp_scheduler/lrr.h"

namespace gpumux {

LrrScheduler::LrrScheduler(const WarpSchedulerSetup& setup) : warps_(setup.capacity) {}

void LrrScheduler::add_warp(WarpSlot warp, std::uint64_t age, const WarpQuery& /*query*/) {
  warps_.add(warp, age);
}

void LrrScheduler::remove_warp(WarpSlot warp) { warps_.remove(warp); }

// A single-level scheduler keeps every warp in one queue (3.2): a warp waiting on memory stays in it
// and is skipped because the SM reports that it cannot issue.
void LrrScheduler::long_latency_wait(WarpSlot warp) { warps_.require(warp, "long_latency_wait"); }

void LrrScheduler::long_latency_done(WarpSlot warp, const WarpQuery& /*query*/) {
  warps_.require(warp, "long_latency_done");
}

std::optional<WarpSlot> LrrScheduler::select(const WarpQuery& query) {
  // One pass over the slots in rotation order, next_ .. capacity-1 then 0 .. next_-1, without a
  // modulo per step.
  const WarpSlot capacity = warps_.capacity();
  for (WarpSlot w = next_; w < capacity; ++w) {
    if (warps_.resident(w) && query.can_issue(w)) return w;
  }
  for (WarpSlot w = 0; w < next_; ++w) {
    if (warps_.resident(w) && query.can_issue(w)) return w;
  }
  return std::nullopt;
}

void LrrScheduler::issued(WarpSlot warp) {
  warps_.require(warp, "issued");
  next_ = warp + 1 == warps_.capacity() ? 0 : warp + 1;
}

}  // namespace gpumux
