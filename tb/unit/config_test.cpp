// The YAML configuration layer: every shipped config loads, and every kind of bad input becomes an
// InputError that names the file, the line and the dotted key (docs/config.md, "Errors").

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "config/workload_loader.h"
#include "core/error.h"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

const std::string kConfigDir = std::string(GPUMUX_SOURCE_DIR) + "/configs";

std::vector<std::string> yaml_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const KernelDesc& find_kernel(const std::vector<std::shared_ptr<const KernelDesc>>& kernels,
                              const std::string& name) {
  const auto it =
      std::find_if(kernels.begin(), kernels.end(), [&](const auto& k) { return k->name == name; });
  if (it == kernels.end()) throw std::runtime_error("no kernel " + name);
  return **it;
}

// ---------------------------------------------------------------------------------------------------
// The shipped configs

TEST(ShippedConfigs, EveryGpuKernelLibraryAndWorkloadLoads) {
  const auto gpu_files = yaml_files(kConfigDir + "/gpus");
  const auto libraries = yaml_files(kConfigDir + "/kernels");
  const auto workloads = yaml_files(kConfigDir + "/workloads");
  ASSERT_GE(gpu_files.size(), 3U);
  ASSERT_GE(libraries.size(), 2U);
  ASSERT_GE(workloads.size(), 3U);
  std::vector<GpuConfig> gpus;
  for (const auto& gpu_file : gpu_files) {
    SCOPED_TRACE(gpu_file);
    GpuConfig gpu;
    ASSERT_NO_THROW(gpu = load_gpu_config(gpu_file));
    for (const auto& lib : libraries) EXPECT_NO_THROW((void)load_kernel_library(lib, gpu)) << lib;
    gpus.push_back(gpu);
  }
  // docs/config.md "Which GPUs a workload is for": a workload loads on every GPU it declares in
  // `gpus:` (each one shipped), or, declaring none, on every shipped GPU.
  for (const auto& w : workloads) {
    SCOPED_TRACE(w);
    std::vector<std::string> declared;  // read apart: a workload need not load on the first GPU
    if (const YAML::Node list = YAML::LoadFile(w)["gpus"]) declared = list.as<std::vector<std::string>>();
    int loaded = 0;
    for (const std::string& name : declared) {
      EXPECT_TRUE(std::any_of(gpus.begin(), gpus.end(), [&](const GpuConfig& g) { return g.name == name; }))
          << "gpus: names '" << name << "', which is not a shipped GPU";
    }
    for (const GpuConfig& gpu : gpus) {
      if (!declared.empty() && std::find(declared.begin(), declared.end(), gpu.name) == declared.end()) {
        continue;
      }
      EXPECT_NO_THROW((void)load_workload(w, gpu)) << gpu.name;
      ++loaded;
    }
    EXPECT_GE(loaded, 1);
  }
}

TEST(ShippedConfigs, KeplerK20cIsTanasicTable2) {
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  EXPECT_EQ(gpu.name, "kepler-k20c");
  EXPECT_EQ(gpu.num_sms, 13U);
  EXPECT_DOUBLE_EQ(gpu.core_clock_mhz, 706);
  EXPECT_EQ(gpu.sm.registers, 65536U);
  EXPECT_EQ(gpu.sm.max_threads, 2048U);
  EXPECT_EQ(gpu.sm.max_thread_blocks, 16U);
  EXPECT_EQ(gpu.sm.shared_memory_configs, (std::vector<std::uint32_t>{16384, 32768, 49152}));
  EXPECT_EQ(gpu.sm.max_resident_kernels, 1U);
  EXPECT_DOUBLE_EQ(gpu.memory.bandwidth_gb_per_s, 208);
  EXPECT_DOUBLE_EQ(gpu.pcie.bytes_per_second(), 8e9);  // PCIe 2.0 x16
  EXPECT_EQ(gpu.pcie.burst_bytes, 4096U);
  EXPECT_EQ(gpu.frontend.command_queues, 32U);
  EXPECT_EQ(gpu.active_kernels, 13U);
  EXPECT_EQ(gpu.source_file, kConfigDir + "/gpus/kepler-k20c.yaml");
}

TEST(ShippedConfigs, FermiIsPaiTable4) {
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/fermi-gtx480.yaml");
  EXPECT_EQ(gpu.num_sms, 15U);
  EXPECT_EQ(gpu.sm.registers, 32768U);
  EXPECT_EQ(gpu.sm.max_threads, 1536U);
  EXPECT_EQ(gpu.sm.max_thread_blocks, 8U);
  EXPECT_EQ(gpu.sm.max_warps, 48U);
  EXPECT_EQ(gpu.sm.shared_memory_configs, (std::vector<std::uint32_t>{49152}));
  EXPECT_EQ(gpu.sm.max_resident_kernels, 8U);
}

TEST(ShippedConfigs, ParboilLibraryHasTheTwentyFourKernelsOfTanasicTable1) {
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  const auto kernels = load_kernel_library(kConfigDir + "/kernels/parboil.yaml", gpu);
  ASSERT_EQ(kernels.size(), 24U);
  const KernelDesc& sgemm = find_kernel(kernels, "mysgemmNT");
  EXPECT_EQ(sgemm.library, "parboil");
  EXPECT_EQ(sgemm.benchmark, "sgemm");
  EXPECT_EQ(sgemm.class1, "MEDIUM");
  EXPECT_EQ(sgemm.class2, "SHORT");
  EXPECT_EQ(sgemm.thread_blocks, 528U);
  EXPECT_EQ(sgemm.registers_per_tb, 4480U);
  EXPECT_EQ(sgemm.shared_memory_per_tb, 512U);
  // Calibrated so the kernel alone runs for Avg. Time: 3717.18 us over ceil(528 / (13 x 14)) = 3 waves.
  EXPECT_EQ(sgemm.tb_time.mean_ps, ps_from_ns(1239060));
  EXPECT_DOUBLE_EQ(sgemm.reference.at("time_per_tb_us"), 98.56);
  EXPECT_DOUBLE_EQ(sgemm.tb_time.rsd_percent, 0);
  EXPECT_DOUBLE_EQ(sgemm.reference.at("save_time_us"), 16.13);
  EXPECT_GT(sgemm.where.line, 0);
  for (const auto& k : kernels) EXPECT_FALSE(k->class1.empty()) << k->name;
}

TEST(ShippedConfigs, ErcbenchCyclesBecomePicosecondsOfTheGpuClock) {
  const GpuConfig fermi = load_gpu_config(kConfigDir + "/gpus/fermi-gtx480.yaml");
  const auto kernels = load_kernel_library(kConfigDir + "/kernels/ercbench.yaml", fermi);
  ASSERT_EQ(kernels.size(), 8U);
  const KernelDesc& aes = find_kernel(kernels, "aesEncrypt128");
  EXPECT_EQ(aes.tb_time.mean_ps, fermi.cycles_to_ps(14031));
  EXPECT_DOUBLE_EQ(aes.tb_time.rsd_percent, 12.1);
  EXPECT_NEAR(fermi.ps_to_cycles(aes.tb_time.mean_ps), 14031, 0.01);
}

TEST(ShippedConfigs, Sgemm3xWorkload) {
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  const Workload w = load_workload(kConfigDir + "/workloads/sgemm-3x.yaml", gpu);
  EXPECT_EQ(w.name, "sgemm-3x");  // default: the file stem
  EXPECT_EQ(w.replay, ReplayMode::kFixed);
  EXPECT_EQ(w.tb_duration, TbDurationMode::kProfile);
  ASSERT_EQ(w.kernel_libraries.size(), 1U);
  EXPECT_EQ(fs::path(w.kernel_libraries[0]).filename(), "parboil.yaml");
  ASSERT_EQ(w.processes.size(), 1U);
  const ProcessSpec& p = w.processes[0];
  EXPECT_EQ(p.name, "sgemm");
  EXPECT_EQ(p.priority, 0);
  EXPECT_FALSE(p.tokens.has_value());
  EXPECT_EQ(p.arrival_ps, 0U);
  EXPECT_EQ(p.repeat, 3U);
  ASSERT_EQ(p.streams.size(), 1U);
  const auto& c = p.streams[0].commands;
  ASSERT_EQ(c.size(), 4U);
  EXPECT_EQ(c[0].kind, CommandKind::kHostToDevice);
  EXPECT_EQ(c[0].bytes, 12582912U);
  EXPECT_EQ(c[1].kind, CommandKind::kKernel);
  EXPECT_EQ(c[1].kernel->name, "mysgemmNT");
  EXPECT_EQ(c[1].launches, 1U);
  EXPECT_EQ(c[2].kind, CommandKind::kCpu);
  EXPECT_EQ(c[2].cpu_ps, ps_from_ns(150000));
  EXPECT_EQ(c[3].kind, CommandKind::kDeviceToHost);
  EXPECT_EQ(c[3].bytes, 4194304U);
  EXPECT_EQ(c[1].where.line, 11);  // the kernel command, for error messages
}

TEST(ShippedConfigs, DemoUsesLibraryLaunchCountsAndStaysSmall) {
  const GpuConfig gpu = load_gpu_config(kConfigDir + "/gpus/kepler-k20c.yaml");
  const Workload w = load_workload(kConfigDir + "/workloads/demo-parboil-4proc.yaml", gpu);
  ASSERT_EQ(w.processes.size(), 4U);
  std::uint64_t blocks = 0;
  for (const auto& p : w.processes) {
    EXPECT_EQ(p.repeat, 2U);
    EXPECT_LE(p.arrival_ps, ps_from_ns(200000));
    for (const auto& s : p.streams) {
      for (const auto& c : s.commands) {
        if (c.kind == CommandKind::kKernel) {
          EXPECT_EQ(c.launches, c.kernel->launches);  // no override: the library's launch count
          blocks += std::uint64_t{c.launches} * c.kernel->thread_blocks * p.repeat;
        }
      }
    }
  }
  EXPECT_LT(blocks, 2'000'000U);  // keeps the demo fast
}

TEST(ShippedConfigs, ErcbenchPairIsFixedDurationWithStaggeredArrival) {
  const GpuConfig fermi = load_gpu_config(kConfigDir + "/gpus/fermi-gtx480.yaml");
  const Workload w = load_workload(kConfigDir + "/workloads/ercbench-pair.yaml", fermi);
  EXPECT_EQ(w.tb_duration, TbDurationMode::kFixed);
  ASSERT_EQ(w.processes.size(), 2U);
  EXPECT_EQ(w.processes[0].arrival_ps, 0U);
  EXPECT_EQ(w.processes[1].arrival_ps, ps_from_ns(100));
}

// ---------------------------------------------------------------------------------------------------
// Bad input: each case writes small files into a fresh directory and checks the error's location.

constexpr const char* kGpu = R"(name: test-gpu
sms: 4
core_clock_mhz: 1000
sm:
  registers: 65536
  max_threads: 2048
  max_thread_blocks: 16
  max_warps: 64
  shared_memory_configs_kb: [16, 48]
memory: {bandwidth_gb_per_s: 100, latency_ns: 0}
pcie: {clock_mhz: 500, lanes: 32, bits_per_lane_per_cycle: 4, burst_bytes: 4096, latency_ns: 0}
)";

constexpr const char* kLibrary = R"(kernels:
  - name: small
    thread_blocks: 100
    threads_per_tb: 256
    registers_per_tb: 8192
    tb_time: {mean_us: 10}
  - name: huge_smem
    thread_blocks: 10
    threads_per_tb: 128
    registers_per_tb: 4096
    shared_memory_per_tb: 65536
    tb_time: {mean_us: 10}
  - name: huge_regs
    thread_blocks: 10
    threads_per_tb: 1024
    registers_per_tb: 131072
    tb_time: {mean_cycles: 1000}
)";

class ConfigErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() / ("gpumux_config_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    gpu_path_ = write("gpu.yaml", kGpu);
    write("lib.yaml", kLibrary);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& name, const std::string& text) const {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  GpuConfig gpu() const { return load_gpu_config(gpu_path_); }

  /// The 1-based line of the first line of `text` containing `marker` (independent of the parser).
  static int line_of(const std::string& text, const std::string& marker) {
    const std::size_t at = text.find(marker);
    EXPECT_NE(at, std::string::npos) << "test bug: marker '" << marker << "' not in text";
    return 1 +
           static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  }

  static std::string error_of(const std::function<void()>& load) {
    try {
      load();
    } catch (const InputError& e) {
      return e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected InputError, got another exception: " << e.what();
      return {};
    }
    ADD_FAILURE() << "expected an InputError, the input was accepted";
    return {};
  }

  /// Checks `file:line:` and `'key':` (the documented format) and a fragment of the explanation.
  static void expect_error(const std::string& message, const std::string& file, int line,
                           const std::string& key, const std::string& fragment) {
    EXPECT_NE(message.find(file + ":" + std::to_string(line) + ":"), std::string::npos)
        << "want " << file << ":" << line << " in: " << message;
    if (!key.empty()) {
      EXPECT_NE(message.find("'" + key + "': "), std::string::npos)
          << "want key " << key << " in: " << message;
    }
    EXPECT_NE(message.find(fragment), std::string::npos) << "want '" << fragment << "' in: " << message;
  }

  /// Writes a GPU file where `from` in kGpu is replaced by `to`, and returns the load error.
  std::pair<std::string, std::string> gpu_error(const std::string& from, const std::string& to) const {
    std::string text = kGpu;
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    const std::string path = write("bad-gpu.yaml", text);
    return {error_of([&] { (void)load_gpu_config(path); }), text};
  }

  /// A workload around one stream whose commands are given as YAML lines (indented for the stream).
  static std::string workload_text(const std::string& commands) {
    return "kernel_libraries: [lib.yaml]\n"
           "processes:\n"
           "  - name: p0\n"
           "    streams:\n"
           "      - - h2d: {bytes: 4096}\n" +
           commands;
  }
  std::string workload_error(const std::string& text) const {
    const std::string path = write("w.yaml", text);
    const GpuConfig g = gpu();
    return error_of([&] { (void)load_workload(path, g); });
  }

  fs::path dir_;
  std::string gpu_path_;
};

TEST_F(ConfigErrorTest, ValidInputsLoad) {
  const GpuConfig g = gpu();
  EXPECT_EQ(g.warp_size, 32U);                // default
  EXPECT_EQ(g.sm.max_resident_kernels, 1U);   // default
  EXPECT_EQ(g.pcie.command_bytes, 64U);       // default
  EXPECT_EQ(g.frontend.command_queues, 32U);  // default
  EXPECT_EQ(g.frontend.copy_engines, 2U);     // default
  EXPECT_EQ(g.active_kernels, 4U);            // default: one per SM
  const std::string path = write("w.yaml", workload_text("        - kernel: {name: small, launches: 3}\n"
                                                         "        - cpu: {ms: 1.5}\n"
                                                         "        - kernel: {name: small, library: lib}\n"));
  const Workload w = load_workload(path, g);
  EXPECT_EQ(w.name, "w");
  const auto& c = w.processes.at(0).streams.at(0).commands;
  ASSERT_EQ(c.size(), 4U);
  EXPECT_EQ(c[1].launches, 3U);
  EXPECT_EQ(c[2].cpu_ps, ps_from_ns(1.5e6));
  EXPECT_EQ(c[3].kernel->library, "lib");
  const auto lib = load_kernel_library((dir_ / "lib.yaml").string(), g);
  EXPECT_EQ(lib.at(2)->tb_time.mean_ps, g.cycles_to_ps(1000));
}

// Issue 20: a library is parsed once per process for the same file text and GPU; a changed file, or
// another GPU, is parsed again.
TEST_F(ConfigErrorTest, AKernelLibraryIsParsedOnceUntilItsTextOrTheGpuChanges) {
  const GpuConfig g = gpu();
  const std::string path = (dir_ / "lib.yaml").string();
  const auto first = load_kernel_library(path, g);
  const auto again = load_kernel_library(path, g);
  ASSERT_EQ(first.size(), again.size());
  EXPECT_EQ(first.at(0).get(), again.at(0).get());  // the same kernels, shared
  GpuConfig faster = g;
  faster.core_clock_mhz *= 2;
  const auto other_gpu = load_kernel_library(path, faster);
  EXPECT_NE(other_gpu.at(2).get(), first.at(2).get());
  EXPECT_EQ(other_gpu.at(2)->tb_time.mean_ps, faster.cycles_to_ps(1000));
  std::string text = kLibrary;
  const std::string cycles = "tb_time: {mean_cycles: 1000}";
  text.replace(text.find(cycles), cycles.size(), "tb_time: {mean_cycles: 3000}");
  write("lib.yaml", text);
  const auto changed = load_kernel_library(path, g);
  EXPECT_EQ(changed.at(2)->tb_time.mean_ps, g.cycles_to_ps(3000));
  EXPECT_EQ(first.at(2)->tb_time.mean_ps, g.cycles_to_ps(1000));  // what was loaded before stays
}

// ---- unknown keys

TEST_F(ConfigErrorTest, UnknownKeyInGpuNamesKeyLineAndSuggestion) {
  const auto [msg, text] = gpu_error("  registers: 65536", "  regsiters: 65536");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "regsiters"), "sm.regsiters", "unknown key");
  EXPECT_NE(msg.find("did you mean 'registers'"), std::string::npos) << msg;
}

TEST_F(ConfigErrorTest, UnknownKeyInKernelCommand) {
  const std::string text = workload_text("        - kernel: {name: small, lanuches: 2}\n");
  expect_error(workload_error(text), "w.yaml", line_of(text, "lanuches"),
               "processes[0].streams[0][1].kernel.lanuches", "unknown key");
}

TEST_F(ConfigErrorTest, UnknownCommand) {
  const std::string text = workload_text("        - sleep: {ns: 5}\n");
  expect_error(workload_error(text), "w.yaml", line_of(text, "sleep"), "processes[0].streams[0][1].sleep",
               "unknown key");
}

TEST_F(ConfigErrorTest, SyncStepAndKernelLaunchMode) {
  const GpuConfig g = gpu();
  const std::string path =
      write("w.yaml", "kernel_launch: asynchronous\n" + workload_text("        - kernel: {name: small}\n"
                                                                      "        - sync: {}\n"));
  const Workload w = load_workload(path, g);
  EXPECT_EQ(w.kernel_launch, KernelLaunchMode::kAsynchronous);
  ASSERT_EQ(w.processes.at(0).streams.at(0).commands.size(), 3U);
  EXPECT_EQ(w.processes.at(0).streams.at(0).commands[2].kind, CommandKind::kSync);
  EXPECT_EQ(load_workload(write("w2.yaml", workload_text("")), g).kernel_launch,
            KernelLaunchMode::kSynchronous);

  const std::string field = workload_text("        - sync: {ms: 1}\n");
  expect_error(workload_error(field), "w.yaml", line_of(field, "ms: 1"), "processes[0].streams[0][1].sync.ms",
               "unknown key");
  const std::string scalar = workload_text("        - sync: now\n");
  expect_error(workload_error(scalar), "w.yaml", line_of(scalar, "sync: now"),
               "processes[0].streams[0][1].sync", "expected sync: {}");
  const std::string mode = "kernel_launch: eventually\n" + workload_text("");
  expect_error(workload_error(mode), "w.yaml", 1, "kernel_launch", "unknown value 'eventually'");
}

TEST_F(ConfigErrorTest, JoinStepsMatchAcrossTheStreamsOfAProcess) {
  const GpuConfig g = gpu();
  const std::string two = workload_text("        - join: {}\n        - kernel: {name: small}\n") +
                          "      - - join: {}\n        - kernel: {name: small}\n";
  const Workload w = load_workload(write("w.yaml", two), g);
  ASSERT_EQ(w.processes.at(0).streams.size(), 2U);
  EXPECT_EQ(w.processes[0].streams[0].commands[1].kind, CommandKind::kJoin);
  EXPECT_EQ(w.processes[0].streams[1].commands[0].kind, CommandKind::kJoin);

  // The second join of stream 0 has no partner in stream 1: it would wait for ever.
  const std::string unmatched =
      workload_text("        - join: {}\n        - join: {} # second\n") + "      - - join: {}\n";
  expect_error(workload_error(unmatched), "w.yaml", line_of(unmatched, "# second"), "join",
               "stream 1 has 1 join step(s) and another stream 2");
  const std::string field = workload_text("        - join: {streams: 2}\n");
  expect_error(workload_error(field), "w.yaml", line_of(field, "streams: 2"),
               "processes[0].streams[0][1].join.streams", "unknown key");
}

TEST_F(ConfigErrorTest, DuplicateKey) {
  const auto [msg, text] = gpu_error("sms: 4\n", "sms: 4\nsms: 5\n");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "sms: 5"), "sms", "duplicate key");
}

// ---- wrong types

TEST_F(ConfigErrorTest, StringWhereNumberExpected) {
  const auto [msg, text] = gpu_error("sms: 4", "sms: four");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "four"), "sms", "expected an integer, got 'four'");
}

TEST_F(ConfigErrorTest, QuotedNumberIsAString) {
  const auto [msg, text] = gpu_error("core_clock_mhz: 1000", "core_clock_mhz: \"1000\"");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "core_clock"), "core_clock_mhz", "quoted string");
}

// ---- the shared-memory carve-out rule (docs/config.md "Occupancy and the shared-memory carve-out")

TEST_F(ConfigErrorTest, CarveoutRuleIsReadAndDefaultsToSmallestFitting) {
  EXPECT_EQ(gpu().sm.carveout_rule, CarveoutRule::kSmallestFitting);
  std::string text = kGpu;
  text.insert(text.find("memory:"), "  shared_memory_carveout: full-occupancy\n");
  EXPECT_EQ(load_gpu_config(write("rule.yaml", text)).sm.carveout_rule, CarveoutRule::kFullOccupancy);
}

TEST_F(ConfigErrorTest, UnknownCarveoutRuleNamesKeyLineAndSuggestion) {
  const auto [msg, text] =
      gpu_error("  shared_memory_configs_kb: [16, 48]\n",
                "  shared_memory_configs_kb: [16, 48]\n  shared_memory_carveout: larges\n");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "larges"), "sm.shared_memory_carveout",
               "unknown carve-out rule 'larges' (did you mean 'largest'?)");
}

TEST_F(ConfigErrorTest, FixedCarveoutNeedsExactlyOneSize) {
  const auto [msg, text] =
      gpu_error("  shared_memory_configs_kb: [16, 48]\n",
                "  shared_memory_configs_kb: [16, 48]\n  shared_memory_carveout: fixed\n");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "fixed"), "sm.shared_memory_carveout",
               "fixed needs exactly one entry in shared_memory_configs_kb, got 2");
}

// ---- which GPUs a workload is for (docs/config.md "Which GPUs a workload is for")

TEST_F(ConfigErrorTest, WorkloadMeantForOtherGpusLoadsWithAWarningAndSaysSoWhenAKernelDoesNotFit) {
  const std::string meant =
      "gpus: [big-gpu, other-gpu]\n" + workload_text("        - kernel: {name: small}\n");
  const GpuConfig g = gpu();
  const Workload w = load_workload(write("w.yaml", meant), g);
  EXPECT_EQ(w.gpus, (std::vector<std::string>{"big-gpu", "other-gpu"}));
  const std::string warning = workload_gpu_warning(w, g);
  EXPECT_NE(warning.find("meant for GPU big-gpu and other-gpu"), std::string::npos) << warning;
  EXPECT_NE(warning.find("w.yaml:1"), std::string::npos) << warning;
  EXPECT_NE(warning.find("not 'test-gpu'"), std::string::npos) << warning;
  // Meant for this GPU, or for every GPU: no warning.
  EXPECT_EQ(
      workload_gpu_warning(
          load_workload(
              write("w2.yaml", "gpus: [test-gpu]\n" + workload_text("        - kernel: {name: small}\n")), g),
          g),
      "");
  EXPECT_EQ(workload_gpu_warning(load_workload(write("w3.yaml", workload_text("")), g), g), "");
  // A kernel that does not fit: the error adds that the workload was written for other GPUs.
  const std::string big = "gpus: [big-gpu]\n" + workload_text("        - kernel: {name: huge_smem}\n");
  expect_error(workload_error(big), "w.yaml", line_of(big, "huge_smem"), "",
               "meant for GPU big-gpu (gpus:, line 1)");
}

TEST_F(ConfigErrorTest, WorkloadGpusMustNameEachGpuOnce) {
  const std::string twice = "gpus: [a, a]\n" + workload_text("");
  expect_error(workload_error(twice), "w.yaml", 1, "gpus[1]", "GPU 'a' is listed twice");
  const std::string empty = "gpus: []\n" + workload_text("");
  expect_error(workload_error(empty), "w.yaml", 1, "gpus", "must be a non-empty list");
}

TEST_F(ConfigErrorTest, FloatWhereIntegerExpected) {
  const std::string text = workload_text("        - d2h: {bytes: 1.5}\n");
  expect_error(workload_error(text), "w.yaml", line_of(text, "1.5"), "processes[0].streams[0][1].d2h.bytes",
               "expected an integer");
}

TEST_F(ConfigErrorTest, MapWhereListExpected) {
  const auto [msg, text] =
      gpu_error("shared_memory_configs_kb: [16, 48]", "shared_memory_configs_kb: {a: 16}");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "shared_memory_configs_kb"), "sm.shared_memory_configs_kb",
               "expected a list, got a map");
}

TEST_F(ConfigErrorTest, EmptyValueIsNotANumberAndPointsAtItsKey) {
  const auto [msg, text] = gpu_error("sms: 4", "sms:");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "sms:"), "sms", "empty value");
}

TEST_F(ConfigErrorTest, UnknownEnumValue) {
  std::string text = workload_text("");
  text = "replay: forever\n" + text;
  expect_error(workload_error(text), "w.yaml", 1, "replay", "fixed or until_all_done");
}

// ---- missing fields

TEST_F(ConfigErrorTest, MissingRequiredGpuSection) {
  const auto [msg, text] = gpu_error("memory: {bandwidth_gb_per_s: 100, latency_ns: 0}\n", "");
  expect_error(msg, "bad-gpu.yaml", 1, "memory", "required key is missing");
}

TEST_F(ConfigErrorTest, MissingRequiredNestedKey) {
  const auto [msg, text] = gpu_error("  max_warps: 64\n", "");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "registers"), "sm.max_warps", "required key is missing");
}

TEST_F(ConfigErrorTest, MissingStreams) {
  const std::string text = "kernel_libraries: [lib.yaml]\nprocesses:\n  - name: p0\n    repeat: 2\n";
  expect_error(workload_error(text), "w.yaml", 3, "processes[0].streams", "required key is missing");
}

TEST_F(ConfigErrorTest, MissingTbTimeMean) {
  const std::string text =
      "kernels:\n  - name: k\n    thread_blocks: 1\n    threads_per_tb: 32\n    registers_per_tb: 32\n"
      "    tb_time: {rsd_percent: 5}\n";
  const std::string path = write("badlib.yaml", text);
  const GpuConfig g = gpu();
  expect_error(error_of([&] { (void)load_kernel_library(path, g); }), "badlib.yaml", 6, "kernels[0].tb_time",
               "mean_ns, mean_us or mean_cycles");
}

TEST_F(ConfigErrorTest, KernelMemoryTrafficOutsidePhysicalSense) {
  const GpuConfig g = gpu();
  const auto library_with = [&](const std::string& memory) {
    const std::string text =
        "kernels:\n  - name: k\n    thread_blocks: 1\n    threads_per_tb: 32\n    registers_per_tb: 32\n"
        "    tb_time: {mean_us: 5}\n    memory: " +
        memory + "\n";
    return write("badlib.yaml", text);
  };
  const std::string over = library_with("{bytes_per_tb: 4096, l2_hit_percent: 101}");
  expect_error(error_of([&] { (void)load_kernel_library(over, g); }), "badlib.yaml", 7,
               "kernels[0].memory.l2_hit_percent", "0 to 100");
  const std::string negative = library_with("{bytes_per_tb: -1}");
  expect_error(error_of([&] { (void)load_kernel_library(negative, g); }), "badlib.yaml", 7,
               "kernels[0].memory.bytes_per_tb", "");
  const std::string huge = library_with("{bytes_per_tb: 1e12}");
  expect_error(error_of([&] { (void)load_kernel_library(huge, g); }), "badlib.yaml", 7,
               "kernels[0].memory.bytes_per_tb", "64 GiB");
  const std::string unknown = library_with("{bytes: 4096}");
  expect_error(error_of([&] { (void)load_kernel_library(unknown, g); }), "badlib.yaml", 7,
               "kernels[0].memory.bytes", "unknown key");
  const auto good = load_kernel_library(library_with("{bytes_per_tb: 4096, l2_hit_percent: 25}"), g);
  EXPECT_DOUBLE_EQ(good.at(0)->memory.dram_bytes_per_tb(), 3072.0);
}

TEST_F(ConfigErrorTest, KernelInterferenceProfileOutsidePhysicalSense) {
  const GpuConfig g = gpu();
  const auto library_with = [&](const std::string& interference) {
    const std::string text =
        "kernels:\n  - name: k\n    thread_blocks: 1\n    threads_per_tb: 32\n    registers_per_tb: 32\n"
        "    tb_time: {mean_us: 5}\n    interference: " +
        interference + "\n";
    return write("badlib.yaml", text);
  };
  const auto error_for = [&](const std::string& interference) {
    const std::string path = library_with(interference);
    return error_of([&] { (void)load_kernel_library(path, g); });
  };
  expect_error(error_for("{pressure_per_sm_gb_per_s: -2}"), "badlib.yaml", 7,
               "kernels[0].interference.pressure_per_sm_gb_per_s", "GB/s");
  expect_error(error_for("{sensitivity: [{gb_per_s: 10, slowdown: 1.5}, {gb_per_s: 10, slowdown: 2}]}"),
               "badlib.yaml", 7, "kernels[0].interference.sensitivity[1].gb_per_s", "rise strictly");
  expect_error(error_for("{sensitivity: [{gb_per_s: 10, slowdown: 0}]}"), "badlib.yaml", 7,
               "kernels[0].interference.sensitivity[0].slowdown", "0.5");
  expect_error(error_for("{sensitivity: [{gb_per_s: 10}]}"), "badlib.yaml", 7,
               "kernels[0].interference.sensitivity[0].slowdown", "required key is missing");
  expect_error(error_for("{sensitivity: [{gb_per_s: 10, slowdown: 2, at: 3}]}"), "badlib.yaml", 7,
               "kernels[0].interference.sensitivity[0].at", "unknown key");
  expect_error(error_for("{sensitivity: {gb_per_s: 10, slowdown: 2}}"), "badlib.yaml", 7,
               "kernels[0].interference.sensitivity", "");
  const auto good = load_kernel_library(
      library_with("{pressure_per_sm_gb_per_s: 12.5, sensitivity: [{gb_per_s: 0, slowdown: 1}, "
                   "{gb_per_s: 20, slowdown: 1.4}]}"),
      g);
  ASSERT_EQ(good.at(0)->interference.sensitivity.size(), 2U);
  EXPECT_DOUBLE_EQ(good.at(0)->interference.pressure_per_sm_gb_per_s, 12.5);
  EXPECT_DOUBLE_EQ(good.at(0)->interference.sensitivity[1].slowdown, 1.4);
}

TEST_F(ConfigErrorTest, TbInterferenceIsOnOrOff) {
  const auto [msg, text] =
      gpu_error("memory: {bandwidth_gb_per_s: 100, latency_ns: 0}",
                "memory: {bandwidth_gb_per_s: 100, latency_ns: 0, tb_interference: yes}");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "tb_interference"), "memory.tb_interference", "on");
}

TEST_F(ConfigErrorTest, L1IsAWholeCacheOrAbsent) {
  const std::string base = "memory: {bandwidth_gb_per_s: 100, latency_ns: 0}";
  const std::string l1 =
      "memory: {bandwidth_gb_per_s: 100, latency_ns: 0, l1: {capacity_kb: %s, associativity: "
      "4, line_bytes: %s, sector_bytes: 32, hit_latency_cycles: 20}}";
  const auto with = [&](const char* kb, const char* line) {
    std::string s = l1;
    s.replace(s.find("%s"), 2, kb);
    s.replace(s.find("%s"), 2, line);
    return s;
  };
  {
    const auto [msg, text] = gpu_error(base, with("0", "128"));
    expect_error(msg, "bad-gpu.yaml", line_of(text, "l1:"), "memory.l1", "capacity_kb must be positive");
  }
  {
    const auto [msg, text] = gpu_error(base, with("16", "96"));  // not a power of two
    expect_error(msg, "bad-gpu.yaml", line_of(text, "l1:"), "memory.l1", "line_bytes");
  }
  {
    std::string three_ways = with("16", "128");  // 16 KB is not whole sets of 3 x 128 B
    three_ways.replace(three_ways.find("associativity: 4"), 16, "associativity: 3");
    const auto [msg, text] = gpu_error(base, three_ways);
    expect_error(msg, "bad-gpu.yaml", line_of(text, "l1:"), "memory.l1", "capacity");
  }
}

TEST_F(ConfigErrorTest, TwoTbTimeMeans) {
  const std::string text =
      "kernels:\n  - name: k\n    thread_blocks: 1\n    threads_per_tb: 32\n    registers_per_tb: 32\n"
      "    tb_time:\n      mean_us: 5\n      mean_cycles: 100\n";
  const std::string path = write("badlib.yaml", text);
  const GpuConfig g = gpu();
  expect_error(error_of([&] { (void)load_kernel_library(path, g); }), "badlib.yaml", 8,
               "kernels[0].tb_time.mean_cycles", "exactly one");
}

// ---- kernels that do not resolve or do not fit

TEST_F(ConfigErrorTest, UnknownKernelSuggestsTheClosestName) {
  const std::string text = workload_text("        - kernel: {name: smal}\n");
  const std::string msg = workload_error(text);
  expect_error(msg, "w.yaml", line_of(text, "smal}"), "processes[0].streams[0][1].kernel.name",
               "unknown kernel 'smal'");
  EXPECT_NE(msg.find("did you mean 'small'"), std::string::npos) << msg;
}

TEST_F(ConfigErrorTest, AmbiguousKernelAsksForLibraryKey) {
  write("other.yaml",
        "name: other\nkernels:\n  - {name: small, thread_blocks: 1, threads_per_tb: 32, "
        "registers_per_tb: 32, tb_time: {mean_ns: 100}}\n");
  std::string text = workload_text("        - kernel: {name: small}\n");
  text.replace(text.find("[lib.yaml]"), 10, "[lib.yaml, other.yaml]");
  expect_error(workload_error(text), "w.yaml", line_of(text, "{name: small}"),
               "processes[0].streams[0][1].kernel.name", "library:");
  // Naming the library resolves it.
  text.replace(text.find("{name: small}"), 13, "{name: small, library: other}");
  const std::string path = write("w2.yaml", text);
  const Workload w = load_workload(path, gpu());
  EXPECT_EQ(w.processes[0].streams[0].commands[1].kernel->library, "other");
}

TEST_F(ConfigErrorTest, UnknownLibraryInKernelCommand) {
  const std::string text = workload_text("        - kernel: {name: small, library: parboil}\n");
  expect_error(workload_error(text), "w.yaml", line_of(text, "library: parboil"),
               "processes[0].streams[0][1].kernel.library", "unknown kernel library 'parboil'");
}

TEST_F(ConfigErrorTest, KernelThatExceedsSharedMemoryCannotBeLaunched) {
  const std::string text = workload_text("        - kernel: {name: huge_smem}\n");
  const std::string msg = workload_error(text);
  expect_error(msg, "w.yaml", line_of(text, "huge_smem"), "processes[0].streams[0][1].kernel",
               "does not fit on an SM");
  EXPECT_NE(msg.find("65536 B of shared memory per thread block > largest carve-out 49152 B"),
            std::string::npos)
      << msg;
}

TEST_F(ConfigErrorTest, KernelThatExceedsRegistersCannotBeLaunched) {
  const std::string text =
      workload_text("        - cpu: {us: 1}\n        - kernel:\n            name: huge_regs\n");
  const std::string msg = workload_error(text);
  expect_error(msg, "w.yaml", line_of(text, "name: huge_regs"), "processes[0].streams[0][2].kernel",
               "registers");
  EXPECT_NE(msg.find("131072 registers per thread block > 65536"), std::string::npos) << msg;
}

TEST_F(ConfigErrorTest, MissingKernelLibraryFileIsReportedAtTheWorkloadEntry) {
  const std::string text = "kernel_libraries:\n  - lib.yaml\n  - nowhere.yaml\nprocesses: []\n";
  expect_error(workload_error(text), "w.yaml", 3, "kernel_libraries[1]", "not found");
}

TEST_F(ConfigErrorTest, DuplicateKernelNameInLibrary) {
  const std::string text =
      "kernels:\n  - {name: a, thread_blocks: 1, threads_per_tb: 32, registers_per_tb: 32, tb_time: "
      "{mean_ns: 1}}\n"
      "  - {name: a, thread_blocks: 2, threads_per_tb: 32, registers_per_tb: 32, tb_time: {mean_ns: 1}}\n";
  const std::string path = write("duplib.yaml", text);
  const GpuConfig g = gpu();
  expect_error(error_of([&] { (void)load_kernel_library(path, g); }), "duplib.yaml", 3, "kernels[1].name",
               "duplicate kernel name 'a'");
}

TEST_F(ConfigErrorTest, DuplicateProcessName) {
  std::string text = workload_text("  - name: p0\n    streams: [[{cpu: {ns: 1}}]]\n");
  expect_error(workload_error(text), "w.yaml", 6, "processes[1].name", "duplicate process name 'p0'");
}

TEST_F(ConfigErrorTest, ReferenceValuesMustBeNumbers) {
  const std::string text =
      "kernels:\n  - name: k\n    thread_blocks: 1\n    threads_per_tb: 32\n    registers_per_tb: 32\n"
      "    tb_time: {mean_ns: 5}\n    reference: {tbs_per_sm: 16, class: LONG}\n";
  const std::string path = write("reflib.yaml", text);
  const GpuConfig g = gpu();
  expect_error(error_of([&] { (void)load_kernel_library(path, g); }), "reflib.yaml", 7,
               "kernels[0].reference.class", "expected a number");
}

// ---- zero and negative sizes and counts

TEST_F(ConfigErrorTest, ZeroCopySize) {
  const std::string text = workload_text("        - h2d: {bytes: 0}\n");
  expect_error(workload_error(text), "w.yaml", line_of(text, "bytes: 0"),
               "processes[0].streams[0][1].h2d.bytes", "must be between 1 and 1099511627776 bytes, got 0");
}

TEST_F(ConfigErrorTest, NegativeCopySize) {
  const std::string text = workload_text("        - d2h: {bytes: -4096}\n");
  expect_error(workload_error(text), "w.yaml", line_of(text, "-4096"), "processes[0].streams[0][1].d2h.bytes",
               "must be between 1 and 1099511627776 bytes, got -4096");
}

TEST_F(ConfigErrorTest, ZeroSmCount) {
  const auto [msg, text] = gpu_error("sms: 4", "sms: 0");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "sms: 0"), "sms", "must be between 1 and 1024 SMs, got 0");
}

TEST_F(ConfigErrorTest, NegativeBandwidth) {
  const auto [msg, text] = gpu_error("bandwidth_gb_per_s: 100", "bandwidth_gb_per_s: -100");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "-100"), "memory.bandwidth_gb_per_s",
               "must be between 0.1 and 100000 GB/s, got -100");
}

TEST_F(ConfigErrorTest, ZeroCpuTimeAndNegativeArrival) {
  std::string text = workload_text("        - cpu: {us: 0}\n");
  expect_error(workload_error(text), "w.yaml", line_of(text, "us: 0"), "processes[0].streams[0][1].cpu.us",
               "must be positive");
  text = workload_text("");
  text.replace(text.find("    streams:"), 0, "    arrival_ns: -5\n");
  expect_error(workload_error(text), "w.yaml", 4, "processes[0].arrival_ns", "must not be negative");
}

TEST_F(ConfigErrorTest, ZeroLaunchesRepeatAndTokens) {
  std::string text = workload_text("        - kernel: {name: small, launches: 0}\n");
  expect_error(workload_error(text), "w.yaml", 6, "processes[0].streams[0][1].kernel.launches",
               "must be between 1 and 1000000 launches, got 0");
  text = workload_text("");
  text.replace(text.find("    streams:"), 0, "    repeat: 0\n");
  expect_error(workload_error(text), "w.yaml", 4, "processes[0].repeat",
               "must be between 1 and 1000000 runs, got 0");
  text = workload_text("");
  text.replace(text.find("    streams:"), 0, "    tokens: -1\n");
  expect_error(workload_error(text), "w.yaml", 4, "processes[0].tokens", "positive");
}

TEST_F(ConfigErrorTest, TbRsdPercentOverridesEveryKernelWithoutTouchingTheLibrary) {
  const GpuConfig g = gpu();
  const std::string text = "tb_rsd_percent: 12.5\n" + workload_text(
                                                          "        - kernel: {name: small, launches: 2}\n"
                                                          "        - kernel: {name: small}\n");
  const Workload w = load_workload(write("w.yaml", text), g);
  ASSERT_TRUE(w.tb_rsd_percent.has_value());
  EXPECT_DOUBLE_EQ(*w.tb_rsd_percent, 12.5);
  const auto& c = w.processes.at(0).streams.at(0).commands;
  ASSERT_EQ(c.size(), 3U);
  EXPECT_DOUBLE_EQ(c[1].kernel->tb_time.rsd_percent, 12.5);
  EXPECT_EQ(c[1].kernel, c[2].kernel);  // one copy per kernel, shared by its commands
  const auto lib = load_kernel_library((dir_ / "lib.yaml").string(), g);
  EXPECT_EQ(c[1].kernel->tb_time.mean_ps, lib.at(0)->tb_time.mean_ps);  // the mean is kept
  EXPECT_DOUBLE_EQ(lib.at(0)->tb_time.rsd_percent, 0.0);

  const std::string negative = "tb_rsd_percent: -3\n" + workload_text("");
  expect_error(workload_error(negative), "w.yaml", 1, "tb_rsd_percent",
               "must be between 0 and 500 %, got -3");
  const std::string fixed = "tb_duration: fixed\ntb_rsd_percent: 10\n" + workload_text("");
  expect_error(workload_error(fixed), "w.yaml", 2, "tb_rsd_percent", "no effect with tb_duration: fixed");
}

TEST_F(ConfigErrorTest, EmptyListsAreRejected) {
  std::string text = "kernel_libraries: [lib.yaml]\nprocesses:\n  - name: p0\n    streams:\n      - []\n";
  expect_error(workload_error(text), "w.yaml", 5, "processes[0].streams[0]", "non-empty list");
  text = "kernel_libraries: [lib.yaml]\nprocesses: []\n";
  expect_error(workload_error(text), "w.yaml", 2, "processes", "non-empty list");
}

TEST_F(ConfigErrorTest, CommandMustHaveExactlyOneKey) {
  const std::string text = workload_text("        - {cpu: {ns: 5}, d2h: {bytes: 8}}\n");
  expect_error(workload_error(text), "w.yaml", 6, "processes[0].streams[0][1]", "exactly one key");
}

TEST_F(ConfigErrorTest, CarveOutsMustAscend) {
  const auto [msg, text] = gpu_error("[16, 48]", "[48, 16]");
  expect_error(msg, "bad-gpu.yaml", line_of(text, "[48, 16]"), "sm.shared_memory_configs_kb[1]", "ascending");
}

TEST_F(ConfigErrorTest, CopyEnginesIsOneOrTwo) {
  std::string text = kGpu;
  text += "frontend:\n  copy_engines: 3\n";
  const std::string path = write("ce.yaml", text);
  expect_error(error_of([&] { (void)load_gpu_config(path); }), "ce.yaml", line_of(text, "copy_engines"),
               "frontend.copy_engines", "must be 1");
}

// ---- files that cannot be read or parsed

TEST_F(ConfigErrorTest, MalformedYamlReportsTheParserLine) {
  const std::string text = "name: x\nsms: 13\n  core_clock_mhz: 700\n";
  const std::string path = write("broken.yaml", text);
  const std::string msg = error_of([&] { (void)load_gpu_config(path); });
  expect_error(msg, "broken.yaml", 3, "", "malformed YAML");
}

TEST_F(ConfigErrorTest, UnclosedFlowMap) {
  const std::string text =
      "kernel_libraries: [lib.yaml]\nprocesses:\n  - {name: p0, streams: [[{cpu: {ns: 1}}]]\n";
  const std::string path = write("w.yaml", text);
  const GpuConfig g = gpu();
  const std::string msg = error_of([&] { (void)load_workload(path, g); });
  EXPECT_NE(msg.find("w.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << msg;
}

TEST_F(ConfigErrorTest, MissingFile) {
  const std::string path = (dir_ / "no-such-gpu.yaml").string();
  const std::string msg = error_of([&] { (void)load_gpu_config(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot open file"), std::string::npos) << msg;
}

TEST_F(ConfigErrorTest, UnreadableFile) {
  std::string path = write("secret.yaml", kGpu);
  fs::permissions(path, fs::perms::none);
  // With privileges that read any file, use a path that cannot be opened by anyone: a file "inside" a file.
  if (std::ifstream(path).good()) path = gpu_path_ + "/secret.yaml";
  const std::string msg = error_of([&] { (void)load_gpu_config(path); });
  EXPECT_NE(msg.find("secret.yaml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot open file"), std::string::npos) << msg;
}

TEST_F(ConfigErrorTest, DirectoryInsteadOfFile) {
  const std::string msg = error_of([&] { (void)load_gpu_config(dir_.string()); });
  EXPECT_NE(msg.find(dir_.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("directory"), std::string::npos) << msg;
}

TEST_F(ConfigErrorTest, EmptyFileAndNonMapRoot) {
  const std::string empty = write("empty.yaml", "");
  expect_error(error_of([&] { (void)load_gpu_config(empty); }), "empty.yaml", 1, "", "empty");
  const std::string list = write("list.yaml", "- 1\n- 2\n");
  expect_error(error_of([&] { (void)load_gpu_config(list); }), "list.yaml", 1, "",
               "expected a map, got a list");
}

TEST_F(ConfigErrorTest, ErrorsInALibraryNameTheLibraryFile) {
  write("lib.yaml", std::string(kLibrary) + "  - name: bad\n    thread_blocks: -1\n");
  const std::string text = workload_text("");
  const std::string msg = workload_error(text);
  expect_error(msg, "lib.yaml",
               line_of(std::string(kLibrary) + "  - name: bad\n    thread_blocks: -1\n", "-1"),
               "kernels[3].thread_blocks", "must be between 1 and 2147483647 thread blocks, got -1");
}

// ---------------------------------------------------------------------------------------------------
// Physical ranges, the time horizon, and input that is not a config at all (issue 9: each of these
// once gave a silently wrong result, a hang or a crash).

TEST_F(ConfigErrorTest, GpuNumbersOutsidePhysicalRangesNameTheRange) {
  struct Case {
    const char* from;
    const char* to;
    const char* key;
    const char* fragment;
  };
  const Case cases[] = {
      // 1e-300 GB/s once made copies take no time (the transfer time overflowed and wrapped).
      {"bandwidth_gb_per_s: 100", "bandwidth_gb_per_s: 1e-300", "memory.bandwidth_gb_per_s",
       "must be between 0.1 and 100000 GB/s, got 1e-300"},
      // 1e17 ns pinned simulated time at 2^63 ps.
      {"latency_ns: 0}\npcie", "latency_ns: 1e17}\npcie", "memory.latency_ns",
       "must be between 0 and 1e+06 ns, got 1e17"},
      {"clock_mhz: 500", "clock_mhz: 1e-300", "pcie.clock_mhz", "must be between 1 and 100000 MHz"},
      // 4294967295 SMs, queues or burst bytes ended in std::bad_alloc.
      {"sms: 4", "sms: 4294967295", "sms", "must be between 1 and 1024 SMs, got 4294967295"},
      {"burst_bytes: 4096", "burst_bytes: 4294967295", "pcie.burst_bytes",
       "must be between 1 and 1048576 bytes"},
      {"core_clock_mhz: 1000", "core_clock_mhz: 1e9", "core_clock_mhz", "must be between 1 and 10000 MHz"},
      {"registers: 65536", "registers: 4294967295", "sm.registers",
       "must be between 1 and 16777216 registers"},
      {"[16, 48]", "[16, 4000000]", "sm.shared_memory_configs_kb[1]", "must be between 1 and 65536 KB"},
  };
  for (const Case& c : cases) {
    const auto [msg, text] = gpu_error(c.from, c.to);
    expect_error(msg, "bad-gpu.yaml", line_of(text, c.to), c.key, c.fragment);
  }
  const std::string frontend = std::string(kGpu) + "frontend: {command_queues: 4294967295}\n";
  const std::string path = write("fe.yaml", frontend);
  expect_error(error_of([&] { (void)load_gpu_config(path); }), "fe.yaml", line_of(frontend, "frontend"),
               "frontend.command_queues", "must be between 1 and 1024 queues");
  const std::string cs = std::string(kGpu) + "context_switch: {burst_bytes: 4294967295}\n";
  const std::string cs_path = write("cs.yaml", cs);
  expect_error(error_of([&] { (void)load_gpu_config(cs_path); }), "cs.yaml", line_of(cs, "context_switch"),
               "context_switch.burst_bytes", "must be between 1 and 1048576 bytes");
  // The preemption latencies (issue 11 item 4): a millisecond of trap routine is a typo, a negative
  // setup is no time, a fractional drain is not a cycle count, a misspelt key is unknown.
  const struct {
    const char* map;
    const char* key;
    const char* fragment;
  } latencies[] = {
      {"{trap_cycles: 1000001}", "context_switch.trap_cycles", "must be between 0 and 1000000 cycles"},
      {"{setup_cycles: -1}", "context_switch.setup_cycles", "must be between 0 and 1000000 cycles"},
      {"{drain_cycles: 2.5}", "context_switch.drain_cycles", "expected an integer"},
      {"{min_transactions: 0}", "context_switch.min_transactions", "must be between 1 and 65536"},
      {"{trap_cycle: 100}", "context_switch.trap_cycle", "unknown key"},
  };
  for (const auto& c : latencies) {
    const std::string text = std::string(kGpu) + "context_switch: " + c.map + "\n";
    const std::string latency_path = write("latency.yaml", text);
    expect_error(error_of([&] { (void)load_gpu_config(latency_path); }), "latency.yaml",
                 line_of(text, "context_switch"), c.key, c.fragment);
  }
}

TEST_F(ConfigErrorTest, KernelTimesBeyondTheirRangeAreRefused) {
  // 1e10 %RSD gave thread blocks of ~0 or 2^63 ps.
  const int line = line_of(std::string(kLibrary) + "  - {", "  - {");
  write("lib.yaml", std::string(kLibrary) + "  - {name: wide, thread_blocks: 1, threads_per_tb: 32, " +
                        "registers_per_tb: 32, tb_time: {mean_us: 1, rsd_percent: 1e10}}\n");
  std::string msg = workload_error(workload_text(""));
  expect_error(msg, "lib.yaml", line, "kernels[3].tb_time.rsd_percent",
               "must be between 0 and 500 %, got 1e10");
  // 9e11 us (10 days) per thread block: beyond the one-minute limit on a mean.
  write("lib.yaml", std::string(kLibrary) + "  - {name: slow, thread_blocks: 1, threads_per_tb: 32, " +
                        "registers_per_tb: 32, tb_time: {mean_us: 9e11}}\n");
  msg = workload_error(workload_text(""));
  expect_error(msg, "lib.yaml", line, "kernels[3].tb_time.mean_us", "900000 s is beyond the 60 s limit");
}

TEST_F(ConfigErrorTest, AWorkloadWhoseWorkPassesTheTimeHorizonNamesTheCommand) {
  // 50 s thread blocks, 4 blocks on 4 SMs = 1 wave: 50 s per launch; x 1e4 launches x 25 runs
  // is 1.25e7 s of work, beyond the 1e18 ps horizon (it once wrapped and reported start == end).
  write("lib.yaml", std::string(kLibrary) + "  - {name: long, thread_blocks: 4, threads_per_tb: 32, " +
                        "registers_per_tb: 32, tb_time: {mean_us: 5e7}}\n");
  const std::string text =
      "kernel_libraries: [lib.yaml]\n"
      "processes:\n"
      "  - name: p0\n"
      "    repeat: 25\n"
      "    streams:\n"
      "      - - kernel: {name: long, launches: 10000}\n";
  const std::string msg = workload_error(text);
  expect_error(msg, "w.yaml", line_of(text, "name: long"), "", "passes the model's horizon of 1e18 ps");
  EXPECT_NE(msg.find("process 'p0'"), std::string::npos) << msg;
  // The same kernel once is fine.
  const std::string once =
      "kernel_libraries: [lib.yaml]\nprocesses:\n  - name: p0\n    streams:\n"
      "      - - kernel: {name: long}\n";
  const std::string path = write("once.yaml", once);
  EXPECT_NO_THROW((void)load_workload(path, gpu()));
}

TEST_F(ConfigErrorTest, AWorkloadLaunchingMoreThanAMillionKernelsIsRefused) {
  // 1e6 launches x 25 runs of a 10 us kernel is well inside the time horizon, but 25 million launch
  // records exhausted memory.
  const std::string text =
      "kernel_libraries: [lib.yaml]\nprocesses:\n  - name: p0\n    repeat: 25\n"
      "    streams:\n      - - kernel: {name: small, launches: 1000000}\n";
  expect_error(workload_error(text), "w.yaml", 6, "", "launches more than 1000000 kernels over all its runs");
  const std::string fits =
      "kernel_libraries: [lib.yaml]\nprocesses:\n  - name: p0\n    repeat: 1\n"
      "    streams:\n      - - kernel: {name: small, launches: 1000000}\n";
  const std::string path = write("fits.yaml", fits);
  EXPECT_NO_THROW((void)load_workload(path, gpu()));
}

TEST_F(ConfigErrorTest, CopiesCpuPhasesAndArrivalsHaveLimits) {
  // 2^63 - 1 bytes never finished simulating.
  std::string text = workload_text("        - d2h: {bytes: 9223372036854775807}\n");
  expect_error(workload_error(text), "w.yaml", line_of(text, "922337"),
               "processes[0].streams[0][1].d2h.bytes", "must be between 1 and 1099511627776 bytes");
  text = workload_text("        - cpu: {ms: 1e9}\n");
  expect_error(workload_error(text), "w.yaml", line_of(text, "1e9"), "processes[0].streams[0][1].cpu.ms",
               "at most one hour");
  text =
      "kernel_libraries: [lib.yaml]\nprocesses:\n  - name: p0\n    arrival_ns: 1e17\n    streams:\n"
      "      - - kernel: {name: small}\n";
  expect_error(workload_error(text), "w.yaml", 4, "processes[0].arrival_ns", "at most one hour");
}

TEST_F(ConfigErrorTest, NamesMustBePrintableUtf8) {
  // A non-UTF-8 byte once reached the JSON writer and ended in exit 1 with no location.
  std::string text =
      "kernel_libraries: [lib.yaml]\nprocesses:\n  - name: p\xff\n    streams:\n"
      "      - - kernel: {name: small}\n";
  expect_error(workload_error(text), "w.yaml", 3, "processes[0].name", "not valid UTF-8 at byte 1");
  text =
      "kernel_libraries: [lib.yaml]\nprocesses:\n  - name: \"a\\tb\"\n    streams:\n"
      "      - - kernel: {name: small}\n";
  expect_error(workload_error(text), "w.yaml", 3, "processes[0].name", "control character 0x09");
  // An overlong encoding of '/' (0xC0 0xAF) is not UTF-8 either.
  const auto [msg, gpu_text] = gpu_error("name: test-gpu", "name: a\xc0\xaf");
  expect_error(msg, "bad-gpu.yaml", 1, "name", "not valid UTF-8");
  // Real UTF-8 is a fine name.
  std::string utf8 = kGpu;
  utf8.replace(utf8.find("test-gpu"), 8, "\xc3\xa9t\xc3\xa9-\xe2\x82\xac");
  const std::string path = write("utf8.yaml", utf8);
  EXPECT_EQ(load_gpu_config(path).name, "\xc3\xa9t\xc3\xa9-\xe2\x82\xac");
}

TEST_F(ConfigErrorTest, AWorkloadNameCannotLeaveTheOutputFolder) {
  for (const char* name : {"../../x", "..", "a/b", "a\\\\b"}) {
    const std::string text = std::string("name: \"") + name + "\"\n" + workload_text("");
    expect_error(workload_error(text), "w.yaml", 1, "name", "must not be '.' or '..' nor contain '/'");
  }
}

TEST_F(ConfigErrorTest, DevicesHugeFilesAndSecondDocumentsAreRefused) {
  std::string msg = error_of([&] { (void)load_gpu_config("/dev/zero"); });
  EXPECT_NE(msg.find("/dev/zero: is not a regular file"), std::string::npos) << msg;
  const std::string big = write("big.yaml", "# " + std::string(9U << 20U, 'x') + "\n");
  msg = error_of([&] { (void)load_gpu_config(big); });
  EXPECT_NE(msg.find("larger than a config file may be (8388608 bytes)"), std::string::npos) << msg;
  // A second document was silently ignored.
  const std::string two = std::string(kGpu) + "---\nsms: 8\n";
  const std::string path = write("two.yaml", two);
  expect_error(error_of([&] { (void)load_gpu_config(path); }), "two.yaml", line_of(two, "---"), "",
               "2 YAML documents");
}

}  // namespace
}  // namespace gpumux
