#include "app/experiment/plan.h"

#include <algorithm>
#include <cmath>

#include "app/analysis/registry.h"
#include "app/baseline_key.h"
#include "config/gpu_loader.h"

namespace gpumux {

namespace {

std::string identity(const Workload& workload, const ProcessSpec& process) {
  return isolated_process_document(workload, process).dump();
}

}  // namespace

std::pair<std::size_t, std::size_t> IsolatedPlan::baseline_of(const Workload& workload,
                                                              const ProcessSpec& process) const {
  return index.at(identity(workload, process));
}

IsolatedPlan plan_isolated(const ExpandedExperiment& grid) {
  IsolatedPlan plan;
  std::map<int, std::size_t> group_of_mode;
  for (const ExperimentWorkload& w : grid.workloads) {
    for (const ProcessSpec& p : w.workload.processes) {
      std::string id = identity(w.workload, p);
      if (plan.index.count(id) != 0) continue;
      const int mode = static_cast<int>(w.workload.tb_duration);
      if (group_of_mode.count(mode) == 0) {
        group_of_mode[mode] = plan.groups.size();
        Workload group = w.workload;
        group.name = w.workload.name;
        group.processes.clear();
        plan.groups.push_back(std::move(group));
      }
      const std::size_t g = group_of_mode[mode];
      ProcessSpec alone = p;
      alone.priority = 0;
      alone.tokens.reset();
      alone.arrival_ps = 0;
      plan.index[std::move(id)] = {g, plan.groups[g].processes.size()};
      plan.groups[g].processes.push_back(std::move(alone));
    }
  }
  return plan;
}

GpuVariants gpu_variants(const ExpandedExperiment& grid) {
  GpuVariants v;
  std::vector<std::string> documents;
  for (const GpuConfig& gpu : grid.run_gpus) {
    const std::string document = gpu_config_document(gpu).dump();
    const auto it = std::find(documents.begin(), documents.end(), document);
    if (it != documents.end()) {
      v.of_run.push_back(static_cast<std::size_t>(it - documents.begin()));
    } else {
      v.of_run.push_back(documents.size());
      documents.push_back(document);
      v.gpus.push_back(&gpu);
    }
  }
  return v;
}

bool uses_isolated_baselines(const ExperimentConfig& config) {
  const AnalysisInfo* analysis = find_analysis(config.analysis);
  return analysis == nullptr || analysis->isolated_baselines;
}

std::size_t isolated_baseline_count(const ExperimentConfig& config, const ExpandedExperiment& grid) {
  if (!uses_isolated_baselines(config)) return 0;
  const IsolatedPlan plan = plan_isolated(grid);
  return plan.index.size() * config.seeds.size() * gpu_variants(grid).gpus.size();
}

SimulationSpec simulation_spec(const ExperimentConfig& config, const ExpandedExperiment& grid,
                               const GridPoint& point, unsigned wall_timeout_s) {
  const ExperimentRun& run = config.runs[point.run];
  SimulationSpec spec;
  spec.gpu = grid.run_gpus.at(point.run);
  spec.workload = grid.workload_of(point);
  spec.policy = run.policy;
  spec.policy_options = run.options;
  spec.preemption = run.preemption;
  spec.copy_policy = run.copy_policy;
  spec.seed = config.seeds[point.seed];
  spec.wall_timeout_s = wall_timeout_s;
  return spec;
}

double estimated_cost(const Workload& w, const std::vector<double>& isolated_ps) {
  std::vector<double> tbs(w.processes.size(), 0.0);
  double longest = 0;
  for (std::size_t p = 0; p < w.processes.size(); ++p) {
    for (const StreamSpec& s : w.processes[p].streams) {
      for (const CommandSpec& c : s.commands) {
        if (c.kind == CommandKind::kKernel && c.kernel) {
          tbs[p] += double(c.launches) * c.kernel->thread_blocks;
        }
      }
    }
    longest = std::max(longest, isolated_ps[p] * w.processes[p].repeat);
  }
  double cost = 0;
  for (std::size_t p = 0; p < w.processes.size(); ++p) {
    double runs = w.processes[p].repeat;
    if (w.replay == ReplayMode::kUntilAllDone && isolated_ps[p] > 0) {
      runs = std::max(runs, std::ceil(longest / isolated_ps[p]));
      runs = std::min(runs, double(std::max(w.replay_limit, w.processes[p].repeat)));
    }
    cost += tbs[p] * runs;
  }
  return std::max(cost, 1.0);
}

}  // namespace gpumux
