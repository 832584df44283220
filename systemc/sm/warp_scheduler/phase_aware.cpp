#include "sm/warp_scheduler/phase_aware.h"

namespace gpumux {

PhaseAwareScheduler::PhaseAwareScheduler(const WarpSchedulerSetup& setup) : warps_(setup.capacity) {}

void PhaseAwareScheduler::add_warp(WarpSlot warp, std::uint64_t age, const WarpQuery& /*query*/) {
  warps_.add(warp, age);
}

void PhaseAwareScheduler::remove_warp(WarpSlot warp) { warps_.remove(warp); }

// Single level: waiting warps stay in the one queue; the SM reports them as unable to issue.
void PhaseAwareScheduler::long_latency_wait(WarpSlot warp) { warps_.require(warp, "long_latency_wait"); }

void PhaseAwareScheduler::long_latency_done(WarpSlot warp, const WarpQuery& /*query*/) {
  warps_.require(warp, "long_latency_done");
}

std::optional<WarpSlot> PhaseAwareScheduler::select(const WarpQuery& query) {
  // Oldest first with a strict `<`, so the oldest of equally distant warps wins. The distance (a
  // table read) is compared before can_issue (the scoreboard), which is asked only of a warp that
  // would win; a distance of 0 cannot be beaten, so the scan stops there.
  std::optional<WarpSlot> best;
  std::uint32_t best_distance = 0;
  for (const WarpSlot w : warps_.oldest_first()) {
    const std::uint32_t distance = query.phase_distance(w);
    if ((!best || distance < best_distance) && query.can_issue(w)) {
      best = w;
      best_distance = distance;
      if (distance == 0) break;
    }
  }
  return best;
}

// No state: the next decision depends only on the distances, which the issue itself changes.
void PhaseAwareScheduler::issued(WarpSlot warp) { warps_.require(warp, "issued"); }

}  // namespace gpumux
