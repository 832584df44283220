// gpumux bench: simulation speed. Simulates a large TB-level workload and, in a separate child, a
// bare SystemC loop with one timed event per thread block on the same number of SMs; the ratio says
// how close the model comes to the kernel's own event rate. With --sm-model warp (or a GPU file whose
// sm.model is warp) it measures the warp-level SM instead: warp instructions per second for the
// compute-and-memory mix of configs/kernels/bench.yaml, on the GPU's SMs and on 13 of them
// (docs/performance.md, "Warp level").

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <systemc>

#include "app/commands.h"
#include "app/memory_bench.h"
#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "core/error.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

namespace po = boost::program_options;

/// N_SM methods, each re-notifying its own event every `period`: one timed event per "TB".
class BareLoop final : public sc_core::sc_module {
 public:
  BareLoop(const sc_core::sc_module_name& name, std::uint32_t sms, std::uint64_t events_per_sm)
      : sc_core::sc_module(name), events_(sms), left_(sms, events_per_sm) {
    for (std::uint32_t s = 0; s < sms; ++s) {
      sc_core::sc_spawn_options opts;
      opts.spawn_method();
      opts.set_sensitivity(&events_[s]);
      opts.dont_initialize();
      sc_core::sc_spawn([this, s] { fire(s); }, sc_core::sc_gen_unique_name("sm"), &opts);
      events_[s].notify(sc_core::sc_time(1 + s, sc_core::SC_NS));
    }
  }

 private:
  void fire(std::uint32_t s) {
    if (--left_[s] > 0) events_[s].notify(sc_core::sc_time(5, sc_core::SC_US));
  }
  std::vector<sc_core::sc_event> events_;
  std::vector<std::uint64_t> left_;
};

/// A large synthetic workload: `processes` processes each launching one kernel of tbs/processes
/// thread blocks (8 resident per SM, 5 us +- 10 % each) on the given GPU.
Workload bench_workload(std::uint64_t tbs, std::uint32_t processes) {
  auto kernel = std::make_shared<KernelDesc>();
  kernel->name = "bench_kernel";
  kernel->library = "bench";
  kernel->thread_blocks = static_cast<std::uint32_t>(tbs / processes);
  kernel->threads_per_tb = 256;
  kernel->registers_per_tb = 8192;
  kernel->shared_memory_per_tb = 0;
  kernel->tb_time = {5'000'000, 10.0};
  Workload w;
  w.name = "bench";
  for (std::uint32_t p = 0; p < processes; ++p) {
    ProcessSpec proc;
    proc.name = "p" + std::to_string(p);
    proc.repeat = 1;
    CommandSpec launch;
    launch.kind = CommandKind::kKernel;
    launch.kernel = kernel;
    launch.launches = 1;
    proc.streams.push_back(StreamSpec{{launch}});
    w.processes.push_back(proc);
  }
  return w;
}

/// The warp-level bench: one process launching `kernel` once with `tbs` thread blocks.
Workload warp_bench_workload(const KernelDesc& kernel, std::uint64_t tbs) {
  auto desc = std::make_shared<KernelDesc>(kernel);
  desc->thread_blocks = static_cast<std::uint32_t>(tbs);
  Workload w;
  w.name = "bench-warp";
  ProcessSpec proc;
  proc.name = "p0";
  proc.repeat = 1;
  CommandSpec launch;
  launch.kind = CommandKind::kKernel;
  launch.kernel = desc;
  launch.launches = 1;
  proc.streams.push_back(StreamSpec{{launch}});
  w.processes.push_back(proc);
  return w;
}

/// Process CPU time in seconds (the simulation child's own: a forked child starts from zero).
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// One warp-level simulation in a forked child: its warp instructions, thread blocks, wall and CPU
/// seconds (both elaboration included, as tb_per_s) and simulated time.
nlohmann::json warp_bench_run(const SimulationSpec& spec) {
  return run_in_child([&spec] {
    const double cpu_start = process_cpu_seconds();
    const RunResult result = simulate_in_this_process(spec);
    const double cpu = process_cpu_seconds() - cpu_start;
    std::uint64_t instructions = 0;
    std::uint64_t cycles = 0;
    for (const SmRecord& sm : result.sms) {
      instructions += sm.warp.instructions;
      cycles += sm.warp.cycles;
    }
    const double wall = result.wall_seconds;
    return nlohmann::json{
        {"sms", spec.gpu.num_sms},
        {"thread_blocks", result.tbs_completed},
        {"warp_instructions", instructions},
        {"ipc_per_sm", cycles == 0 ? 0.0 : static_cast<double>(instructions) / static_cast<double>(cycles)},
        {"simulated_ms", ns_from_ps(result.end_ps) / 1e6},
        {"wall_seconds", wall},
        {"cpu_seconds", cpu},
        {"warp_instr_per_s", static_cast<double>(instructions) / wall},
        {"warp_instr_per_cpu_s", static_cast<double>(instructions) / cpu}};
  });
}

/// SM count of the scaling comparison (the K20c's; issue 10 item 9: cost per instruction at 132 SMs
/// within 1.5x of 13).
constexpr std::uint32_t kScalingSms = 13;

/// Load average over the last minute (-1 when unknown): the bench machine may be shared.
double load_average() {
  double load[1] = {-1.0};
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

}  // namespace

/// --tbs range: enough thread blocks to measure, and at most a few minutes of simulation.
constexpr std::uint64_t kMinBenchTbs = 1000;
constexpr std::uint64_t kMaxBenchTbs = 100'000'000;

/// Warp-level --tbs range and default: 4224 thread blocks are 4 waves of 8 per SM on the 132-SM GPU,
/// 18.6 million warp instructions of the bench kernel.
constexpr std::uint64_t kMinWarpBenchTbs = 100;
constexpr std::uint64_t kMaxWarpBenchTbs = 10'000'000;
constexpr const char* kDefaultWarpBenchTbs = "4224";

namespace {

/// gpumux bench at the warp level (see the file comment).
int warp_bench(const GpuConfig& gpu, const std::string& tbs_text, const std::string& policy,
               const std::string& preemption, bool json) {
  const std::uint64_t tbs = parse_integer_option("--tbs", tbs_text.empty() ? kDefaultWarpBenchTbs : tbs_text,
                                                 kMinWarpBenchTbs, kMaxWarpBenchTbs);
  const std::string library = config_file("kernels/bench.yaml");
  const auto kernels = load_kernel_library(library, gpu);
  const auto found = std::find_if(kernels.begin(), kernels.end(),
                                  [](const auto& k) { return k->name == "compute_memory_mix"; });
  if (found == kernels.end() || (*found)->program == nullptr) {
    throw InputError(library + ": no kernel 'compute_memory_mix' with a program");
  }
  const double load_before = load_average();
  std::vector<nlohmann::json> runs;
  // The GPU as configured, then the same GPU cut to 13 SMs, the same thread blocks on each.
  for (const std::uint32_t sms : {gpu.num_sms, std::min(gpu.num_sms, kScalingSms)}) {
    SimulationSpec spec;
    spec.gpu = gpu;
    spec.gpu.num_sms = sms;
    spec.workload = warp_bench_workload(**found, tbs);
    spec.policy = policy;
    spec.preemption = parse_preemption(preemption);
    runs.push_back(warp_bench_run(spec));
  }
  const nlohmann::json& full = runs[0];
  const nlohmann::json& small = runs[1];
  // Cost per warp instruction (CPU seconds per instruction) on the full GPU over that on 13 SMs.
  const double scaling =
      small.at("warp_instr_per_cpu_s").get<double>() / full.at("warp_instr_per_cpu_s").get<double>();
  const nlohmann::json out = {{"sm_model", "warp"},
                              {"gpu", gpu.name},
                              {"warp_scheduler", gpu.warp.scheduler},
                              {"kernel", library + ":compute_memory_mix"},
                              {"policy", policy},
                              {"thread_blocks", tbs},
                              {"sms", full.at("sms")},
                              {"warp_instructions", full.at("warp_instructions")},
                              {"wall_seconds", full.at("wall_seconds")},
                              {"cpu_seconds", full.at("cpu_seconds")},
                              {"warp_instr_per_s", full.at("warp_instr_per_s")},
                              {"warp_instr_per_cpu_s", full.at("warp_instr_per_cpu_s")},
                              {"small_sms", small.at("sms")},
                              {"small_warp_instr_per_s", small.at("warp_instr_per_s")},
                              {"small_warp_instr_per_cpu_s", small.at("warp_instr_per_cpu_s")},
                              {"sm_scaling_ratio", scaling},
                              {"load_average_before", load_before},
                              {"load_average_after", load_average()},
                              {"runs", runs}};
  if (json) {
    std::cout << out.dump() << '\n';
    return kExitOk;
  }
  std::printf("gpumux bench --sm-model warp: %llu thread blocks of %s on %s, warp scheduler %s\n",
              static_cast<unsigned long long>(tbs), "compute_memory_mix", gpu.name.c_str(),
              gpu.warp.scheduler.c_str());
  for (const nlohmann::json& run : runs) {
    std::printf(
        "  %3u SMs: %llu warp instructions, IPC/SM %.2f, %.3f ms simulated; %.2f s wall, %.2f s CPU: "
        "%.0f instr/s wall, %.0f instr/CPU s\n",
        run.at("sms").get<unsigned>(), run.at("warp_instructions").get<unsigned long long>(),
        run.at("ipc_per_sm").get<double>(), run.at("simulated_ms").get<double>(),
        run.at("wall_seconds").get<double>(), run.at("cpu_seconds").get<double>(),
        run.at("warp_instr_per_s").get<double>(), run.at("warp_instr_per_cpu_s").get<double>());
  }
  std::printf("  cost per instruction, %u SMs / %u SMs: %.2f (CPU time)\n", full.at("sms").get<unsigned>(),
              small.at("sms").get<unsigned>(), scaling);
  std::printf("  load average: %.2f before, %.2f after\n", load_before,
              out.at("load_average_after").get<double>());
  return kExitOk;
}

/// The median of `values` (not empty): the middle one, or the mean of the two middle ones.
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// `<key>_min` and `<key>_max` of `values` (not empty) into `out`: the range beside a median.
void put_range(nlohmann::json& out, const std::string& key, const std::vector<double>& values) {
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  out[key + "_min"] = *low;
  out[key + "_max"] = *high;
}

}  // namespace

int bench_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux bench options");
  std::string tbs_text;
  std::string gpu_path;  // default: configs/gpus/hopper-h100-like.yaml, found by config_file()
  std::string policy = "fcfs";
  std::string preemption = "context-switch";
  std::string sm_model;
  std::string warp_scheduler;
  std::string processes_text;
  std::string rounds_text;
  options.add_options()("help,h", "show this help")("json", "print one JSON object")(
      "tb-interference",
      "TB level: memory interference on, the bench kernel asking 1.2x the peak bandwidth (the shared work "
      "clock's worst case)")(
      "memory",
      "the dram model's DRAM core alone: requests per wall second (--tbs: requests per pattern, "
      "default 2000000)")(
      "tbs", po::value(&tbs_text),
      "thread blocks to simulate: TB level 1000 to 100000000 (default 4000000), warp level 100 to 10000000 "
      "(default 4224)")("gpu", po::value(&gpu_path),
                        "GPU config (default: configs/gpus/hopper-h100-like.yaml)")(
      "policy", po::value(&policy)->default_value(policy), "policy")(
      "preemption", po::value(&preemption)->default_value(preemption), "context-switch or drain")(
      "sm-model", po::value(&sm_model), "tb or warp (default: the GPU file's sm.model)")(
      "processes", po::value(&processes_text),
      "TB level: processes, one kernel launch each, sharing the thread blocks (1 to 64, default 8)")(
      "warp-scheduler", po::value(&warp_scheduler), "warp level: warp scheduler (default: the GPU file's)")(
      "rounds", po::value(&rounds_text),
      "TB level and --memory: measure N rounds (1 to 101, default 1), at the TB level each the model then "
      "the bare loop, and report medians and ranges: the rates of a shared machine move from run to run")(
      "against-fcfs",
      "TB level, a policy other than fcfs: each round also runs the same workload under fcfs, and the "
      "report gives the policy's rate as a share of fcfs's (share_of_fcfs)");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
    po::store(parsed, vm);
    po::notify(vm);
    reject_positional_arguments("bench", parsed);
  } catch (const po::error& e) {
    std::cerr << "gpumux bench: " << e.what() << '\n';
    return kExitBadInput;
  }
  if (vm.count("help") != 0U) {
    std::cout << "usage: gpumux bench [--json] [--tbs N] [--processes N] [--gpu FILE] [--policy NAME] "
                 "[--rounds N] [--against-fcfs] [--sm-model tb|warp] [--memory]\n\n"
              << options << '\n';
    return kExitOk;
  }
  if (gpu_path.empty()) gpu_path = config_file("gpus/hopper-h100-like.yaml");
  GpuConfig gpu = load_gpu_config(gpu_path);
  apply_sm_model_options(gpu, sm_model, warp_scheduler);
  const bool memory = vm.count("memory") != 0U;
  if (vm.count("against-fcfs") != 0U && (memory || gpu.sm_model == SmModel::kWarp)) {
    std::cerr << "gpumux bench: --against-fcfs compares TB-level policies; not with "
              << (memory ? "--memory" : "the warp-level SM") << '\n';
    return kExitBadInput;
  }
  if (!rounds_text.empty() && !memory && gpu.sm_model == SmModel::kWarp) {
    std::cerr << "gpumux bench: --rounds measures the TB-level model and --memory; not the warp-level SM\n";
    return kExitBadInput;
  }
  const auto rounds = static_cast<std::size_t>(
      parse_integer_option("--rounds", rounds_text.empty() ? "1" : rounds_text, 1, 101));
  if (memory) {
    const std::uint64_t requests =
        parse_integer_option("--tbs", tbs_text.empty() ? "2000000" : tbs_text, 1000, 1'000'000'000);
    nlohmann::json out = memory_bench(gpu, requests);
    nlohmann::json& runs = out.at("runs");
    std::vector<std::vector<double>> rates(runs.size());
    for (std::size_t p = 0; p < runs.size(); ++p) {
      rates[p].push_back(runs[p].at("requests_per_s").get<double>());
    }
    for (std::size_t r = 1; r < rounds; ++r) {
      const nlohmann::json again = memory_bench(gpu, requests);
      for (std::size_t p = 0; p < runs.size(); ++p) {
        const nlohmann::json& run = again.at("runs").at(p);
        if (run.at("simulated_us") != runs[p].at("simulated_us")) {
          throw InvariantViolation("invariant violated: gpumux bench --memory round " +
                                   std::to_string(r + 1) + " simulated another run than round 1 (pattern " +
                                   run.at("pattern").get<std::string>() + ")");
        }
        rates[p].push_back(run.at("requests_per_s").get<double>());
      }
    }
    out["rounds"] = rounds;
    for (std::size_t p = 0; p < runs.size() && rounds > 1; ++p) {
      runs[p]["requests_per_s"] = median(rates[p]);
      put_range(runs[p], "requests_per_s", rates[p]);
      runs[p].erase("wall_seconds");  // one round's; the rates above are over all of them
    }
    if (vm.count("json") != 0U) {
      std::cout << out.dump() << '\n';
      return kExitOk;
    }
    std::printf("gpumux bench --memory: DRAM core of %s, %zu requests in flight, one core\n",
                gpu.name.c_str(), out.at("in_flight").get<std::size_t>());
    if (rounds > 1) std::printf("  medians of %zu rounds (range in brackets)\n", rounds);
    for (const nlohmann::json& run : runs) {
      std::printf("  %-8s %llu requests: %.2f M requests/s", run.at("pattern").get<std::string>().c_str(),
                  run.at("requests").get<unsigned long long>(), run.at("requests_per_s").get<double>() / 1e6);
      if (rounds > 1) {
        std::printf(" [%.2f to %.2f]", run.at("requests_per_s_min").get<double>() / 1e6,
                    run.at("requests_per_s_max").get<double>() / 1e6);
      } else {
        std::printf(" (%.2f s wall)", run.at("wall_seconds").get<double>());
      }
      std::printf("; %.1f of %.1f GB/s simulated\n", run.at("bandwidth_gb_per_s").get<double>(),
                  run.at("peak_gb_per_s").get<double>());
    }
    return kExitOk;
  }
  if (gpu.sm_model == SmModel::kWarp) {
    return warp_bench(gpu, tbs_text, policy, preemption, vm.count("json") != 0U);
  }
  if (tbs_text.empty()) tbs_text = "4000000";
  const std::uint64_t tbs = parse_integer_option("--tbs", tbs_text, kMinBenchTbs, kMaxBenchTbs);
  SimulationSpec spec;
  spec.gpu = gpu;
  const auto processes = static_cast<std::uint32_t>(
      parse_integer_option("--processes", processes_text.empty() ? "8" : processes_text, 1, 64));
  spec.workload = bench_workload(tbs, processes);
  if (vm.count("tb-interference") != 0U) {
    // The worst case for the shared work clock: the resident thread blocks (8 per SM) ask 1.2x the peak
    // bandwidth together, so nearly every thread-block start and end changes the progress rate.
    spec.gpu.memory.tb_interference = true;
    auto kernel =
        std::make_shared<KernelDesc>(*spec.workload.processes.at(0).streams.at(0).commands.at(0).kernel);
    const double resident = 8.0 * spec.gpu.num_sms;
    kernel->memory.bytes_per_tb = 1.2 * spec.gpu.memory.bandwidth_gb_per_s * 1e9 / resident *
                                  static_cast<double>(kernel->tb_time.mean_ps) / 1e12;
    for (ProcessSpec& p : spec.workload.processes) p.streams.at(0).commands.at(0).kernel = kernel;
  }
  spec.policy = policy;
  spec.preemption = parse_preemption(preemption);
  const bool against_fcfs = vm.count("against-fcfs") != 0U;
  if (against_fcfs && policy == "fcfs") {
    std::cerr << "gpumux bench: --against-fcfs compares another policy with fcfs, and --policy is fcfs\n";
    return kExitBadInput;
  }
  SimulationSpec fcfs_spec = spec;
  fcfs_spec.policy = "fcfs";

  // Each round: the model, fcfs on the same workload if asked, then the bare loop; in turn, so that a
  // machine whose speed drifts treats them alike.
  const std::uint32_t sms = spec.gpu.num_sms;
  std::vector<double> tb_rates;
  std::vector<double> bare_rates;
  std::vector<double> ratios;
  std::vector<double> walls;
  std::vector<double> fcfs_rates;
  std::vector<double> shares;
  RunResult first;
  for (std::size_t r = 0; r < rounds; ++r) {
    RunResult model = simulate(spec);
    if (r == 0) {
      first = model;
    } else if (model.tbs_completed != first.tbs_completed || model.end_ps != first.end_ps ||
               model.preemptions.size() != first.preemptions.size()) {
      throw InvariantViolation("invariant violated: gpumux bench round " + std::to_string(r + 1) +
                               " simulated another run than round 1 (same inputs and seed)");
    }
    const double tb_per_s = static_cast<double>(model.tbs_completed) / model.wall_seconds;
    if (against_fcfs) {
      const RunResult fcfs = simulate(fcfs_spec);
      const double fcfs_per_s = static_cast<double>(fcfs.tbs_completed) / fcfs.wall_seconds;
      fcfs_rates.push_back(fcfs_per_s);
      shares.push_back(tb_per_s / fcfs_per_s);
    }
    const std::uint64_t per_sm = model.tbs_completed / sms;
    const nlohmann::json bare = run_in_child([sms, per_sm] {
      auto loop = std::make_unique<BareLoop>("bare", sms, per_sm);
      const auto start = std::chrono::steady_clock::now();
      sc_core::sc_start();
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return nlohmann::json{{"events", static_cast<std::uint64_t>(sms) * per_sm}, {"seconds", wall}};
    });
    const double bare_per_s = bare.at("events").get<double>() / bare.at("seconds").get<double>();
    tb_rates.push_back(tb_per_s);
    bare_rates.push_back(bare_per_s);
    ratios.push_back(tb_per_s / bare_per_s);
    walls.push_back(model.wall_seconds);
  }

  const double tb_per_s = median(tb_rates);
  const double bare_per_s = median(bare_rates);
  const double ratio = median(ratios);
  const double wall_seconds = median(walls);
  nlohmann::json out = {{"gpu", spec.gpu.name},
                        {"sms", sms},
                        {"processes", processes},
                        {"policy", policy},
                        {"preemption", preemption},
                        {"preemptions", first.preemptions.size()},
                        {"thread_blocks", first.tbs_completed},
                        {"wall_seconds", wall_seconds},
                        {"simulated_ms", ns_from_ps(first.end_ps) / 1e6},
                        {"tb_per_s", tb_per_s},
                        {"bare_events_per_s", bare_per_s},
                        {"ratio", ratio},
                        {"rounds", rounds}};
  if (rounds > 1) {
    put_range(out, "tb_per_s", tb_rates);
    put_range(out, "ratio", ratios);
  }
  if (against_fcfs) {
    out["fcfs_tb_per_s"] = median(fcfs_rates);
    out["share_of_fcfs"] = median(shares);
    put_range(out, "share_of_fcfs", shares);
  }
  if (vm.count("json") != 0U) {
    std::cout << out.dump() << '\n';
  } else {
    std::printf("gpumux bench: %llu thread blocks of %u processes on %s (%u SMs), policy %s\n",
                static_cast<unsigned long long>(first.tbs_completed), processes, spec.gpu.name.c_str(), sms,
                policy.c_str());
    if (rounds > 1) std::printf("  medians of %zu rounds (range in brackets)\n", rounds);
    std::printf("  model:      %.2f s wall, %.0f thread blocks/s, %zu preemptions (%s)\n", wall_seconds,
                tb_per_s, first.preemptions.size(), preemption.c_str());
    if (rounds > 1) {
      std::printf("              [%.0f to %.0f thread blocks/s]\n", out.at("tb_per_s_min").get<double>(),
                  out.at("tb_per_s_max").get<double>());
    }
    std::printf("  bare loop:  %.0f events/s (one timed event per thread block)\n", bare_per_s);
    std::printf("  ratio:      %.3f\n", ratio);
    if (against_fcfs) {
      std::printf("  fcfs:       %.0f thread blocks/s; %s keeps %.0f%% of it [%.0f%% to %.0f%%]\n",
                  median(fcfs_rates), policy.c_str(), 100 * median(shares),
                  100 * out.at("share_of_fcfs_min").get<double>(),
                  100 * out.at("share_of_fcfs_max").get<double>());
    }
  }
  return kExitOk;
}

}  // namespace gpumux
