#include "metrics/workload_class.h"

#include <algorithm>

namespace gpumux {

namespace {
/// Warp instructions per core cycle over every sample run at `blocks` (0 when there is none).
double ipc_at(const std::vector<ClassSm>& sms, std::uint32_t blocks) {
  std::uint64_t instructions = 0;
  std::uint64_t cycles = 0;
  for (const ClassSm& sm : sms) {
    for (const ClassSample& s : sm.samples) {
      if (s.blocks != blocks) continue;
      instructions += s.instructions;
      cycles += s.cycles;
    }
  }
  return cycles == 0 ? 0.0 : static_cast<double>(instructions) / static_cast<double>(cycles);
}
}  // namespace

WorkloadClass classify_workload(std::uint32_t n_max, const std::vector<ClassSm>& sms) {
  WorkloadClass out;
  std::vector<std::uint32_t> detected;
  for (const ClassSm& sm : sms) {
    if (sm.settled) detected.push_back(sm.detected);
  }
  if (detected.empty()) {
    out.reason = sms.empty() ? "Perf-Sat did not run for it" : "Perf-Sat settled on no SM before it finished";
    return out;
  }
  std::sort(detected.begin(), detected.end());
  // The lower median: with an even count, the smaller of the middle two (deterministic, an integer).
  const std::uint32_t d = detected[(detected.size() - 1) / 2];
  out.detected = d;
  out.ipc_at_detected = ipc_at(sms, d);
  if (d >= n_max) {
    out.name = "C-strong";
    return out;
  }
  out.ipc_above = ipc_at(sms, d + 1);
  if (out.ipc_at_detected == 0.0 || out.ipc_above == 0.0) {
    out.reason = "no Perf-Sat sample at " + std::to_string(out.ipc_at_detected == 0.0 ? d : d + 1) +
                 " thread blocks to compare";
    return out;
  }
  out.name = out.ipc_above < out.ipc_at_detected * (1.0 - kSaturationThreshold) ? "MEM" : "C-weak";
  return out;
}

}  // namespace gpumux
