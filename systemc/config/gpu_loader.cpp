#include "config/gpu_loader.h"

#include "config/yaml_reader.h"

namespace gpumux {

namespace {

using config::YamlMap;
using config::YamlNode;

SmResources read_sm(const YamlNode& node, std::uint32_t warp_size) {
  const YamlMap m(node, {"registers", "max_threads", "max_thread_blocks", "max_warps",
                         "shared_memory_configs_kb", "max_resident_kernels"});
  SmResources sm;
  sm.registers = m.required_u32("registers");
  sm.max_threads = m.required_u32("max_threads");
  sm.max_thread_blocks = m.required_u32("max_thread_blocks");
  sm.max_warps = m.required_u32("max_warps");
  // A thread lives in a warp: more resident threads than the warp slots can hold is a contradiction.
  if (static_cast<std::uint64_t>(sm.max_warps) * warp_size < sm.max_threads) {
    m.required("max_threads")
        .fail("max_threads " + std::to_string(sm.max_threads) + " exceeds max_warps * warp_size = " +
              std::to_string(static_cast<std::uint64_t>(sm.max_warps) * warp_size));
  }
  // Carve-outs are listed in KB, strictly ascending: the occupancy rule picks the first (smallest) one
  // that holds a thread block (Tanasic Table 2 footnote).
  std::uint32_t previous_kb = 0;
  for (const YamlNode& item : m.required("shared_memory_configs_kb").as_list()) {
    const std::uint32_t kb = item.as_u32(1);
    if (kb > (1U << 20)) {
      item.fail("shared-memory carve-out of " + std::to_string(kb) + " KB is implausibly large");
    }
    if (kb <= previous_kb) {
      item.fail("carve-outs must be strictly ascending (" + std::to_string(kb) + " KB after " +
                std::to_string(previous_kb) + " KB)");
    }
    previous_kb = kb;
    sm.shared_memory_configs.push_back(kb * 1024U);
  }
  sm.max_resident_kernels = m.optional_u32("max_resident_kernels", 1);
  if (sm.max_resident_kernels > sm.max_thread_blocks) {
    m.required("max_resident_kernels")
        .fail("cannot exceed max_thread_blocks (" + std::to_string(sm.max_thread_blocks) +
              "): every resident kernel holds at least one thread-block slot");
  }
  return sm;
}

MemoryConfig read_memory(const YamlNode& node) {
  const YamlMap m(node, {"bandwidth_gb_per_s", "latency_ns"});
  MemoryConfig mem;
  mem.bandwidth_gb_per_s = m.required_positive("bandwidth_gb_per_s");
  mem.latency_ns = m.required_nonnegative("latency_ns");
  return mem;
}

PcieConfig read_pcie(const YamlNode& node) {
  const YamlMap m(
      node, {"clock_mhz", "lanes", "bits_per_lane_per_cycle", "burst_bytes", "latency_ns", "command_bytes"});
  PcieConfig pcie;
  pcie.clock_mhz = m.required_positive("clock_mhz");
  pcie.lanes = m.required_u32("lanes");
  pcie.bits_per_lane_per_cycle = m.required_u32("bits_per_lane_per_cycle");
  pcie.burst_bytes = m.required_u32("burst_bytes");
  pcie.latency_ns = m.required_nonnegative("latency_ns");
  pcie.command_bytes = m.optional_u32("command_bytes", 64);
  return pcie;
}

ContextSwitchConfig read_context_switch(const YamlMap& parent) {
  ContextSwitchConfig cs;
  const auto node = parent.optional("context_switch");
  if (!node) return cs;
  const YamlMap m(*node, {"bandwidth_share", "burst_bytes"});
  const std::string share = m.optional_string("bandwidth_share", "per_sm");
  if (share == "per_sm") {
    cs.per_sm_share = true;
  } else if (share == "full") {
    cs.per_sm_share = false;
  } else {
    m.required("bandwidth_share").fail("must be per_sm or full, not '" + share + "'");
  }
  cs.burst_bytes = m.optional_u32("burst_bytes", cs.burst_bytes);
  return cs;
}

FrontendConfig read_frontend(const YamlMap& parent) {
  FrontendConfig fe;
  const auto node = parent.optional("frontend");
  if (!node) return fe;
  const YamlMap m(*node, {"command_queues", "queue_depth", "copy_engines"});
  fe.command_queues = m.optional_u32("command_queues", fe.command_queues);
  fe.queue_depth = m.optional_u32("queue_depth", fe.queue_depth);
  fe.copy_engines = m.optional_u32("copy_engines", fe.copy_engines);
  if (fe.copy_engines > 2) {
    m.required("copy_engines")
        .fail("must be 1 (one DMA engine for both directions) or 2 (one per direction)");
  }
  return fe;
}

}  // namespace

GpuConfig load_gpu_config(const std::string& path) {
  const YamlNode root = config::load_yaml_file(path);
  const YamlMap m(root, {"name", "sms", "core_clock_mhz", "warp_size", "sm", "memory", "pcie", "frontend",
                         "active_kernels", "context_switch"});
  GpuConfig gpu;
  gpu.source_file = path;
  gpu.name = m.required_string("name");
  gpu.num_sms = m.required_u32("sms");
  gpu.core_clock_mhz = m.required_positive("core_clock_mhz");
  gpu.warp_size = m.optional_u32("warp_size", 32);
  gpu.sm = read_sm(m.required("sm"), gpu.warp_size);
  gpu.memory = read_memory(m.required("memory"));
  gpu.pcie = read_pcie(m.required("pcie"));
  gpu.frontend = read_frontend(m);
  gpu.context_switch = read_context_switch(m);
  // The active queue / KSRT has N_SM entries in the hardware (Tanasic 3.3) unless the file says otherwise.
  gpu.active_kernels = m.optional_u32("active_kernels", gpu.num_sms);
  return gpu;
}

}  // namespace gpumux
