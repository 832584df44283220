#pragma once
// The power and energy model (GpuConfig::power, Awatramani 4.4.1.2): static power per SM while it is not
// power gated plus the chip's other (uncore) static power, and dynamic energy per warp instruction by
// operation class and per bit the memory system moves. Energy = static power x time + dynamic energy;
// average power = energy / time. The constants' sources are in docs/config.md "Power" (each is a cited
// figure or marked as an assumption). Plain C++.

#include <cstdint>
#include <vector>

#include "core/gpu_config.h"
#include "core/types.h"
#include "core/warp_stats.h"

namespace gpumux {

/// One SM as the model reads it.
struct SmPowerInput {
  std::uint32_t sm = 0;
  TimePs gated_ps = 0;  ///< time power gated (no static power)
  OpCounts ops;
};

/// One SM's energy (stats.json power.sms[]).
struct SmEnergy {
  std::uint32_t sm = 0;
  double gated_ns = 0;
  double static_j = 0;
  double dynamic_j = 0;
  double total_j = 0;
};

/// The run's energy over [0, end] (stats.json `power`).
struct PowerReport {
  bool enabled = false;  ///< GpuConfig::power.enabled: stats.json has the section only then
  double time_ns = 0;
  double core_static_j = 0;    ///< the SMs' static energy (not while gated)
  double uncore_static_j = 0;  ///< the chip's other static energy
  double static_j = 0;         ///< core_static_j + uncore_static_j
  double sm_dynamic_j = 0;     ///< warp instructions
  double dram_j = 0;           ///< the memory system's bits
  double dynamic_j = 0;        ///< sm_dynamic_j + dram_j
  double total_j = 0;
  double average_w = 0;  ///< total_j / time
  std::vector<SmEnergy> sms;
};

/// The model over a run of `end_ps`: `sms` in SM order, `memory_bytes` the bytes the memory system moved.
[[nodiscard]] PowerReport power_report(const PowerConfig& config, TimePs end_ps,
                                       const std::vector<SmPowerInput>& sms, std::uint64_t memory_bytes);

}  // namespace gpumux
