#include "config/gpu_loader.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/yaml_reader.h"
#include "sm/warp_scheduler/registry.h"

namespace gpumux {

namespace {

using config::YamlMap;
using config::YamlNode;

// The keys a GPU file may hold, one list per map. The loader reads against these lists (unknown keys are
// errors) and gpu_config_keys() lists them, so a key added here is one the cache-key test covers.
const std::vector<std::string_view> kSmKeys = {"registers",
                                               "max_threads",
                                               "max_thread_blocks",
                                               "max_warps",
                                               "shared_memory_configs_kb",
                                               "shared_memory_carveout",
                                               "max_resident_kernels",
                                               "register_allocation_unit",
                                               "model",
                                               "warp"};
const std::vector<std::string_view> kWarpKeys = {"scheduler",
                                                 "scheduler_options",
                                                 "schedulers",
                                                 "issue_interval_cycles",
                                                 "ready_queue_size",
                                                 "alu",
                                                 "sfu",
                                                 "load_store",
                                                 "shared_memory_latency_cycles",
                                                 "memory_segment_bytes"};
const std::vector<std::string_view> kUnitKeys = {"count", "latency_cycles"};
const std::vector<std::string_view> kMemoryKeys = {
    "bandwidth_gb_per_s", "latency_ns", "model", "dram", "l2", "l1", "tb_interference", "capacity_mb"};
const std::vector<std::string_view> kDramKeys = {
    "command_clock_mhz", "channels",         "banks",      "row_bytes",   "bus_bytes",
    "address_mapping",   "interleave_bytes", "read_queue", "write_queue", "write_drain_high",
    "write_drain_low",   "row_hit_cap",      "refresh",    "timing",      "address_hash"};
const std::vector<std::string_view> kDramTimingKeys = {
    "tRCD", "tRP",  "tRAS", "tCL",  "tWL",   "tCCD",         "tRRD",           "tFAW",
    "tWTR", "tRTP", "tWR",  "tRFC", "tREFI", "burst_length", "beats_per_clock"};
const std::vector<std::string_view> kCacheKeys = {"capacity_kb", "associativity", "line_bytes",
                                                  "sector_bytes", "hit_latency_cycles"};
const std::vector<std::string_view> kPcieKeys = {"clock_mhz",   "lanes",      "bits_per_lane_per_cycle",
                                                 "burst_bytes", "latency_ns", "command_bytes"};
const std::vector<std::string_view> kFrontendKeys = {"command_queues", "queue_depth", "copy_engines"};
const std::vector<std::string_view> kContextSwitchKeys = {
    "bandwidth_share", "burst_bytes", "min_transactions", "drain_cycles", "trap_cycles", "setup_cycles"};
const std::vector<std::string_view> kPerfSatKeys = {"enabled", "sample_period_cycles", "max_toggles"};
const std::vector<std::string_view> kActiveCoresKeys = {"detector", "sampling_period_waves", "tolerance"};
const std::vector<std::string_view> kPowerKeys = {"enabled",   "core_static_w",  "uncore_static_w",
                                                  "alu_nj",    "sfu_nj",         "shared_nj",
                                                  "global_nj", "dram_pj_per_bit"};
const std::vector<std::string_view> kTopKeys = {
    "name",     "sms",          "core_clock_mhz", "warp_size",      "sm",
    "memory",   "pcie",         "frontend",       "active_kernels", "context_switch",
    "perf_sat", "active_cores", "power"};

/// The maps nested in a GPU file, by their dotted path.
const std::vector<std::pair<std::string_view, const std::vector<std::string_view>*>> kSections = {
    {"sm", &kSmKeys},
    {"sm.warp", &kWarpKeys},
    {"sm.warp.alu", &kUnitKeys},
    {"sm.warp.sfu", &kUnitKeys},
    {"sm.warp.load_store", &kUnitKeys},
    {"memory", &kMemoryKeys},
    {"memory.dram", &kDramKeys},
    {"memory.dram.timing", &kDramTimingKeys},
    {"memory.l2", &kCacheKeys},
    {"memory.l1", &kCacheKeys},
    {"pcie", &kPcieKeys},
    {"frontend", &kFrontendKeys},
    {"context_switch", &kContextSwitchKeys},
    {"perf_sat", &kPerfSatKeys},
    {"active_cores", &kActiveCoresKeys},
    {"power", &kPowerKeys}};

SmResources read_sm(const YamlMap& m, std::uint32_t warp_size) {
  SmResources sm;
  // Ranges (docs/config.md "Ranges") are generous bounds on real SMs (Kepler to Hopper: 64K registers,
  // 2048 threads, 32 blocks, 64 warps); beyond them a value is a typo, not a design point.
  sm.registers = m.required_u32_in("registers", 1, 1U << 24U, "registers");
  sm.max_threads = m.required_u32_in("max_threads", 1, 65536, "threads");
  sm.max_thread_blocks = m.required_u32_in("max_thread_blocks", 1, 1024, "thread blocks");
  sm.max_warps = m.required_u32_in("max_warps", 1, 4096, "warps");
  // A thread lives in a warp: more resident threads than the warp slots can hold is a contradiction.
  if (static_cast<std::uint64_t>(sm.max_warps) * warp_size < sm.max_threads) {
    m.required("max_threads")
        .fail("max_threads " + std::to_string(sm.max_threads) + " exceeds max_warps * warp_size = " +
              std::to_string(static_cast<std::uint64_t>(sm.max_warps) * warp_size));
  }
  // Carve-outs are listed in KB, strictly ascending; `shared_memory_carveout` says which one a kernel gets.
  std::uint32_t previous_kb = 0;
  const std::vector<YamlNode> carve_outs = m.required("shared_memory_configs_kb").as_list();
  if (carve_outs.size() > 64) {
    m.required("shared_memory_configs_kb")
        .fail("at most 64 carve-outs, got " + std::to_string(carve_outs.size()));
  }
  for (const YamlNode& item : carve_outs) {
    const std::uint32_t kb = item.as_u32_in(1, 65536, "KB");
    if (kb <= previous_kb) {
      item.fail("carve-outs must be strictly ascending (" + std::to_string(kb) + " KB after " +
                std::to_string(previous_kb) + " KB)");
    }
    previous_kb = kb;
    sm.shared_memory_configs.push_back(kb * 1024U);
  }
  if (const auto rule = m.optional("shared_memory_carveout")) {
    const std::string name = rule->as_name();
    std::vector<std::string> known;
    bool found = false;
    for (const CarveoutRule r : {CarveoutRule::kSmallestFitting, CarveoutRule::kFullOccupancy,
                                 CarveoutRule::kLargest, CarveoutRule::kFixed}) {
      known.emplace_back(to_string(r));
      if (name == known.back()) {
        sm.carveout_rule = r;
        found = true;
      }
    }
    if (!found) {
      const std::string hint = config::closest_name(name, known);
      rule->fail("unknown carve-out rule '" + name + "'" +
                 (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)") +
                 "; known: " + config::join_choices(known, " and ") + " (docs/config.md \"Occupancy\")");
    }
    if (sm.carveout_rule == CarveoutRule::kFixed && sm.shared_memory_configs.size() != 1) {
      rule->fail("fixed needs exactly one entry in shared_memory_configs_kb, got " +
                 std::to_string(sm.shared_memory_configs.size()));
    }
  }
  // Per warp, as the occupancy calculator allocates; above a whole register file per warp is a typo.
  sm.register_allocation_unit =
      m.optional_u32_in("register_allocation_unit", 1, 1, sm.registers, "registers per warp");
  sm.max_resident_kernels = m.optional_u32_in("max_resident_kernels", 1, 1, 1024, "kernels");
  if (sm.max_resident_kernels > sm.max_thread_blocks) {
    m.required("max_resident_kernels")
        .fail("cannot exceed max_thread_blocks (" + std::to_string(sm.max_thread_blocks) +
              "): every resident kernel holds at least one thread-block slot");
  }
  return sm;
}

/// One execution unit of the warp-level SM (`alu`, `sfu`, `load_store`), defaults from `fallback`.
ExecutionUnitConfig read_unit(const YamlMap& warp, std::string_view key, ExecutionUnitConfig fallback) {
  const auto node = warp.optional(key);
  if (!node) return fallback;
  const YamlMap m(*node, kUnitKeys);
  // Lanes: Fermi has 4 SFUs, Kepler 192 ALU lanes; 4096 is far beyond any SM.
  fallback.count = m.optional_u32_in("count", fallback.count, 1, 4096, "lanes");
  fallback.latency_cycles = m.optional_u32_in("latency_cycles", fallback.latency_cycles, 0, 100000, "cycles");
  return fallback;
}

/// The warp-level SM's section (`sm.warp`). Defaults are Awatramani Table 3.1's where it gives one
/// (2 schedulers, one instruction every 2 cycles, ready queue 6, 32 ALUs, 4 SFUs), NVIDIA's Fermi
/// whitepaper's 16 load/store units, GPGPU-Sim's ALU latency of 4 cycles and, as assumptions, the
/// SFU, load/store and shared-memory latencies (docs/config.md).
WarpLevelConfig read_warp(const YamlNode& node, const SmResources& sm) {
  const YamlMap m(node, kWarpKeys);
  WarpLevelConfig w;
  if (const auto scheduler = m.optional("scheduler")) {
    w.scheduler = scheduler->as_name();
    if (find_warp_scheduler(w.scheduler) == nullptr) {
      const std::vector<std::string> known = warp_scheduler_names();
      const std::string hint = config::closest_name(w.scheduler, known);
      scheduler->fail("unknown warp scheduler '" + w.scheduler + "'" +
                      (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)") +
                      "; known: " + config::join_choices(known, " and "));
    }
  }
  const auto options = m.optional("scheduler_options");
  if (options) {
    const YamlMap option_map = YamlMap::any_keys(*options);
    for (const auto& [key, value] : option_map.entries()) {
      w.scheduler_options[key] = value.as_string();
    }
  }
  try {
    // Checked now, against the scheduler's typed options, so a typo stops the run before it starts.
    (void)parse_warp_scheduler_options(w.scheduler, w.scheduler_options);
  } catch (const InputError& e) {
    (options ? *options : m.required("scheduler")).fail(e.what());
  }
  w.schedulers = m.optional_u32_in("schedulers", 2, 1, 64, "schedulers");
  if (w.schedulers > sm.max_warps) {
    m.required("schedulers")
        .fail("more warp schedulers than warp slots (sm.max_warps " + std::to_string(sm.max_warps) + ")");
  }
  w.issue_interval_cycles = m.optional_u32_in("issue_interval_cycles", 2, 1, 64, "cycles");
  w.ready_queue_size = m.optional_u32_in("ready_queue_size", 6, 1, 4096, "warps");
  w.alu = read_unit(m, "alu", {32, 4});
  w.sfu = read_unit(m, "sfu", {4, 20});
  w.load_store = read_unit(m, "load_store", {16, 24});
  w.shared_memory_latency_cycles = m.optional_u32_in("shared_memory_latency_cycles", 24, 0, 100000, "cycles");
  w.memory_segment_bytes = m.optional_u32_in("memory_segment_bytes", 128, 1, 65536, "bytes");
  return w;
}

/// `sm.model` and `sm.warp`. Without a warp section gpu.warp keeps its unit counts at 0: no
/// warp-level SM can be built from it (sm/warp/warp_sm.h refuses it, naming the GPU file).
void read_sm_model(const YamlMap& sm_map, GpuConfig& gpu) {
  const std::string model = sm_map.optional_string("model", "tb");
  if (model == "tb") {
    gpu.sm_model = SmModel::kThreadBlock;
  } else if (model == "warp") {
    gpu.sm_model = SmModel::kWarp;
  } else {
    sm_map.required("model").fail(
        "must be tb (a thread block runs for its profiled time) or warp (warps "
        "execute the kernel's program), not '" +
        model + "'");
  }
  const auto warp = sm_map.optional("warp");
  if (!warp) {
    if (gpu.sm_model == SmModel::kWarp) {
      sm_map.required("model").fail(
          "is warp, but the GPU has no sm.warp section (warp schedulers and execution units the "
          "warp-level SM needs; docs/config.md)");
    }
    return;
  }
  gpu.warp = read_warp(*warp, gpu.sm);
}

dram::DramTiming read_dram_timing(const YamlNode& node) {
  const YamlMap m(node, kDramTimingKeys);
  dram::DramTiming t;
  // Cycles of the command clock; 100000 (~50 us at 2 GHz) bounds every GDDR5/HBM timing but tREFI.
  const auto cycles = [&](const char* key) { return m.required_u32_in(key, 1, 100000, "cycles"); };
  t.tRCD = cycles("tRCD");
  t.tRP = cycles("tRP");
  t.tRAS = cycles("tRAS");
  t.tCL = cycles("tCL");
  t.tWL = cycles("tWL");
  t.tCCD = cycles("tCCD");
  t.tRRD = cycles("tRRD");
  t.tFAW = cycles("tFAW");
  t.tWTR = cycles("tWTR");
  t.tRTP = cycles("tRTP");
  t.tWR = cycles("tWR");
  t.tRFC = cycles("tRFC");
  t.tREFI = m.required_u32_in("tREFI", 1, 100'000'000, "cycles");
  t.burst_length = m.required_u32_in("burst_length", 1, 64, "beats");
  t.beats_per_clock = m.required_u32_in("beats_per_clock", 1, 16, "beats");
  if (t.burst_length % t.beats_per_clock != 0) {
    m.required("burst_length")
        .fail("must be a multiple of beats_per_clock (" + std::to_string(t.beats_per_clock) +
              "): a burst occupies whole command-clock cycles");
  }
  if (t.tREFI <= t.tRFC) m.required("tREFI").fail("must exceed tRFC (the channel would only refresh)");
  return t;
}

dram::DramConfig read_dram(const YamlNode& node) {
  const YamlMap m(node, kDramKeys);
  dram::DramConfig d;
  d.command_clock_mhz = m.required("command_clock_mhz").as_number_in(10, 100000, "MHz");
  d.channels = m.required_u32_in("channels", 1, 1024, "channels");
  d.banks = m.required_u32_in("banks", 1, 1024, "banks");
  d.row_bytes = m.required_u32_in("row_bytes", 16, 1U << 20U, "bytes");
  d.bus_bytes = m.required_u32_in("bus_bytes", 1, 1024, "bytes");
  d.timing = read_dram_timing(m.required("timing"));
  d.address_mapping = {"row", "bank", "column", "channel"};
  if (const auto mapping = m.optional("address_mapping")) {
    d.address_mapping.clear();
    for (const YamlNode& field : mapping->as_list()) d.address_mapping.push_back(field.as_string());
  }
  const std::uint32_t atom = dram::atom_bytes(d);
  d.interleave_bytes = m.optional_u32_in("interleave_bytes", 256, 1, 1U << 20U, "bytes");
  d.read_queue = m.optional_u32_in("read_queue", 64, 1, 65536, "requests");
  d.write_queue = m.optional_u32_in("write_queue", 64, 1, 65536, "requests");
  d.write_drain_high = m.optional_u32_in("write_drain_high", d.write_queue * 3 / 4, 1, 65536, "requests");
  d.write_drain_low = m.optional_u32_in("write_drain_low", d.write_queue / 4, 0, 65536, "requests");
  d.row_hit_cap = m.optional_u32_in("row_hit_cap", 4, 0, 65536, "hits");
  d.refresh = m.optional_string("refresh", "on") == "on";
  if (const auto r = m.optional("refresh"); r && r->as_string() != "on" && r->as_string() != "off") {
    r->fail("must be on or off, not '" + r->as_string() + "'");
  }
  if (const auto hash = m.optional("address_hash")) {
    const std::string text = hash->as_string();
    if (text != "none" && text != "rotate") hash->fail("must be none or rotate, not '" + text + "'");
    d.address_rotate = text == "rotate";
  }
  // The rest of the model's own checks (dram_config.h), reported at the section.
  if (d.interleave_bytes % atom != 0 || d.row_bytes % d.interleave_bytes != 0) {
    m.required("interleave_bytes")
        .fail("must be a multiple of the burst (" + std::to_string(atom) +
              " B = bus_bytes x burst_length) and divide row_bytes (" + std::to_string(d.row_bytes) + ")");
  }
  try {
    dram::validate(d);
  } catch (const std::invalid_argument& e) {
    throw InputError(m.where(), "memory.dram", e.what());
  }
  return d;
}

CacheLevelConfig read_cache_level(const YamlNode& node, bool write_back) {
  const YamlMap m(node, kCacheKeys);
  CacheLevelConfig c;
  c.cache.capacity_bytes =
      static_cast<std::uint64_t>(m.required_u32_in("capacity_kb", 0, 1U << 20U, "KB")) * 1024U;
  c.cache.associativity = m.required_u32_in("associativity", 1, 1024, "ways");
  c.cache.line_bytes = m.required_u32_in("line_bytes", 4, 4096, "bytes");
  c.cache.sector_bytes = m.optional_u32_in("sector_bytes", c.cache.line_bytes, 1, 4096, "bytes");
  c.cache.write_back = write_back;
  c.hit_latency_cycles = m.required_u32_in("hit_latency_cycles", 1, 100000, "cycles");
  return c;
}

MemoryConfig read_memory(const YamlNode& node) {
  const YamlMap m(node, kMemoryKeys);
  MemoryConfig mem;
  // 0.1 GB/s (slower than any GPU memory since the 1990s) to 100 TB/s (30x HBM3).
  mem.bandwidth_gb_per_s = m.required("bandwidth_gb_per_s").as_number_in(0.1, 1e5, "GB/s");
  mem.latency_ns = m.required("latency_ns").as_number_in(0, 1e6, "ns");
  // Up to 1 PB; 0 or absent: not given (nothing checks a capacity then).
  if (const auto v = m.optional("capacity_mb")) mem.capacity_mb = v->as_u64_in(0, 1ULL << 30U, "MB");
  const std::string model = m.optional_string("model", "simple");
  if (model == "dram") {
    mem.model = MemoryModel::kDram;
  } else if (model != "simple") {
    m.required("model").fail("must be simple (one bandwidth pipe) or dram (L2 and GDDR5 channels), not '" +
                             model + "'");
  }
  if (const auto interference = m.optional("tb_interference")) {
    mem.tb_interference = interference->as_on_off("thread-block-level memory interference, Liang Eq. 3");
  }
  const auto dram_node = m.optional("dram");
  const auto l2_node = m.optional("l2");
  if (mem.model == MemoryModel::kDram && (!dram_node || !l2_node)) {
    m.required(!dram_node ? "dram" : "l2").fail("is needed by model: dram (docs/config.md \"Memory\")");
  }
  if (dram_node) {
    mem.dram = read_dram(*dram_node);
    // One figure, two descriptions: the dram model's peak must be the bandwidth the rest of the model
    // (context-save shares, TB-level interference) assumes.
    const double peak = dram::atom_bytes(mem.dram) * mem.dram.channels * mem.dram.command_clock_mhz * 1e6 /
                        dram::burst_cycles(mem.dram.timing) / 1e9;
    if (std::abs(peak - mem.bandwidth_gb_per_s) > 0.01 * mem.bandwidth_gb_per_s) {
      m.required("bandwidth_gb_per_s")
          .fail("is " + std::to_string(mem.bandwidth_gb_per_s) + " GB/s, but memory.dram gives a peak of " +
                std::to_string(peak) +
                " GB/s (channels x bus_bytes x burst_length x command clock / burst cycles); they must agree "
                "within 1%");
    }
  }
  if (l2_node) {
    mem.l2 = read_cache_level(*l2_node, true);
    if (mem.l2.cache.capacity_bytes == 0) m.required("l2").fail("capacity_kb must be positive");
  }
  if (const auto l1_node = m.optional("l1")) {
    // Per SM, in front of either memory model: write-through, a store evicts the sectors it writes
    // (Fermi's L1 for global memory, GPGPU-Sim's write-evict), loads allocate on a miss.
    mem.l1 = read_cache_level(*l1_node, false);
    mem.l1.cache.write_through_invalidates = true;
    if (mem.l1.cache.capacity_bytes == 0) {
      m.required("l1").fail("capacity_kb must be positive (omit l1 for none)");
    }
    try {
      cache::validate(mem.l1.cache);
    } catch (const std::invalid_argument& e) {
      throw InputError(l1_node->where(), "memory.l1", e.what());
    }
  }
  // Checked whenever the sections are there: --memory-model dram may select them.
  if (dram_node && l2_node) {
    const std::uint32_t atom = dram::atom_bytes(mem.dram);
    const auto check_level = [&](const CacheLevelConfig& c, const char* key, std::uint64_t slices) {
      if (c.cache.capacity_bytes == 0) return;
      cache::CacheConfig slice = c.cache;
      slice.capacity_bytes /= slices;
      try {
        cache::validate(slice);
      } catch (const std::invalid_argument& e) {
        throw InputError(m.required(key).where(), std::string("memory.") + key, e.what());
      }
      if (slice.capacity_bytes * slices != c.cache.capacity_bytes) {
        m.required(key).fail("capacity_kb must split evenly over the " + std::to_string(slices) +
                             " DRAM channels");
      }
    };
    check_level(mem.l2, "l2", mem.dram.channels);
    const std::uint32_t line = mem.l2.cache.line_bytes;
    if (mem.l2.cache.sector_bytes % atom != 0 && atom % mem.l2.cache.sector_bytes != 0) {
      m.required("l2").fail("sector_bytes must be a multiple or a divisor of the DRAM burst (" +
                            std::to_string(atom) + " B)");
    }
    if (line % atom != 0 || mem.dram.interleave_bytes % line != 0) {
      m.required("l2").fail("line_bytes must be a multiple of the DRAM burst (" + std::to_string(atom) +
                            " B) and divide memory.dram.interleave_bytes (" +
                            std::to_string(mem.dram.interleave_bytes) + "), so a line lives in one channel");
    }
  }
  return mem;
}

PcieConfig read_pcie(const YamlNode& node) {
  const YamlMap m(node, kPcieKeys);
  PcieConfig pcie;
  pcie.clock_mhz = m.required("clock_mhz").as_number_in(1, 1e5, "MHz");
  pcie.lanes = m.required_u32_in("lanes", 1, 64, "lanes");
  pcie.bits_per_lane_per_cycle = m.required_u32_in("bits_per_lane_per_cycle", 1, 1024, "bits");
  pcie.burst_bytes = m.required_u32_in("burst_bytes", 1, 1U << 20U, "bytes");
  pcie.latency_ns = m.required("latency_ns").as_number_in(0, 1e6, "ns");
  pcie.command_bytes = m.optional_u32_in("command_bytes", 64, 1, 65536, "bytes");
  return pcie;
}

ContextSwitchConfig read_context_switch(const YamlMap& parent) {
  ContextSwitchConfig cs;
  const auto node = parent.optional("context_switch");
  if (!node) return cs;
  const YamlMap m(*node, kContextSwitchKeys);
  const std::string share = m.optional_string("bandwidth_share", "per_sm");
  if (share == "per_sm") {
    cs.per_sm_share = true;
  } else if (share == "full") {
    cs.per_sm_share = false;
  } else {
    m.required("bandwidth_share").fail("must be per_sm or full, not '" + share + "'");
  }
  cs.burst_bytes = m.optional_u32_in("burst_bytes", cs.burst_bytes, 1, 1U << 20U, "bytes");
  cs.min_transactions = m.optional_u32_in("min_transactions", cs.min_transactions, 1, 65536, "transactions");
  // A million cycles (about a millisecond) is far beyond any drain, trap entry or setup: a typo.
  cs.drain_cycles = m.optional_u32_in("drain_cycles", cs.drain_cycles, 0, 1'000'000, "cycles");
  cs.trap_cycles = m.optional_u32_in("trap_cycles", cs.trap_cycles, 0, 1'000'000, "cycles");
  cs.setup_cycles = m.optional_u32_in("setup_cycles", cs.setup_cycles, 0, 1'000'000, "cycles");
  return cs;
}

/// perf_sat (Awatramani 4.3, docs/config.md "Perf-Sat"): off unless the file turns it on.
PerfSatConfig read_perf_sat(const YamlMap& parent) {
  PerfSatConfig ps;
  const auto node = parent.optional("perf_sat");
  if (!node) return ps;
  const YamlMap m(*node, kPerfSatKeys);
  if (const auto enabled = m.optional("enabled")) {
    ps.enabled = enabled->as_on_off("Perf-Sat throttles each SM's thread blocks, Awatramani 4.3");
    ps.where = enabled->where();
  }
  // A sample shorter than a few hundred cycles holds no thread block's worth of work; 10^9 cycles is
  // about a second of GPU time: a typo.
  ps.sample_period_cycles =
      m.optional_u32_in("sample_period_cycles", ps.sample_period_cycles, 0, 1'000'000'000, "cycles");
  ps.max_toggles = m.optional_u32_in("max_toggles", ps.max_toggles, 0, 1000, "toggles");
  return ps;
}

/// active_cores (Awatramani 4.4, docs/config.md "Active cores"): no detector unless the file names one.
ActiveCoresConfig read_active_cores(const YamlMap& parent) {
  ActiveCoresConfig ac;
  const auto node = parent.optional("active_cores");
  if (!node) return ac;
  const YamlMap m(*node, kActiveCoresKeys);
  if (const auto detector = m.optional("detector")) {
    ac.detector = read_active_core_detector(*detector);
    ac.where = detector->where();
  }
  // 4.4.2.4: four waves; one wave is the least that holds every active core's blocks once, and a thousand
  // waves would outlast any of Table 4.4's kernels: a typo.
  ac.sampling_period_waves =
      m.optional_u32_in("sampling_period_waves", ac.sampling_period_waves, 1, 1000, "waves");
  if (const auto tolerance = m.optional("tolerance")) {
    // The detectors need 0 <= tolerance < 1 (engine/active_cores/); half the IPC lost is no saturation.
    ac.tolerance = tolerance->as_number_in(0, 0.5);
  }
  return ac;
}

/// power (docs/config.md "Power"): off unless the file turns it on; the constants' defaults are there.
PowerConfig read_power(const YamlMap& parent) {
  PowerConfig pw;
  const auto node = parent.optional("power");
  if (!node) return pw;
  const YamlMap m(*node, kPowerKeys);
  if (const auto enabled = m.optional("enabled")) {
    pw.enabled = enabled->as_on_off("energy and power in stats.json");
    pw.where = enabled->where();
  }
  // Bounds: a thousand watts per core or uncore, a microjoule per warp instruction and a nanojoule per bit
  // are orders of magnitude beyond any GPU: a typo (a unit slip).
  const auto number = [&](std::string_view key, double& value, double max, const char* unit) {
    if (const auto v = m.optional(key)) value = v->as_number_in(0, max, unit);
  };
  number("core_static_w", pw.core_static_w, 1000, "W");
  number("uncore_static_w", pw.uncore_static_w, 1000, "W");
  number("alu_nj", pw.alu_nj, 1000, "nJ");
  number("sfu_nj", pw.sfu_nj, 1000, "nJ");
  number("shared_nj", pw.shared_nj, 1000, "nJ");
  number("global_nj", pw.global_nj, 1000, "nJ");
  number("dram_pj_per_bit", pw.dram_pj_per_bit, 1000, "pJ");
  return pw;
}

FrontendConfig read_frontend(const YamlMap& parent) {
  FrontendConfig fe;
  const auto node = parent.optional("frontend");
  if (!node) return fe;
  const YamlMap m(*node, kFrontendKeys);
  fe.command_queues = m.optional_u32_in("command_queues", fe.command_queues, 1, 1024, "queues");
  fe.queue_depth = m.optional_u32_in("queue_depth", fe.queue_depth, 1, 1U << 20U, "commands");
  if (const auto engines = m.optional("copy_engines")) {
    fe.copy_engines = engines->as_u32(1);
    if (fe.copy_engines > 2) {
      engines->fail("must be 1 (one DMA engine for both directions) or 2 (one per direction)");
    }
  }
  return fe;
}

}  // namespace

GpuConfig load_gpu_config(const std::string& path) {
  const YamlNode root = config::load_yaml_file(path);
  const YamlMap m(root, kTopKeys);
  GpuConfig gpu;
  gpu.source_file = path;
  gpu.name = m.required("name").as_name();
  gpu.num_sms = m.required_u32_in("sms", 1, 1024, "SMs");
  gpu.core_clock_mhz = m.required("core_clock_mhz").as_number_in(1, 10000, "MHz");
  gpu.warp_size = m.optional_u32_in("warp_size", 32, 1, 128, "threads");
  const YamlMap sm_map(m.required("sm"), kSmKeys);
  gpu.sm = read_sm(sm_map, gpu.warp_size);
  read_sm_model(sm_map, gpu);
  gpu.memory = read_memory(m.required("memory"));
  gpu.pcie = read_pcie(m.required("pcie"));
  gpu.frontend = read_frontend(m);
  gpu.context_switch = read_context_switch(m);
  // The active queue / KSRT has N_SM entries in the hardware (Tanasic 3.3) unless the file says otherwise.
  gpu.active_kernels = m.optional_u32_in("active_kernels", gpu.num_sms, 1, 4096, "kernels");
  gpu.perf_sat = read_perf_sat(m);
  gpu.active_cores = read_active_cores(m);
  gpu.power = read_power(m);
  return gpu;
}

std::string detector_name(ActiveCoreDetectorKind kind) {
  switch (kind) {
    case ActiveCoreDetectorKind::kOnac:
      return "onac";
    case ActiveCoreDetectorKind::kSeqDet:
      return "seq-det";
    case ActiveCoreDetectorKind::kNone:
      break;
  }
  return "none";
}

ActiveCoreDetectorKind read_active_core_detector(const config::YamlNode& node) {
  const std::string value = node.as_string();
  if (value == "onac") return ActiveCoreDetectorKind::kOnac;
  if (value == "seq-det") return ActiveCoreDetectorKind::kSeqDet;
  if (value != "none") {
    node.fail("must be none, onac (Awatramani 4.4.2) or seq-det (the sequential detector of 4.4), not '" +
              value + "'");
  }
  return ActiveCoreDetectorKind::kNone;
}

namespace {
/// `where`, or the GPU file with no line when the setting came from no file.
SourceLocation located(const GpuConfig& gpu, const SourceLocation& where) {
  return where.file.empty() ? SourceLocation{gpu.source_file, 0, 0} : where;
}
}  // namespace

void check_perf_sat(const GpuConfig& gpu) {
  if (gpu.sm_model != SmModel::kWarp) {
    if (gpu.active_cores.detector != ActiveCoreDetectorKind::kNone) {
      throw InputError(located(gpu, gpu.active_cores.where), "active_cores.detector",
                       "active-core detection samples the kernel's IPC, which counts the instructions only "
                       "warp-level SMs issue: GPU '" +
                           gpu.name +
                           "' runs thread-block-level SMs (sm.model: tb); use sm.model: warp or --sm-model "
                           "warp, or set active_cores.detector: none (docs/config.md \"Active cores\")");
    }
    if (gpu.power.enabled) {
      throw InputError(located(gpu, gpu.power.where), "power.enabled",
                       "the power model's dynamic energy counts warp instructions by class, which only "
                       "warp-level SMs issue: GPU '" +
                           gpu.name +
                           "' runs thread-block-level SMs (sm.model: tb); use sm.model: warp or --sm-model "
                           "warp, or turn power off (docs/config.md \"Power\")");
    }
  }
  if (!gpu.perf_sat.enabled || gpu.sm_model == SmModel::kWarp) return;
  const std::string file = gpu.perf_sat.where.file.empty() ? gpu.source_file : gpu.perf_sat.where.file;
  throw InputError(
      gpu.perf_sat.where.file.empty() ? SourceLocation{file, 0, 0} : gpu.perf_sat.where, "perf_sat.enabled",
      "Perf-Sat reads each SM's stalled cycles, which only warp-level SMs count: GPU '" + gpu.name +
          "' runs thread-block-level SMs (sm.model: tb); use sm.model: warp or --sm-model warp, "
          "or turn perf_sat off (docs/config.md \"Perf-Sat\")");
}

bool active_cores_policy_supported(const std::string& policy) { return policy == "fcfs" || policy == "fifo"; }

void check_active_cores_policy(const GpuConfig& gpu, const std::string& policy) {
  if (gpu.active_cores.detector == ActiveCoreDetectorKind::kNone || active_cores_policy_supported(policy)) {
    return;
  }
  throw InputError(
      located(gpu, gpu.active_cores.where), "active_cores.detector",
      "active-core detection runs under the fcfs and fifo policies only: a paused SM stays idle "
      "when a policy assigns it, which policy '" +
          policy +
          "' would not know (it keeps its own record of the SMs it assigned); run fcfs or fifo, or "
          "set active_cores.detector: none (docs/config.md \"Active cores\")");
}

namespace {

/// Appends the keys of `list` under `prefix`, descending into nested maps (kSections).
void append_keys(const std::string& prefix, const std::vector<std::string_view>& list,
                 std::vector<std::string>& keys) {
  for (const std::string_view key : list) {
    const std::string path = prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
    const auto section = std::find_if(kSections.begin(), kSections.end(),
                                      [&](const auto& entry) { return entry.first == path; });
    if (section == kSections.end()) {
      keys.push_back(path);
    } else {
      append_keys(path, *section->second, keys);
    }
  }
}

nlohmann::json unit_document(const ExecutionUnitConfig& unit) {
  return {{"count", unit.count}, {"latency_cycles", unit.latency_cycles}};
}

nlohmann::json cache_document(const CacheLevelConfig& c) {
  return {{"capacity_kb", c.cache.capacity_bytes / 1024U},
          {"associativity", c.cache.associativity},
          {"line_bytes", c.cache.line_bytes},
          {"sector_bytes", c.cache.sector_bytes},
          {"hit_latency_cycles", c.hit_latency_cycles}};
}

nlohmann::json memory_document(const MemoryConfig& m) {
  const dram::DramConfig& d = m.dram;
  const dram::DramTiming& t = d.timing;
  nlohmann::json doc = {{"bandwidth_gb_per_s", m.bandwidth_gb_per_s},
                        {"latency_ns", m.latency_ns},
                        {"capacity_mb", m.capacity_mb},
                        {"model", m.model == MemoryModel::kDram ? "dram" : "simple"},
                        {"tb_interference", m.tb_interference ? "on" : "off"},
                        {"dram",
                         {{"command_clock_mhz", d.command_clock_mhz},
                          {"channels", d.channels},
                          {"banks", d.banks},
                          {"row_bytes", d.row_bytes},
                          {"bus_bytes", d.bus_bytes},
                          {"address_mapping", d.address_mapping},
                          {"interleave_bytes", d.interleave_bytes},
                          {"read_queue", d.read_queue},
                          {"write_queue", d.write_queue},
                          {"write_drain_high", d.write_drain_high},
                          {"write_drain_low", d.write_drain_low},
                          {"row_hit_cap", d.row_hit_cap},
                          {"refresh", d.refresh ? "on" : "off"},
                          {"timing",
                           {{"tRCD", t.tRCD},
                            {"tRP", t.tRP},
                            {"tRAS", t.tRAS},
                            {"tCL", t.tCL},
                            {"tWL", t.tWL},
                            {"tCCD", t.tCCD},
                            {"tRRD", t.tRRD},
                            {"tFAW", t.tFAW},
                            {"tWTR", t.tWTR},
                            {"tRTP", t.tRTP},
                            {"tWR", t.tWR},
                            {"tRFC", t.tRFC},
                            {"tREFI", t.tREFI},
                            {"burst_length", t.burst_length},
                            {"beats_per_clock", t.beats_per_clock}}}}},
                        {"l2", cache_document(m.l2)},
                        {"l1", cache_document(m.l1)}};
  doc["dram"]["address_hash"] = d.address_rotate ? "rotate" : "none";
  return doc;
}

}  // namespace

std::vector<std::string> gpu_config_keys() {
  std::vector<std::string> keys;
  append_keys("", kTopKeys, keys);
  return keys;
}

nlohmann::json gpu_config_document(const GpuConfig& gpu) {
  nlohmann::json carve_outs_kb = nlohmann::json::array();
  for (const std::uint32_t bytes : gpu.sm.shared_memory_configs) carve_outs_kb.push_back(bytes / 1024U);
  return {
      {"name", gpu.name},
      {"sms", gpu.num_sms},
      {"core_clock_mhz", gpu.core_clock_mhz},
      {"warp_size", gpu.warp_size},
      {"sm",
       {{"registers", gpu.sm.registers},
        {"max_threads", gpu.sm.max_threads},
        {"max_thread_blocks", gpu.sm.max_thread_blocks},
        {"max_warps", gpu.sm.max_warps},
        {"shared_memory_configs_kb", carve_outs_kb},
        {"shared_memory_carveout", to_string(gpu.sm.carveout_rule)},
        {"max_resident_kernels", gpu.sm.max_resident_kernels},
        {"register_allocation_unit", gpu.sm.register_allocation_unit},
        {"model", gpu.sm_model == SmModel::kWarp ? "warp" : "tb"},
        {"warp",
         {{"scheduler", gpu.warp.scheduler},
          // The effective options (defaults filled in), as one compact JSON text: a file that spells
          // out a default and one that omits it are the same GPU.
          {"scheduler_options",
           effective_warp_scheduler_options(gpu.warp.scheduler, gpu.warp.scheduler_options).dump()},
          {"schedulers", gpu.warp.schedulers},
          {"issue_interval_cycles", gpu.warp.issue_interval_cycles},
          {"ready_queue_size", gpu.warp.ready_queue_size},
          {"alu", unit_document(gpu.warp.alu)},
          {"sfu", unit_document(gpu.warp.sfu)},
          {"load_store", unit_document(gpu.warp.load_store)},
          {"shared_memory_latency_cycles", gpu.warp.shared_memory_latency_cycles},
          {"memory_segment_bytes", gpu.warp.memory_segment_bytes}}}}},
      {"memory", memory_document(gpu.memory)},
      {"pcie",
       {{"clock_mhz", gpu.pcie.clock_mhz},
        {"lanes", gpu.pcie.lanes},
        {"bits_per_lane_per_cycle", gpu.pcie.bits_per_lane_per_cycle},
        {"burst_bytes", gpu.pcie.burst_bytes},
        {"latency_ns", gpu.pcie.latency_ns},
        {"command_bytes", gpu.pcie.command_bytes}}},
      {"frontend",
       {{"command_queues", gpu.frontend.command_queues},
        {"queue_depth", gpu.frontend.queue_depth},
        {"copy_engines", gpu.frontend.copy_engines}}},
      {"active_kernels", gpu.active_kernels},
      {"context_switch",
       {{"bandwidth_share", gpu.context_switch.per_sm_share ? "per_sm" : "full"},
        {"burst_bytes", gpu.context_switch.burst_bytes},
        {"min_transactions", gpu.context_switch.min_transactions},
        {"drain_cycles", gpu.context_switch.drain_cycles},
        {"trap_cycles", gpu.context_switch.trap_cycles},
        {"setup_cycles", gpu.context_switch.setup_cycles}}},
      {"perf_sat",
       {{"enabled", gpu.perf_sat.enabled ? "on" : "off"},
        {"sample_period_cycles", gpu.perf_sat.sample_period_cycles},
        {"max_toggles", gpu.perf_sat.max_toggles}}},
      {"active_cores",
       {{"detector", detector_name(gpu.active_cores.detector)},
        {"sampling_period_waves", gpu.active_cores.sampling_period_waves},
        {"tolerance", gpu.active_cores.tolerance}}},
      {"power",
       {{"enabled", gpu.power.enabled ? "on" : "off"},
        {"core_static_w", gpu.power.core_static_w},
        {"uncore_static_w", gpu.power.uncore_static_w},
        {"alu_nj", gpu.power.alu_nj},
        {"sfu_nj", gpu.power.sfu_nj},
        {"shared_nj", gpu.power.shared_nj},
        {"global_nj", gpu.power.global_nj},
        {"dram_pj_per_bit", gpu.power.dram_pj_per_bit}}},
  };
}

void apply_sm_settings(GpuConfig& gpu, std::optional<SmModel> model, const std::string& warp_scheduler) {
  if (model) gpu.sm_model = *model;
  if (!warp_scheduler.empty()) {
    if (warp_scheduler != gpu.warp.scheduler) gpu.warp.scheduler_options.clear();
    gpu.warp.scheduler = warp_scheduler;
  }
  check_perf_sat(gpu);
}

}  // namespace gpumux
