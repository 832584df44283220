// Static occupancy of the shipped kernel libraries against the published tables. This checks the
// table data as entered in configs/kernels/*.yaml (and the threads_per_tb we chose) as much as the
// occupancy rule: Tanasic Table 1 "TBs /SM", "Resour. /SM" and "Save Time" on the K20c, and Pai
// Table 2 "R" (plus Eq. 1 against Table 3 runtimes) on the Fermi.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "sm/occupancy.h"

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

}  // namespace
}  // namespace gpumux
