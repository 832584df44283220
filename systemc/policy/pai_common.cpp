#include "policy/pai_common.h"

#include <algorithm>

namespace gpumux {

std::uint32_t tbs_alongside(const SmResources& sm, const Occupancy& kernel,
                            const std::vector<std::pair<const Occupancy*, std::uint32_t>>& others) {
  std::uint64_t registers = 0;
  std::uint64_t threads = 0;
  std::uint64_t warps = 0;
  std::uint64_t blocks = 0;
  std::uint64_t shared = 0;
  std::uint32_t carve_out = kernel.shared_memory_config;
  for (const auto& [o, n] : others) {
    registers += std::uint64_t{o->footprint.registers} * n;
    threads += std::uint64_t{o->footprint.threads} * n;
    warps += std::uint64_t{o->footprint.warps} * n;
    shared += std::uint64_t{o->footprint.shared_memory} * n;
    blocks += n;
    carve_out = std::max(carve_out, o->shared_memory_config);
  }
  std::uint64_t fit = kernel.tbs_per_sm;
  const auto limit = [&](std::uint64_t capacity, std::uint64_t used, std::uint64_t need) {
    if (need == 0) return;
    fit = std::min(fit, used >= capacity ? 0 : (capacity - used) / need);
  };
  const TbFootprint& f = kernel.footprint;
  limit(sm.registers, registers, f.registers);
  limit(sm.max_threads, threads, f.threads);
  limit(sm.max_warps, warps, f.warps);
  limit(sm.max_thread_blocks, blocks, 1);
  limit(carve_out, shared, f.shared_memory);
  return static_cast<std::uint32_t>(fit);
}

namespace {
TimePs staircase(std::uint32_t blocks, const KernelStatus& k, std::uint32_t num_sms) {
  const std::uint64_t wave = std::uint64_t{std::max(1U, num_sms)} * std::max(1U, k.occupancy.tbs_per_sm);
  const std::uint64_t waves = (blocks + wave - 1) / wave;
  return waves * k.desc->tb_time.mean_ps;
}
}  // namespace

TimePs staircase_runtime_ps(const KernelStatus& k, std::uint32_t num_sms) {
  return staircase(k.total_tbs, k, num_sms);
}

TimePs staircase_remaining_ps(const KernelStatus& k, std::uint32_t num_sms) {
  return staircase(k.remaining_tbs(), k, num_sms);
}

void hand_out_sms(EngineControl& control, const std::function<std::optional<KernelId>(SmId)>& choose) {
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    const SmId sm{s};
    const SmState state = control.sm(sm).state;
    if (state == SmState::kIdle) {
      const std::optional<KernelId> k = choose(sm);
      if (k && control.can_issue(sm, *k)) control.assign_sm(sm, *k);
    } else if (state == SmState::kRunning) {
      control.request_issue(sm);
    }
  }
}

}  // namespace gpumux
