#pragma once
// Liang 3.2's profiling: each kernel's latency R[m] and achieved DRAM bandwidth B[m] for m = 1..M SMs,
// by the paper's dummy-kernel method. The kernel runs beside a dummy kernel that computes but neither
// progresses it nor touches memory; the leaky bucket interleaves their thread blocks m : (M - m), and the
// dummy has ceil(TB (M - m) / m) thread blocks of the kernel's mean thread-block latency, so the kernel
// holds about m SMs for its whole run. Steps (3.2): 1) the kernel alone on all M SMs gives R[M] and its
// mean thread-block latency; 2) the dummy is tuned to that latency (TB level: its tb_time is the
// measured mean; warp level: the trip count of its ALU loop is scaled twice by measured / wanted);
// 3) one run per m < M. Every run is a simulation of its own (a forked child, several at a time).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/gpu_config.h"
#include "core/kernel_desc.h"
#include "core/workload.h"
#include "stm/kernel_profile.h"

namespace gpumux {

/// How R[m] is measured. kDummy: Liang 3.2's dummy-kernel method (above). kPartition: the kernel alone on
/// SMs 0..m-1 (policy spatial), the memory system whole: what R[m] means in the estimate ("the latency of
/// kernel k_i given an allocation of m SMs"), which the dummy method approximates on hardware that cannot
/// partition SMs (docs/validation.md compares the two).
enum class ProfileMethod : std::uint8_t { kDummy, kPartition };

struct ProfilerOptions {
  ProfileMethod method = ProfileMethod::kDummy;
  unsigned jobs = 1;
  std::uint64_t seed = 1;
  unsigned wall_timeout_s = 0;
  /// Progress lines ("kernel va: alone ...") for a terminal; empty: none.
  std::function<void(const std::string&)> progress;
};

/// What the profiler saw of one kernel besides its profile, for the command's report.
struct ProfileNotes {
  std::string kernel;
  double dummy_tb_latency_ns = 0;  ///< the tuned dummy's mean thread-block latency beside the kernel (step 3)
  std::uint64_t dummy_loop_trips = 0;  ///< warp level: the dummy's ALU loop trip count (0 at TB level)
};

/// A workload named `name` of one process per kernel, in order, each launching its kernel once at time 0
/// (processes "<kernel>#<i>"): how the profiler and gpumux stm --measure submit kernels together.
[[nodiscard]] Workload one_launch_each(const std::string& name,
                                       const std::vector<std::shared_ptr<const KernelDesc>>& kernels);

/// Thread blocks of the dummy kernel that leave the kernel m of M SMs: ceil(tbs (M - m) / m) (Liang 3.2).
[[nodiscard]] std::uint32_t dummy_thread_blocks(std::uint32_t kernel_tbs, std::uint32_t sms, std::uint32_t m);

/// The dummy kernel of `kernel` (3.2): the same threads, registers and shared memory per thread block (so
/// the same residency), no memory traffic, `thread_blocks` blocks; at the TB level a thread-block time of
/// `tb_latency_ps` with the kernel's spread, at the warp level (GPU with sm.warp) an ALU loop of
/// `loop_trips` dependent additions per warp.
[[nodiscard]] std::shared_ptr<KernelDesc> dummy_kernel(const KernelDesc& kernel, const GpuConfig& gpu,
                                                       std::uint32_t thread_blocks, TimePs tb_latency_ps,
                                                       std::uint64_t loop_trips);

/// Profiles `kernels` on `gpu` (its SM and memory model as configured). InputError for a kernel that
/// does not fit on an SM or, on warp-level SMs, has no program; SimulationFailed when a run fails.
[[nodiscard]] stm::ProfileSet profile_kernels(const GpuConfig& gpu,
                                              const std::vector<std::shared_ptr<const KernelDesc>>& kernels,
                                              const ProfilerOptions& options,
                                              std::vector<ProfileNotes>* notes);

}  // namespace gpumux
