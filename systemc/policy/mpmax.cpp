#include "policy/mpmax.h"

#include <algorithm>
#include <utility>

#include "policy/pai_common.h"

namespace gpumux {

std::vector<KernelId> MpmaxPolicy::running_set(const EngineControl& control) {
  std::vector<KernelId> set;
  for (KernelId k : control.active_kernels()) {
    if (control.kernel(k).has_tbs_to_issue()) set.push_back(k);
  }
  return set;
}

void MpmaxPolicy::update(EngineControl& control) {
  std::vector<KernelId> set = running_set(control);
  if (set == limited_for_) return;
  ++recomputations_;
  const SmResources& res = control.sm_resources();
  std::vector<std::pair<KernelId, std::uint32_t>> limits;
  if (set.size() >= 2 && res.max_resident_kernels >= 2) {
    for (KernelId k : set) {
      // Room for one thread block of each co-runner, as many co-runners as may share the SM.
      std::vector<std::pair<const Occupancy*, std::uint32_t>> others;
      for (KernelId o : set) {
        if (o == k || others.size() + 1 >= res.max_resident_kernels) continue;
        others.emplace_back(&control.kernel(o).occupancy, 1);
      }
      const Occupancy& occ = control.kernel(k).occupancy;
      const std::uint32_t limit = std::max(1U, tbs_alongside(res, occ, others));
      if (limit < occ.tbs_per_sm) limits.emplace_back(k, limit);
    }
  }
  // Lift the limits no longer wanted (co-running ended for that kernel), then set the new ones.
  for (KernelId k : limited_) {
    const bool kept = std::any_of(limits.begin(), limits.end(), [&](const auto& l) { return l.first == k; });
    if (kept) continue;
    for (std::uint32_t s = 0; s < control.num_sms(); ++s) control.set_residency_limit(SmId{s}, k, 0);
  }
  limited_.clear();
  for (const auto& [k, limit] : limits) {
    for (std::uint32_t s = 0; s < control.num_sms(); ++s) control.set_residency_limit(SmId{s}, k, limit);
    limited_.push_back(k);
  }
  limited_for_ = std::move(set);
  hand_out_sms(control, [&](SmId sm) { return first_issuable(sm, control); });
}

std::optional<KernelId> MpmaxPolicy::first_issuable(SmId sm, const EngineControl& control) {
  // FIFO: a kernel issues until its MPMax limit (or the SM) is full, then the next one in order.
  for (KernelId k : control.active_kernels()) {
    if (control.can_issue(sm, k)) return k;
  }
  return std::nullopt;
}

void MpmaxPolicy::on_kernel_arrival(KernelId /*kernel*/, EngineControl& control) {
  update(control);
  hand_out_sms(control, [&](SmId sm) { return first_issuable(sm, control); });
}

void MpmaxPolicy::on_sm_idle(SmId sm, EngineControl& control) {
  if (const auto k = first_issuable(sm, control)) control.assign_sm(sm, *k);
}

void MpmaxPolicy::on_tb_finished(SmId /*sm*/, KernelId /*kernel*/, TimePs /*duration_ps*/,
                                 EngineControl& control) {
  update(control);
}

void MpmaxPolicy::on_kernel_finished(KernelId /*kernel*/, EngineControl& control) {
  update(control);
  hand_out_sms(control, [&](SmId sm) { return first_issuable(sm, control); });
}

std::optional<KernelId> MpmaxPolicy::select_kernel(SmId sm, const EngineControl& control) {
  return first_issuable(sm, control);
}

}  // namespace gpumux
