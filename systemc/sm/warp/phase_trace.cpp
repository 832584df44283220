#include "sm/warp/phase_trace.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "sm/warp/warp_sm.h"

namespace gpumux {

void PhaseSample::add_warp(std::size_t kernel, std::uint32_t phase, std::size_t phases) {
  if (kernel >= warps.size()) warps.resize(kernel + 1);
  std::vector<std::uint32_t>& by_phase = warps[kernel];
  if (by_phase.size() < phases) by_phase.resize(phases, 0);
  if (phase >= by_phase.size()) by_phase.resize(static_cast<std::size_t>(phase) + 1, 0);
  if (std::find(present.begin(), present.end(), kernel) == present.end()) present.push_back(kernel);
  ++by_phase[phase];
}

void PhaseSample::clear() {
  for (const std::size_t k : present) std::fill(warps[k].begin(), warps[k].end(), 0);
  present.clear();
  alu_in_flight = 0;
  loads_in_flight = 0;
}

PhaseTrace::PhaseTrace(const std::string& path, double core_clock_mhz, std::uint64_t interval_cycles,
                       std::uint32_t num_sms, std::uint32_t max_warps_per_sm,
                       const std::string& warp_scheduler)
    : path_(path), out_(path), clock_(core_clock_mhz), interval_(interval_cycles) {
  if (interval_ < kMinInterval || interval_ > kMaxInterval) {
    throw InputError("--phase-trace-interval must be between " + std::to_string(kMinInterval) + " and " +
                     std::to_string(kMaxInterval) + " cycles, got " + std::to_string(interval_));
  }
  if (!out_) throw InputError("--phase-trace: cannot write '" + path_ + "'");
  out_ << "{\"format\": \"gpumux-phase-trace\", \"version\": 1, \"interval_cycles\": " << interval_
       << ", \"core_clock_mhz\": " << nlohmann::json(core_clock_mhz).dump() << ", \"sms\": " << num_sms
       << ", \"max_warps_per_sm\": " << max_warps_per_sm
       << ", \"warp_scheduler\": " << nlohmann::json(warp_scheduler).dump() << ",\n\"samples\": [";
}

void PhaseTrace::record_until(TimePs now) {
  while (next_ps_ <= now) {
    record(next_cycle_);
    next_cycle_ += interval_;
    next_ps_ = clock_.ps_of(next_cycle_);
  }
}

void PhaseTrace::record(std::uint64_t cycle) {
  sample_.clear();
  for (const WarpSm* sm : sms_) sm->add_phase_counts(cycle, sample_);
  std::sort(sample_.present.begin(), sample_.present.end());

  std::uint64_t active = 0;
  for (const std::size_t k : sample_.present) {
    for (const std::uint32_t n : sample_.warps[k]) active += n;
  }
  out_ << (samples_ == 0 ? "\n" : ",\n") << "{\"cycle\": " << cycle
       << ", \"time_ps\": " << clock_.ps_of(cycle) << ", \"active_warps\": " << active
       << ", \"alu_in_flight\": " << sample_.alu_in_flight
       << ", \"loads_in_flight\": " << sample_.loads_in_flight << ", \"kernels\": [";
  bool first = true;
  for (const std::size_t k : sample_.present) {
    const std::vector<std::uint32_t>& by_phase = sample_.warps[k];
    out_ << (first ? "" : ", ") << "{\"kernel\": " << k << ", \"warps_by_phase\": [";
    for (std::size_t p = 0; p < by_phase.size(); ++p) out_ << (p == 0 ? "" : ", ") << by_phase[p];
    out_ << "]}";
    first = false;
  }
  out_ << "]}";
  ++samples_;
}

void PhaseTrace::finish(TimePs end_ps, const std::vector<PhaseTraceKernel>& kernels) {
  record_until(end_ps);
  out_ << "\n],\n\"end_ps\": " << end_ps << ",\n\"kernels\": [";
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    out_ << (k == 0 ? "\n" : ",\n") << "{\"kernel\": " << k
         << ", \"name\": " << nlohmann::json(kernels[k].name).dump()
         << ", \"process\": " << kernels[k].process << ", \"phases\": " << kernels[k].phases << "}";
  }
  out_ << "\n]}\n";
  out_.close();
  if (!out_) throw InputError("--phase-trace: cannot write '" + path_ + "'");
}

}  // namespace gpumux
