#include "top/sm_factory.h"

#include <string>

#include "config/gpu_loader.h"
#include "sm/tb/tb_sm.h"
#include "sm/warp/warp_sm.h"

namespace gpumux {

std::vector<std::unique_ptr<SmModule>> build_sms(const GpuConfig& gpu, TbDurationMode duration_mode,
                                                 std::uint64_t seed, TbCompletionListener& listener,
                                                 TbCalendar* calendar, ContextTraffic& context_traffic,
                                                 BandwidthPenalty* penalty) {
  check_perf_sat(gpu);  // Perf-Sat needs warp-level SMs (callers that override the SM model check first)
  std::vector<std::unique_ptr<SmModule>> sms;
  sms.reserve(gpu.num_sms);
  for (std::uint32_t s = 0; s < gpu.num_sms; ++s) {
    const std::string name = "sm_" + std::to_string(s);
    switch (gpu.sm_model) {
      case SmModel::kThreadBlock:
        sms.push_back(std::make_unique<TbSm>(name.c_str(), SmId{s}, gpu, duration_mode, seed, listener,
                                             *calendar, context_traffic, penalty));
        break;
      case SmModel::kWarp:
        sms.push_back(std::make_unique<WarpSm>(name.c_str(), SmId{s}, gpu, listener,
                                               WarpSm::schedulers_from_registry(gpu), context_traffic));
        break;
    }
  }
  return sms;
}

}  // namespace gpumux
