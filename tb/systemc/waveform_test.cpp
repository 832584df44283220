// The run's waveform (issue 17, wave/waveform.h): the scheduler's state per SM in the VCD at the times
// the preemption record gives, the GTKWave save file and filters beside it, and identical files for
// identical runs. Every simulation runs in a forked child.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_support.h"
#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "systemc/priority_scenario.h"
#include "top/simulation.h"
#include "wave/waveform.h"

namespace gpumux {
namespace {

/// Signal path -> (time, value) changes, from a VCD as wave/vcd_writer.h writes it.
std::map<std::string, std::vector<std::pair<TimePs, std::uint64_t>>> read_vcd(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::map<std::string, std::string> name_of;  // id -> path
  std::map<std::string, std::vector<std::pair<TimePs, std::uint64_t>>> changes;
  std::vector<std::string> scope;
  TimePs t = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "$scope") {
      std::string kind;
      std::string name;
      words >> kind >> name;
      scope.push_back(name);
    } else if (first == "$upscope") {
      scope.pop_back();
    } else if (first == "$var") {
      std::string type;
      std::string width;
      std::string id;
      std::string name;
      words >> type >> width >> id >> name;
      std::string full;
      for (const std::string& s : scope) full += s + ".";
      name_of[id] = full + name;
    } else if (!first.empty() && first[0] == '#') {
      t = std::stoull(first.substr(1));
    } else if (!first.empty() && first[0] == 'b') {
      std::string id;
      words >> id;
      changes[name_of.at(id)].emplace_back(t, std::stoull(first.substr(1), nullptr, 2));
    } else if (!first.empty() && (first[0] == '0' || first[0] == '1') && first.size() > 1) {
      changes[name_of.at(first.substr(1))].emplace_back(t, first[0] == '1' ? 1 : 0);
    }
  }
  return changes;
}

/// The value `signal` holds at `t` (its last change at or before t).
std::uint64_t at(const std::vector<std::pair<TimePs, std::uint64_t>>& signal, TimePs t) {
  std::uint64_t v = 0;
  for (const auto& [when, value] : signal) {
    if (when > t) break;
    v = value;
  }
  return v;
}

// Tanasic 4.2's scenario (systemc/priority_scenario.h): two low-priority kernels fill the GPU, a
// high-priority one arrives at 50 us and preempts two SMs by context switch.
SimulationSpec preempting_run(const std::string& vcd) {
  SimulationSpec spec = test::priority_scenario("ppq", PreemptionMechanism::kContextSwitch);
  spec.gpu.context_switch.drain_cycles = 282;
  spec.gpu.context_switch.trap_cycles = 100;
  spec.gpu.context_switch.setup_cycles = 353;
  spec.vcd_path = vcd;
  return spec;
}

std::string temp_dir(const std::string& stem) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpumux-" + stem + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Issue 17 item 6: the preempted SM goes running -> (reserved) pipeline drain -> trap -> saving ->
// setup -> running the high-priority kernel, each at the time the stats.json record gives.
TEST(Waveform, APreemptedSmShowsEachStepAtTheRecordedTimes) {
  const std::string dir = temp_dir("wave");
  const RunResult r = simulate(preempting_run(dir + "/trace.vcd"));
  const auto vcd = read_vcd(dir + "/trace.vcd");
  ASSERT_EQ(r.preemptions.size(), 2U);
  const std::uint64_t high = 2;  // launch index of the high-priority kernel (the third launch)
  ASSERT_EQ(r.kernels.at(high).name, "short");
  for (const PreemptionTrace& p : r.preemptions) {
    SCOPED_TRACE("SM " + std::to_string(p.sm));
    char scope[32];
    std::snprintf(scope, sizeof scope, "gpu.sm_%02u.", p.sm);
    const auto& activity = vcd.at(std::string(scope) + "activity");
    const auto& smst = vcd.at(std::string(scope) + "smst_state");
    const auto& smst_next = vcd.at(std::string(scope) + "smst_next");
    const auto& kernel = vcd.at(std::string(scope) + "kernel");
    const auto as = [](SmActivity a) { return static_cast<std::uint64_t>(a); };
    EXPECT_EQ(at(activity, p.requested_ps - 1), as(SmActivity::kRunning));
    EXPECT_EQ(at(kernel, p.requested_ps - 1), p.kernel);
    EXPECT_EQ(at(smst, p.requested_ps - 1), static_cast<std::uint64_t>(SmState::kRunning));
    EXPECT_EQ(at(activity, p.requested_ps), as(SmActivity::kPipelineDrain));
    EXPECT_EQ(at(smst, p.requested_ps), static_cast<std::uint64_t>(SmState::kReserved));
    EXPECT_EQ(at(smst_next, p.requested_ps), high);
    EXPECT_EQ(at(activity, p.requested_ps + p.drain_ps), as(SmActivity::kTrap));
    EXPECT_EQ(at(activity, p.save_start_ps - 1), as(SmActivity::kTrap));
    EXPECT_EQ(at(activity, p.save_start_ps), as(SmActivity::kSaving));
    EXPECT_EQ(at(activity, p.done_ps - 1), as(SmActivity::kSaving));
    ASSERT_GT(p.setup_ps, 0);
    EXPECT_EQ(at(activity, p.done_ps), as(SmActivity::kSetup));
    EXPECT_EQ(at(smst, p.done_ps), static_cast<std::uint64_t>(SmState::kRunning));
    EXPECT_EQ(at(activity, p.done_ps + p.setup_ps), as(SmActivity::kRunning));
    EXPECT_EQ(at(kernel, p.done_ps + p.setup_ps), high);
    EXPECT_EQ(at(vcd.at(std::string(scope) + "preemptions"), p.requested_ps), 1U);
  }
  // The active queue: at the preemptions, the high-priority kernel holds a KSRT entry (Tanasic 3.3).
  bool in_ksrt = false;
  for (const auto& [path, signal] : vcd) {
    if (path.rfind("gpu.engine.ksrt_", 0) == 0 && at(signal, r.preemptions[0].requested_ps) == high) {
      in_ksrt = true;
    }
  }
  EXPECT_TRUE(in_ksrt);
  // KSRT states (Tanasic 3.3: the active queue holds running or preempted kernels): the high-priority
  // kernel's entry runs once its SMs are set up; a low-priority entry is running before the preemption.
  for (const auto& [path, signal] : vcd) {
    if (path.rfind("gpu.engine.ksrt_", 0) != 0 || path.size() < 5 ||
        path.substr(path.size() - 5) != "state") {
      continue;
    }
    const std::string kernel_path = path.substr(0, path.size() - 5) + "kernel";
    const TimePs after = r.preemptions[0].done_ps + r.preemptions[0].setup_ps;
    if (at(vcd.at(kernel_path), after) == high) {
      EXPECT_EQ(at(signal, after), static_cast<std::uint64_t>(KsrtState::kRunning)) << path;
    }
  }
  EXPECT_GE(at(vcd.at("gpu.engine.active_queue"), r.preemptions[0].requested_ps), 2U);
  EXPECT_EQ(at(vcd.at("gpu.engine.active_queue"), r.end_ps), 0U);
  // The PTBQ holds the saved thread blocks from the saves until they resume.
  const auto& ptbq = vcd.at("gpu.engine.ptbq_waiting");
  EXPECT_EQ(at(ptbq, r.preemptions[0].requested_ps + 1), 16U);  // 2 SMs x 8 blocks
  EXPECT_EQ(at(ptbq, r.end_ps), 0U);
  // Memory: every byte the controller served, context saves and restores included.
  const auto& bytes = vcd.at("gpu.mem.bytes_served");
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.back().second,
            std::uint64_t{4} * r.preemptions[0].bytes);  // two saves, two restores of the same size
  std::filesystem::remove_all(dir);
}

// The save file and the filters sit beside the dump and name it; identical runs give identical files.
TEST(Waveform, GtkwaveFilesAndIdenticalRunsGiveIdenticalFiles) {
  const std::string a = temp_dir("wave-a");
  const std::string b = temp_dir("wave-b");
  const std::vector<RunResult> r =
      simulate_all({preempting_run(a + "/trace.vcd"), preempting_run(b + "/trace.vcd")}, 2);
  EXPECT_EQ(slurp(a + "/trace.vcd"), slurp(b + "/trace.vcd"));
  const WaveformFiles files = waveform_files(a + "/trace.vcd");
  const std::string save = slurp(files.save);
  EXPECT_NE(save.find("[dumpfile] \"" + std::filesystem::absolute(a + "/trace.vcd").string() + "\""),
            std::string::npos);
  EXPECT_NE(save.find("gpu.sm_00.activity[2:0]"), std::string::npos);
  for (const std::string& f : files.filters.all()) EXPECT_TRUE(std::filesystem::exists(f)) << f;
  // Named by the save file: those this run's signals use (no tokens without dss, no warps at TB level).
  for (const std::string& f : {files.filters.sm_activity, files.filters.smst_state, files.filters.kernel,
                               files.filters.ksrt_state}) {
    EXPECT_NE(save.find(f), std::string::npos) << f;
  }
  EXPECT_NE(slurp(files.filters.ksrt_state).find("3 preempted"), std::string::npos);
  EXPECT_NE(slurp(files.filters.sm_activity).find("7 saving"), std::string::npos);
  EXPECT_NE(slurp(files.filters.kernel).find("4294967295 -"), std::string::npos);
  EXPECT_NE(slurp(files.filters.kernel).find("2 short#2(high)"), std::string::npos);
  EXPECT_EQ(slurp(a + "/trace.vcd").find("$date"), std::string::npos);  // no wall clock in the header
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

// Issue 12 item 6: with memory.model dram, every channel's queue depth and every bank's state. A
// streaming kernel at the warp level: the queues fill and empty again, each burst enters one queue and
// leaves it by one column command, and banks open, close and refresh.
TEST(Waveform, DramChannelsShowQueueDepthAndBankState) {
  const std::string dir = temp_dir("wave-dram");
  GpuConfig gpu = load_gpu_config(std::string(GPUMUX_SOURCE_DIR) + "/configs/gpus/kepler-k20c.yaml");
  gpu.sm_model = SmModel::kWarp;
  gpu.memory.model = MemoryModel::kDram;
  const auto kernels =
      load_kernel_library(std::string(GPUMUX_SOURCE_DIR) + "/configs/kernels/parboil.yaml", gpu);
  std::shared_ptr<KernelDesc> k;
  for (const auto& kernel : kernels) {
    if (kernel->name == "scaninter1") k = std::make_shared<KernelDesc>(*kernel);
  }
  ASSERT_TRUE(k);
  SimulationSpec spec = test::alone_fixed(gpu, k);
  spec.vcd_path = dir + "/dram.vcd";
  const RunResult r = simulate(spec);
  const auto changes = read_vcd(spec.vcd_path);
  const std::uint32_t channels = gpu.memory.dram.channels;
  std::uint64_t bursts = 0;
  for (const nlohmann::json& ch : r.memory.dram.at("channels")) {
    bursts += ch.at("reads").get<std::uint64_t>() + ch.at("writes").get<std::uint64_t>();
  }
  ASSERT_GT(bursts, 0U);
  std::uint64_t rises = 0;
  std::uint64_t opened = 0;
  for (std::uint32_t c = 0; c < channels; ++c) {
    const std::string scope = "gpu.mem.dram.ch" + std::string(c < 10 ? "0" : "") + std::to_string(c) + ".";
    ASSERT_TRUE(changes.count(scope + "queue")) << scope;
    const auto& queue = changes.at(scope + "queue");
    std::uint64_t previous = 0;
    for (const auto& [t, depth] : queue) {
      if (depth > previous) rises += depth - previous;
      previous = depth;
    }
    EXPECT_EQ(previous, 0U) << scope << ": every queued burst left by its column command";
    for (std::uint32_t b = 0; b < gpu.memory.dram.banks; ++b) {
      const std::string bank = scope + "bank" + std::string(b < 10 ? "0" : "") + std::to_string(b);
      ASSERT_TRUE(changes.count(bank)) << bank;
      for (const auto& [t, state] : changes.at(bank)) {
        EXPECT_LE(state, 2U) << bank;
        opened += state == 1 ? 1 : 0;
      }
    }
  }
  // Every burst entered a queue once (rises can merge at one instant, never exceed the bursts).
  EXPECT_LE(rises, bursts);
  EXPECT_GT(rises, 0U);
  EXPECT_GT(opened, 0U);
  const WaveformFiles files = waveform_files(spec.vcd_path);
  EXPECT_NE(slurp(files.filters.bank_state).find("2 refresh"), std::string::npos);
  EXPECT_NE(slurp(files.save).find("gpu.mem.dram.ch00.queue[15:0]"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumux
