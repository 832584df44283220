#include "metrics/power_model.h"

namespace gpumux {

PowerReport power_report(const PowerConfig& config, TimePs end_ps, const std::vector<SmPowerInput>& sms,
                         std::uint64_t memory_bytes) {
  PowerReport r;
  r.enabled = true;
  r.time_ns = static_cast<double>(end_ps) / 1e3;
  const double seconds = static_cast<double>(end_ps) / 1e12;
  for (const SmPowerInput& in : sms) {
    SmEnergy e;
    e.sm = in.sm;
    e.gated_ns = static_cast<double>(in.gated_ps) / 1e3;
    // 4.4.1.2: static power scales with the cores that are not gated; a paused core still leaks.
    const TimePs on_ps = in.gated_ps < end_ps ? end_ps - in.gated_ps : 0;
    e.static_j = config.core_static_w * static_cast<double>(on_ps) / 1e12;
    e.dynamic_j = 1e-9 * (config.alu_nj * static_cast<double>(in.ops.alu) +
                          config.sfu_nj * static_cast<double>(in.ops.sfu) +
                          config.shared_nj * static_cast<double>(in.ops.shared) +
                          config.global_nj * static_cast<double>(in.ops.global));
    e.total_j = e.static_j + e.dynamic_j;
    r.core_static_j += e.static_j;
    r.sm_dynamic_j += e.dynamic_j;
    r.sms.push_back(e);
  }
  r.uncore_static_j = config.uncore_static_w * seconds;
  r.static_j = r.core_static_j + r.uncore_static_j;
  r.dram_j = 1e-12 * config.dram_pj_per_bit * 8.0 * static_cast<double>(memory_bytes);
  r.dynamic_j = r.sm_dynamic_j + r.dram_j;
  r.total_j = r.static_j + r.dynamic_j;
  r.average_w = seconds > 0 ? r.total_j / seconds : 0.0;
  return r;
}

}  // namespace gpumux
