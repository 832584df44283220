#include "app/isolated_baselines.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "app/baseline_key.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

std::string default_cache_dir() {
  if (const char* dir = std::getenv("GPUMUX_CACHE_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/gpumux";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/gpumux";
  }
  return "";
}

}  // namespace

Workload isolated_workload(const Workload& workload, std::size_t p) {
  Workload alone = workload;
  alone.processes = {workload.processes.at(p)};
  alone.processes[0].arrival_ps = 0;
  alone.replay = ReplayMode::kFixed;
  alone.name = workload.name + "/" + workload.processes[p].name + " (isolated)";
  return alone;
}

std::vector<RunResult> isolated_baselines(const GpuConfig& gpu, const Workload& workload,
                                          const IsolatedOptions& options) {
  const std::string dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  const bool cache = options.use_cache && !dir.empty();
  std::vector<RunResult> results(workload.processes.size());
  std::vector<SimulationSpec> missing;
  std::vector<std::size_t> missing_index;
  std::vector<std::string> paths(workload.processes.size());
  for (std::size_t p = 0; p < workload.processes.size(); ++p) {
    Workload alone = isolated_workload(workload, p);
    if (cache) {
      paths[p] =
          dir + "/isolated-" + baseline_cache_key(gpu, alone, options.seed, kBaselineCopyPolicy) + ".json";
      std::ifstream in(paths[p]);
      if (in) {
        try {
          results[p] = nlohmann::json::parse(in).get<RunResult>();
          continue;
        } catch (const std::exception&) {
          // A damaged cache entry is simply recomputed.
        }
      }
    }
    SimulationSpec spec;
    spec.gpu = gpu;
    spec.workload = std::move(alone);
    spec.policy = "fcfs";
    spec.copy_policy = kBaselineCopyPolicy;
    spec.seed = options.seed;
    spec.wall_timeout_s = options.wall_timeout_s;
    missing.push_back(std::move(spec));
    missing_index.push_back(p);
  }
  const std::vector<RunResult> fresh = simulate_all(missing, options.jobs);
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    const std::size_t p = missing_index[i];
    results[p] = fresh[i];
    if (cache) {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      // The host too: Slurm tasks on several nodes may share the cache folder, and pids repeat there.
      char host[256] = {};
      (void)gethostname(host, sizeof host - 1);
      const std::string tmp = paths[p] + ".tmp" + std::string(host) + "." + std::to_string(getpid());
      std::ofstream out(tmp);
      if (out << nlohmann::json(fresh[i]).dump()) {
        out.close();
        std::filesystem::rename(tmp, paths[p], ec);
      }
    }
  }
  return results;
}

}  // namespace gpumux
