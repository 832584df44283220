#pragma once
// Builds the SMs of a run from the GPU config's sm.model (docs/architecture.md "The SM interface and the two
// SM models"): `tb` gives TB-level SMs (sm/tb/), `warp` warp-level SMs (sm/warp/). Everything else in the
// system sees only SmModule / SmPort.

#include <cstdint>
#include <memory>
#include <vector>

#include "core/gpu_config.h"
#include "core/workload.h"
#include "sm/context_traffic.h"
#include "sm/sm_model.h"
#include "sm/tb/bandwidth_penalty.h"
#include "sm/tb/tb_calendar.h"

namespace gpumux {

/// One SM per gpu.num_sms, named sm_0 .., created in the current module (call it from a module's
/// constructor). Completions go to `listener`. TB-level SMs share `calendar` (their completion times; not
/// null for sm.model tb), every SM `context_traffic` (its context saves and restores), and `penalty`
/// (nullptr: no TB-level memory interference); warp-level SMs meet in the memory system itself and ignore it.
[[nodiscard]] std::vector<std::unique_ptr<SmModule>> build_sms(
    const GpuConfig& gpu, TbDurationMode duration_mode, std::uint64_t seed, TbCompletionListener& listener,
    TbCalendar* calendar, ContextTraffic& context_traffic, BandwidthPenalty* penalty);

}  // namespace gpumux
