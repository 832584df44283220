#include "metrics/activity_log.h"

#include <algorithm>

namespace gpumux {

void ActivityLog::on_tb(const TbStretch& stretch) {
  const std::pair<std::uint32_t, std::uint32_t> key{index(stretch.kernel), stretch.tb};
  Stretch s{stretch, ++runs_[key], stretch.start_ps};
  if (const auto it = restores_.find(key); it != restores_.end()) {
    // The restore belongs to this stretch when it began within it (a block saved while its context
    // was still coming back has no run after it).
    const auto [restore_start, restore_end] = it->second;
    if (restore_start >= stretch.start_ps && restore_start <= stretch.end_ps) {
      s.restored_ps = std::min(restore_end, stretch.end_ps);
    }
    restores_.erase(it);
  }
  stretches_.push_back(s);
}

void ActivityLog::on_tb_restored(SmId /*sm*/, KernelId kernel, std::uint32_t tb, TimePs start_ps,
                                 TimePs done_ps) {
  restores_[{index(kernel), tb}] = {start_ps, done_ps};
}

void ActivityLog::on_setup(SmId sm, TimePs start_ps, TimePs end_ps) {
  setups_.push_back({index(sm), start_ps, end_ps});
}

void ActivityLog::on_ksrt(std::uint32_t slot, KernelId kernel, bool occupied, TimePs time_ps) {
  ksrt_changes_.push_back(
      {slot, time_ps, occupied ? std::optional<KernelId>(kernel) : std::nullopt, std::nullopt});
}

void ActivityLog::on_ksrt_state(std::uint32_t slot, KernelId kernel, KsrtState state, TimePs time_ps) {
  ksrt_changes_.push_back({slot, time_ps, kernel, state});
}

void ActivityLog::on_tokens(std::uint32_t slot, std::optional<std::int32_t> tokens, TimePs time_ps) {
  token_changes_.push_back({slot, time_ps, tokens});
}

void ActivityLog::on_smst(SmId sm, TimePs time_ps, SmState state, std::optional<KernelId> kernel,
                          std::optional<KernelId> next) {
  smst_changes_.push_back({index(sm), time_ps, state, kernel, next});
}

void ActivityLog::on_warp_activity(SmId sm, TimePs time_ps, std::uint32_t active_warps, std::uint32_t issued,
                                   std::uint32_t units) {
  warp_samples_.push_back({index(sm), time_ps, active_warps, issued, units});
}

}  // namespace gpumux
