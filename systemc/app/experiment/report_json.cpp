#include "app/experiment/report_json.h"

#include <cmath>
#include <filesystem>
#include <optional>
#include <utility>

#include "config/gpu_loader.h"
#include "policy/registry.h"

namespace gpumux {

namespace {

nlohmann::json number_or_null(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

}  // namespace

nlohmann::json experiment_report_json(const ExperimentResults& results, const std::vector<ReportRow>& rows) {
  using nlohmann::json;
  const ExperimentConfig& c = *results.config;
  const ExpandedExperiment& g = *results.grid;
  json j;
  j["schema_version"] = kReportSchemaVersion;
  j["gpumux_version"] = GPUMUX_VERSION;
  j["experiment"] = c.name;
  // The experiments this one extends, nearest first, by file stem (names only, as everywhere here).
  json extends = json::array();
  for (const std::string& file : c.extends) extends.push_back(std::filesystem::path(file).stem().string());
  j["extends"] = extends;
  j["description"] = c.description;
  j["analysis"] = c.analysis;
  j["gpu"] = g.gpu.name;
  // The SMs each run simulates (the GPU file's unless the run sets sm_model / warp_scheduler).
  const auto sm_of = [&](std::size_t run) {
    const GpuConfig& gpu = run < g.run_gpus.size() ? g.run_gpus[run] : g.gpu;
    const bool warp = gpu.sm_model == SmModel::kWarp;
    return std::pair<json, json>(warp ? "warp" : "tb", warp ? json(gpu.warp.scheduler) : json(nullptr));
  };
  json runs_spec = json::array();
  for (std::size_t r = 0; r < c.runs.size(); ++r) {
    const ExperimentRun& run = c.runs[r];
    const auto [sm_model, warp_scheduler] = sm_of(r);
    runs_spec.push_back({{"label", run.label},
                         {"policy", run.policy},
                         {"preemption", to_string(run.preemption)},
                         {"copy_policy", to_string(run.copy_policy)},
                         {"options", run.options},
                         {"policy_options", effective_policy_options(run.policy, run.options)},
                         {"sm_model", sm_model},
                         {"warp_scheduler", warp_scheduler}});
    if (run.max_thread_blocks) runs_spec.back()["max_thread_blocks"] = *run.max_thread_blocks;
    if (run.perf_sat) runs_spec.back()["perf_sat"] = *run.perf_sat ? "on" : "off";
    if (run.active_cores) runs_spec.back()["active_cores"] = detector_name(*run.active_cores);
    if (run.power) runs_spec.back()["power"] = *run.power ? "on" : "off";
    if (run.sms) runs_spec.back()["sms"] = *run.sms;
    if (!run.only_workloads.empty()) runs_spec.back()["workloads"] = run.only_workloads;
  }
  j["grid"] = {{"workloads", g.workloads.size()},
               {"runs", runs_spec},
               {"seeds", c.seeds},
               {"simulations", g.points.size()},
               {"baseline", c.runs.front().label}};
  if (c.tb_rsd_percent) j["grid"]["tb_rsd_percent"] = *c.tb_rsd_percent;
  if (c.preemption_latency_scale) j["grid"]["preemption_latency_scale"] = *c.preemption_latency_scale;
  if (c.tb_interference) j["grid"]["tb_interference"] = *c.tb_interference ? "on" : "off";
  if (c.memory_model) j["grid"]["memory_model"] = *c.memory_model == MemoryModel::kDram ? "dram" : "simple";
  if (c.kernel_launch) j["grid"]["kernel_launch"] = to_string(*c.kernel_launch);
  if (c.streams_per_application) j["grid"]["streams_per_application"] = *c.streams_per_application;
  json row_list = json::array();
  for (const ReportRow& row : rows) {
    row_list.push_back({{"name", row.name},
                        {"model", number_or_null(row.model)},
                        {"paper", number_or_null(row.paper)},
                        {"unit", row.unit}});
  }
  j["rows"] = row_list;
  json runs = json::array();
  for (std::size_t i = 0; i < g.points.size(); ++i) {
    const GridPoint& point = g.points[i];
    const ExperimentRun& run = c.runs[point.run];
    const auto [sm_model, warp_scheduler] = sm_of(point.run);
    json entry = {{"workload", g.workloads[point.workload].workload.name},
                  {"label", run.label},
                  {"policy", run.policy},
                  {"options", run.options},
                  {"preemption", to_string(run.preemption)},
                  {"copy_policy", to_string(run.copy_policy)},
                  {"sm_model", sm_model},
                  {"warp_scheduler", warp_scheduler},
                  {"seed", c.seeds[point.seed]}};
    if (run.sms) entry["sms"] = *run.sms;
    if (i < results.outcomes.size() && results.outcomes[i]) {
      const RunOutcome& o = *results.outcomes[i];
      const auto metric = [&](double v) { return o.valid && o.multiprogram ? json(v) : json(nullptr); };
      entry["stp"] = metric(o.stp);
      entry["antt"] = metric(o.antt);
      entry["fairness"] = metric(o.fairness);
      entry["simulated_ns"] = o.simulated_ns;
      entry["preemptions"] = o.preemptions;
      json processes = json::array();
      for (const ProcessOutcome& p : o.processes) {
        processes.push_back({{"name", p.name},
                             {"class1", p.class1},
                             {"class2", p.class2},
                             {"priority", p.priority},
                             {"runs", p.runs},
                             {"isolated_ns", o.multiprogram ? json(p.isolated_ps / 1000.0) : json(nullptr)},
                             {"turnaround_ns", p.turnaround_ps / 1000.0},
                             {"ntt", metric(p.ntt)}});
      }
      entry["processes"] = processes;
      entry["kernel_launches"] = o.kernel_launches;
      json kernels = o.kernel_launches <= kMaxKernelsListed ? json::array() : json(nullptr);
      for (const KernelOutcome& k : o.kernels) {
        kernels.push_back({{"name", k.name},
                           {"process", k.process},
                           {"start_ns", ns_from_ps(k.start_ps)},
                           {"end_ns", ns_from_ps(k.end_ps)},
                           {"thread_blocks", k.thread_blocks},
                           {"tbs_per_sm", k.tbs_per_sm},
                           {"instructions", k.instructions}});
      }
      entry["kernels"] = std::move(kernels);
      entry["memory_busy_ns"] = ns_from_ps(o.memory_busy_ps);
      if (sm_model == "warp") {
        // Summed over the SMs, as stats.json's per-SM "warp" (docs/user-guide.md "Reading the warp
        // statistics").
        entry["warp"] = {{"instructions", o.warp.instructions},
                         {"cycles", o.warp.cycles},
                         {"issue_slots", o.warp.scheduler_cycles},
                         {"idle_slots",
                          {{"memory", o.warp.idle_memory},
                           {"barrier", o.warp.idle_barrier},
                           {"no_warp", o.warp.idle_no_warp},
                           {"other", o.warp.idle_other}}},
                         {"memory_requests", o.warp.memory_requests}};
      }
      // stats.json's records by the same field names (docs/user-guide.md "Active cores and power").
      if (!o.active_cores.empty()) entry["active_cores"] = o.active_cores;
      if (o.power.enabled) {
        entry["power"] = {{"total_j", o.power.total_j},
                          {"static_j", o.power.static_j},
                          {"dynamic_j", o.power.dynamic_j},
                          {"average_w", o.power.average_w}};
      }
    }
    runs.push_back(std::move(entry));
  }
  j["runs"] = std::move(runs);
  return j;
}

}  // namespace gpumux
