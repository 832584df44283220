#pragma once
// What a `gpumux run` records about its own inputs, so that its stats.json alone repeats it
// (`gpumux run --replay stats.json`, docs/user-guide.md "Repeating a run"): the input files as they were
// named, the SHA-1 of the effective GPU, of the effective workload and of the whole effective
// configuration (GPU, workload, policy with every option, preemption mechanism, copy policy, seed). The
// hashes are of
// the loaders' documents (defaults filled in, numbers as the model reads them), not of the file texts:
// a comment or a spelled-out default does not change them, a changed value always does.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/gpu_config.h"
#include "core/workload.h"
#include "frontend/copy_policy.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace gpumux {

/// The hashes of one run's effective configuration (40 hex digits each).
struct ConfigHashes {
  std::string gpu_sha1;       ///< gpu_config_document (after --sm-model / --warp-scheduler)
  std::string workload_sha1;  ///< workload_document (kernels included)
  /// both documents, the policy, its effective options, preemption, copy policy, seed
  std::string config_sha1;
};

/// One run's whole effective configuration, every default filled in: {"gpu": gpu_config_document,
/// "workload": workload_document, "policy", "policy_options" (effective), "preemption", "copy_policy",
/// "seed"}. config_sha1 is the SHA-1 of its compact JSON text.
[[nodiscard]] nlohmann::json effective_config(const GpuConfig& gpu, const Workload& workload,
                                              const std::string& policy,
                                              const nlohmann::json& effective_policy_options,
                                              PreemptionMechanism preemption, CopyPolicy copy_policy,
                                              std::uint64_t seed);

[[nodiscard]] ConfigHashes config_hashes(const GpuConfig& gpu, const Workload& workload,
                                         const std::string& policy,
                                         const nlohmann::json& effective_policy_options,
                                         PreemptionMechanism preemption, CopyPolicy copy_policy,
                                         std::uint64_t seed);

/// `gpumux run --dump-config FILE`: writes effective_config as indented JSON (which is also YAML), with
/// the GPU's sm.warp.scheduler_options as an object rather than the compact text the hash reads, so that
/// the "gpu" member is a GPU file gpumux loads back as the same GPU (docs/user-guide.md), and without the
/// memory sections the GPU does not have (an L1 or L2 of capacity 0, a DRAM of 0 channels: the document's
/// zeros, which a file says by leaving the section out). InputError when FILE cannot be written.
void write_config_dump(const std::string& path, nlohmann::json config);

/// The inputs of a run as its stats.json records them, read back for --replay.
struct RecordedRun {
  std::string gpu_file;
  std::string workload_file;
  std::string policy;
  PolicyOptions policy_options;  ///< every option, as text parse_options reads back to the same values
  std::string preemption;
  std::string copy_policy;  ///< "fcfs" or "npq" (checked by read_recorded_run)
  std::uint64_t seed = 1;
  std::string sm_model;
  std::string warp_scheduler;   ///< empty at the TB level
  std::string memory_model;     ///< "simple" or "dram"
  std::string tb_interference;  ///< "on" or "off"; "off" in a stats.json from before it was recorded
  std::string gpumux_version;
  ConfigHashes hashes;
};

/// Reads the inputs recorded in the stats.json at `path`. InputError naming the file and the key when
/// it is not JSON, a key is missing or has the wrong type (a stats.json from before gpumux recorded
/// its inputs has no "inputs").
[[nodiscard]] RecordedRun read_recorded_run(const std::string& path);

/// InputError when the hashes of the configuration loaded for a replay differ from the recorded ones,
/// naming what differs (the GPU, the workload, or only the policy/seed part) and the files.
void check_replay_hashes(const std::string& stats_path, const RecordedRun& recorded, const ConfigHashes& now);

}  // namespace gpumux
