#pragma once
// What identifies an isolated baseline (a process simulated alone under fcfs, see isolated_baselines.h):
// the on-disk cache key and the identity by which an experiment's grid shares one baseline among equal
// processes of different workloads. Both come from documents of the whole effective configuration (the
// GPU as config/gpu_loader.h's gpu_config_document, every kernel as kernel_library_loader.h's
// kernel_document), so a configuration key added to a loader is part of the key without touching this
// file; tb/unit/baseline_cache_key_test.cpp changes every key in turn and checks that the key follows.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/gpu_config.h"
#include "core/workload.h"
#include "frontend/copy_policy.h"

namespace gpumux {

/// The running binary: GPUMUX_VERSION and the executable's GNU build id (the linker's hash of its
/// contents), or a SHA-1 of /proc/self/exe when it has none. Computed once per process.
[[nodiscard]] const std::string& binary_identity();

/// Everything that determines the isolated run of process `process` of `workload` except the process's
/// name, priority, tokens and arrival (an isolated run is fcfs, alone, from time 0): its commands with
/// their kernels' documents, its repeat count, the TB-duration mode and the thread-block spread override.
[[nodiscard]] nlohmann::json isolated_process_document(const Workload& workload, const ProcessSpec& process);

/// The whole effective workload: its name, replay settings, TB-duration mode and spread override, and
/// every process (name, priority, tokens, arrival, and isolated_process_document). Kernel library paths
/// are not part of it: the kernels' documents are. Hashed into stats.json's "config_sha1".
[[nodiscard]] nlohmann::json workload_document(const Workload& workload);

/// The cache key of the isolated baseline that simulates `alone` (a workload of one process, see
/// isolated_workload) on `gpu` with `seed` and the DMA engines' `copy_policy`: 40 hex digits, the SHA-1 of
/// the binary's identity, the GPU's document (with sm.model and sm.warp.scheduler as
/// `--sm-model`/`--warp-scheduler` or an experiment run's sm_model/warp_scheduler left them:
/// apply_sm_settings), the seed, the copy policy, the process's name, priority, tokens and arrival, the
/// workload's replay settings and isolated_process_document. The workload's name and files are not part
/// of it, so equal processes of different workloads share one baseline.
[[nodiscard]] std::string baseline_cache_key(const GpuConfig& gpu, const Workload& alone, std::uint64_t seed,
                                             CopyPolicy copy_policy);

/// SHA-1 of `text` as 40 lower-case hex digits.
[[nodiscard]] std::string sha1_hex(const std::string& text);

}  // namespace gpumux
