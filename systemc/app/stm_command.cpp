// gpumux stm: Liang's spatial-temporal schedules of kernel sets from their profiles (stm/schedule.h):
// the STM heuristic (Algorithm 1), the sequential baseline and, with --exhaustive, the optimum over the
// estimate (Algorithms 2-3 with con_lat). With --measure, every SM allocation of every phase is simulated
// (the kernels interleaved by the leaky bucket, as Liang measures with the emulation framework) and the
// optimum is taken over the measured latencies, as the paper's Optimal is; --allocations also lists each
// allocation of the whole set with its estimate beside its simulation (Fig. 8). --scaling times the
// heuristic on sets replicated up to N kernels (Table 1).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/kernel_profiler.h"
#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "config/yaml_reader.h"
#include "core/error.h"
#include "stm/estimate.h"
#include "stm/kernel_profile.h"
#include "stm/schedule.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

namespace po = boost::program_options;

constexpr const char* kStmUsage =
    "usage: gpumux stm --profiles FILE --set K1,K2,... [--set ...] [--exhaustive] [--json]\n"
    "       gpumux stm --profiles FILE --set ... --measure --gpu FILE --kernels FILE [--allocations]\n"
    "                  [--sm-model tb|warp] [--memory-model simple|dram] [--tb-interference on|off]\n"
    "                  [--max-simulations N] [--jobs N] [--seed N] [--timeout S]\n"
    "       gpumux stm --profiles FILE --set ... --scaling N1,N2,... [--json]\n";

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, separator)) out.push_back(item);
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

nlohmann::json schedule_json(const stm::ProfileSet& set, const stm::Schedule& s) {
  nlohmann::json phases = nlohmann::json::array();
  for (const stm::Configuration& c : s.phases) {
    nlohmann::json phase = nlohmann::json::array();
    for (const stm::Allocation& a : c) {
      phase.push_back({{"kernel", set.kernels[a.kernel].kernel}, {"sms", a.sms}});
    }
    phases.push_back(std::move(phase));
  }
  return {{"phases", std::move(phases)}, {"text", stm::to_string(set, s)}, {"latency_ns", s.latency_ns}};
}

/// A configuration as a map key: (kernel position, SMs) sorted by position.
std::vector<std::pair<std::size_t, std::uint32_t>> key_of(const stm::Configuration& c) {
  std::vector<std::pair<std::size_t, std::uint32_t>> key;
  key.reserve(c.size());
  for (const stm::Allocation& a : c) key.emplace_back(a.kernel, a.sms);
  std::sort(key.begin(), key.end());
  return key;
}

struct MeasureSetup {
  GpuConfig gpu;
  std::vector<std::shared_ptr<const KernelDesc>> library;
  unsigned jobs = 1;
  std::uint64_t seed = 1;
  unsigned timeout_s = 0;
};

/// Simulates each configuration as one phase: its kernels launched together, one process each, the leaky
/// bucket interleaving them in the configuration's SM shares (rate compensation on, as the stm policy runs
/// them; 1 us gather window). The phase's latency is its last kernel's end minus its first kernel's start.
std::vector<double> measure_phases(const stm::ProfileSet& set, const std::vector<stm::Configuration>& configs,
                                   const MeasureSetup& setup) {
  std::vector<SimulationSpec> specs;
  specs.reserve(configs.size());
  for (const stm::Configuration& c : configs) {
    std::vector<std::shared_ptr<const KernelDesc>> kernels;
    std::string shares;
    for (const stm::Allocation& a : c) {
      const std::string& name = set.kernels[a.kernel].kernel;
      const auto it = std::find_if(setup.library.begin(), setup.library.end(),
                                   [&](const auto& k) { return k->name == name; });
      if (it == setup.library.end()) {
        throw InputError("--kernels: the library has no kernel '" + name + "', which the profiles name");
      }
      kernels.push_back(*it);
      shares += (shares.empty() ? "" : ":") + std::to_string(a.sms);
    }
    SimulationSpec spec;
    spec.gpu = setup.gpu;
    spec.seed = setup.seed;
    spec.wall_timeout_s = setup.timeout_s;
    spec.workload = one_launch_each("stm-phase " + stm::to_string(set, c), kernels);
    spec.policy = "leaky-bucket";
    spec.policy_options = {{"shares", shares}, {"compensate", "on"}, {"gather_ns", "1000"}};
    specs.push_back(std::move(spec));
  }
  const std::vector<nlohmann::json> reduced =
      simulate_all_reduced(specs, setup.jobs, [](std::size_t, const RunResult& r) {
        TimePs start = kNever;
        TimePs end = 0;
        for (const KernelRecord& k : r.kernels) {
          start = std::min(start, k.start_ps);
          end = std::max(end, k.end_ps);
        }
        return nlohmann::json(static_cast<double>(end - start) / 1e3);
      });
  std::vector<double> out;
  out.reserve(reduced.size());
  for (const nlohmann::json& j : reduced) out.push_back(j.get<double>());
  return out;
}

std::string set_text_of(const nlohmann::json& r) {
  std::string text;
  for (const auto& name : r["set"]) text += (text.empty() ? "" : ",") + name.get<std::string>();
  return text;
}

}  // namespace

int stm_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux stm options");
  std::string profiles_path;
  std::vector<std::string> sets;
  std::string gpu_path;
  std::string kernels_path;
  std::string sm_model;
  std::string memory_model;
  std::string tb_interference;
  std::string scaling_text;
  std::string max_sims_text = "20000";
  std::string seed_text = "1";
  std::string jobs_text = std::to_string(std::max(1U, std::thread::hardware_concurrency()));
  std::string timeout_text = std::to_string(kDefaultWallTimeoutS);
  options.add_options()("help,h", "show this help")("profiles", po::value(&profiles_path),
                                                    "profile file (gpumux profile); required")(
      "set", po::value(&sets)->composing(),
      "kernels to schedule, comma-separated (repeatable: one set each)")(
      "exhaustive", "also the optimum over the estimate (Algorithms 2-3 with con_lat)")(
      "measure",
      "also simulate every SM allocation of every phase and take the optimum over them (needs --gpu, "
      "--kernels)")("allocations",
                    "with --measure: each allocation of the whole set, estimated and "
                    "simulated (Liang Fig. 8)")(
      "scaling", po::value(&scaling_text),
      "time the heuristic on the set replicated to each of these sizes (Liang Table 1), e.g. 2,5,10,50")(
      "gpu", po::value(&gpu_path), "GPU config (--measure)")("kernels", po::value(&kernels_path),
                                                             "kernel library (--measure)")(
      "sm-model", po::value(&sm_model), "--measure: tb or warp; default: the GPU file's")(
      "memory-model", po::value(&memory_model), "--measure: simple or dram; default: the GPU file's")(
      "tb-interference", po::value(&tb_interference), "--measure: on or off; default: the GPU file's")(
      "max-simulations", po::value(&max_sims_text)->default_value(max_sims_text),
      "--measure refuses a set needing more simulations than this")(
      "seed", po::value(&seed_text)->default_value(seed_text), "random seed (--measure)")(
      "jobs,j", po::value(&jobs_text), "simulations in parallel, 1 to 1024 (default: cores)")(
      "timeout", po::value(&timeout_text)->default_value(timeout_text), "wall-clock limit per simulation, s")(
      "json", "print one JSON object");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
    po::store(parsed, vm);
    if (vm.count("help") != 0U) {
      std::cout << kStmUsage << '\n' << options << '\n';
      return kExitOk;
    }
    po::notify(vm);
    reject_positional_arguments("stm", parsed);
  } catch (const po::error& e) {
    std::cerr << "gpumux stm: " << e.what() << '\n' << kStmUsage;
    return kExitBadInput;
  }
  if (profiles_path.empty() || sets.empty()) {
    std::cerr << "gpumux stm: --profiles FILE and --set K1,K2,... are required\n" << kStmUsage;
    return kExitBadInput;
  }
  const bool measure = vm.count("measure") != 0U;
  const bool json = vm.count("json") != 0U;
  if (measure && (gpu_path.empty() || kernels_path.empty())) {
    throw InputError("--measure simulates the phases: it needs --gpu FILE and --kernels FILE");
  }
  if (vm.count("allocations") != 0U && !measure) throw InputError("--allocations needs --measure");
  const std::uint64_t max_sims = parse_integer_option("--max-simulations", max_sims_text, 1, 100000000);
  MeasureSetup setup;
  setup.seed = parse_integer_option("--seed", seed_text, 0, std::numeric_limits<std::uint64_t>::max());
  setup.jobs = static_cast<unsigned>(parse_integer_option("--jobs", jobs_text, 1, kMaxJobs));
  setup.timeout_s =
      static_cast<unsigned>(parse_integer_option("--timeout", timeout_text, 0, kMaxWallTimeoutS));
  std::vector<std::size_t> scaling;
  if (!scaling_text.empty()) {
    for (const std::string& n : split(scaling_text, ',')) {
      scaling.push_back(parse_integer_option("--scaling", n, 1, 1000));
    }
  }
  const stm::ProfileSet profiles = stm::load_profile_file(profiles_path);
  if (measure) {
    setup.gpu = load_gpu_config(gpu_path);
    apply_sm_model_options(setup.gpu, sm_model, "");
    apply_memory_model_option(setup.gpu, memory_model);
    apply_tb_interference_option(setup.gpu, tb_interference);
    if (setup.gpu.num_sms != profiles.sms) {
      throw InputError("--gpu " + gpu_path + " has " + std::to_string(setup.gpu.num_sms) +
                       " SMs; the profiles in " + profiles_path + " were measured on " +
                       std::to_string(profiles.sms));
    }
    setup.library = load_kernel_library(kernels_path, setup.gpu);
  }

  nlohmann::json out = {{"profiles", profiles_path}, {"gpu", profiles.gpu}, {"sms", profiles.sms}};
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& set_text : sets) {
    const std::vector<std::string> names = split(set_text, ',');
    if (names.empty() ||
        std::any_of(names.begin(), names.end(), [](const std::string& s) { return s.empty(); })) {
      throw InputError("--set '" + set_text + "': kernel names separated by commas");
    }
    const stm::ProfileSet set = stm::profiles_for(profiles, names);
    const std::vector<std::size_t> all = stm::all_kernels(set);
    auto start = std::chrono::steady_clock::now();
    const stm::Schedule heuristic = stm::stm_schedule(set, all);
    const double heuristic_s = seconds_since(start);
    const stm::Schedule sequential = stm::sequential_schedule(set, all);
    nlohmann::json r = {
        {"set", names},
        {"stm", schedule_json(set, heuristic)},
        {"stm_seconds", heuristic_s},
        {"sequential", schedule_json(set, sequential)},
        {"stm_improvement_percent", 100.0 * (1.0 - heuristic.latency_ns / sequential.latency_ns)}};
    if (vm.count("exhaustive") != 0U) {
      start = std::chrono::steady_clock::now();
      const stm::ExhaustiveResult best = stm::exhaustive_optimum(set, all);
      r["optimum_estimate"] = schedule_json(set, best.best);
      r["optimum_estimate_seconds"] = seconds_since(start);
      r["optimum_estimate_calls"] = best.oracle_calls;
    }
    if (measure) {
      const std::vector<stm::Configuration> phases = stm::every_phase(set, all);
      if (phases.size() > max_sims) {
        throw InputError("--measure: the set " + set_text + " needs " + std::to_string(phases.size()) +
                         " simulations (every SM allocation of every phase), above --max-simulations " +
                         std::to_string(max_sims));
      }
      if (!json) {
        std::cerr << "gpumux stm: simulating " << phases.size() << " phase allocations of " << set_text
                  << '\n';
      }
      start = std::chrono::steady_clock::now();
      const std::vector<double> measured = measure_phases(set, phases, setup);
      const double measure_s = seconds_since(start);
      std::map<std::vector<std::pair<std::size_t, std::uint32_t>>, double> table;
      for (std::size_t i = 0; i < phases.size(); ++i) table[key_of(phases[i])] = measured[i];
      const auto oracle = [&](const stm::Configuration& c) { return table.at(key_of(c)); };
      stm::ExhaustiveLimits limits;
      limits.max_oracle_calls = phases.size();
      const stm::ExhaustiveResult best = stm::exhaustive_optimum(set, all, oracle, limits);
      r["optimum_measured"] = schedule_json(set, best.best);
      r["simulations"] = phases.size();
      r["simulation_seconds"] = measure_s;
      // The heuristic's and the sequential schedules, their phases as measured here.
      for (const auto& [name, schedule] :
           {std::pair<const char*, const stm::Schedule*>{"stm_measured", &heuristic},
            {"sequential_measured", &sequential}}) {
        double sum = 0;
        for (const stm::Configuration& c : schedule->phases) sum += oracle(c);
        r[name] = sum;
      }
      if (vm.count("allocations") != 0U) {
        nlohmann::json rows = nlohmann::json::array();
        for (std::size_t i = 0; i < phases.size(); ++i) {
          if (phases[i].size() != set.kernels.size()) continue;
          rows.push_back({{"allocation", stm::to_string(set, phases[i])},
                          {"estimate_ns", stm::phase_latency_ns(set, phases[i])},
                          {"simulated_ns", measured[i]}});
        }
        r["allocations"] = std::move(rows);
      }
    }
    if (!scaling.empty()) {
      nlohmann::json rows = nlohmann::json::array();
      for (const std::size_t n : scaling) {
        std::vector<std::string> replicated;
        for (std::size_t i = 0; i < n; ++i) replicated.push_back(names[i % names.size()]);
        const stm::ProfileSet big = stm::profiles_for(profiles, replicated);
        const std::vector<std::size_t> every = stm::all_kernels(big);
        start = std::chrono::steady_clock::now();
        const stm::Schedule s = stm::stm_schedule(big, every);
        const double seconds = seconds_since(start);
        const stm::Schedule seq = stm::sequential_schedule(big, every);
        rows.push_back({{"kernels", n},
                        {"stm_seconds", seconds},
                        {"phases", s.phases.size()},
                        {"stm_improvement_percent", 100.0 * (1.0 - s.latency_ns / seq.latency_ns)},
                        {"exhaustive_calls", stm::exhaustive_size(n, big.sms).oracle_calls},
                        {"bell_number", stm::bell_number(n)}});
      }
      r["scaling"] = std::move(rows);
    }
    results.push_back(std::move(r));
  }
  out["sets"] = results;
  if (json) {
    std::cout << out.dump(2) << '\n';
    return kExitOk;
  }
  std::printf("STM on %s (%u SMs), profiles %s\n", profiles.gpu.c_str(), profiles.sms, profiles_path.c_str());
  for (const nlohmann::json& r : results) {
    std::printf("\nset %s\n", set_text_of(r).c_str());
    std::printf("  sequential           %14.1f us  %s\n", r["sequential"]["latency_ns"].get<double>() / 1e3,
                r["sequential"]["text"].get<std::string>().c_str());
    std::printf("  STM (estimate)       %14.1f us  %s  (%+.1f%%, heuristic %.3f ms)\n",
                r["stm"]["latency_ns"].get<double>() / 1e3, r["stm"]["text"].get<std::string>().c_str(),
                r["stm_improvement_percent"].get<double>(), r["stm_seconds"].get<double>() * 1e3);
    if (r.contains("optimum_estimate")) {
      std::printf("  optimum (estimate)   %14.1f us  %s  (%llu phase evaluations, %.3f s)\n",
                  r["optimum_estimate"]["latency_ns"].get<double>() / 1e3,
                  r["optimum_estimate"]["text"].get<std::string>().c_str(),
                  static_cast<unsigned long long>(r["optimum_estimate_calls"].get<std::uint64_t>()),
                  r["optimum_estimate_seconds"].get<double>());
    }
    if (r.contains("optimum_measured")) {
      std::printf("  sequential (sim.)    %14.1f us\n", r["sequential_measured"].get<double>() / 1e3);
      std::printf("  STM (sim. phases)    %14.1f us\n", r["stm_measured"].get<double>() / 1e3);
      std::printf("  optimum (simulated)  %14.1f us  %s  (%llu simulations, %.1f s)\n",
                  r["optimum_measured"]["latency_ns"].get<double>() / 1e3,
                  r["optimum_measured"]["text"].get<std::string>().c_str(),
                  static_cast<unsigned long long>(r["simulations"].get<std::uint64_t>()),
                  r["simulation_seconds"].get<double>());
    }
    if (r.contains("allocations")) {
      std::printf("  %-40s %14s %14s\n", "allocation", "estimate us", "simulated us");
      for (const nlohmann::json& a : r["allocations"]) {
        std::printf("  %-40s %14.1f %14.1f\n", a["allocation"].get<std::string>().c_str(),
                    a["estimate_ns"].get<double>() / 1e3, a["simulated_ns"].get<double>() / 1e3);
      }
    }
    if (r.contains("scaling")) {
      std::printf("  %8s %12s %8s %12s %20s\n", "kernels", "STM ms", "phases", "STM imp.",
                  "exhaustive phases");
      for (const nlohmann::json& s : r["scaling"]) {
        std::printf("  %8zu %12.3f %8zu %11.1f%% %20llu\n", s["kernels"].get<std::size_t>(),
                    s["stm_seconds"].get<double>() * 1e3, s["phases"].get<std::size_t>(),
                    s["stm_improvement_percent"].get<double>(),
                    static_cast<unsigned long long>(s["exhaustive_calls"].get<std::uint64_t>()));
      }
    }
  }
  return kExitOk;
}

}  // namespace gpumux
