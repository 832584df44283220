#pragma once
// The GPU the model simulates: SM count and per-SM resources, clocks, memory, PCIe and front end.
// Loaded from configs/gpus/*.yaml by config/gpu_loader; every field is documented in docs/config.md.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/types.h"
#include "mem/cache/cache_config.h"
#include "mem/dram/dram_config.h"

namespace gpumux {

/// How the shared-memory carve-out of an SM is chosen for a kernel, from `shared_memory_configs`
/// (docs/config.md "Occupancy", sources there). An SM keeps its carve-out while it holds thread blocks
/// (SmUsage::admits), whatever the rule.
enum class CarveoutRule : std::uint8_t {
  /// `smallest-fitting`: the smallest carve-out that holds one thread block (Tanasic Table 2 footnote:
  /// Kepler's 16 KB default, 32 or 48 KB only when a thread block needs more).
  kSmallestFitting,
  /// `full-occupancy`: the smallest carve-out that still gives the occupancy the largest one allows
  /// (Volta and later: the driver sizes the carve-out per kernel to avoid shared-memory occupancy
  /// bottlenecks; GPGPU-Sim/Accel-Sim's adaptive cache configuration).
  kFullOccupancy,
  /// `largest`: always the largest carve-out (NVIDIA's occupancy calculator with no preference).
  kLargest,
  /// `fixed`: the SM has one shared-memory size (`shared_memory_configs` holds exactly one entry).
  kFixed,
};

/// "smallest-fitting", "full-occupancy", "largest" or "fixed": the spelling of GPU files and messages.
[[nodiscard]] inline const char* to_string(CarveoutRule rule) {
  switch (rule) {
    case CarveoutRule::kFullOccupancy:
      return "full-occupancy";
    case CarveoutRule::kLargest:
      return "largest";
    case CarveoutRule::kFixed:
      return "fixed";
    case CarveoutRule::kSmallestFitting:
      break;
  }
  return "smallest-fitting";
}

/// Hardware resources of one SM. A thread block needs all of its resources at once; the number of
/// resident thread blocks is set by the first resource to run out (Tanasic 2.3).
struct SmResources {
  std::uint32_t registers = 0;    ///< 32-bit registers in the register file
  std::uint32_t max_threads = 0;  ///< resident threads
  std::uint32_t max_thread_blocks = 0;
  std::uint32_t max_warps = 0;  ///< resident warps (threads / warp_size, rounded up per TB)
  /// Selectable shared-memory carve-outs in bytes, strictly ascending; `carveout_rule` picks a kernel's.
  std::vector<std::uint32_t> shared_memory_configs;
  CarveoutRule carveout_rule = CarveoutRule::kSmallestFitting;
  /// How many different kernels may have thread blocks on one SM at once. 1 is the static
  /// partitioning of Kepler (Tanasic 2.3); more allows intra-SM sharing (Pai, Awatramani Ch. 5).
  std::uint32_t max_resident_kernels = 1;
  /// Registers are allocated to a thread block per warp, in multiples of this many (the CUDA Occupancy
  /// Calculator's "register allocation unit size" at warp granularity: 64 on Fermi, 256 on Kepler); 1:
  /// a thread block takes exactly its registers_per_tb.
  std::uint32_t register_allocation_unit = 1;
};

/// Which SM model executes thread blocks (docs/architecture.md "The SM interface and the two SM models").
enum class SmModel : std::uint8_t {
  kThreadBlock,  ///< `tb`: a thread block runs for a duration drawn from its kernel's profile
  kWarp,         ///< `warp`: warps execute the kernel's program under a warp scheduler
};

/// One kind of execution unit of the warp-level SM. A warp instruction occupies `count` lanes'
/// worth of the unit for ceil(warp_size / count) cycles (its initiation interval) and its result is
/// ready `latency_cycles` after issue.
struct ExecutionUnitConfig {
  std::uint32_t count = 0;           ///< lanes per SM (e.g. 32 ALUs, 4 SFUs, 16 load/store units)
  std::uint32_t latency_cycles = 0;  ///< issue to result, core cycles
};

/// The warp-level SM (read only when sm.model is warp; defaults and sources in docs/config.md).
struct WarpLevelConfig {
  std::string scheduler = "lrr";  ///< warp scheduler name (sm/warp_scheduler/registry.h)
  std::map<std::string, std::string> scheduler_options;  ///< its typed options, as text
  std::uint32_t schedulers = 2;                          ///< warp schedulers per SM (Awatramani Table 3.1: 2)
  std::uint32_t issue_interval_cycles = 2;  ///< one instruction every k cycles per scheduler (Table 3.1)
  std::uint32_t ready_queue_size = 6;       ///< two-level schedulers (Table 3.1)
  ExecutionUnitConfig alu;
  ExecutionUnitConfig sfu;
  ExecutionUnitConfig load_store;
  std::uint32_t shared_memory_latency_cycles = 0;
  std::uint32_t memory_segment_bytes = 128;  ///< one coalesced memory transaction
};

/// memory.model: `simple`, one bandwidth pipe (mem/memory_controller.h); `dram`, L2 slices and GDDR5
/// channels (mem/dram_memory_system.h).
enum class MemoryModel : std::uint8_t { kSimple, kDram };

/// A cache level of the dram model: its geometry and its hit latency (a round trip from the SM).
struct CacheLevelConfig {
  cache::CacheConfig cache;              ///< capacity 0: no such cache
  std::uint32_t hit_latency_cycles = 0;  ///< core cycles from request to data back on a hit
};

struct MemoryConfig {
  double bandwidth_gb_per_s = 0;  ///< peak DRAM bandwidth shared by every initiator (1 GB = 1e9 B)
  double latency_ns = 0;          ///< fixed access latency added after service (simple)
  /// Device memory size in MB (2^20 bytes; key memory.capacity_mb; Liang Eq. 4's Gb); 0: not given.
  std::uint64_t capacity_mb = 0;
  MemoryModel model = MemoryModel::kSimple;
  dram::DramConfig dram;  ///< memory.dram (the dram model's channels)
  CacheLevelConfig l2;    ///< memory.l2: the whole L2, one slice per DRAM channel
  /// memory.l1: one per SM, for warp-level global loads (write-through, stores evict); capacity 0: none.
  /// Either memory model: it sits in the SM, in front of the memory port.
  CacheLevelConfig l1;
  /// memory.tb_interference: TB-level thread blocks slow down while their kernels' memory demand exceeds
  /// bandwidth_gb_per_s (Liang Eq. 3, sm/tb/bandwidth_penalty.h). Off: a thread block runs its drawn time.
  bool tb_interference = false;
};

/// The simple model with a bandwidth and a latency (tests, tools).
inline MemoryConfig simple_memory(double bandwidth_gb_per_s, double latency_ns) {
  MemoryConfig m;
  m.bandwidth_gb_per_s = bandwidth_gb_per_s;
  m.latency_ns = latency_ns;
  return m;
}

struct PcieConfig {
  double clock_mhz = 0;
  std::uint32_t lanes = 0;
  std::uint32_t bits_per_lane_per_cycle = 1;
  std::uint32_t burst_bytes = 4096;  ///< DMA transfers cross the link in bursts of this size
  double latency_ns = 0;             ///< one-way latency added to each transaction
  std::uint32_t command_bytes = 64;  ///< size of one command descriptor written by the host

  [[nodiscard]] double bytes_per_second() const {
    return clock_mhz * 1e6 * static_cast<double>(lanes) * static_cast<double>(bits_per_lane_per_cycle) / 8.0;
  }
};

struct FrontendConfig {
  std::uint32_t command_queues = 32;  ///< hardware queues (Hyper-Q)
  std::uint32_t queue_depth = 1024;   ///< commands per hardware queue; the host stalls when full
  std::uint32_t copy_engines = 2;     ///< 1: one DMA engine for both directions; 2: one per direction
};

/// Context switch (Tanasic 3.2): how a preempted SM saves and restores thread-block contexts.
struct ContextSwitchConfig {
  /// true: a saving or restoring SM streams at 1/N_SM of the memory bandwidth, its share when every SM
  /// does the same (the assumption behind Tanasic Table 1's Save Time); false: it may use it all.
  bool per_sm_share = true;
  std::uint32_t burst_bytes = 4096;  ///< largest save/restore memory transaction
  /// A save or restore is cut into at least this many transactions (sm/context_mover.h says why).
  std::uint32_t min_transactions = 64;
  // Preemption latencies (Tanasic 3.1-3.2), in core cycles; 0 (the default) makes each free.
  /// TB level: the pipeline drain before the trap (in-flight instructions complete for precise state).
  /// The warp-level SM drains what it has in flight instead and ignores this.
  std::uint32_t drain_cycles = 0;
  /// The microprogrammed trap routine's entry, after the drain and before the first context write.
  std::uint32_t trap_cycles = 0;
  /// Setting an SM up for a kernel it is not set up for (context id, page-table base, kernel
  /// parameters: Tanasic 3.1, Fig. 3), before that kernel's first thread block starts or restores.
  std::uint32_t setup_cycles = 0;
};

/// Perf-Sat (Awatramani 4.3, `perf_sat` in a GPU file): an SM-driver mode, under every thread-block policy,
/// that throttles each SM's thread blocks of its kernel with the state machine of Fig. 4.4
/// (engine/perf_sat.h). Needs warp-level SMs (it reads their stalled cycles). Defaults: the thesis's.
struct PerfSatConfig {
  bool enabled = false;
  /// Core cycles per sample; 0: the thesis's rule (4.3.2.2, phase 1), One_TB_cycles * N_max, where
  /// One_TB_cycles is the time from the kernel's first thread block on the SM to its first completion.
  std::uint32_t sample_period_cycles = 0;
  /// Toggles tolerated before settling (4.3.2.2: "if the state machine toggles more than three times").
  std::uint32_t max_toggles = 3;
  /// Where `perf_sat.enabled` is (the error for TB-level SMs names it); empty file: not from a file.
  SourceLocation where;
};

/// Active-core detection (Awatramani 4.4, `active_cores` in a GPU file): an SM-driver mode that, when a
/// kernel starts, pauses and un-pauses cores as a detector (engine/active_cores/) asks, samples the
/// kernel's IPC over each count and, once the detector has the optimal count, power gates the other SMs
/// for the rest of that kernel (sm_driver.cpp, "Active cores"). Needs warp-level SMs (IPC counts
/// instructions) and a policy that leaves a paused SM idle (fcfs, fifo). Defaults: the thesis's.
enum class ActiveCoreDetectorKind : std::uint8_t { kNone, kOnac, kSeqDet };
struct ActiveCoresConfig {
  ActiveCoreDetectorKind detector = ActiveCoreDetectorKind::kNone;
  /// Thread-block waves per IPC sample (4.4.2.4: "the average over a set of four CTA waves"); a wave is
  /// the kernel's thread blocks resident at once on the active cores (active cores x its occupancy).
  std::uint32_t sampling_period_waves = 4;
  /// A count is saturated when its IPC is within this share of IPC with every core (4.4.1.1: 2%).
  double tolerance = 0.02;
  /// Where `active_cores.detector` is (errors for TB-level SMs and policies name it).
  SourceLocation where;
};

/// The power and energy model (`power` in a GPU file, metrics/power_model.h): static power per core that
/// is not power gated, the chip's other static power, dynamic energy per warp instruction by operation
/// class and per DRAM byte. Off by default; the defaults' sources are in docs/config.md "Power".
struct PowerConfig {
  bool enabled = false;
  double core_static_w = 1.5;     ///< per SM, while not power gated
  double uncore_static_w = 30.0;  ///< L2, interconnect, memory controllers: always on
  double alu_nj = 0.5;            ///< per warp ALU instruction
  double sfu_nj = 1.0;            ///< per warp SFU instruction
  double shared_nj = 0.6;         ///< per warp shared-memory load or store
  double global_nj = 1.0;         ///< per warp global load or store (load/store unit, L1, interconnect)
  double dram_pj_per_bit = 20.0;  ///< per bit the memory system moves (DRAM access and I/O)
  SourceLocation where;           ///< of `power.enabled`
};

struct GpuConfig {
  std::string name;
  std::string source_file;
  std::uint32_t num_sms = 0;
  double core_clock_mhz = 0;
  std::uint32_t warp_size = 32;
  SmResources sm;
  MemoryConfig memory;
  PcieConfig pcie;
  FrontendConfig frontend;
  ContextSwitchConfig context_switch;
  SmModel sm_model = SmModel::kThreadBlock;
  WarpLevelConfig warp;
  /// Entries of the active queue / KSRT; the hardware sizes them to N_SM (Tanasic 3.3).
  std::uint32_t active_kernels = 0;
  PerfSatConfig perf_sat;
  ActiveCoresConfig active_cores;
  PowerConfig power;

  [[nodiscard]] double core_period_ps() const { return 1e6 / core_clock_mhz; }
  [[nodiscard]] TimePs cycles_to_ps(double cycles) const { return round_to_ps(cycles * core_period_ps()); }
  [[nodiscard]] double ps_to_cycles(TimePs ps) const { return static_cast<double>(ps) / core_period_ps(); }
};

}  // namespace gpumux
