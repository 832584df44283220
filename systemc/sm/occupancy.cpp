#include "sm/occupancy.h"

#include <algorithm>
#include <limits>

namespace gpumux {

TbFootprint footprint_of(const KernelDesc& kernel, std::uint32_t warp_size) {
  TbFootprint f;
  f.registers = kernel.registers_per_tb;
  f.shared_memory = kernel.shared_memory_per_tb;
  f.threads = kernel.threads_per_tb;
  f.warps = warp_size == 0 ? 0 : (kernel.threads_per_tb + warp_size - 1) / warp_size;
  return f;
}

Occupancy compute_occupancy(const KernelDesc& kernel, const GpuConfig& gpu) {
  Occupancy occ;
  occ.footprint = footprint_of(kernel, gpu.warp_size);
  const TbFootprint& f = occ.footprint;

  for (std::uint32_t config : gpu.sm.shared_memory_configs) {
    if (config >= f.shared_memory) {
      occ.shared_memory_config = config;
      break;
    }
  }

  std::uint32_t best = gpu.sm.max_thread_blocks;
  occ.limited_by = "thread_blocks";
  auto limit = [&](std::uint32_t capacity, std::uint32_t need, const char* what) {
    if (need == 0) return;
    const std::uint32_t fit = capacity / need;
    if (fit < best) {
      best = fit;
      occ.limited_by = what;
    }
  };
  limit(gpu.sm.registers, f.registers, "registers");
  if (f.shared_memory > 0) {
    if (occ.shared_memory_config == 0) {
      best = 0;
      occ.limited_by = "shared_memory";
    } else {
      limit(occ.shared_memory_config, f.shared_memory, "shared_memory");
    }
  }
  limit(gpu.sm.max_threads, f.threads, "threads");
  limit(gpu.sm.max_warps, f.warps, "warps");
  occ.tbs_per_sm = best;
  return occ;
}

std::uint64_t context_bytes(const TbFootprint& f) {
  return static_cast<std::uint64_t>(f.registers) * 4U + f.shared_memory;
}

std::uint64_t context_bytes_per_tb(const KernelDesc& kernel) {
  return context_bytes(footprint_of(kernel, 0));
}

}  // namespace gpumux
