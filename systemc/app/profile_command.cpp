// gpumux profile: Liang 3.2's kernel profiles R[m] and B[m], m = 1..N_SM, by the dummy-kernel method
// (app/kernel_profiler.h), written as a profile file (stm/kernel_profile.h) for the stm policy.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <boost/program_options.hpp>

#include "app/commands.h"
#include "app/kernel_profiler.h"
#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "config/yaml_reader.h"
#include "core/error.h"
#include "stm/kernel_profile.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

namespace po = boost::program_options;

constexpr const char* kProfileUsage =
    "usage: gpumux profile --gpu FILE --kernels FILE [--kernel NAME]... --out FILE [--method "
    "dummy|partition]\n"
    "                      [--sm-model tb|warp]\n"
    "                      [--memory-model simple|dram] [--tb-interference on|off] [--jobs N] [--seed N]\n"
    "                      [--timeout S] [--quiet]\n";

}  // namespace

int profile_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux profile options");
  std::string gpu_path;
  std::string kernels_path;
  std::vector<std::string> kernel_names;
  std::string out_path;
  std::string sm_model;
  std::string memory_model;
  std::string tb_interference;
  std::string warp_scheduler;
  std::string method = "dummy";
  std::string seed_text = "1";
  std::string jobs_text = std::to_string(std::max(1U, std::thread::hardware_concurrency()));
  std::string timeout_text = std::to_string(kDefaultWallTimeoutS);
  options.add_options()("help,h", "show this help")("gpu", po::value(&gpu_path), "GPU config; required")(
      "kernels", po::value(&kernels_path), "kernel library; required")(
      "kernel", po::value(&kernel_names)->composing(), "profile only this kernel (repeatable; default: all)")(
      "out", po::value(&out_path),
      "profile file to write (YAML, docs/config.md \"Profile files\"); required")(
      "sm-model", po::value(&sm_model), "tb or warp; default: the GPU file's sm.model")(
      "memory-model", po::value(&memory_model), "simple or dram; default: the GPU file's memory.model")(
      "tb-interference", po::value(&tb_interference),
      "TB level: on or off (Liang Eq. 3 and measured sensitivity); default: the GPU file's")(
      "warp-scheduler", po::value(&warp_scheduler),
      "warp scheduler at the warp level; default: the GPU file's")(
      "method", po::value(&method)->default_value(method),
      "dummy (Liang 3.2: beside a dummy kernel, interleaved m : N - m) or partition (alone on m SMs)")(
      "seed", po::value(&seed_text)->default_value(seed_text), "random seed, 0 to 2^64-1")(
      "jobs,j", po::value(&jobs_text), "simulations in parallel, 1 to 1024 (default: cores)")(
      "timeout", po::value(&timeout_text)->default_value(timeout_text),
      "wall-clock limit per simulation in seconds; 0: none")("quiet,q", "print nothing but errors");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
    po::store(parsed, vm);
    if (vm.count("help") != 0U) {
      std::cout << kProfileUsage << '\n' << options << '\n';
      return kExitOk;
    }
    po::notify(vm);
    reject_positional_arguments("profile", parsed);
  } catch (const po::error& e) {
    std::cerr << "gpumux profile: " << e.what() << '\n' << kProfileUsage;
    return kExitBadInput;
  }
  for (const char* required : {"gpu", "kernels", "out"}) {
    if (vm.count(required) == 0U) {
      std::cerr << "gpumux profile: --" << required << " is required\n" << kProfileUsage;
      return kExitBadInput;
    }
  }
  const bool quiet = vm.count("quiet") != 0U;
  ProfilerOptions opts;
  opts.seed = parse_integer_option("--seed", seed_text, 0, std::numeric_limits<std::uint64_t>::max());
  opts.jobs = static_cast<unsigned>(parse_integer_option("--jobs", jobs_text, 1, kMaxJobs));
  opts.wall_timeout_s =
      static_cast<unsigned>(parse_integer_option("--timeout", timeout_text, 0, kMaxWallTimeoutS));
  if (method == "dummy") {
    opts.method = ProfileMethod::kDummy;
  } else if (method == "partition") {
    opts.method = ProfileMethod::kPartition;
  } else {
    throw InputError("--method must be dummy or partition, not '" + method + "'");
  }
  prepare_output_file("--out", out_path);
  GpuConfig gpu = load_gpu_config(gpu_path);
  apply_sm_model_options(gpu, sm_model, warp_scheduler);
  apply_memory_model_option(gpu, memory_model);
  apply_tb_interference_option(gpu, tb_interference);
  const auto kernels = pick_kernels(load_kernel_library(kernels_path, gpu), kernel_names, kernels_path);
  if (!quiet) {
    opts.progress = [](const std::string& line) { std::cerr << "gpumux profile: " << line << '\n'; };
  }

  std::vector<ProfileNotes> notes;
  const stm::ProfileSet profiles = profile_kernels(gpu, kernels, opts, &notes);
  stm::write_profile_file(out_path, profiles);
  if (quiet) return kExitOk;
  const std::uint32_t m = profiles.sms;
  std::printf("profiles on %s (%u SMs, %s SMs, %s memory, peak %.1f GB/s) -> %s\n", profiles.gpu.c_str(), m,
              profiles.sm_model.c_str(), profiles.memory_model.c_str(), profiles.peak_bandwidth_gb_per_s,
              out_path.c_str());
  std::printf("%-16s %8s %12s %12s %8s %10s %10s %12s %12s\n", "kernel", "TBs", "R[1] us", "R[M] us", "R1/RM",
              "B[M] GB/s", "max B", "TB lat ns", "dummy TB ns");
  for (std::size_t i = 0; i < profiles.kernels.size(); ++i) {
    const stm::KernelProfile& p = profiles.kernels[i];
    const double max_b = *std::max_element(p.bandwidth_gb_per_s.begin(), p.bandwidth_gb_per_s.end());
    std::printf("%-16s %8u %12.2f %12.2f %8.2f %10.2f %10.2f %12.1f %12.1f\n", p.kernel.c_str(),
                p.thread_blocks, p.R(1) / 1e3, p.R(m) / 1e3, p.R(1) / p.R(m), p.B(m), max_b, p.tb_latency_ns,
                notes[i].dummy_tb_latency_ns);
  }
  return kExitOk;
}

}  // namespace gpumux
