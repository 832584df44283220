#pragma once
// The physical ranges of config values that several loaders share (docs/config.md "Ranges").
// Each bound is far beyond any real GPU or workload in the seed papers, so it only ever catches
// typos and values whose conversions would overflow the model's picosecond clock.

#include <cstdint>

#include "config/yaml_reader.h"
#include "core/types.h"

namespace gpumux::config {

/// Longest mean thread-block time: one minute (Parboil's longest is ~2.4 ms, Tanasic Table 1).
inline constexpr double kMaxTbMeanPs = 60e12;
/// Thread-block time spread, %RSD. Pai Table 3's largest is 66%; a lognormal with more than 500%
/// puts almost every draw near zero and a few near the time horizon.
inline constexpr double kMaxRsdPercent = 500;
/// Back-to-back launches of one kernel command, and runs of a process.
inline constexpr std::uint32_t kMaxLaunches = 1'000'000;
inline constexpr std::uint32_t kMaxRepeat = 1'000'000;
/// Kernel launches of a whole workload, over every run of every process: each is a record in the
/// model's tables and in stats.json (100,000 launches: ~250 MB and a 21 MB stats.json).
inline constexpr std::uint64_t kMaxWorkloadLaunches = 1'000'000;
/// One host-device copy: 1 TiB, more than any GPU's memory.
inline constexpr std::uint64_t kMaxCopyBytes = std::uint64_t{1} << 40U;
/// One CPU phase or a process's arrival: one hour.
inline constexpr double kMaxCpuPhasePs = 3600e12;

/// A `rsd_percent` / `tb_rsd_percent` value in [0, kMaxRsdPercent].
[[nodiscard]] inline double read_rsd_percent(const YamlNode& node) {
  return node.as_number_in(0, kMaxRsdPercent, "%");
}

}  // namespace gpumux::config
