#pragma once
// Loads a GPU description (configs/gpus/*.yaml) into a validated GpuConfig. The keys, their units
// and defaults are documented in docs/config.md; every problem is an InputError naming file, line
// and key.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/gpu_config.h"

namespace gpumux {

namespace config {
class YamlNode;
}  // namespace config

[[nodiscard]] GpuConfig load_gpu_config(const std::string& path);

/// Every key a GPU file may hold, nested keys as dotted paths ("sm.registers"), from the lists the
/// loader reads against: a new key of the file format appears here without further work.
[[nodiscard]] std::vector<std::string> gpu_config_keys();

/// The effective configuration in the file's own terms: every key of gpu_config_keys() (and no other),
/// defaults filled in, values in the file's units. Identical GPUs give identical documents whatever
/// their files omitted or how they spelled numbers; the isolated-baseline cache key hashes it
/// (tb/unit/baseline_cache_key_test.cpp checks both properties for every key).
[[nodiscard]] nlohmann::json gpu_config_document(const GpuConfig& gpu);

/// Overrides the SM model (when `model` is given) and the warp scheduler (when `warp_scheduler` is not
/// empty; its scheduler_options are dropped when it names another scheduler than the file's), as
/// `gpumux run --sm-model/--warp-scheduler` and an experiment run's `sm_model`/`warp_scheduler` do.
/// The caller checks the names (its messages name the option or the file's key). Then check_perf_sat().
void apply_sm_settings(GpuConfig& gpu, std::optional<SmModel> model, const std::string& warp_scheduler);

/// InputError naming the GPU file, the line and `perf_sat.enabled` when Perf-Sat is on with TB-level
/// SMs (it needs the warp-level SM's stalled cycles). Called once the SM model is final.
/// The same for active-core detection (`active_cores.detector`) and the power model (`power.enabled`),
/// which count instructions: it checks them too.
void check_perf_sat(const GpuConfig& gpu);

/// "none", "onac" or "seq-det" (the spelling of `active_cores.detector`).
[[nodiscard]] std::string detector_name(ActiveCoreDetectorKind kind);
/// The detector a YAML scalar names (`active_cores.detector` in a GPU file, a run's `active_cores:`);
/// InputError naming file, line and key for any other value.
[[nodiscard]] ActiveCoreDetectorKind read_active_core_detector(const config::YamlNode& node);

/// Whether active-core detection may run under `policy`: fcfs and fifo, whose SM choice leaves a paused SM
/// idle (docs/config.md "Active cores").
[[nodiscard]] bool active_cores_policy_supported(const std::string& policy);

/// InputError naming the GPU file, the line and `active_cores.detector` when a detector is on under a
/// policy other than fcfs or fifo (a paused SM must stay idle: docs/config.md "Active cores").
void check_active_cores_policy(const GpuConfig& gpu, const std::string& policy);

}  // namespace gpumux
