#pragma once
// Small builders for tests: a GPU and kernels defined in code, so model tests do not depend on the
// config files (those have their own tests).

#include <memory>
#include <string>

#include "core/gpu_config.h"
#include "core/kernel_desc.h"
#include "core/processes.h"
#include "core/workload.h"
#include "top/simulation.h"

namespace gpumux::test {

/// Sets out["error"] to the message of the exception that stopped the simulation, if one did
/// (core/processes.h records it).
template <typename Json>
void record_process_failure(Json& out) {
  if (!process_failure()) return;
  try {
    std::rethrow_exception(process_failure());
  } catch (const std::exception& e) {
    out["error"] = e.what();
  }
}

/// A Kepler K20c as in Tanasic Table 2, with fast (zero-latency) links unless changed.
inline GpuConfig k20c() {
  GpuConfig g;
  g.name = "test-k20c";
  g.num_sms = 13;
  g.core_clock_mhz = 706;
  g.warp_size = 32;
  g.sm.registers = 65536;
  g.sm.max_threads = 2048;
  g.sm.max_thread_blocks = 16;
  g.sm.max_warps = 64;
  g.sm.shared_memory_configs = {16384, 32768, 49152};
  g.sm.max_resident_kernels = 1;
  g.memory.bandwidth_gb_per_s = 208;
  g.memory.latency_ns = 0;
  g.pcie.clock_mhz = 500;
  g.pcie.lanes = 32;
  g.pcie.bits_per_lane_per_cycle = 4;
  g.pcie.burst_bytes = 4096;
  g.pcie.latency_ns = 0;
  g.pcie.command_bytes = 64;
  g.frontend = {32, 1024, 2};
  g.active_kernels = 13;
  return g;
}

inline std::shared_ptr<KernelDesc> kernel(const std::string& name, std::uint32_t tbs, double tb_us,
                                          std::uint32_t threads = 256, std::uint32_t regs = 8192,
                                          std::uint32_t smem = 0, double rsd = 0) {
  auto k = std::make_shared<KernelDesc>();
  k->name = name;
  k->library = "test";
  k->thread_blocks = tbs;
  k->threads_per_tb = threads;
  k->registers_per_tb = regs;
  k->shared_memory_per_tb = smem;
  k->tb_time = {ps_from_ns(tb_us * 1000.0), rsd};
  return k;
}

inline CommandSpec launch(const std::shared_ptr<KernelDesc>& k, std::uint32_t launches = 1) {
  CommandSpec c;
  c.kind = CommandKind::kKernel;
  c.kernel = k;
  c.launches = launches;
  return c;
}

inline CommandSpec copy(CommandKind kind, std::uint64_t bytes) {
  CommandSpec c;
  c.kind = kind;
  c.bytes = bytes;
  return c;
}

inline CommandSpec cpu(double us) {
  CommandSpec c;
  c.kind = CommandKind::kCpu;
  c.cpu_ps = ps_from_ns(us * 1000.0);
  return c;
}

inline ProcessSpec process(const std::string& name, std::vector<StreamSpec> streams, double arrival_us = 0,
                           std::uint32_t repeat = 1) {
  ProcessSpec p;
  p.name = name;
  p.streams = std::move(streams);
  p.arrival_ps = ps_from_ns(arrival_us * 1000.0);
  p.repeat = repeat;
  return p;
}

/// A simulation of `k` launched once, alone on `gpu`, with fixed thread-block times (the staircase).
inline SimulationSpec alone_fixed(const GpuConfig& gpu, const std::shared_ptr<const KernelDesc>& k) {
  SimulationSpec spec;
  spec.gpu = gpu;
  spec.workload.name = k->name;
  spec.workload.tb_duration = TbDurationMode::kFixed;
  ProcessSpec p;
  p.name = k->benchmark.empty() ? k->name : k->benchmark;
  CommandSpec c;
  c.kind = CommandKind::kKernel;
  c.kernel = k;
  c.launches = 1;
  p.streams.push_back(StreamSpec{{c}});
  spec.workload.processes.push_back(p);
  return spec;
}

}  // namespace gpumux::test
