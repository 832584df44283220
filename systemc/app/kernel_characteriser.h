#pragma once
// Kernelet's inputs, measured (Zhong and He 4.1, 4.3, 4.4): each kernel's short pre-execution alone (a few
// waves of its grid) gives its IPC, PUR and MUR; its program gives the instruction mix (Rm, the uncoalesced
// share, instructions per thread block); probe kernels give the GPU's memory latency against the number of
// outstanding requests (the model's linear latency, 4.4); optionally every kernel sliced at every multiple
// of the SM count (4.1's smallest slice with at most 2% overhead; Fig. 6) and every pair of kernels at every
// fitting ratio (the pair IPCs the paper's OPT pre-executes, 5.1). Every run is a simulation of its own, at
// the warp level (a forked child, several at a time).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu_config.h"
#include "core/kernel_desc.h"
#include "core/types.h"
#include "kernelet/characterisation.h"

namespace gpumux {

struct CharacteriserOptions {
  unsigned jobs = 1;
  std::uint64_t seed = 1;
  unsigned wall_timeout_s = 0;
  /// Waves of the grid (N_SM x TBs per SM thread blocks each) the pre-execution runs, at most the grid.
  std::uint32_t waves = 2;
  /// Measure the slicing overhead at every slice size N_SM x j, j = 1..TBs per SM (4.1, Fig. 6).
  bool slicing = false;
  /// Waves of the grid the slicing runs use (0: the whole grid, as the paper's Fig. 6).
  std::uint32_t slicing_waves = 0;
  double slicing_limit = 0.02;  ///< 4.1: p% = 2%
  TimePs gap_ps = 3'000'000;    ///< the kernelet policy's slice launch cost (policy/kernelet.h)
  /// Measure every pair of kernels at every ratio that fits (OPT's pre-execution, 5.1).
  bool pairs = false;
  /// Waves of each kernel's share in a pair run.
  std::uint32_t pair_waves = 4;
  std::function<void(const std::string&)> progress;
};

/// What the characterisation measured besides the file's contents, by named fields: per kernel its
/// pre-execution (cycles, instructions, DRAM bytes), the latency probe's points and fit, and the slicing
/// curves (slice size, time, overhead) for docs/validation.md's Fig. 6.
struct CharacterisationReport {
  kernelet::Characterisation characterisation;
  nlohmann::json details;
};

/// Characterises `kernels` on `gpu` (must be warp-level). InputError for a kernel that does not fit on an
/// SM or has no program; SimulationFailed when a run fails.
[[nodiscard]] CharacterisationReport characterise_kernels(
    const GpuConfig& gpu, const std::vector<std::shared_ptr<const KernelDesc>>& kernels,
    const CharacteriserOptions& options);

/// `kernel` cut to its first `thread_blocks` blocks (a pre-execution's grid), renamed "<name>" unchanged.
[[nodiscard]] std::shared_ptr<const KernelDesc> with_grid(const KernelDesc& kernel,
                                                          std::uint32_t thread_blocks);

}  // namespace gpumux
