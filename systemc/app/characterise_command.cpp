// gpumux characterise: Kernelet's kernel characterisation (Zhong and He 4.1, 4.3, 4.4;
// app/kernel_characteriser.h), written as a characterisation file (kernelet/characterisation.h) for the
// kernelet policy.

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <boost/program_options.hpp>

#include "app/commands.h"
#include "app/kernel_characteriser.h"
#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "config/yaml_reader.h"
#include "core/error.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

namespace po = boost::program_options;

constexpr const char* kCharacteriseUsage =
    "usage: gpumux characterise --gpu FILE --kernels FILE [--kernel NAME]... --out FILE\n"
    "                           [--memory-model simple|dram] [--waves N] [--slicing] [--slicing-waves N]\n"
    "                           [--gap-ns N] [--pairs] [--pair-waves N] [--report FILE] [--jobs N] [--seed "
    "N]\n"
    "                           [--timeout S] [--quiet]\n";

}  // namespace

int characterise_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux characterise options");
  std::string gpu_path;
  std::string kernels_path;
  std::vector<std::string> kernel_names;
  std::string out_path;
  std::string report_path;
  std::string memory_model;
  std::string waves_text = "2";
  std::string slicing_waves_text = "0";
  std::string pair_waves_text = "4";
  std::string gap_text = "3000";
  std::string seed_text = "1";
  std::string jobs_text = std::to_string(std::max(1U, std::thread::hardware_concurrency()));
  std::string timeout_text = std::to_string(kDefaultWallTimeoutS);
  options.add_options()("help,h", "show this help")("gpu", po::value(&gpu_path), "GPU config; required")(
      "kernels", po::value(&kernels_path), "kernel library; required")(
      "kernel", po::value(&kernel_names)->composing(),
      "characterise only this kernel (repeatable; default: all)")(
      "out", po::value(&out_path),
      "characterisation file to write (YAML, docs/config.md \"Characterisation files\"); required")(
      "memory-model", po::value(&memory_model), "simple or dram; default: the GPU file's memory.model")(
      "waves", po::value(&waves_text)->default_value(waves_text),
      "waves of each grid the pre-execution runs (Kernelet 4.4: a small number of thread blocks), 1 to 1000")(
      "slicing",
      "measure the slicing overhead at every slice size N_SM x j (4.1, Fig. 6) and the smallest "
      "slice within 2%")("slicing-waves", po::value(&slicing_waves_text)->default_value(slicing_waves_text),
                         "waves of each grid the slicing runs use, 0: the whole grid")(
      "gap-ns", po::value(&gap_text)->default_value(gap_text),
      "slice launch cost of the slicing runs (policy "
      "kernelet gap_ns)")("pairs",
                          "measure every pair of kernels at every ratio that fits (the paper's OPT, 5.1)")(
      "pair-waves", po::value(&pair_waves_text)->default_value(pair_waves_text),
      "waves of each kernel's share in a pair run, 1 to 1000")(
      "report", po::value(&report_path), "also write every measurement as JSON (named fields)")(
      "seed", po::value(&seed_text)->default_value(seed_text), "random seed, 0 to 2^64-1")(
      "jobs,j", po::value(&jobs_text), "simulations in parallel, 1 to 1024 (default: cores)")(
      "timeout", po::value(&timeout_text)->default_value(timeout_text),
      "wall-clock limit per simulation in seconds; 0: none")("quiet,q", "print nothing but errors");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
    po::store(parsed, vm);
    if (vm.count("help") != 0U) {
      std::cout << kCharacteriseUsage << '\n' << options << '\n';
      return kExitOk;
    }
    po::notify(vm);
    reject_positional_arguments("characterise", parsed);
  } catch (const po::error& e) {
    std::cerr << "gpumux characterise: " << e.what() << '\n' << kCharacteriseUsage;
    return kExitBadInput;
  }
  for (const char* required : {"gpu", "kernels", "out"}) {
    if (vm.count(required) == 0U) {
      std::cerr << "gpumux characterise: --" << required << " is required\n" << kCharacteriseUsage;
      return kExitBadInput;
    }
  }
  const bool quiet = vm.count("quiet") != 0U;
  CharacteriserOptions opts;
  opts.seed = parse_integer_option("--seed", seed_text, 0, std::numeric_limits<std::uint64_t>::max());
  opts.jobs = static_cast<unsigned>(parse_integer_option("--jobs", jobs_text, 1, kMaxJobs));
  opts.wall_timeout_s =
      static_cast<unsigned>(parse_integer_option("--timeout", timeout_text, 0, kMaxWallTimeoutS));
  opts.waves = static_cast<std::uint32_t>(parse_integer_option("--waves", waves_text, 1, 1000));
  opts.slicing = vm.count("slicing") != 0U;
  opts.slicing_waves =
      static_cast<std::uint32_t>(parse_integer_option("--slicing-waves", slicing_waves_text, 0, 1000));
  opts.gap_ps = parse_integer_option("--gap-ns", gap_text, 0, 1000000000) * 1000U;
  opts.pairs = vm.count("pairs") != 0U;
  opts.pair_waves =
      static_cast<std::uint32_t>(parse_integer_option("--pair-waves", pair_waves_text, 1, 1000));
  prepare_output_file("--out", out_path);
  if (!report_path.empty()) prepare_output_file("--report", report_path);
  GpuConfig gpu = load_gpu_config(gpu_path);
  apply_sm_model_options(gpu, "warp", "");
  apply_memory_model_option(gpu, memory_model);
  const auto kernels = pick_kernels(load_kernel_library(kernels_path, gpu), kernel_names, kernels_path);
  if (!quiet) {
    opts.progress = [](const std::string& line) { std::cerr << "gpumux characterise: " << line << '\n'; };
  }

  const CharacterisationReport report = characterise_kernels(gpu, kernels, opts);
  const kernelet::Characterisation& c = report.characterisation;
  kernelet::write_characterisation(out_path, c);
  if (!report_path.empty()) {
    std::ofstream out(report_path, std::ios::binary | std::ios::trunc);
    if (!(out << report.details.dump(2) << '\n') || !out.flush()) {
      throw InputError("cannot write --report file '" + report_path + "'");
    }
  }
  if (quiet) return kExitOk;
  std::printf(
      "characterisation on %s (%u SMs, %s memory, peak IPC %.2f per SM, %.3f requests of %u B per cycle) "
      "-> %s\n",
      c.gpu.c_str(), c.sms, c.memory_model.c_str(), c.model.peak_ipc_per_sm, c.model.requests_per_cycle,
      c.request_bytes, out_path.c_str());
  std::printf("memory latency: %.1f cycles unloaded, +%.3f cycles per outstanding request per SM\n",
              c.model.latency_cycles, c.model.latency_slope / (c.model.requests_per_cycle / c.sms));
  std::printf("%-18s %7s %6s %8s %8s %8s %8s %8s %8s\n", "kernel", "TBs/SM", "warps", "Rm", "uncoal",
              "IPC/SM", "PUR", "MUR", "slice");
  for (const kernelet::KernelCharacter& k : c.kernels) {
    std::printf("%-18s %7u %6u %8.4f %8.3f %8.3f %8.4f %8.4f %8u\n", k.kernel.c_str(), k.tbs_per_sm,
                k.warps_per_tb, k.memory_ratio, k.uncoalesced_share, k.ipc, k.pur, k.mur, k.min_slice_tbs);
  }
  if (!c.pairs.empty()) std::printf("%zu pair measurements\n", c.pairs.size());
  return kExitOk;
}

}  // namespace gpumux
