// gpumux bench: simulation speed. Simulates a large TB-level workload and, in a separate child, a
// bare SystemC loop with one timed event per thread block on the same number of SMs; the ratio says
// how close the model comes to the kernel's own event rate.

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include <boost/program_options.hpp>
#include <systemc>

#include "app/commands.h"
#include "config/gpu_loader.h"
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

}  // namespace

/// --tbs range: enough thread blocks to measure, and at most a few minutes of simulation.
constexpr std::uint64_t kMinBenchTbs = 1000;
constexpr std::uint64_t kMaxBenchTbs = 100'000'000;

int bench_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux bench options");
  std::string tbs_text = "4000000";
  std::string gpu_path = config_dir() + "/gpus/hopper-h100-like.yaml";
  std::string policy = "fcfs";
  std::string preemption = "context-switch";
  options.add_options()("help,h", "show this help")("json", "print one JSON object")(
      "tbs", po::value(&tbs_text)->default_value(tbs_text), "thread blocks to simulate, 1000 to 100000000")(
      "gpu", po::value(&gpu_path)->default_value(gpu_path), "GPU config")(
      "policy", po::value(&policy)->default_value(policy), "policy")(
      "preemption", po::value(&preemption)->default_value(preemption), "context-switch or drain");
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
    std::cout << "usage: gpumux bench [--json] [--tbs N] [--gpu FILE] [--policy NAME]\n\n" << options << '\n';
    return kExitOk;
  }
  const std::uint64_t tbs = parse_integer_option("--tbs", tbs_text, kMinBenchTbs, kMaxBenchTbs);
  SimulationSpec spec;
  spec.gpu = load_gpu_config(gpu_path);
  spec.workload = bench_workload(tbs, 8);
  spec.policy = policy;
  spec.preemption = parse_preemption(preemption);
  const RunResult model = simulate(spec);

  const std::uint32_t sms = spec.gpu.num_sms;
  const std::uint64_t per_sm = model.tbs_completed / sms;
  const nlohmann::json bare = run_in_child([sms, per_sm] {
    auto loop = std::make_unique<BareLoop>("bare", sms, per_sm);
    const auto start = std::chrono::steady_clock::now();
    sc_core::sc_start();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return nlohmann::json{{"events", static_cast<std::uint64_t>(sms) * per_sm}, {"seconds", wall}};
  });

  const double tb_per_s = static_cast<double>(model.tbs_completed) / model.wall_seconds;
  const double bare_per_s = bare.at("events").get<double>() / bare.at("seconds").get<double>();
  nlohmann::json out = {{"gpu", spec.gpu.name},
                        {"sms", sms},
                        {"policy", policy},
                        {"preemption", preemption},
                        {"preemptions", model.preemptions.size()},
                        {"thread_blocks", model.tbs_completed},
                        {"wall_seconds", model.wall_seconds},
                        {"simulated_ms", ns_from_ps(model.end_ps) / 1e6},
                        {"tb_per_s", tb_per_s},
                        {"bare_events_per_s", bare_per_s},
                        {"ratio", tb_per_s / bare_per_s}};
  if (vm.count("json") != 0U) {
    std::cout << out.dump() << '\n';
  } else {
    std::printf("gpumux bench: %llu thread blocks on %s (%u SMs), policy %s\n",
                static_cast<unsigned long long>(model.tbs_completed), spec.gpu.name.c_str(), sms,
                policy.c_str());
    std::printf("  model:      %.2f s wall, %.0f thread blocks/s, %zu preemptions (%s)\n", model.wall_seconds,
                tb_per_s, model.preemptions.size(), preemption.c_str());
    std::printf("  bare loop:  %.0f events/s (one timed event per thread block)\n", bare_per_s);
    std::printf("  ratio:      %.3f\n", tb_per_s / bare_per_s);
  }
  return kExitOk;
}

}  // namespace gpumux
