#include "sm/warp_scheduler/gto.h"

namespace gpumux {

GtoScheduler::GtoScheduler(const WarpSchedulerSetup& setup) : warps_(setup.capacity) {}

void GtoScheduler::add_warp(WarpSlot warp, std::uint64_t age, const WarpQuery& /*query*/) {
  warps_.add(warp, age);
}

void GtoScheduler::remove_warp(WarpSlot warp) {
  warps_.remove(warp);
  if (last_ == warp) last_.reset();  // the slot may be reused by a younger warp
}

// Single level: waiting warps stay in the one queue; the SM reports them as unable to issue.
void GtoScheduler::long_latency_wait(WarpSlot warp) { warps_.require(warp, "long_latency_wait"); }

void GtoScheduler::long_latency_done(WarpSlot warp, const WarpQuery& /*query*/) {
  warps_.require(warp, "long_latency_done");
}

std::optional<WarpSlot> GtoScheduler::select(const WarpQuery& query) {
  if (last_ && query.can_issue(*last_)) return last_;
  for (const WarpSlot w : warps_.oldest_first()) {
    if (w != last_ && query.can_issue(w)) return w;
  }
  return std::nullopt;
}

void GtoScheduler::issued(WarpSlot warp) {
  warps_.require(warp, "issued");
  last_ = warp;
}

}  // namespace gpumux
