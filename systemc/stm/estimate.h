#pragma once
// The performance estimate of spatial-temporal multitasking (Liang et al., TPDS 2015, 3.2): from the
// kernels' profiles alone (stm/kernel_profile.h), the latency of running a set of kernels concurrently
// with a given SM allocation, and its improvement over running them one after another. Plain C++, no
// SystemC types: the STM heuristic and the exhaustive optimum (stm/schedule.h) call these functions
// hundreds of thousands of times.
//
// Programming errors (a kernel index out of range, an allocation of 0 SMs or more SMs than the GPU has,
// a kernel twice in one configuration) throw std::invalid_argument: configurations are built by code,
// never read from a user's file.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stm/kernel_profile.h"

namespace gpumux::stm {

/// One 2-tuple <k_i, sm_i> of Definition 1: the kernel at position `kernel` of ProfileSet::kernels is
/// given `sms` SMs. A kernel given no SMs is not in the configuration (Algorithm 1, m = 0).
struct Allocation {
  std::size_t kernel = 0;  ///< index into ProfileSet::kernels
  std::uint32_t sms = 0;   ///< sm_i >= 1

  friend bool operator==(const Allocation& a, const Allocation& b) {
    return a.kernel == b.kernel && a.sms == b.sms;
  }
  friend bool operator!=(const Allocation& a, const Allocation& b) { return !(a == b); }
};

/// A concurrent kernel set configuration C (Definition 1): distinct kernels, each with its SMs, together
/// using SM_C = sum sm_i <= M SMs. The order matters only for ties: the leaky bucket grants ties to the
/// earlier kernel (DRR below). Definition 1 asks sm_i < M; a kernel alone on all M SMs is allowed here,
/// as Algorithm 1's own Config[1][M] = {<k_1, M>} is (the sequential fallback).
using Configuration = std::vector<Allocation>;

/// SM_C = sum of sm_i (Eq. 2).
[[nodiscard]] std::uint32_t sms_used(const Configuration& c);

/// std::invalid_argument unless `c` is a valid configuration of `profiles` (see the file comment).
void check_configuration(const ProfileSet& profiles, const Configuration& c);

/// Per-thread-block latency of `kernel` given m SMs (3.2): R[m] * m / TB, ns. Each of the m SMs runs one
/// thread block at a time in this model, so TB blocks in R[m] make TB / m rounds of this latency.
[[nodiscard]] double per_tb_latency_ns(const KernelProfile& kernel, std::uint32_t m);

/// The leaky-bucket interleave order of thread blocks (4.1, Fig. 5): kernel i (a position in `shares`)
/// has `thread_blocks[i]` blocks and receives shares[i] / sum of shares of the dispatches. Drawn from
/// LeakyBucketReference (policy/leaky_bucket_reference.h) exactly as the `leaky-bucket` policy drives it
/// without rate compensation: rate_i = shares[i] x 256, every capacity = the sum of the active rates, ties
/// to the lower position; a kernel whose blocks are all granted leaves (its bucket is deactivated) and the
/// others' capacity shrinks to keep their proportions. Shares must be >= 1.
[[nodiscard]] std::vector<std::size_t> interleave_order(const std::vector<std::uint32_t>& shares,
                                                        const std::vector<std::uint32_t>& thread_blocks);

/// DRR(C), the dynamic round robin estimate (3.2, Fig. 4), ns: SM_C SMs each run one thread block at a
/// time; the kernels' blocks come in interleave_order(sm_i, TB_i); the first SM_C fill the SMs 0..SM_C-1,
/// each later one goes to the SM that frees first (the lowest index on ties); a block of k_i takes
/// per_tb_latency_ns(k_i, sm_i). The result is the finish time of the last block; 0 for an empty C.
/// O(T log SM_C + T n) for T blocks of n kernels.
[[nodiscard]] double drr_latency_ns(const ProfileSet& profiles, const Configuration& c);

/// penalty(C), Eq. 3: sum B_i[sm_i] / Pb when the kernels ask more than the peak bandwidth Pb, else 1.
[[nodiscard]] double penalty(const ProfileSet& profiles, const Configuration& c);

/// con_lat(C), Eq. 4, ns: +infinity when the kernels' global memory sum G_i exceeds the GPU's Gb (Gb 0:
/// unlimited), else DRR(C) x penalty(C).
[[nodiscard]] double con_lat_ns(const ProfileSet& profiles, const Configuration& c);

/// seq_lat(C), Eq. 2, ns: sum R_i[SM_C], the kernels one after another, each on all SM_C SMs.
[[nodiscard]] double seq_lat_ns(const ProfileSet& profiles, const Configuration& c);

/// imp(C), Eq. 1, ns: seq_lat(C) - con_lat(C); -infinity when the kernels do not fit in memory together.
[[nodiscard]] double imp_ns(const ProfileSet& profiles, const Configuration& c);

/// The estimated latency of `c` run as one phase of a schedule, ns: a kernel alone is its own profile,
/// R_i[sm_i] (measured: DRR would add the tail of its last round, which R already holds, and Eq. 4's
/// memory test does not apply to one kernel); two or more kernels con_lat(C). The latency of a schedule
/// is the sum over its phases (3.1: phases do not overlap).
[[nodiscard]] double phase_latency_ns(const ProfileSet& profiles, const Configuration& c);

/// "{va:5, bs:10}": kernel names and SMs in configuration order.
[[nodiscard]] std::string to_string(const ProfileSet& profiles, const Configuration& c);

}  // namespace gpumux::stm
