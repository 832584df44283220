#include "metrics/workload_class.h"

#include <algorithm>
#include <utility>

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

namespace {
/// Perf-Sat's records of launch `launch` as the workload-class rule reads them.
std::vector<ClassSm> class_input(const PerfSatResult& perf_sat, std::size_t launch) {
  std::vector<ClassSm> sms;
  for (const PerfSatTrace& rec : perf_sat.records) {
    if (rec.launch != launch) continue;
    ClassSm sm;
    sm.detected = rec.detected;
    sm.settled = rec.settled;
    for (const PerfSatSampleTrace& smp : rec.samples) {
      sm.samples.push_back({smp.blocks, smp.instructions, smp.cycles});
    }
    sms.push_back(std::move(sm));
  }
  return sms;
}
}  // namespace

KernelPerfSat kernel_perf_sat(const PerfSatResult& perf_sat, std::size_t launch, std::uint32_t tbs_per_sm) {
  KernelPerfSat k;
  k.n_max = tbs_per_sm;
  const std::vector<ClassSm> sms = class_input(perf_sat, launch);
  double sum = 0;
  for (const ClassSm& sm : sms) {
    k.detected_min = k.sms == 0 ? sm.detected : std::min(k.detected_min, sm.detected);
    k.detected_max = std::max(k.detected_max, sm.detected);
    sum += sm.detected;
    ++k.sms;
    if (sm.settled) ++k.settled;
  }
  k.detected_mean = k.sms == 0 ? 0.0 : sum / k.sms;
  k.workload_class = classify_workload(tbs_per_sm, sms);
  return k;
}

}  // namespace gpumux
