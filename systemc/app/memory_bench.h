#pragma once
// gpumux bench --memory: how fast the dram model's DRAM core serves requests (issue 12 item 7), in
// requests per wall second on one core. Two patterns, closed loop (512 requests in flight, a new one
// arriving when one completes, a quarter of them writes): `sequential` atoms (the row-hit stream of
// docs/validation.md section 15) and `random` atoms anywhere in 4 GB (every access a row miss or
// conflict). The controller is driven as DramMemorySystem drives it: requests enqueued on arrival,
// advance() at min(next arrival, next_completion_bound_ps()).

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/gpu_config.h"

namespace gpumux {

/// Serves `requests` requests of each pattern through a DramController built from gpu.memory.dram and
/// returns, per pattern, requests, simulated and wall seconds, requests per wall second and the bandwidth
/// reached. InputError when the GPU has no memory.dram section.
[[nodiscard]] nlohmann::json memory_bench(const GpuConfig& gpu, std::uint64_t requests);

}  // namespace gpumux
