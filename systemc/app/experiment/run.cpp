#include "app/experiment/run.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "app/experiment/plan.h"
#include "app/isolated_baselines.h"
#include "core/progress_line.h"
#include "metrics/multiprogram_metrics.h"
#include "metrics/workload_class.h"

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

}  // namespace

RunOutcome measure_outcome(const Workload& w, const RunResult& result, bool multiprogram) {
  RunOutcome o;
  o.multiprogram = multiprogram;
  o.simulated_ns = ns_from_ps(result.end_ps);
  o.preemptions = result.preemptions.size();
  for (std::size_t p = 0; p < w.processes.size(); ++p) {
    ProcessOutcome po;
    po.name = w.processes[p].name;
    po.class1 = process_class(w.processes[p], true);
    po.class2 = process_class(w.processes[p], false);
    po.priority = w.processes[p].priority;
    po.turnaround_ps = mean_turnaround_ps(result.processes.at(p));
    po.runs = result.processes[p].runs.size();
    o.processes.push_back(std::move(po));
  }
  o.kernel_launches = result.kernels.size();
  if (o.kernel_launches <= kMaxKernelsListed) {
    for (const KernelRecord& k : result.kernels) {
      KernelOutcome ko;
      ko.name = k.name;
      ko.process = k.process;
      ko.start_ps = k.start_ps;
      ko.end_ps = k.end_ps;
      ko.thread_blocks = k.thread_blocks;
      ko.tbs_per_sm = k.tbs_per_sm;
      ko.instructions = k.instructions;
      if (result.perf_sat) {
        const KernelPerfSat ps = kernel_perf_sat(*result.perf_sat, o.kernels.size(), k.tbs_per_sm);
        ko.perf_sat = true;
        ko.perf_sat_detected_mean = ps.detected_mean;
        ko.perf_sat_sms = ps.sms;
        ko.perf_sat_settled_sms = ps.settled;
        ko.workload_class = ps.workload_class.name;
      }
      o.kernels.push_back(std::move(ko));
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
  o.active_cores = result.active_cores;
  o.power = result.power;
  return o;
}

std::vector<double> isolated_times(const IsolatedPlan& plan, const GpuVariants& variants,
                                   const BaselineTimes& baselines, const Workload& workload,
                                   const GridPoint& point) {
  std::vector<double> times;
  for (const ProcessSpec& p : workload.processes) {
    const auto [g, index] = plan.baseline_of(workload, p);
    times.push_back(baselines.at(point.seed).at(variants.of_run.at(point.run)).at(g).at(index));
  }
  return times;
}

ExperimentResults finish_results(const ExperimentConfig& config, const ExpandedExperiment& grid,
                                 std::vector<RunOutcome> measured, const BaselineTimes& baselines) {
  const bool with_baselines = uses_isolated_baselines(config);
  const IsolatedPlan plan = with_baselines ? plan_isolated(grid) : IsolatedPlan{};
  const GpuVariants variants = gpu_variants(grid);
  ExperimentResults r;
  r.config = &config;
  r.grid = &grid;
  r.outcomes.resize(grid.points.size());
  for (std::size_t i = 0; i < grid.points.size(); ++i) {
    RunOutcome& o = measured.at(i);
    std::vector<double> isolated;
    if (with_baselines) {
      isolated = isolated_times(plan, variants, baselines, grid.workload_of(grid.points[i]), grid.points[i]);
    }
    // Without baselines a run is valid when every process completed a run; with them, also when every
    // process has its (non-zero) isolated time.
    std::vector<ProcessTimes> times;
    bool complete = true;
    for (std::size_t p = 0; p < o.processes.size(); ++p) {
      ProcessOutcome& po = o.processes[p];
      po.isolated_ps = with_baselines ? isolated.at(p) : 0.0;
      if (!(po.turnaround_ps > 0) || (with_baselines && !(po.isolated_ps > 0))) complete = false;
      times.push_back({po.isolated_ps, po.turnaround_ps});
    }
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
    r.outcomes[i] = std::move(o);
  }
  return r;
}

ExperimentResults run_experiment(const ExperimentConfig& config, const ExpandedExperiment& grid,
                                 const ExperimentOptions& options) {
  // 1. Isolated baselines: each distinct process alone (fcfs), once per seed and per GPU its runs use
  //    (gpu_variants: runs on other SM models or warp schedulers); cached on disk. None when the
  //    analysis reads no STP, ANTT or NTT.
  const bool baselines = uses_isolated_baselines(config);
  const IsolatedPlan plan = plan_isolated(grid);
  const GpuVariants variants = gpu_variants(grid);
  BaselineTimes isolated(config.seeds.size());
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
          std::vector<double>& times = isolated[s][v].emplace_back();
          for (const RunResult& result : isolated_baselines(*variants.gpus[v], group, iso)) {
            times.push_back(mean_turnaround_ps(result.processes.at(0)));
          }
          done += group.processes.size();
          progress.update(done, double(done));
        }
      }
    }
  }

  // 2. The multiprogrammed runs, most expensive first (fewer idle cores at the end).
  const std::size_t n = grid.points.size();
  std::vector<SimulationSpec> specs(n);
  std::vector<double> cost(n);
  for (std::size_t i = 0; i < n; ++i) {
    specs[i] = simulation_spec(config, grid, grid.points[i], options.wall_timeout_s);
    cost[i] =
        estimated_cost(specs[i].workload,
                       baselines ? isolated_times(plan, variants, isolated, specs[i].workload, grid.points[i])
                                 : std::vector<double>(specs[i].workload.processes.size(), 0.0));
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });

  // 3. Every run measured in the simulation's child: its RunResult (every command, kernel launch and
  //    preemption of a Tanasic mix: megabytes) never reaches this process, which holds the outcomes
  //    only (tanasic-priority's 720 RunResults held 15 GB; one batch of them, 4 GB, made every fork of
  //    the 4 GB parent cost a fifth of the run's CPU time in the kernel, issue 20). The metrics that
  //    need the baselines are made here afterwards (finish_results), as the Slurm backend makes them.
  std::vector<RunOutcome> measured(n);
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
        return nlohmann::json(
            measure_outcome(grid.workload_of(grid.points[order[first + k]]), result, baselines));
      });
    } catch (const SimulationFailed& e) {
      std::string which;
      for (std::size_t k = first; k < last; ++k) {
        which += "\n  " + grid_point_name(config, grid, grid.points[order[k]]);
      }
      throw SimulationFailed(std::string(e.what()) + "\n(in one of the simulations:" + which + ")");
    }
    for (std::size_t k = first; k < last; ++k) {
      measured[order[k]] = out[k - first].get<RunOutcome>();
      done_cost += cost[order[k]];
    }
    progress.update(last, done_cost);
  }
  return finish_results(config, grid, std::move(measured), isolated);
}

std::string grid_point_name(const ExperimentConfig& config, const ExpandedExperiment& grid,
                            const GridPoint& point) {
  return grid.workloads[point.workload].workload.name + " / " + config.runs[point.run].label + " / seed " +
         std::to_string(config.seeds[point.seed]);
}

}  // namespace gpumux
