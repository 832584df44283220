// Static occupancy of the shipped kernel libraries against the published tables. This checks the
// table data as entered in configs/kernels/*.yaml (and the threads_per_tb we chose) as much as the
// occupancy rule: Tanasic Table 1 "TBs /SM", "Resour. /SM" and "Save Time" on the K20c, and Pai
// Table 2 "R" (plus Eq. 1 against Table 3 runtimes) on the Fermi.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "sm/occupancy.h"
#include "sm/sm_port.h"

namespace gpumux {
namespace {

const std::string kConfigDir = std::string(GPUMUX_SOURCE_DIR) + "/configs";

TEST(ParboilOccupancy, TbsPerSmMatchesTanasicTable1OnTheK20c) {
  const GpuConfig k20c = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  int checked = 0;
  for (const auto& k : load_kernel_library(kConfigDir + "/kernels/parboil.yaml", k20c)) {
    SCOPED_TRACE(k->name);
    const Occupancy occ = compute_occupancy(*k, k20c);
    EXPECT_EQ(occ.tbs_per_sm, static_cast<std::uint32_t>(k->reference.at("tbs_per_sm")))
        << "limited by " << occ.limited_by;
    ++checked;
  }
  EXPECT_EQ(checked, 24);
}

// Registers are allocated per warp in units (sm.register_allocation_unit): Awatramani Table 4.2's Hotspot
// (36 registers x 256 threads) fits 7 blocks in the K20X's 65536 registers counted exactly, 6 with
// Kepler's unit of 256 (1152 per warp -> 1280), which is the table's K20X Max.
TEST(Occupancy, RegistersAreAllocatedPerWarpInUnits) {
  GpuConfig k20x = load_gpu_config(kConfigDir + "/gpus/tesla-k20x.yaml");
  EXPECT_EQ(k20x.sm.register_allocation_unit, 256U);
  KernelDesc hot;
  hot.name = "Hot";
  hot.thread_blocks = 100;
  hot.threads_per_tb = 256;
  hot.registers_per_tb = 9216;
  Occupancy occ = compute_occupancy(hot, k20x);
  EXPECT_EQ(occ.tbs_per_sm, 6U);
  EXPECT_EQ(occ.footprint.registers, 10240U);
  EXPECT_EQ(occ.limited_by, "registers");
  k20x.sm.register_allocation_unit = 1;
  occ = compute_occupancy(hot, k20x);
  EXPECT_EQ(occ.tbs_per_sm, 7U);
  EXPECT_EQ(occ.footprint.registers, 9216U);
  // A multiple of the unit per warp is not rounded; a partial warp still takes a whole warp's registers.
  k20x.sm.register_allocation_unit = 256;
  hot.registers_per_tb = 8 * 1280;
  EXPECT_EQ(compute_occupancy(hot, k20x).footprint.registers, 10240U);
  hot.threads_per_tb = 33;  // two warps
  hot.registers_per_tb = 33 * 10;
  EXPECT_EQ(compute_occupancy(hot, k20x).footprint.registers, 2U * 256U);
}

TEST(ParboilOccupancy, ContextSaveTimeAtTheSmShareOfBandwidthMatchesTable1) {
  // Tanasic 4.1: save time assumes each SM gets only its share of the 208 GB/s (Table 2) memory bandwidth.
  const GpuConfig k20c = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  const double share_bytes_per_s = k20c.memory.bandwidth_gb_per_s * 1e9 / k20c.num_sms;
  int checked = 0;
  for (const auto& k : load_kernel_library(kConfigDir + "/kernels/parboil.yaml", k20c)) {
    SCOPED_TRACE(k->name);
    const double bytes =
        static_cast<double>(context_bytes_per_tb(*k)) * compute_occupancy(*k, k20c).tbs_per_sm;
    const double save_us = bytes / share_bytes_per_s * 1e6;
    EXPECT_NEAR(save_us, k->reference.at("save_time_us"), 0.05 * k->reference.at("save_time_us"));
    ++checked;
  }
  EXPECT_EQ(checked, 24);
}

TEST(ParboilOccupancy, OnChipResourceShareMatchesTable1) {
  // "Resour. /SM (%)": registers and shared memory of the resident TBs over the SM's 256 KB register
  // file plus its largest (48 KB) shared-memory carve-out.
  const GpuConfig k20c = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  const double sram = 4.0 * k20c.sm.registers + k20c.sm.shared_memory_configs.back();
  for (const auto& k : load_kernel_library(kConfigDir + "/kernels/parboil.yaml", k20c)) {
    SCOPED_TRACE(k->name);
    const double used =
        static_cast<double>(context_bytes_per_tb(*k)) * compute_occupancy(*k, k20c).tbs_per_sm;
    EXPECT_NEAR(100.0 * used / sram, k->reference.at("resources_percent"), 0.1);
  }
}

TEST(ParboilOccupancy, TimePerTbIsAverageTimeTimesTbsPerSmOverTbs) {
  // How Table 1 derives "Time/TB" from "Avg. Time" (see the note in parboil.yaml); checks data entry.
  const GpuConfig k20c = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  for (const auto& k : load_kernel_library(kConfigDir + "/kernels/parboil.yaml", k20c)) {
    SCOPED_TRACE(k->name);
    const double derived_us =
        k->reference.at("avg_time_us") * k->reference.at("tbs_per_sm") / k->thread_blocks;
    const double table_us = k->reference.at("time_per_tb_us");
    EXPECT_NEAR(derived_us, table_us, 0.025 * table_us);  // Table 1 rounds to 0.01 us (uniformAdd: 0.24)
  }
}

TEST(ErcbenchOccupancy, ResidencyMatchesPaiTable2OnTheFermi) {
  const GpuConfig fermi = load_gpu_config(kConfigDir + "/gpus/fermi-gtx480.yaml");
  int checked = 0;
  for (const auto& k : load_kernel_library(kConfigDir + "/kernels/ercbench.yaml", fermi)) {
    SCOPED_TRACE(k->name);
    const Occupancy occ = compute_occupancy(*k, fermi);
    EXPECT_EQ(occ.tbs_per_sm, static_cast<std::uint32_t>(k->reference.at("residency")))
        << "limited by " << occ.limited_by;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST(ErcbenchOccupancy, StaircaseOfTable2And3DataIsNearTable3Runtime) {
  // Pai Eq. 1 with N = ceil(B / N_SM) blocks per SM: T = ceil(N / R) * t. Within 10% of the simulated
  // runtime for all eight kernels, which cross-checks Blocks, R and Mean t as entered.
  const GpuConfig fermi = load_gpu_config(kConfigDir + "/gpus/fermi-gtx480.yaml");
  for (const auto& k : load_kernel_library(kConfigDir + "/kernels/ercbench.yaml", fermi)) {
    SCOPED_TRACE(k->name);
    const double per_sm = std::ceil(static_cast<double>(k->thread_blocks) / fermi.num_sms);
    const double waves = std::ceil(per_sm / compute_occupancy(*k, fermi).tbs_per_sm);
    const double runtime = waves * fermi.ps_to_cycles(k->tb_time.mean_ps);
    EXPECT_NEAR(runtime, k->reference.at("runtime_cycles"), 0.10 * k->reference.at("runtime_cycles"));
  }
}

// ---------------------------------------------------------------------------------------------------
// The shared-memory carve-out rules (core/gpu_config.h CarveoutRule, docs/config.md "Occupancy")

/// An A100-like SM: compute capability 8.0 limits and its carve-outs (Ampere Tuning Guide: 0, 8, 16,
/// 32, 64, 100, 132 or 164 KB; 0 is left out as in the shipped Hopper file).
GpuConfig a100_like(CarveoutRule rule) {
  GpuConfig g;
  g.name = "a100-like";
  g.warp_size = 32;
  g.sm.registers = 65536;
  g.sm.max_threads = 2048;
  g.sm.max_thread_blocks = 32;
  g.sm.max_warps = 64;
  for (const std::uint32_t kb : {8U, 16U, 32U, 64U, 100U, 132U, 164U}) {
    g.sm.shared_memory_configs.push_back(kb * 1024U);
  }
  g.sm.carveout_rule = rule;
  return g;
}

KernelDesc shape(std::uint32_t threads, std::uint32_t registers_per_thread, std::uint32_t shared_memory) {
  KernelDesc k;
  k.name = "k";
  k.threads_per_tb = threads;
  k.registers_per_tb = threads * registers_per_thread;
  k.shared_memory_per_tb = shared_memory;
  return k;
}

TEST(CarveoutRule, EachRuleGivesItsCarveoutAndOnlySmallestFittingCostsOccupancy) {
  // 256 threads x 32 registers: 8 TBs by registers, threads and warps; 8 KB of shared memory per TB.
  const KernelDesc k = shape(256, 32, 8192);
  struct Want {
    CarveoutRule rule;
    std::uint32_t carve_out_kb;
    std::uint32_t tbs;
  };
  for (const Want want : {Want{CarveoutRule::kSmallestFitting, 8, 1},
                          Want{CarveoutRule::kFullOccupancy, 64, 8}, Want{CarveoutRule::kLargest, 164, 8}}) {
    SCOPED_TRACE(to_string(want.rule));
    const GpuConfig gpu = a100_like(want.rule);
    const Occupancy occ = compute_occupancy(k, gpu);
    EXPECT_EQ(occ.shared_memory_config, want.carve_out_kb * 1024U);
    EXPECT_EQ(occ.tbs_per_sm, want.tbs);
    EXPECT_EQ(occ.tbs_per_sm_largest_carveout, 8U);
    const std::string warning = carveout_warning(k, gpu);
    if (want.tbs < 8) {
      EXPECT_NE(
          warning.find("carve-out rule smallest-fitting gives it 8 KB of shared memory and 1 thread block "
                       "per SM; the largest carve-out (164 KB) allows 8 thread blocks per SM"),
          std::string::npos)
          << warning;
    } else {
      EXPECT_EQ(warning, "");
    }
  }
}

TEST(CarveoutRule, FullOccupancyTakesTheLargestWhenSharedMemoryLimitsEvenThere) {
  // 40 KB per TB: 164 KB holds 4, 132 KB only 3.
  const Occupancy occ = compute_occupancy(shape(128, 32, 40 * 1024), a100_like(CarveoutRule::kFullOccupancy));
  EXPECT_EQ(occ.shared_memory_config, 164U * 1024U);
  EXPECT_EQ(occ.tbs_per_sm, 4U);
  EXPECT_EQ(occ.limited_by, "shared_memory");
  // Without shared memory the smallest carve-out serves, under every rule but largest.
  EXPECT_EQ(
      compute_occupancy(shape(128, 32, 0), a100_like(CarveoutRule::kFullOccupancy)).shared_memory_config,
      8U * 1024U);
  EXPECT_EQ(compute_occupancy(shape(128, 32, 0), a100_like(CarveoutRule::kLargest)).shared_memory_config,
            164U * 1024U);
}

TEST(CarveoutRule, AnSmKeepsItsCarveoutWhileItHoldsThreadBlocks) {
  // SmUsage::admits: the first TB sets the carve-out; a kernel needing a larger one waits until the SM
  // empties, one needing a smaller one fits in the larger (max_resident_kernels > 1).
  GpuConfig gpu = a100_like(CarveoutRule::kFullOccupancy);
  const TbFootprint small = footprint_of(shape(128, 32, 2048), 32);
  SmUsage usage;
  usage.add(small);
  EXPECT_FALSE(usage.admits(gpu.sm, small, 64U * 1024U, 8U * 1024U));
  EXPECT_TRUE(usage.admits(gpu.sm, small, 8U * 1024U, 64U * 1024U));
}

/// The CUDA Occupancy Calculator's thread blocks per SM (NVIDIA's spreadsheet and cuda_occupancy.h:
/// registers allocated per warp in units, warps rounded down to the warp allocation granularity,
/// shared memory rounded up to its allocation unit plus the per-block reserve, and, with no carve-out
/// preference, the whole `shared_memory_per_sm`).
struct VendorSm {
  const char* gpu_file;
  const char* compute_capability;
  std::uint32_t max_warps, max_threads, max_blocks, registers;
  std::vector<std::uint32_t> carve_outs_kb;  ///< the selectable sizes (0 KB left out)
  std::uint32_t register_unit, warp_granularity, shared_memory_unit, reserved_per_block;
};

std::uint32_t round_up(std::uint32_t x, std::uint32_t unit) { return (x + unit - 1) / unit * unit; }

std::uint32_t vendor_tbs(const VendorSm& v, const KernelDesc& k, bool with_reserve) {
  const std::uint32_t warps = (k.threads_per_tb + 31) / 32;
  const std::uint32_t by_warps = std::min(v.max_blocks, v.max_warps / warps);
  const std::uint32_t regs_per_warp = round_up(k.registers_per_tb / k.threads_per_tb * 32, v.register_unit);
  const std::uint32_t warps_by_regs = v.registers / regs_per_warp / v.warp_granularity * v.warp_granularity;
  const std::uint32_t by_regs = warps_by_regs / warps;
  const std::uint32_t smem =
      round_up(k.shared_memory_per_tb + (with_reserve ? v.reserved_per_block : 0), v.shared_memory_unit);
  const std::uint32_t by_smem = smem == 0 ? v.max_blocks : v.carve_outs_kb.back() * 1024U / smem;
  return std::min({by_warps, by_regs, by_smem});
}

TEST(CarveoutRule, ShippedGpusAgainstTheirVendorsOccupancyFigures) {
  // Per-SM limits and carve-outs: CUDA C++ Programming Guide, "Technical Specifications per Compute
  // Capability" and the Fermi/Kepler/Hopper shared-memory sections; allocation units: the CUDA
  // Occupancy Calculator's GPU data (cuda_occupancy.h). The GTX 480 file follows Pai's GPGPU-Sim (one
  // fixed 48 KB); the calculator's 16/48 KB choice gives it the same figures with no preference.
  const std::vector<VendorSm> vendors = {
      {"fermi-gtx480.yaml", "2.0", 48, 1536, 8, 32768, {48}, 64, 2, 128, 0},
      {"tesla-m2090.yaml", "2.0", 48, 1536, 8, 32768, {16, 48}, 64, 2, 128, 0},
      {"kepler-k20c.yaml", "3.5", 64, 2048, 16, 65536, {16, 32, 48}, 256, 4, 256, 0},
      {"hopper-h100-like.yaml",
       "9.0",
       64,
       2048,
       32,
       65536,
       {8, 16, 32, 64, 100, 132, 164, 196, 228},
       256,
       4,
       128,
       1024},
  };
  int shapes = 0;
  for (const VendorSm& v : vendors) {
    SCOPED_TRACE(std::string(v.gpu_file) + ", compute capability " + v.compute_capability);
    const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/" + v.gpu_file);
    EXPECT_EQ(gpu.sm.max_warps, v.max_warps);
    EXPECT_EQ(gpu.sm.max_threads, v.max_threads);
    EXPECT_EQ(gpu.sm.max_thread_blocks, v.max_blocks);
    EXPECT_EQ(gpu.sm.registers, v.registers);
    std::vector<std::uint32_t> kb;
    for (const std::uint32_t bytes : gpu.sm.shared_memory_configs) kb.push_back(bytes / 1024U);
    EXPECT_EQ(kb, v.carve_outs_kb);
    // Shapes on the calculator's allocation units (registers per thread a multiple of 8, blocks of whole
    // groups of 4 warps, shared memory in 1 KB steps), where its rounding does not bite.
    for (const std::uint32_t threads : {128U, 256U, 512U, 1024U}) {
      for (const std::uint32_t regs : {16U, 24U, 32U, 48U}) {
        for (const std::uint32_t smem_kb : {0U, 1U, 3U, 6U, 12U, 20U, 40U}) {
          const KernelDesc k = shape(threads, regs, smem_kb * 1024U);
          if (threads * regs > gpu.sm.registers || smem_kb > v.carve_outs_kb.back()) continue;
          SCOPED_TRACE(std::to_string(threads) + " threads x " + std::to_string(regs) + " registers, " +
                       std::to_string(smem_kb) + " KB");
          const Occupancy occ = compute_occupancy(k, gpu);
          // What the hardware allows with the largest carve-out is the calculator's figure (on Hopper,
          // before the 1 KB per block the driver reserves, which the model does not hold back).
          EXPECT_EQ(occ.tbs_per_sm_largest_carveout, vendor_tbs(v, k, false));
          EXPECT_GE(occ.tbs_per_sm_largest_carveout, vendor_tbs(v, k, true));
          // The file's rule gives that figure, or names the kernel it costs occupancy.
          if (occ.tbs_per_sm != occ.tbs_per_sm_largest_carveout) {
            EXPECT_EQ(gpu.sm.carveout_rule, CarveoutRule::kSmallestFitting);
            EXPECT_LT(occ.tbs_per_sm, occ.tbs_per_sm_largest_carveout);
            EXPECT_NE(carveout_warning(k, gpu), "");
          }
          ++shapes;
        }
      }
    }
  }
  EXPECT_GT(shapes, 250);
}

}  // namespace
}  // namespace gpumux
