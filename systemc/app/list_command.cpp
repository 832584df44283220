// gpumux list policies|warp-schedulers|gpus|kernels: what the model knows about (policies: the execution
// engine's and the DMA engines').

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "core/error.h"
#include "frontend/copy_policy.h"
#include "policy/registry.h"
#include "sm/occupancy.h"
#include "sm/warp_scheduler/registry.h"

namespace gpumux {

namespace {

/// Where configs are looked for, in order (docs/user-guide.md "Where gpumux finds configs").
std::vector<std::string> config_candidates() {
  if (const char* dir = std::getenv("GPUMUX_CONFIG_DIR"); dir != nullptr && *dir != '\0') return {dir};
  std::vector<std::string> dirs = {"configs"};  // the working directory's: a checkout or the user's own
  // An installed gpumux (cmake --install): PREFIX/bin/gpumux finds PREFIX/share/gpumux/configs.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share" / "gpumux" / "configs").string());
  dirs.emplace_back(std::string(GPUMUX_SOURCE_DIR) + "/configs");  // a build tree's own checkout
  return dirs;
}

std::string searched_text(const std::vector<std::string>& dirs) {
  std::string text;
  for (const std::string& d : dirs) text += (text.empty() ? "" : ", ") + d;
  return text;
}

}  // namespace

std::string config_dir() {
  const std::vector<std::string> dirs = config_candidates();
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (std::filesystem::is_directory(dir + "/gpus", ec)) return dir;
  }
  throw InputError("no configs folder (with gpus/) found; searched " + searched_text(dirs) +
                   "; set GPUMUX_CONFIG_DIR or run from a folder holding configs/");
}

std::string config_file(const std::string& relative) {
  const std::vector<std::string> dirs = config_candidates();
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir + "/" + relative, ec)) return dir + "/" + relative;
  }
  throw InputError("no " + relative + " found in a configs folder; searched " + searched_text(dirs) +
                   "; set GPUMUX_CONFIG_DIR or run from a folder holding configs/");
}

namespace {

std::vector<std::string> yaml_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  if (ec) throw InputError("cannot read directory '" + dir + "': " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int list_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cerr << "usage: gpumux list policies|warp-schedulers|gpus|kernels [--gpu FILE]\n";
    return args.empty() ? kExitBadInput : kExitOk;
  }
  const std::string& what = args[0];
  std::string gpu_path;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--gpu" && i + 1 < args.size()) {
      gpu_path = args[++i];
    } else {
      std::cerr << "gpumux list: unexpected argument '" << args[i] << "'\n";
      return kExitBadInput;
    }
  }
  if (what == "policies") {
    // Options come from each policy's declarations (core/typed_options.h), under its summary.
    for (const auto& p : policy_registry()) {
      std::printf("%-16s %s\n", p.name.c_str(), p.summary.c_str());
      std::fputs(describe_options(p.options, std::string(17, ' ')).c_str(), stdout);
    }
    std::printf(
        "\noptions: --policy-opt NAME=VALUE (gpumux run), options: {NAME: VALUE} (experiment runs)\n");
    // The data transfer engine's policies (frontend/copy_policy.h), beside the execution engine's.
    std::printf(
        "\ncopy policies (the DMA engines): --copy-policy NAME (gpumux run), copy_policy: NAME (experiment "
        "runs)\n");
    for (const CopyPolicyInfo& c : copy_policies()) std::printf("%-16s %s\n", to_string(c.policy), c.summary);
    return kExitOk;
  }
  if (what == "warp-schedulers") {
    // The warp-level SM's schedulers (sm/warp_scheduler/registry.h), printed as the policies are.
    for (const auto& s : warp_scheduler_registry()) {
      std::printf("%-22s %s\n", s.name.c_str(), s.summary.c_str());
      std::fputs(describe_options(s.options, std::string(23, ' ')).c_str(), stdout);
    }
    std::printf(
        "\nGPU config: sm.warp.scheduler (or --warp-scheduler NAME), its options in "
        "sm.warp.scheduler_options: {NAME: VALUE}, the two-level ready queue in sm.warp.ready_queue_size "
        "(Awatramani Table 3.1: 6)\n");
    return kExitOk;
  }
  if (!gpu_path.empty() && what != "kernels") {
    std::cerr << "gpumux list: --gpu applies to 'list kernels' only\n";
    return kExitBadInput;
  }
  if (what == "gpus") {
    for (const auto& file : yaml_files(config_dir() + "/gpus")) {
      const GpuConfig gpu = load_gpu_config(file);
      std::printf("%-28s %-22s %4u SMs %7.1f MHz %7.1f GB/s  %s\n",
                  std::filesystem::path(file).filename().c_str(), gpu.name.c_str(), gpu.num_sms,
                  gpu.core_clock_mhz, gpu.memory.bandwidth_gb_per_s, file.c_str());
    }
    return kExitOk;
  }
  if (what == "kernels") {
    if (gpu_path.empty()) gpu_path = config_file("gpus/kepler-k20c.yaml");
    const GpuConfig gpu = load_gpu_config(gpu_path);
    const std::string kernels_dir = config_dir() + "/kernels";
    std::printf("occupancy on %s (%s; carve-out rule %s), kernel libraries in %s\n", gpu.name.c_str(),
                gpu_path.c_str(), to_string(gpu.sm.carveout_rule), kernels_dir.c_str());
    std::printf("%-10s %-14s %-20s %8s %8s %10s %8s %8s %10s %-14s\n", "library", "benchmark", "kernel",
                "TBs", "threads", "regs/TB", "smem/TB", "TBs/SM", "t/TB (us)", "limited by");
    std::vector<std::string> warnings;
    for (const auto& file : yaml_files(kernels_dir)) {
      for (const auto& k : load_kernel_library(file, gpu)) {
        const Occupancy occ = compute_occupancy(*k, gpu);
        // '*': the carve-out rule costs this kernel occupancy (explained below the table).
        std::string limited = occ.tbs_per_sm == 0 ? "does not fit" : occ.limited_by;
        if (occ.tbs_per_sm < occ.tbs_per_sm_largest_carveout) {
          limited += " *";
          warnings.push_back(carveout_warning(*k, gpu));
        }
        std::printf("%-10s %-14s %-20s %8u %8u %10u %8u %8u %10.2f %-14s\n", k->library.c_str(),
                    k->benchmark.c_str(), k->name.c_str(), k->thread_blocks, k->threads_per_tb,
                    k->registers_per_tb, k->shared_memory_per_tb, occ.tbs_per_sm,
                    ns_from_ps(k->tb_time.mean_ps) / 1e3, limited.c_str());
      }
    }
    for (const std::string& w : warnings) std::printf("* %s\n", w.c_str());
    return kExitOk;
  }
  std::cerr << "gpumux list: unknown list '" << what << "' (policies, warp-schedulers, gpus, kernels)\n";
  return kExitBadInput;
}

}  // namespace gpumux
