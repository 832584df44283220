#include "app/kernel_profiler.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "config/yaml_reader.h"
#include "core/error.h"
#include "program/phase_analysis.h"
#include "program/program_parser.h"
#include "sm/occupancy.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

/// What one profiling run gives of the profiled kernel (process 0) and the dummy (process 1, if any).
struct Measured {
  double latency_ps = 0;        ///< first thread block issued to last completed
  double mean_tb_ps = 0;        ///< its thread blocks' mean run time
  double dram_bytes = 0;        ///< its DRAM traffic
  double dummy_mean_tb_ps = 0;  ///< the dummy's (0 without one)
};

/// The profiled kernel's DRAM bytes in a run where it is the only kernel that touches memory.
double kernel_dram_bytes(const GpuConfig& gpu, const KernelDesc& kernel, const RunResult& r) {
  if (gpu.sm_model != SmModel::kWarp) {
    // TB level: the library's measured traffic per thread block (`memory:`).
    return kernel.memory.dram_bytes_per_tb() * kernel.thread_blocks;
  }
  if (gpu.memory.model == MemoryModel::kDram) return r.memory.dram.at("dram_bytes").get<double>();
  return static_cast<double>(r.memory.bytes);
}

/// The record of process `process`'s launch: records are in the order the launches reached the engine,
/// which over PCIe need not be the processes' order.
const KernelRecord& launch_of(const RunResult& r, std::uint32_t process) {
  for (const KernelRecord& k : r.kernels) {
    if (k.process == process) return k;
  }
  throw std::logic_error("profiling run without a launch of process " + std::to_string(process));
}

nlohmann::json measure(const GpuConfig& gpu, const KernelDesc& kernel, const RunResult& r) {
  const KernelRecord& k = launch_of(r, 0);
  nlohmann::json j = {{"latency_ps", static_cast<double>(k.end_ps - k.start_ps)},
                      {"mean_tb_ps", static_cast<double>(k.tb_time_ps) / k.thread_blocks},
                      {"dram_bytes", kernel_dram_bytes(gpu, kernel, r)},
                      {"dummy_mean_tb_ps", 0.0}};
  if (r.kernels.size() > 1) {
    const KernelRecord& d = launch_of(r, 1);
    j["dummy_mean_tb_ps"] = static_cast<double>(d.tb_time_ps) / d.thread_blocks;
  }
  return j;
}

Measured from_json(const nlohmann::json& j) {
  return {j.at("latency_ps").get<double>(), j.at("mean_tb_ps").get<double>(),
          j.at("dram_bytes").get<double>(), j.at("dummy_mean_tb_ps").get<double>()};
}

/// Runs `specs` (at most options.jobs at once) and reduces each to what profiling needs of it.
std::vector<Measured> run_all(const GpuConfig& gpu, const std::vector<SimulationSpec>& specs,
                              const std::vector<const KernelDesc*>& profiled,
                              const ProfilerOptions& options) {
  const std::vector<nlohmann::json> reduced = simulate_all_reduced(
      specs, options.jobs, [&](std::size_t i, const RunResult& r) { return measure(gpu, *profiled[i], r); });
  std::vector<Measured> out;
  out.reserve(reduced.size());
  for (const nlohmann::json& j : reduced) out.push_back(from_json(j));
  return out;
}

SimulationSpec spec_for(const GpuConfig& gpu, Workload workload, const ProfilerOptions& options) {
  SimulationSpec spec;
  spec.gpu = gpu;
  spec.workload = std::move(workload);
  spec.seed = options.seed;
  spec.wall_timeout_s = options.wall_timeout_s;
  return spec;
}

/// Cycles of one trip of the dummy's loop when its warp runs alone: a dependent add and the loop-back.
double cycles_per_trip(const GpuConfig& gpu) {
  const program::InstructionLatencies l = program::instruction_latencies(gpu);
  return static_cast<double>(l.alu + l.branch);
}

std::uint64_t clamp_trips(double trips) {
  // At least one trip; at most what a program may hold (two nested loops of kMaxTripCount).
  const double most = static_cast<double>(program::kMaxTripCount) * program::kMaxTripCount;
  return static_cast<std::uint64_t>(std::llround(std::clamp(trips, 1.0, most)));
}

}  // namespace

Workload one_launch_each(const std::string& name,
                         const std::vector<std::shared_ptr<const KernelDesc>>& kernels) {
  Workload w;
  w.name = name;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    ProcessSpec p;
    p.name = kernels[i]->name + "#" + std::to_string(i);  // a kernel may be in the list twice
    CommandSpec launch;
    launch.kind = CommandKind::kKernel;
    launch.kernel = kernels[i];
    launch.launches = 1;
    p.streams.push_back(StreamSpec{{launch}});
    w.processes.push_back(std::move(p));
  }
  return w;
}

std::uint32_t dummy_thread_blocks(std::uint32_t kernel_tbs, std::uint32_t sms, std::uint32_t m) {
  if (m == 0 || m > sms) {
    throw InputError("dummy kernel for m = " + std::to_string(m) + " of " + std::to_string(sms) +
                     " SMs: m must be 1 to the SM count");
  }
  const std::uint64_t num = std::uint64_t{kernel_tbs} * (sms - m);
  return static_cast<std::uint32_t>((num + m - 1) / m);
}

std::shared_ptr<KernelDesc> dummy_kernel(const KernelDesc& kernel, const GpuConfig& gpu,
                                         std::uint32_t thread_blocks, TimePs tb_latency_ps,
                                         std::uint64_t loop_trips) {
  auto d = std::make_shared<KernelDesc>();
  d->name = kernel.name + "-dummy";
  d->library = kernel.library;
  d->benchmark = "dummy";
  d->where = kernel.where;
  d->thread_blocks = thread_blocks;
  d->threads_per_tb = kernel.threads_per_tb;
  d->registers_per_tb = kernel.registers_per_tb;
  d->shared_memory_per_tb = kernel.shared_memory_per_tb;
  d->tb_time = {std::max<TimePs>(1, tb_latency_ps), kernel.tb_time.rsd_percent};
  if (gpu.sm_model == SmModel::kWarp) {
    // A chain of dependent additions: computes, never touches memory or shared memory.
    std::string text = "- alu r2 <- r0, r1\n";
    const std::uint64_t limit = program::kMaxTripCount;
    if (loop_trips <= limit) {
      text += "- loop: " + std::to_string(loop_trips) + "\n  body:\n    - alu r2 <- r2, r0\n";
    } else {
      const std::uint64_t outer = (loop_trips + limit - 1) / limit;
      const std::uint64_t inner = (loop_trips + outer - 1) / outer;
      text += "- loop: " + std::to_string(outer) + "\n  body:\n    - loop: " + std::to_string(inner) +
              "\n      body:\n        - alu r2 <- r2, r0\n";
    }
    const auto source = std::make_shared<const std::string>("<dummy kernel of " + kernel.name + ">");
    const config::YamlNode node(YAML::Load(text), "program", source, SourceLocation{*source, 1, 1});
    const std::uint32_t warps = (kernel.threads_per_tb + gpu.warp_size - 1) / gpu.warp_size;
    auto compiled = std::make_shared<program::Program>(program::compile_program(node, warps));
    program::analyze_phases(*compiled, program::instruction_latencies(gpu));
    d->program = std::move(compiled);
  }
  return d;
}

stm::ProfileSet profile_kernels(const GpuConfig& gpu,
                                const std::vector<std::shared_ptr<const KernelDesc>>& kernels,
                                const ProfilerOptions& options, std::vector<ProfileNotes>* notes) {
  const bool warp = gpu.sm_model == SmModel::kWarp;
  const std::uint32_t sms = gpu.num_sms;
  if (sms - 1 > 255) {
    throw InputError("gpumux profile: " + gpu.name + " has " + std::to_string(sms) +
                     " SMs; the leaky bucket's shares (m : M - m) go up to 255, so at most 256 SMs");
  }
  for (const auto& k : kernels) {
    if (compute_occupancy(*k, gpu).tbs_per_sm == 0) {
      throw InputError(k->where, "",
                       "kernel '" + k->name + "' does not fit on an SM of " + gpu.name +
                           " (gpumux list kernels --gpu shows why)");
    }
    if (warp && !k->program) {
      throw InputError(k->where, "",
                       "kernel '" + k->name +
                           "' has no program: warp-level SMs (sm.model warp) run kernel "
                           "programs (docs/config.md \"Kernel programs\"); profile it with --sm-model tb");
    }
  }
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  const std::size_t n = kernels.size();
  std::vector<const KernelDesc*> profiled;
  profiled.reserve(n);
  for (const auto& k : kernels) profiled.push_back(k.get());
  // Step 1: each kernel alone on all M SMs.
  say("step 1: " + std::to_string(n) + " kernel(s) alone on " + std::to_string(sms) + " SMs");
  std::vector<SimulationSpec> specs;
  specs.reserve(n * std::max<std::size_t>(1, sms - 1));
  for (const auto& k : kernels) {
    specs.push_back(spec_for(gpu, one_launch_each("profile/" + k->name + "/alone", {k}), options));
  }
  const std::vector<Measured> alone = run_all(gpu, specs, profiled, options);

  // Step 2: the dummy's thread-block latency tuned to the kernel's mean. At the warp level the latency
  // of a loop of dependent additions depends on how many warps share the issue slots, so the trip count
  // is scaled twice by wanted / measured, each measured alone with the kernel's thread-block count.
  std::vector<std::uint64_t> trips(n, 0);
  if (warp && options.method == ProfileMethod::kDummy) {
    const double period_ps = gpu.core_period_ps();
    for (std::size_t i = 0; i < n; ++i) {
      trips[i] = clamp_trips(alone[i].mean_tb_ps / period_ps / cycles_per_trip(gpu));
    }
    for (int pass = 1; pass <= 2; ++pass) {
      say("step 2: tuning the dummy kernels, pass " + std::to_string(pass) + " of 2");
      specs.clear();
      for (std::size_t i = 0; i < n; ++i) {
        const auto d = dummy_kernel(*kernels[i], gpu, kernels[i]->thread_blocks, 0, trips[i]);
        specs.push_back(
            spec_for(gpu, one_launch_each("profile/" + kernels[i]->name + "/dummy", {d}), options));
      }
      const std::vector<nlohmann::json> reduced =
          simulate_all_reduced(specs, options.jobs, [](std::size_t, const RunResult& r) {
            const KernelRecord& k = r.kernels.at(0);
            return nlohmann::json(static_cast<double>(k.tb_time_ps) / k.thread_blocks);
          });
      for (std::size_t i = 0; i < n; ++i) {
        const double measured = std::max(1.0, reduced[i].get<double>());
        trips[i] = clamp_trips(static_cast<double>(trips[i]) * alone[i].mean_tb_ps / measured);
      }
    }
  }

  // Step 3: for m = 1 .. M-1, the kernel beside ceil(TB (M - m) / m) dummy thread blocks, interleaved
  // m : (M - m) by the leaky bucket (no rate compensation: the emulation's interleave is static). With
  // the partition method instead, the kernel alone on SMs 0 .. m-1 (policy spatial, sms=m).
  const bool partition = options.method == ProfileMethod::kPartition;
  say("step 3: " + std::to_string(n * (sms - 1)) +
      (partition ? " runs on m SMs" : " runs beside the dummy kernels") + " (m = 1 to " +
      std::to_string(sms - 1) + ")");
  specs.clear();
  std::vector<const KernelDesc*> profiled_runs;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint32_t m = 1; m < sms; ++m) {
      if (partition) {
        SimulationSpec spec = spec_for(
            gpu, one_launch_each("profile/" + kernels[i]->name + "/m" + std::to_string(m), {kernels[i]}),
            options);
        spec.policy = "spatial";
        spec.policy_options = {{"sms", std::to_string(m)}};
        specs.push_back(std::move(spec));
        profiled_runs.push_back(kernels[i].get());
        continue;
      }
      const auto d = dummy_kernel(*kernels[i], gpu, dummy_thread_blocks(kernels[i]->thread_blocks, sms, m),
                                  static_cast<TimePs>(std::llround(alone[i].mean_tb_ps)), trips[i]);
      SimulationSpec spec = spec_for(
          gpu, one_launch_each("profile/" + kernels[i]->name + "/m" + std::to_string(m), {kernels[i], d}),
          options);
      spec.policy = "leaky-bucket";
      // The two launch commands reach the GPU a few ns apart; 1 us of gathering starts them together.
      spec.policy_options = {{"shares", std::to_string(m) + ":" + std::to_string(sms - m)},
                             {"compensate", "off"},
                             {"gather_ns", "1000"}};
      specs.push_back(std::move(spec));
      profiled_runs.push_back(kernels[i].get());
    }
  }
  const std::vector<Measured> shared = run_all(gpu, specs, profiled_runs, options);

  stm::ProfileSet set;
  set.gpu = gpu.name;
  set.sms = sms;
  set.peak_bandwidth_gb_per_s = gpu.memory.bandwidth_gb_per_s;
  set.global_memory_bytes = gpu.memory.capacity_mb << 20U;
  set.sm_model = warp ? "warp" : "tb";
  set.memory_model = gpu.memory.model == MemoryModel::kDram ? "dram" : "simple";
  set.method = partition ? "partition" : "dummy";
  for (std::size_t i = 0; i < n; ++i) {
    stm::KernelProfile p;
    p.kernel = kernels[i]->name;
    p.thread_blocks = kernels[i]->thread_blocks;
    p.global_memory_bytes = kernels[i]->global_memory_bytes;
    p.tb_latency_ns = alone[i].mean_tb_ps / 1e3;
    for (std::uint32_t m = 1; m <= sms; ++m) {
      const Measured& r = m == sms ? alone[i] : shared[i * (sms - 1) + (m - 1)];
      p.latency_ns.push_back(r.latency_ps / 1e3);
      // bytes / ps = TB/s; x 1000 = GB/s.
      p.bandwidth_gb_per_s.push_back(r.latency_ps > 0 ? r.dram_bytes / r.latency_ps * 1e3 : 0.0);
    }
    set.kernels.push_back(std::move(p));
    if (notes != nullptr) {
      // The dummy's mean thread-block latency beside the kernel, over the runs of step 3.
      double sum = 0;
      for (std::uint32_t m = 1; m < sms; ++m) sum += shared[i * (sms - 1) + (m - 1)].dummy_mean_tb_ps;
      notes->push_back({kernels[i]->name, sms > 1 ? sum / (sms - 1) / 1e3 : 0.0, trips[i]});
    }
  }
  return set;
}

}  // namespace gpumux
