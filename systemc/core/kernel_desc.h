#pragma once
// A kernel as a library describes it: grid size, per-TB resources and thread-block timing profile.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/types.h"
#include "program/program.h"

namespace gpumux {

/// How long one thread block runs when its kernel runs alone (TB-level SM model).
struct TbTimeProfile {
  TimePs mean_ps = 0;
  double rsd_percent = 0;  ///< relative standard deviation, 100 * stddev / mean (Pai Table 3)
};

/// What one thread block moves through the memory system, for memory interference at the thread-block
/// level (sm/tb/bandwidth_penalty.h; library key `memory:`, docs/config.md). Measured from the kernel's
/// warp-level program alone on the dram model (scripts/gen-kernel-memory) or given by hand.
struct TbMemoryProfile {
  double bytes_per_tb = 0;    ///< bytes of L2 sectors its loads and stores touch
  double l2_hit_percent = 0;  ///< share of those bytes that never reach DRAM (reads served, writes merged)
  [[nodiscard]] double dram_bytes_per_tb() const { return bytes_per_tb * (1.0 - l2_hit_percent / 100.0); }
};

/// How a kernel and its co-runners slow each other through the memory system at the thread-block level,
/// as Bubble-Up measures it (sm/tb/bandwidth_penalty.h; library key `interference:`, docs/config.md).
/// Measured at the warp level against a reference streaming kernel, the bubble
/// (scripts/gen-kernel-sensitivity), or given by hand.
struct TbInterferenceProfile {
  /// One point of a sensitivity curve: the kernel's slowdown beside the bubble at `gb_per_s`.
  struct Point {
    double gb_per_s = 0;
    double slowdown = 1;
  };
  /// What its thread blocks on one SM at full occupancy do to co-runners, in bubble GB/s (Bubble-Up's
  /// bubble score). 0: no pressure.
  double pressure_per_sm_gb_per_s = 0;
  /// Its slowdown against the bubble's bandwidth, gb_per_s strictly ascending; empty: insensitive.
  std::vector<Point> sensitivity;
  [[nodiscard]] bool any() const { return pressure_per_sm_gb_per_s > 0 || !sensitivity.empty(); }
};

struct KernelDesc {
  std::string name;
  std::string library;    ///< library name (file stem), e.g. "parboil"
  std::string benchmark;  ///< application the kernel belongs to, e.g. "lbm"
  SourceLocation where;   ///< where the kernel is defined, for error messages
  std::uint32_t thread_blocks = 0;
  std::uint32_t threads_per_tb = 0;
  std::uint32_t registers_per_tb = 0;
  std::uint32_t shared_memory_per_tb = 0;  ///< bytes
  std::uint32_t launches = 1;              ///< default number of back-to-back launches of one kernel command
  /// Optional grouping labels, e.g. Tanasic Table 1 "Class 1" (by kernel time) and "Class 2" (by
  /// application time): SHORT / MEDIUM / LONG. Empty when the library gives none.
  std::string class1;
  std::string class2;
  TbTimeProfile tb_time;
  /// Device memory the kernel's application allocates (library key `global_memory_bytes`; Liang 3.2's
  /// G_i, the memory-capacity constraint of Eq. 4); 0 when the library gives none.
  std::uint64_t global_memory_bytes = 0;
  /// Memory traffic per thread block; zero bytes when the library gives none (no interference).
  TbMemoryProfile memory;
  /// Pressure on and sensitivity to co-runners; empty when the library gives none (Eq. 3 alone).
  TbInterferenceProfile interference;
  /// One warp's instruction stream (`program:`, docs/config.md "Kernel programs"), compiled and
  /// phase-annotated for the library's GPU; null when the library gives none (TB-level only).
  std::shared_ptr<const program::Program> program;
  /// Published figures the model is validated against (e.g. tbs_per_sm, save_time_us), keyed as in
  /// the library file. Never read by the model itself.
  std::map<std::string, double> reference;
};

}  // namespace gpumux
