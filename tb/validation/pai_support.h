#pragma once
// Shared by the Pai et al. end-to-end tests: ERCBench on the Fermi config, two-program workloads,
// isolated baselines, metrics, and the per-thread-block timeline a simulation can write.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "metrics/multiprogram_metrics.h"
#include "top/simulation.h"

namespace gpumux::test {

struct Ercbench {
  GpuConfig gpu;
  std::vector<std::shared_ptr<const KernelDesc>> kernels;  ///< in library order (Pai Table 2)

  [[nodiscard]] std::shared_ptr<const KernelDesc> by_benchmark(const std::string& benchmark) const {
    for (const auto& k : kernels) {
      if (k->benchmark == benchmark) return k;
    }
    ADD_FAILURE() << "no ERCBench kernel for " << benchmark;
    return kernels.front();
  }
};

inline Ercbench load_ercbench() {
  const std::string configs = std::string(GPUMUX_SOURCE_DIR) + "/configs";
  Ercbench e;
  e.gpu = load_gpu_config(configs + "/gpus/fermi-gtx480.yaml");
  for (const auto& k : load_kernel_library(configs + "/kernels/ercbench.yaml", e.gpu)) e.kernels.push_back(k);
  return e;
}

inline ProcessSpec one_kernel_process(const std::shared_ptr<const KernelDesc>& k, TimePs arrival_ps) {
  ProcessSpec p;
  p.name = k->benchmark.empty() ? k->name : k->benchmark;
  p.arrival_ps = arrival_ps;
  CommandSpec c;
  c.kind = CommandKind::kKernel;
  c.kernel = k;
  c.launches = 1;
  p.streams.push_back(StreamSpec{{c}});
  return p;
}

/// Pai 6.1.3: a two-program workload, one kernel each; the second arrives `offset_ps` after the first.
inline SimulationSpec pai_pair(const GpuConfig& gpu, const std::shared_ptr<const KernelDesc>& first,
                               const std::shared_ptr<const KernelDesc>& second, TimePs offset_ps,
                               const std::string& policy, TbDurationMode mode = TbDurationMode::kFixed) {
  SimulationSpec spec;
  spec.gpu = gpu;
  spec.policy = policy;
  spec.workload.name = first->benchmark + "+" + second->benchmark;
  spec.workload.tb_duration = mode;
  spec.workload.processes.push_back(one_kernel_process(first, 0));
  spec.workload.processes.push_back(one_kernel_process(second, offset_ps));
  if (spec.workload.processes[1].name == spec.workload.processes[0].name) {
    spec.workload.processes[1].name += "-2";
  }
  return spec;
}

/// `k` alone from time 0 under fcfs: the isolated baseline T^SP of its process.
inline SimulationSpec pai_alone(const GpuConfig& gpu, const std::shared_ptr<const KernelDesc>& k,
                                TbDurationMode mode = TbDurationMode::kFixed) {
  SimulationSpec spec;
  spec.gpu = gpu;
  spec.workload.name = k->name;
  spec.workload.tb_duration = mode;
  spec.workload.processes.push_back(one_kernel_process(k, 0));
  return spec;
}

/// STP, ANTT, StrictF of a two-program run given each process's isolated run.
inline MultiprogramMetrics pair_metrics(const RunResult& pair, const RunResult& alone0,
                                        const RunResult& alone1) {
  std::vector<ProcessTimes> times;
  times.push_back({mean_turnaround_ps(alone0.processes.at(0)), mean_turnaround_ps(pair.processes.at(0))});
  times.push_back({mean_turnaround_ps(alone1.processes.at(0)), mean_turnaround_ps(pair.processes.at(1))});
  return compute_metrics(times);
}

/// One thread block as the timeline records it.
struct TbSlice {
  std::uint32_t sm = 0;
  std::uint32_t launch = 0;
  TimePs start_ps = 0;
  TimePs end_ps = 0;
};

/// A file name for a timeline, unique to this test process.
inline std::string temp_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          ("gpumux-" + stem + "-" + std::to_string(static_cast<long>(::getpid())) + ".json"))
      .string();
}

/// Track ids of the timeline's SM process: SM s owns s * kTimelineTracksPerSm and the lanes after it.
constexpr std::uint64_t kTimelineTracksPerSm = 100000;

/// The thread blocks of a timeline written with SimulationSpec::timeline_path (Perfetto JSON, us).
inline std::vector<TbSlice> read_tb_slices(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<TbSlice> tbs;
  const auto ps = [](double us) { return static_cast<TimePs>(std::llround(us * 1e6)); };
  for (const auto& e : j.at("traceEvents")) {
    // Resident thread blocks: their runs and their context restores (the SM tracks also hold
    // preemptions and setups).
    const std::string cat = e.value("cat", "");
    if (e.value("ph", "") != "X" || (cat != "thread block" && cat != "restore")) continue;
    TbSlice s;
    s.sm = static_cast<std::uint32_t>(e.at("tid").get<std::uint64_t>() / kTimelineTracksPerSm);
    s.launch = e.at("args").at("launch").get<std::uint32_t>();
    s.start_ps = ps(e.at("ts").get<double>());
    s.end_ps = s.start_ps + ps(e.at("dur").get<double>());
    tbs.push_back(s);
  }
  return tbs;
}

/// Thread blocks of launch `launch` resident on `sm` at time `t`.
inline std::uint32_t resident_at(const std::vector<TbSlice>& tbs, std::uint32_t sm, std::uint32_t launch,
                                 TimePs t) {
  std::uint32_t n = 0;
  for (const TbSlice& s : tbs) {
    n += (s.sm == sm && s.launch == launch && s.start_ps <= t && t < s.end_ps) ? 1 : 0;
  }
  return n;
}

}  // namespace gpumux::test
