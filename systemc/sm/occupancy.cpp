#include "sm/occupancy.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace gpumux {

TbFootprint footprint_of(const KernelDesc& kernel, std::uint32_t warp_size) {
  TbFootprint f;
  f.registers = kernel.registers_per_tb;
  f.shared_memory = kernel.shared_memory_per_tb;
  f.threads = kernel.threads_per_tb;
  f.warps = warp_size == 0 ? 0 : (kernel.threads_per_tb + warp_size - 1) / warp_size;
  return f;
}

namespace {

/// Thread blocks of footprint `f` that fit on one SM of `gpu` with a carve-out of `carve_out` bytes
/// (0: none fits), and the first resource to run out.
std::uint32_t tbs_with_carveout(const TbFootprint& f, const GpuConfig& gpu, std::uint32_t carve_out,
                                std::string* limited_by) {
  std::uint32_t best = gpu.sm.max_thread_blocks;
  const char* what_limits = "thread_blocks";
  auto limit = [&](std::uint32_t capacity, std::uint32_t need, const char* what) {
    if (need == 0) return;
    const std::uint32_t fit = capacity / need;
    if (fit < best) {
      best = fit;
      what_limits = what;
    }
  };
  limit(gpu.sm.registers, f.registers, "registers");
  if (f.shared_memory > 0) {
    if (carve_out < f.shared_memory) {
      best = 0;
      what_limits = "shared_memory";
    } else {
      limit(carve_out, f.shared_memory, "shared_memory");
    }
  }
  limit(gpu.sm.max_threads, f.threads, "threads");
  limit(gpu.sm.max_warps, f.warps, "warps");
  if (limited_by != nullptr) *limited_by = what_limits;
  return best;
}

/// The carve-out `gpu`'s rule gives a kernel of footprint `f` (0 when none holds one thread block).
std::uint32_t choose_carveout(const TbFootprint& f, const GpuConfig& gpu) {
  const std::vector<std::uint32_t>& configs = gpu.sm.shared_memory_configs;
  if (configs.empty() || configs.back() < f.shared_memory) return 0;
  switch (gpu.sm.carveout_rule) {
    case CarveoutRule::kLargest:
    case CarveoutRule::kFixed:  // the loader checks that the list has one entry
      return configs.back();
    case CarveoutRule::kFullOccupancy: {
      // GPGPU-Sim's adaptive cache configuration (shader.cc, after the CUDA C++ Programming Guide's
      // compute capability 7.x shared-memory section): the smallest carve-out that holds as many thread
      // blocks as the largest one.
      const std::uint32_t most = tbs_with_carveout(f, gpu, configs.back(), nullptr);
      for (const std::uint32_t config : configs) {
        if (tbs_with_carveout(f, gpu, config, nullptr) == most) return config;
      }
      return configs.back();
    }
    case CarveoutRule::kSmallestFitting:
      break;
  }
  for (const std::uint32_t config : configs) {
    if (config >= f.shared_memory) return config;
  }
  return 0;
}

}  // namespace

Occupancy compute_occupancy(const KernelDesc& kernel, const GpuConfig& gpu) {
  Occupancy occ;
  occ.footprint = footprint_of(kernel, gpu.warp_size);
  // Registers go to a thread block per warp, rounded up to the allocation unit (sm.register_allocation_unit).
  const std::uint32_t unit = gpu.sm.register_allocation_unit;
  if (unit > 1 && occ.footprint.warps > 0 && occ.footprint.registers > 0) {
    const std::uint64_t warps = occ.footprint.warps;
    const std::uint64_t per_warp = (occ.footprint.registers + warps - 1) / warps;
    const std::uint64_t allocated = (per_warp + unit - 1) / unit * unit * warps;
    occ.footprint.registers = static_cast<std::uint32_t>(std::min<std::uint64_t>(allocated, UINT32_MAX));
  }
  occ.shared_memory_config = choose_carveout(occ.footprint, gpu);
  occ.tbs_per_sm = tbs_with_carveout(occ.footprint, gpu, occ.shared_memory_config, &occ.limited_by);
  const std::uint32_t largest =
      gpu.sm.shared_memory_configs.empty() ? 0 : gpu.sm.shared_memory_configs.back();
  occ.tbs_per_sm_largest_carveout = tbs_with_carveout(occ.footprint, gpu, largest, nullptr);
  return occ;
}

std::string carveout_warning(const KernelDesc& kernel, const GpuConfig& gpu) {
  const Occupancy occ = compute_occupancy(kernel, gpu);
  if (occ.tbs_per_sm >= occ.tbs_per_sm_largest_carveout) return {};
  const auto tbs = [](std::uint32_t n) {
    return std::to_string(n) + (n == 1 ? " thread block" : " thread blocks") + " per SM";
  };
  return "kernel '" + kernel.name + "' on GPU '" + gpu.name + "': carve-out rule " +
         to_string(gpu.sm.carveout_rule) + " gives it " + std::to_string(occ.shared_memory_config / 1024U) +
         " KB of shared memory and " + tbs(occ.tbs_per_sm) + "; the largest carve-out (" +
         std::to_string(gpu.sm.shared_memory_configs.back() / 1024U) + " KB) allows " +
         tbs(occ.tbs_per_sm_largest_carveout) + " (sm.shared_memory_carveout, docs/config.md \"Occupancy\")";
}

std::vector<std::string> carveout_warnings(const Workload& workload, const GpuConfig& gpu) {
  std::vector<std::string> warnings;
  std::vector<const KernelDesc*> seen;
  for (const ProcessSpec& p : workload.processes) {
    for (const StreamSpec& stream : p.streams) {
      for (const CommandSpec& c : stream.commands) {
        if (c.kind != CommandKind::kKernel || !c.kernel) continue;
        if (std::find(seen.begin(), seen.end(), c.kernel.get()) != seen.end()) continue;
        seen.push_back(c.kernel.get());
        if (std::string w = carveout_warning(*c.kernel, gpu); !w.empty()) warnings.push_back(std::move(w));
      }
    }
  }
  return warnings;
}

std::uint64_t context_bytes(const TbFootprint& f) {
  return static_cast<std::uint64_t>(f.registers) * 4U + f.shared_memory;
}

std::uint64_t context_bytes_per_tb(const KernelDesc& kernel) {
  return context_bytes(footprint_of(kernel, 0));
}

}  // namespace gpumux
