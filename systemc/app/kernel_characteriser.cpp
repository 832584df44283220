#include "app/kernel_characteriser.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "app/kernel_profiler.h"
#include "config/yaml_reader.h"
#include "core/error.h"
#include "kernelet/instruction_mix.h"
#include "policy/pai_common.h"
#include "program/phase_analysis.h"
#include "program/program_parser.h"
#include "sm/occupancy.h"
#include "top/simulation.h"

namespace gpumux {

namespace {

/// Warps per SM of the latency probes: one outstanding load each (4.4's idle warps).
constexpr std::uint32_t kProbeWarps[] = {1, 2, 4, 8, 16, 24, 32};
/// Dependent loads per probe warp.
constexpr std::uint32_t kProbeLoads = 64;

/// What one run gives of each of its kernels (by process), reduced in the child.
nlohmann::json reduce_run(const GpuConfig& gpu, const RunResult& r) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelRecord& k : r.kernels) {
    kernels.push_back({{"process", k.process},
                       {"start_ps", static_cast<double>(k.start_ps)},
                       {"end_ps", static_cast<double>(k.end_ps)},
                       {"instructions", static_cast<double>(k.instructions)},
                       {"thread_blocks", k.thread_blocks},
                       {"tb_time_ps", static_cast<double>(k.tb_time_ps)}});
  }
  const double dram_bytes = gpu.memory.model == MemoryModel::kDram
                                ? r.memory.dram.at("dram_bytes").get<double>()
                                : static_cast<double>(r.memory.bytes);
  return {{"kernels", kernels}, {"dram_bytes", dram_bytes}, {"end_ps", static_cast<double>(r.end_ps)}};
}

const nlohmann::json& kernel_of(const nlohmann::json& run, std::uint32_t process) {
  for (const nlohmann::json& k : run.at("kernels")) {
    if (k.at("process").get<std::uint32_t>() == process) return k;
  }
  throw std::logic_error("characterisation run without a launch of process " + std::to_string(process));
}

double kernel_cycles(const GpuConfig& gpu, const nlohmann::json& k) {
  return (k.at("end_ps").get<double>() - k.at("start_ps").get<double>()) / gpu.core_period_ps();
}

SimulationSpec spec_for(const GpuConfig& gpu, Workload workload, const CharacteriserOptions& options,
                        std::string policy, PolicyOptions policy_options) {
  SimulationSpec spec;
  spec.gpu = gpu;
  spec.workload = std::move(workload);
  spec.policy = std::move(policy);
  spec.policy_options = std::move(policy_options);
  spec.seed = options.seed;
  spec.wall_timeout_s = options.wall_timeout_s;
  return spec;
}

std::vector<nlohmann::json> run_all(const GpuConfig& gpu, const std::vector<SimulationSpec>& specs,
                                    const CharacteriserOptions& options) {
  return simulate_all_reduced(specs, options.jobs,
                              [&](std::size_t, const RunResult& r) { return reduce_run(gpu, r); });
}

/// A probe kernel: one thread block of `warps` warps per SM, each warp a chain of dependent coalesced
/// loads (one segment each): every warp has one request outstanding at a time.
std::shared_ptr<const KernelDesc> probe_kernel(const GpuConfig& gpu, std::uint32_t warps) {
  auto d = std::make_shared<KernelDesc>();
  d->name = "latency-probe-" + std::to_string(warps);
  d->library = "characterise";
  d->benchmark = "probe";
  d->thread_blocks = gpu.num_sms;
  d->threads_per_tb = warps * gpu.warp_size;
  d->registers_per_tb = d->threads_per_tb * 4;
  d->tb_time = {1, 0};
  const std::uint32_t segment = gpu.warp.memory_segment_bytes;
  const std::string text = "- alu r2 <- r0, r1\n- loop: " + std::to_string(kProbeLoads) +
                           "\n  body:\n    - ldg r2 <- r2 " + std::to_string(segment) + "B coalesced\n";
  const auto source = std::make_shared<const std::string>("<latency probe>");
  const config::YamlNode node(YAML::Load(text), "program", source, SourceLocation{*source, 1, 1});
  auto compiled = std::make_shared<program::Program>(program::compile_program(node, warps));
  program::analyze_phases(*compiled, program::instruction_latencies(gpu));
  d->program = std::move(compiled);
  return d;
}

/// Least squares y = c + s x.
std::pair<double, double> fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0;
  double sy = 0;
  double sxx = 0;
  double sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double denominator = n * sxx - sx * sx;
  const double slope = denominator == 0 ? 0 : (n * sxy - sx * sy) / denominator;
  return {(sy - slope * sx) / n, slope};
}

}  // namespace

std::shared_ptr<const KernelDesc> with_grid(const KernelDesc& kernel, std::uint32_t thread_blocks) {
  auto d = std::make_shared<KernelDesc>(kernel);
  d->thread_blocks = thread_blocks;
  return d;
}

CharacterisationReport characterise_kernels(const GpuConfig& gpu,
                                            const std::vector<std::shared_ptr<const KernelDesc>>& kernels,
                                            const CharacteriserOptions& options) {
  if (gpu.sm_model != SmModel::kWarp) {
    throw InputError("gpumux characterise: PUR, MUR and IPC need warp-level SMs (--sm-model warp; " +
                     gpu.name + " is configured with TB-level SMs)");
  }
  const auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  const std::uint32_t sms = gpu.num_sms;
  const double period_ps = gpu.core_period_ps();
  kernelet::Characterisation c;
  c.gpu = gpu.name;
  c.sms = sms;
  c.core_clock_mhz = gpu.core_clock_mhz;
  c.sm_model = "warp";
  c.memory_model = gpu.memory.model == MemoryModel::kDram ? "dram" : "simple";
  // One request: a coalesced warp access's memory segment (the model's one request per coalesced memory
  // instruction, 4.4), also MUR's unit.
  c.request_bytes = gpu.warp.memory_segment_bytes;
  c.model.warp_schedulers = gpu.warp.schedulers;
  c.model.peak_ipc_per_sm = static_cast<double>(gpu.warp.schedulers) / gpu.warp.issue_interval_cycles;
  c.model.requests_per_cycle =
      gpu.memory.bandwidth_gb_per_s * 1e9 / c.request_bytes / (gpu.core_clock_mhz * 1e6);
  c.model.uncoalesced_requests = gpu.warp_size;  // a scattered access: one segment per thread

  std::vector<Occupancy> occupancy;
  std::vector<kernelet::InstructionMix> mixes;
  for (const auto& k : kernels) {
    occupancy.push_back(compute_occupancy(*k, gpu));
    if (occupancy.back().tbs_per_sm == 0) {
      throw InputError(k->where, "", "kernel '" + k->name + "' does not fit on an SM of " + gpu.name);
    }
    if (!k->program) {
      throw InputError(k->where, "",
                       "kernel '" + k->name +
                           "' has no program: gpumux characterise runs kernels "
                           "at the warp level (docs/config.md \"Kernel programs\")");
    }
    mixes.push_back(kernelet::thread_block_mix(*k->program, occupancy.back().footprint.warps));
  }

  // 1. Pre-execution: each kernel alone for a few waves (4.4: "a small number of thread blocks").
  say("pre-execution: " + std::to_string(kernels.size()) + " kernel(s), " + std::to_string(options.waves) +
      " wave(s) each");
  std::vector<SimulationSpec> specs;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::uint64_t wave = std::uint64_t{sms} * occupancy[i].tbs_per_sm;
    const auto grid =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(wave * options.waves, kernels[i]->thread_blocks));
    specs.push_back(
        spec_for(gpu, one_launch_each("characterise/" + kernels[i]->name, {with_grid(*kernels[i], grid)}),
                 options, "fifo", {}));
  }
  const std::vector<nlohmann::json> alone = run_all(gpu, specs, options);
  nlohmann::json details = {{"kernels", nlohmann::json::array()}};
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const nlohmann::json& run = kernel_of(alone[i], 0);
    const double cycles = kernel_cycles(gpu, run);
    const double instructions = run.at("instructions").get<double>();
    const double requests = alone[i].at("dram_bytes").get<double>() / c.request_bytes;
    kernelet::KernelCharacter k;
    k.kernel = kernels[i]->name;
    k.thread_blocks = kernels[i]->thread_blocks;
    k.threads_per_tb = kernels[i]->threads_per_tb;
    k.registers_per_tb = kernels[i]->registers_per_tb;
    k.shared_memory_per_tb = kernels[i]->shared_memory_per_tb;
    k.warps_per_tb = occupancy[i].footprint.warps;
    k.tbs_per_sm = occupancy[i].tbs_per_sm;
    k.instructions_per_tb = static_cast<double>(mixes[i].instructions);
    k.memory_ratio = mixes[i].memory_ratio();
    k.uncoalesced_share = mixes[i].uncoalesced_share();
    k.ipc = instructions / cycles / sms;
    // 4.3: PUR = instructions / (time x frequency x peak IPC), MUR = DRAM requests / (time x frequency x peak
    // MPC); time x frequency is the run's cycles, the peaks the whole GPU's.
    k.pur = instructions / (cycles * c.model.peak_ipc_per_sm * sms);
    k.mur = requests / (cycles * c.model.requests_per_cycle);
    c.kernels.push_back(k);
    details["kernels"].push_back({{"kernel", k.kernel},
                                  {"pre_execution_thread_blocks", run.at("thread_blocks")},
                                  {"cycles", cycles},
                                  {"instructions", instructions},
                                  {"dram_bytes", alone[i].at("dram_bytes")},
                                  {"mean_tb_cycles", run.at("tb_time_ps").get<double>() /
                                                         run.at("thread_blocks").get<double>() / period_ps}});
  }

  // 2. The memory latency against outstanding requests per SM (4.4's linear model), from probe kernels.
  say("latency probes: 1 to 32 warps per SM");
  specs.clear();
  std::vector<double> warps_per_sm;
  for (const std::uint32_t w : kProbeWarps) {
    if (w > gpu.sm.max_warps || w * gpu.warp_size > gpu.sm.max_threads) continue;
    warps_per_sm.push_back(w);
    specs.push_back(
        spec_for(gpu, one_launch_each("characterise/probe", {probe_kernel(gpu, w)}), options, "fifo", {}));
  }
  const std::vector<nlohmann::json> probes = run_all(gpu, specs, options);
  std::vector<double> latency;
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const double cycles = kernel_cycles(gpu, kernel_of(probes[i], 0));
    latency.push_back(cycles / kProbeLoads);
    points.push_back({{"outstanding_per_sm", warps_per_sm[i]}, {"latency_cycles", latency.back()}});
  }
  const auto [intercept, slope] = fit_line(warps_per_sm, latency);
  const double per_sm_requests_per_cycle = c.model.requests_per_cycle / sms;
  c.model.latency_cycles = latency.front();
  // L = L0 + a0 n / B + b0 with n outstanding requests per SM and B the SM's share of the peak.
  c.model.latency_slope = std::max(0.0, slope * per_sm_requests_per_cycle);
  c.model.latency_offset = intercept - c.model.latency_cycles;
  details["latency_probe"] = {
      {"points", points}, {"intercept_cycles", intercept}, {"slope_cycles_per_request", slope}};

  // 3. Slicing overhead at N_SM x j thread blocks per slice (4.1, Fig. 6).
  if (options.slicing) {
    details["slicing"] = nlohmann::json::array();
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const std::uint64_t wave = std::uint64_t{sms} * occupancy[i].tbs_per_sm;
      const auto grid = static_cast<std::uint32_t>(
          options.slicing_waves == 0
              ? kernels[i]->thread_blocks
              : std::min<std::uint64_t>(wave * options.slicing_waves, kernels[i]->thread_blocks));
      say("slicing: " + kernels[i]->name + ", " + std::to_string(grid) + " thread blocks, slices of " +
          std::to_string(sms) + " x 1.." + std::to_string(occupancy[i].tbs_per_sm));
      const auto cut = with_grid(*kernels[i], grid);
      specs.clear();
      specs.push_back(spec_for(gpu, one_launch_each("characterise/unsliced", {cut}), options, "fifo", {}));
      for (std::uint32_t j = 1; j <= occupancy[i].tbs_per_sm; ++j) {
        specs.push_back(spec_for(gpu, one_launch_each("characterise/sliced", {cut}), options, "kernelet",
                                 {{"choice", "serial"},
                                  {"slice_tbs", std::to_string(std::uint64_t{sms} * j)},
                                  {"gap_ns", std::to_string(options.gap_ps / 1000)}}));
      }
      const std::vector<nlohmann::json> runs = run_all(gpu, specs, options);
      const double unsliced = kernel_cycles(gpu, kernel_of(runs[0], 0));
      nlohmann::json curve = nlohmann::json::array();
      std::uint32_t smallest = 0;
      for (std::uint32_t j = 1; j < runs.size(); ++j) {
        const double overhead = kernel_cycles(gpu, kernel_of(runs[j], 0)) / unsliced - 1.0;
        curve.push_back({{"slice_tbs", std::uint64_t{sms} * j}, {"overhead", overhead}});
        if (smallest == 0 && overhead <= options.slicing_limit) smallest = sms * j;
      }
      // No slice size within the limit: the largest (the kernel's full occupancy per slice).
      c.kernels[i].min_slice_tbs = smallest != 0 ? smallest : sms * occupancy[i].tbs_per_sm;
      details["slicing"].push_back({{"kernel", kernels[i]->name},
                                    {"thread_blocks", grid},
                                    {"unsliced_cycles", unsliced},
                                    {"curve", curve},
                                    {"within_limit", smallest != 0}});
    }
  }

  // 4. Every pair at every fitting ratio (OPT's pre-execution, 5.1): each kernel's IPC while they co-run.
  if (options.pairs) {
    specs.clear();
    std::vector<kernelet::PairMeasurement> planned;
    for (std::size_t a = 0; a < kernels.size(); ++a) {
      for (std::size_t b = a + 1; b < kernels.size(); ++b) {
        const double tb_a = details["kernels"][a].at("mean_tb_cycles").get<double>();
        const double tb_b = details["kernels"][b].at("mean_tb_cycles").get<double>();
        // The ratios that fill the SM (no room for another block of either): the ones the model's balanced
        // ratio chooses among (kernelet/co_schedule.h, candidate_slice_sizes); a ratio with room left is a
        // filling one with less work in flight.
        for (std::uint32_t na = 1; na <= occupancy[a].tbs_per_sm; ++na) {
          const std::uint32_t nb = tbs_alongside(gpu.sm, occupancy[b], {{&occupancy[a], na}});
          if (nb == 0 || tbs_alongside(gpu.sm, occupancy[a], {{&occupancy[b], nb}}) != na) {
            continue;
          }
          // Grids that keep both kernels at their share for the same time at their thread-block times
          // alone: pair_waves waves of the kernel with the longer blocks, as many of the other's as take
          // as long, so each runs at least pair_waves full waves beside the other.
          const double longer = std::max(tb_a, tb_b);
          const auto waves_of = [&](double tb) {
            return std::max(1.0, std::round(options.pair_waves * longer / tb));
          };
          const auto grid_a = static_cast<std::uint64_t>(double(na) * sms * waves_of(tb_a));
          const auto grid_b = static_cast<std::uint64_t>(double(nb) * sms * waves_of(tb_b));
          specs.push_back(spec_for(
              gpu,
              one_launch_each("characterise/pair",
                              {with_grid(*kernels[a], static_cast<std::uint32_t>(
                                                          std::min<std::uint64_t>(grid_a, 1U << 30U))),
                               with_grid(*kernels[b], static_cast<std::uint32_t>(
                                                          std::min<std::uint64_t>(grid_b, 1U << 30U)))}),
              options, "kernelet",
              {{"choice", "fixed"}, {"ratio", std::to_string(na) + ":" + std::to_string(nb)}}));
          planned.push_back({kernels[a]->name, kernels[b]->name, na, nb, 0, 0});
        }
      }
    }
    say("pairs: " + std::to_string(planned.size()) + " ratios");
    const std::vector<nlohmann::json> runs = run_all(gpu, specs, options);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      kernelet::PairMeasurement p = planned[i];
      // Each kernel's IPC per SM over its run beside the other, as the pre-execution's alone: its
      // instructions over its first-issue-to-last-completion cycles and the SMs. The kernel that ends
      // later ran its last blocks alone at its share: the grids above keep that tail short.
      const auto ipc_of = [&](std::uint32_t process) {
        const nlohmann::json& run = kernel_of(runs[i], process);
        return run.at("instructions").get<double>() / kernel_cycles(gpu, run) / sms;
      };
      p.first_ipc = ipc_of(0);
      p.second_ipc = ipc_of(1);
      c.pairs.push_back(p);
    }
  }
  return {c, details};
}

}  // namespace gpumux
