// The warp-level SM's GPU keys (issue 10 item 4): `sm.model` and the `sm.warp` section of a GPU file
// (config/gpu_loader.cpp, docs/config.md "sm.warp"): defaults, every range check with its
// file:line:key message, the scheduler name and options checked against the warp-scheduler
// registry, and the shipped GPUs' warp sections.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/gpu_loader.h"
#include "core/error.h"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

const std::string kConfigDir = std::string(GPUMUX_SOURCE_DIR) + "/configs";

/// A GPU file whose `sm:` map ends with `sm_tail` (lines indented by two spaces).
std::string gpu_text(const std::string& sm_tail) {
  return "name: warp-gpu\n"
         "sms: 2\n"
         "core_clock_mhz: 1000\n"
         "sm:\n"
         "  registers: 32768\n"
         "  max_threads: 1536\n"
         "  max_thread_blocks: 8\n"
         "  max_warps: 48\n"
         "  shared_memory_configs_kb: [48]\n" +
         sm_tail +
         "memory: {bandwidth_gb_per_s: 177, latency_ns: 400}\n"
         "pcie: {clock_mhz: 500, lanes: 32, bits_per_lane_per_cycle: 4, burst_bytes: 4096, latency_ns: "
         "500}\n";
}

class WarpConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() / ("gpumux_warp_config_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  [[nodiscard]] GpuConfig load(const std::string& sm_tail) const {
    const std::string path = (dir_ / "gpu.yaml").string();
    std::ofstream(path) << gpu_text(sm_tail);
    return load_gpu_config(path);
  }

  /// The InputError of loading a GPU with `sm_tail`; checks `gpu.yaml:LINE:`, `'KEY': ` and `fragment`,
  /// LINE being the line of the GPU text holding `marker`.
  void expect_error(const std::string& sm_tail, const std::string& marker, const std::string& key,
                    const std::string& fragment) const {
    const std::string text = gpu_text(sm_tail);
    const std::size_t at = text.find(marker);
    ASSERT_NE(at, std::string::npos) << "test bug: no '" << marker << "'";
    const int line =
        1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    std::string message;
    try {
      (void)load(sm_tail);
      ADD_FAILURE() << "accepted: " << sm_tail;
      return;
    } catch (const InputError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("gpu.yaml:" + std::to_string(line) + ":"), std::string::npos)
        << "want line " << line << " in: " << message;
    EXPECT_NE(message.find("'" + key + "': "), std::string::npos) << "want key " << key << " in: " << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << "want '" << fragment << "' in: " << message;
  }

  fs::path dir_;
};

TEST_F(WarpConfigTest, WithoutModelTheSmIsThreadBlockLevelAndHasNoWarpUnits) {
  const GpuConfig gpu = load("");
  EXPECT_EQ(gpu.sm_model, SmModel::kThreadBlock);
  EXPECT_EQ(gpu.warp.alu.count, 0U) << "no sm.warp section: nothing to build a warp-level SM from";
}

TEST_F(WarpConfigTest, EmptyWarpSectionTakesTheDocumentedDefaults) {
  const GpuConfig gpu = load("  model: warp\n  warp: {}\n");
  EXPECT_EQ(gpu.sm_model, SmModel::kWarp);
  EXPECT_EQ(gpu.warp.scheduler, "lrr");
  EXPECT_TRUE(gpu.warp.scheduler_options.empty());
  EXPECT_EQ(gpu.warp.schedulers, 2U);
  EXPECT_EQ(gpu.warp.issue_interval_cycles, 2U);
  EXPECT_EQ(gpu.warp.ready_queue_size, 6U);
  EXPECT_EQ(gpu.warp.alu.count, 32U);
  EXPECT_EQ(gpu.warp.alu.latency_cycles, 4U);
  EXPECT_EQ(gpu.warp.sfu.count, 4U);
  EXPECT_EQ(gpu.warp.sfu.latency_cycles, 20U);
  EXPECT_EQ(gpu.warp.load_store.count, 16U);
  EXPECT_EQ(gpu.warp.load_store.latency_cycles, 24U);
  EXPECT_EQ(gpu.warp.shared_memory_latency_cycles, 24U);
  EXPECT_EQ(gpu.warp.memory_segment_bytes, 128U);
}

TEST_F(WarpConfigTest, EveryKeyIsRead) {
  const GpuConfig gpu = load(
      "  model: tb\n"
      "  warp:\n"
      "    scheduler: two-level-gto\n"
      "    scheduler_options: {inner: lrr}\n"
      "    schedulers: 4\n"
      "    issue_interval_cycles: 1\n"
      "    ready_queue_size: 8\n"
      "    alu: {count: 192, latency_cycles: 9}\n"
      "    sfu: {count: 32, latency_cycles: 18}\n"
      "    load_store: {count: 32}\n"
      "    shared_memory_latency_cycles: 0\n"
      "    memory_segment_bytes: 32\n");
  EXPECT_EQ(gpu.sm_model, SmModel::kThreadBlock) << "a warp section does not change the model";
  EXPECT_EQ(gpu.warp.scheduler, "two-level-gto");
  EXPECT_EQ(gpu.warp.scheduler_options.at("inner"), "lrr");
  EXPECT_EQ(gpu.warp.schedulers, 4U);
  EXPECT_EQ(gpu.warp.issue_interval_cycles, 1U);
  EXPECT_EQ(gpu.warp.ready_queue_size, 8U);
  EXPECT_EQ(gpu.warp.alu.count, 192U);
  EXPECT_EQ(gpu.warp.alu.latency_cycles, 9U);
  EXPECT_EQ(gpu.warp.sfu.count, 32U);
  EXPECT_EQ(gpu.warp.sfu.latency_cycles, 18U);
  EXPECT_EQ(gpu.warp.load_store.count, 32U);
  EXPECT_EQ(gpu.warp.load_store.latency_cycles, 24U) << "an omitted key of a unit keeps its default";
  EXPECT_EQ(gpu.warp.shared_memory_latency_cycles, 0U);
  EXPECT_EQ(gpu.warp.memory_segment_bytes, 32U);
}

TEST_F(WarpConfigTest, WarpModelNeedsAWarpSection) {
  expect_error("  model: warp\n", "model: warp", "sm.model", "no sm.warp section");
}

TEST_F(WarpConfigTest, UnknownModel) {
  expect_error("  model: cycle\n", "model: cycle", "sm.model", "must be tb");
}

TEST_F(WarpConfigTest, RangesNameTheKey) {
  expect_error("  warp: {schedulers: 0}\n", "warp:", "sm.warp.schedulers", "between 1 and 64");
  expect_error("  warp: {schedulers: 65}\n", "warp:", "sm.warp.schedulers", "between 1 and 64");
  expect_error("  warp: {issue_interval_cycles: 0}\n", "warp:", "sm.warp.issue_interval_cycles", "between 1");
  expect_error("  warp: {ready_queue_size: 0}\n", "warp:", "sm.warp.ready_queue_size", "between 1");
  expect_error("  warp: {memory_segment_bytes: 0}\n", "warp:", "sm.warp.memory_segment_bytes", "between 1");
  expect_error("  warp: {shared_memory_latency_cycles: -1}\n",
               "warp:", "sm.warp.shared_memory_latency_cycles", "between 0");
  expect_error("  warp:\n    alu: {count: 0}\n", "alu:", "sm.warp.alu.count", "between 1 and 4096 lanes");
  expect_error("  warp:\n    sfu: {latency_cycles: 100001}\n", "sfu:", "sm.warp.sfu.latency_cycles",
               "between 0 and 100000 cycles");
  expect_error("  warp:\n    load_store: {count: 1.5}\n", "load_store:", "sm.warp.load_store.count",
               "integer");
}

TEST_F(WarpConfigTest, MoreSchedulersThanWarpSlots) {
  const std::string tail = "  warp: {schedulers: 49}\n";
  expect_error(tail, "warp:", "sm.warp.schedulers", "more warp schedulers than warp slots");
}

TEST_F(WarpConfigTest, UnknownKeysInTheWarpSection) {
  expect_error("  warp:\n    alu_count: 32\n", "alu_count", "sm.warp.alu_count", "unknown key");
  expect_error("  warp:\n    alu: {lanes: 32}\n", "alu:", "sm.warp.alu.lanes", "unknown key");
}

TEST_F(WarpConfigTest, UnknownSchedulerSuggestsTheClosest) {
  expect_error("  warp: {scheduler: gtoo}\n", "warp:", "sm.warp.scheduler",
               "unknown warp scheduler 'gtoo' (did you mean 'gto'?)");
}

TEST_F(WarpConfigTest, SchedulerOptionsAreCheckedAgainstTheScheduler) {
  const std::string tail =
      "  warp:\n"
      "    scheduler: two-level-lrr\n"
      "    scheduler_options: {inner: fifo}\n";
  expect_error(tail, "scheduler_options", "sm.warp.scheduler_options", "inner");
  const std::string no_options =
      "  warp:\n"
      "    scheduler: lrr\n"
      "    scheduler_options: {inner: gto}\n";
  expect_error(no_options, "scheduler_options", "sm.warp.scheduler_options", "inner");
}

TEST(WarpConfig, KeyListsCoverTheWarpSection) {
  const std::vector<std::string> keys = gpu_config_keys();
  for (const char* key :
       {"sm.model", "sm.warp.scheduler", "sm.warp.scheduler_options", "sm.warp.schedulers",
        "sm.warp.issue_interval_cycles", "sm.warp.ready_queue_size", "sm.warp.alu.count",
        "sm.warp.alu.latency_cycles", "sm.warp.sfu.count", "sm.warp.load_store.latency_cycles",
        "sm.warp.shared_memory_latency_cycles", "sm.warp.memory_segment_bytes"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
  EXPECT_EQ(std::find(keys.begin(), keys.end(), "sm.warp"), keys.end()) << "maps are not keys themselves";
}

// Every shipped GPU can run warp-level (--sm-model warp); Awatramani's M2090 is Table 3.1.
TEST(WarpConfig, ShippedGpusHaveWarpSections) {
  for (const char* file :
       {"fermi-gtx480.yaml", "kepler-k20c.yaml", "hopper-h100-like.yaml", "tesla-m2090.yaml"}) {
    SCOPED_TRACE(file);
    const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/" + file);
    EXPECT_GT(gpu.warp.alu.count, 0U);
    EXPECT_GT(gpu.warp.sfu.count, 0U);
    EXPECT_GT(gpu.warp.load_store.count, 0U);
    EXPECT_LE(gpu.warp.schedulers, gpu.sm.max_warps);
  }
  const GpuConfig m2090 = load_gpu_config(kConfigDir + "/gpus/tesla-m2090.yaml");
  EXPECT_EQ(m2090.num_sms, 16U);
  EXPECT_DOUBLE_EQ(m2090.core_clock_mhz, 1300);
  EXPECT_DOUBLE_EQ(m2090.memory.bandwidth_gb_per_s, 177);
  EXPECT_EQ(m2090.sm.max_thread_blocks, 8U);
  EXPECT_EQ(m2090.sm.max_warps, 48U);
  EXPECT_EQ(m2090.warp.alu.count, 32U);
  EXPECT_EQ(m2090.warp.sfu.count, 4U);
  EXPECT_EQ(m2090.warp.schedulers, 2U);
  EXPECT_EQ(m2090.warp.issue_interval_cycles, 2U);
  EXPECT_EQ(m2090.warp.ready_queue_size, 6U);
  const GpuConfig k20c = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  EXPECT_EQ(k20c.sm_model, SmModel::kThreadBlock) << "shipped GPUs stay thread-block level by default";
  EXPECT_EQ(k20c.warp.schedulers, 4U);
  EXPECT_EQ(k20c.warp.alu.count, 192U);
}

}  // namespace
}  // namespace gpumux
