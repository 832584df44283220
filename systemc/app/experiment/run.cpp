#include "app/experiment/run.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "app/experiment/plan.h"
#include "app/isolated_baselines.h"
#include "core/progress_line.h"
#include "metrics/multiprogram_metrics.h"

namespace gpumux {

namespace {

/// "what: done/total simulations, elapsed, estimate of what is left" (by the cost estimates of plan.h).
class GridProgress {
 public:
  GridProgress(bool enabled, std::string what, std::size_t total, double total_cost)
      : line_(enabled), what_(std::move(what)), total_(total), total_cost_(total_cost) {}
  void update(std::size_t done, double done_cost) {
    if (!line_.enabled()) return;
    const double elapsed = line_.elapsed_s();
    char text[256];
    int n = std::snprintf(text, sizeof text, "%s: %zu/%zu simulations, %.0f s", what_.c_str(), done, total_,
                          elapsed);
    if (done_cost > 0 && done < total_ && n > 0 && n < int(sizeof text)) {
      std::snprintf(text + n, sizeof text - std::size_t(n), ", ~%.0f s left",
                    elapsed * (total_cost_ - done_cost) / done_cost);
    }
    line_.show(text);
  }

 private:
  ProgressLine line_;
  std::string what_;
  std::size_t total_;
  double total_cost_;
};

/// The outcome of `result`, a simulation of `w`; `isolated_ps` are its processes' isolated turnaround
/// times, or nullptr when the analysis reads none (no multiprogram metrics).
RunOutcome make_outcome(const Workload& w, const RunResult& result, const std::vector<double>* isolated_ps) {
  RunOutcome o;
  o.multiprogram = isolated_ps != nullptr;
  o.simulated_ns = ns_from_ps(result.end_ps);
  o.preemptions = result.preemptions.size();
  std::vector<ProcessTimes> times;
  bool complete = true;
  for (std::size_t p = 0; p < w.processes.size(); ++p) {
    ProcessOutcome po;
    po.name = w.processes[p].name;
    po.class1 = process_class(w.processes[p], true);
    po.class2 = process_class(w.processes[p], false);
    po.priority = w.processes[p].priority;
    po.isolated_ps = isolated_ps != nullptr ? (*isolated_ps)[p] : 0.0;
    po.turnaround_ps = mean_turnaround_ps(result.processes.at(p));
    po.runs = result.processes[p].runs.size();
    if (!(po.turnaround_ps > 0) || (isolated_ps != nullptr && !(po.isolated_ps > 0))) complete = false;
    times.push_back({po.isolated_ps, po.turnaround_ps});
    o.processes.push_back(std::move(po));
  }
  o.kernel_launches = result.kernels.size();
  if (o.kernel_launches <= kMaxKernelsListed) {
    for (const KernelRecord& k : result.kernels) {
      o.kernels.push_back(
          {k.name, k.process, k.start_ps, k.end_ps, k.thread_blocks, k.tbs_per_sm, k.instructions});
    }
  }
  for (const SmRecord& sm : result.sms) {
    o.warp.instructions += sm.warp.instructions;
    o.warp.cycles += sm.warp.cycles;
    o.warp.scheduler_cycles += sm.warp.scheduler_cycles;
    o.warp.idle_memory += sm.warp.idle_memory;
    o.warp.idle_barrier += sm.warp.idle_barrier;
    o.warp.idle_no_warp += sm.warp.idle_no_warp;
    o.warp.idle_other += sm.warp.idle_other;
    o.warp.alu_busy_cycles += sm.warp.alu_busy_cycles;
    o.warp.memory_unit_busy_cycles += sm.warp.memory_unit_busy_cycles;
    o.warp.memory_requests += sm.warp.memory_requests;
    o.warp.l1_sector_hits += sm.warp.l1_sector_hits;
    o.warp.l1_sector_misses += sm.warp.l1_sector_misses;
    o.warp.l1_sector_merges += sm.warp.l1_sector_merges;
  }
  o.memory_busy_ps = result.memory.busy_ps;
  if (complete) {
    o.valid = true;
    if (o.multiprogram) {
      const MultiprogramMetrics m = compute_metrics(times);
      o.stp = m.stp;
      o.antt = m.antt;
      o.fairness = m.fairness;
      for (std::size_t p = 0; p < o.processes.size(); ++p) o.processes[p].ntt = m.ntt[p];
    }
  }
  return o;
}

}  // namespace

ExperimentResults run_experiment(const ExperimentConfig& config, const ExpandedExperiment& grid,
                                 const ExperimentOptions& options) {
  // 1. Isolated baselines: each distinct process alone (fcfs), once per seed and per GPU its runs use
  //    (gpu_variants: runs on other SM models or warp schedulers); cached on disk. None when the
  //    analysis reads no STP, ANTT or NTT.
  const bool baselines = uses_isolated_baselines(config);
  const IsolatedPlan plan = plan_isolated(grid);
  const GpuVariants variants = gpu_variants(grid);
  // [seed][variant][group][process]
  std::vector<std::vector<std::vector<std::vector<RunResult>>>> isolated(config.seeds.size());
  if (baselines) {
    std::size_t total = 0;
    for (const Workload& g : plan.groups) total += g.processes.size() * config.seeds.size();
    total *= variants.gpus.size();
    GridProgress progress(options.progress, "isolated baselines", total, double(total));
    std::size_t done = 0;
    progress.update(0, 0);
    for (std::size_t s = 0; s < config.seeds.size(); ++s) {
      isolated[s].resize(variants.gpus.size());
      for (std::size_t v = 0; v < variants.gpus.size(); ++v) {
        for (const Workload& group : plan.groups) {
          IsolatedOptions iso;
          iso.seed = config.seeds[s];
          iso.jobs = options.jobs;
          iso.use_cache = options.use_cache;
          iso.cache_dir = options.cache_dir;
          iso.wall_timeout_s = options.wall_timeout_s;
          isolated[s][v].push_back(isolated_baselines(*variants.gpus[v], group, iso));
          done += group.processes.size();
          progress.update(done, double(done));
        }
      }
    }
  }
  // The isolated turnaround times of the processes of grid point `point` (only with baselines).
  auto isolated_of = [&](const Workload& w, const GridPoint& point) {
    std::vector<double> times;
    for (const ProcessSpec& p : w.processes) {
      const auto [g, index] = plan.baseline_of(w, p);
      times.push_back(
          mean_turnaround_ps(isolated[point.seed][variants.of_run[point.run]][g][index].processes.at(0)));
    }
    return times;
  };

  // 2. The multiprogrammed runs, most expensive first (fewer idle cores at the end).
  const std::size_t n = grid.points.size();
  std::vector<SimulationSpec> specs(n);
  std::vector<double> cost(n);
  for (std::size_t i = 0; i < n; ++i) {
    specs[i] = simulation_spec(config, grid, grid.points[i], options.wall_timeout_s);
    cost[i] = estimated_cost(specs[i].workload,
                             baselines ? isolated_of(specs[i].workload, grid.points[i])
                                       : std::vector<double>(specs[i].workload.processes.size(), 0.0));
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });

  // 3. Metrics of every run, made in the simulation's child: its RunResult (every command, kernel launch
  //    and preemption of a Tanasic mix: megabytes) never reaches this process, which holds the outcomes
  //    only (tanasic-priority's 720 RunResults held 15 GB; one batch of them, 4 GB, made every fork of
  //    the 4 GB parent cost a fifth of the run's CPU time in the kernel, issue 20).
  ExperimentResults r;
  r.config = &config;
  r.grid = &grid;
  r.outcomes.resize(n);
  const auto outcome_of = [&](std::size_t i, const RunResult& result) {
    const Workload& w = grid.workload_of(grid.points[i]);
    if (baselines) {
      const std::vector<double> times = isolated_of(w, grid.points[i]);
      return make_outcome(w, result, &times);
    }
    return make_outcome(w, result, nullptr);
  };
  const double total_cost = std::accumulate(cost.begin(), cost.end(), 0.0);
  GridProgress progress(options.progress, config.name, n, total_cost);
  progress.update(0, 0);
  // Batches of twice the job count with a progress line (it advances as simulations finish), else of
  // 32 times (simulate_all balances the load within a batch; the batches bound the memory).
  const std::size_t batch = std::max<std::size_t>(std::size_t{options.progress ? 2U : 32U} * options.jobs, 1);
  double done_cost = 0;
  for (std::size_t first = 0; first < n; first += batch) {
    const std::size_t last = std::min(n, first + batch);
    std::vector<SimulationSpec> chunk;
    for (std::size_t k = first; k < last; ++k) chunk.push_back(specs[order[k]]);
    std::vector<nlohmann::json> out;
    try {
      out = simulate_all_reduced(chunk, options.jobs, [&](std::size_t k, const RunResult& result) {
        return nlohmann::json(outcome_of(order[first + k], result));
      });
    } catch (const SimulationFailed& e) {
      std::string which;
      for (std::size_t k = first; k < last; ++k) {
        const GridPoint& p = grid.points[order[k]];
        which += "\n  " + grid.workloads[p.workload].workload.name + " / " + config.runs[p.run].label +
                 " / seed " + std::to_string(config.seeds[p.seed]);
      }
      throw SimulationFailed(std::string(e.what()) + "\n(in one of the simulations:" + which + ")");
    }
    for (std::size_t k = first; k < last; ++k) {
      r.outcomes[order[k]] = out[k - first].get<RunOutcome>();
      done_cost += cost[order[k]];
    }
    progress.update(last, done_cost);
  }
  return r;
}

}  // namespace gpumux
