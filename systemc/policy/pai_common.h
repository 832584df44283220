#pragma once
// Helpers shared by the Pai et al. policies (mpmax, srtf, srtf-adaptive, srtf-oracle, sjf, ljf):
// how many thread blocks of a kernel fit beside others on an SM, the staircase runtime the oracles
// know, and handing idle SMs out.

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "policy/policy.h"

namespace gpumux {

/// Most thread blocks of `kernel` that fit on an empty SM beside `others` (count TBs of each), by
/// registers, threads, warps, TB slots and shared memory (the SM's carve-out taken as the largest of
/// the kernels' own), and at most the kernel's residency alone. 0 when not even one fits.
[[nodiscard]] std::uint32_t tbs_alongside(
    const SmResources& sm, const Occupancy& kernel,
    const std::vector<std::pair<const Occupancy*, std::uint32_t>>& others);

/// Pai Eq. 1 for the whole grid on N_SM SMs with the profile's mean t: ceil(B / (N_SM * R)) * t,
/// R the residency alone. What the sjf/ljf oracles know of each kernel (its isolated runtime).
[[nodiscard]] TimePs staircase_runtime_ps(const KernelStatus& k, std::uint32_t num_sms);
/// The same for the thread blocks not yet completed: ceil((B - done) / (N_SM * R)) * t (srtf-oracle).
[[nodiscard]] TimePs staircase_remaining_ps(const KernelStatus& k, std::uint32_t num_sms);

/// Sets up every idle SM for the kernel `choose(sm)` names (when it can issue there) and asks every
/// running SM to issue, so a changed decision takes effect wherever there is room now.
void hand_out_sms(EngineControl& control, const std::function<std::optional<KernelId>(SmId)>& choose);

}  // namespace gpumux
