#pragma once
// A kernel's profile for spatial-temporal multitasking (Liang et al. 3.2): its latency R[m] and the
// memory bandwidth it achieves B[m] when it is given m of the GPU's M SMs, m = 1..M, measured once per
// kernel (`gpumux profile`, the paper's dummy-kernel method), and its global memory size G. Plain C++:
// the STM estimate and heuristic (stm/estimate.h, stm/schedule.h) read it; no SystemC types.

#include <cstdint>
#include <string>
#include <vector>

namespace gpumux::stm {

struct KernelProfile {
  std::string kernel;                     ///< kernel name in its library
  std::uint32_t thread_blocks = 0;        ///< TB_i
  std::uint64_t global_memory_bytes = 0;  ///< G_i (library key `global_memory`), 0: not given
  double tb_latency_ns = 0;               ///< mean thread-block latency alone on the whole GPU (step 1)
  /// R[m]: latency of the whole kernel with m SMs, ns; index m - 1, m = 1..M.
  std::vector<double> latency_ns;
  /// B[m]: DRAM bandwidth the kernel achieves with m SMs, GB/s; index m - 1.
  std::vector<double> bandwidth_gb_per_s;

  // R and B are Liang's names (R_i[m], B_i[m], Eqs. 2-3), kept so the code reads as the equations.
  // NOLINTNEXTLINE(readability-identifier-naming)
  [[nodiscard]] double R(std::uint32_t m) const { return latency_ns.at(m - 1); }
  // NOLINTNEXTLINE(readability-identifier-naming)
  [[nodiscard]] double B(std::uint32_t m) const { return bandwidth_gb_per_s.at(m - 1); }
};

/// The profiles of one GPU: what `gpumux profile` writes and the `stm` policy reads.
struct ProfileSet {
  std::string gpu;                        ///< GPU name
  std::uint32_t sms = 0;                  ///< M
  double peak_bandwidth_gb_per_s = 0;     ///< Pb (Eq. 3)
  std::uint64_t global_memory_bytes = 0;  ///< Gb (Eq. 4), 0: unlimited
  std::string sm_model;                   ///< "tb" or "warp": the SM model the profiles were measured on
  std::string memory_model;               ///< "simple" or "dram"
  /// How R[m] was measured (`gpumux profile --method`): "dummy" (Liang 3.2) or "partition" (alone on m SMs).
  std::string method = "dummy";
  std::vector<KernelProfile> kernels;

  /// The profile of `kernel`, or nullptr.
  [[nodiscard]] const KernelProfile* find(const std::string& kernel) const;
};

/// Reads a profile file (YAML, docs/config.md "Profile files"). InputError (exit 2) naming file, line
/// and key for malformed YAML, unknown keys, missing keys, wrong types, a latency or bandwidth list whose
/// length is not `sms`, a non-positive latency or negative bandwidth, `sms` outside 1..1024, a kernel
/// name given twice.
[[nodiscard]] ProfileSet load_profile_file(const std::string& path);

/// Writes `profiles` as YAML that load_profile_file reads back exactly (numbers with 17 significant
/// digits; written again, the same text). std::invalid_argument for profiles the reader would reject
/// (a programming error: wrong list lengths, non-positive latencies, duplicate names, ...); InputError
/// when the file cannot be written.
void write_profile_file(const std::string& path, const ProfileSet& profiles);

}  // namespace gpumux::stm
