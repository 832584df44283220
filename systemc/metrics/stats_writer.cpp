#include "metrics/stats_writer.h"

#include <cstdio>
#include <iomanip>

#include "metrics/workload_class.h"
#include "policy/policy.h"

namespace gpumux {

RunReport make_report(const GpuConfig& gpu, const Workload& workload, const RunResult& multiprogram,
                      const std::vector<RunResult>& isolated) {
  RunReport report;
  report.gpu = &gpu;
  report.workload = &workload;
  report.multiprogram = &multiprogram;
  std::vector<ProcessTimes> times;
  for (std::size_t p = 0; p < multiprogram.processes.size(); ++p) {
    const double sp = mean_turnaround_ps(isolated.at(p).processes.at(0));
    report.isolated_ps.push_back(sp);
    times.push_back({sp, mean_turnaround_ps(multiprogram.processes[p])});
  }
  report.metrics = compute_metrics(times);
  return report;
}

namespace {
double ns(double ps) { return ps / 1000.0; }
double ns(TimePs ps) { return static_cast<double>(ps) / 1000.0; }

/// One SM's warp-level figures (docs/user-guide.md "Reading the warp statistics"): issue slots
/// offered and lost by cause, IPC over the cycles it held warps, unit loads.
nlohmann::json warp_sm_json(const WarpSmStats& w) {
  auto share = [&](std::uint64_t part) {
    return w.scheduler_cycles == 0 ? 0.0
                                   : static_cast<double>(part) / static_cast<double>(w.scheduler_cycles);
  };
  auto per_cycle = [&](std::uint64_t part) {
    return w.cycles == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(w.cycles);
  };
  nlohmann::json out = {{"instructions", w.instructions},
                        {"cycles", w.cycles},
                        {"ipc", per_cycle(w.instructions)},
                        {"issue_slots", w.scheduler_cycles},
                        {"idle_slots",
                         {{"memory", w.idle_memory},
                          {"barrier", w.idle_barrier},
                          {"no_warp", w.idle_no_warp},
                          {"other", w.idle_other}}},
                        {"idle_share",
                         {{"memory", share(w.idle_memory)},
                          {"barrier", share(w.idle_barrier)},
                          {"no_warp", share(w.idle_no_warp)},
                          {"other", share(w.idle_other)}}},
                        {"alu_load", per_cycle(w.alu_busy_cycles)},
                        {"memory_unit_load", per_cycle(w.memory_unit_busy_cycles)},
                        {"memory_requests", w.memory_requests}};
  // Only with an L1 that served loads (memory.l1), so runs without one keep the keys of before.
  const std::uint64_t l1_sectors = w.l1_sector_hits + w.l1_sector_misses + w.l1_sector_merges;
  if (l1_sectors > 0) {
    out["l1"] = {{"sector_hits", w.l1_sector_hits},
                 {"sector_misses", w.l1_sector_misses},
                 {"sector_merges", w.l1_sector_merges},
                 {"hit_rate", static_cast<double>(w.l1_sector_hits) / static_cast<double>(l1_sectors)}};
  }
  return out;
}

/// stats.json's `perf_sat`: per SM, per kernel bound to it, the detection and the limit over time.
nlohmann::json perf_sat_json(const PerfSatResult& perf_sat, const RunResult& r, const GpuConfig& gpu) {
  using nlohmann::json;
  std::vector<json> by_sm(r.sms.size(), json::array());
  for (const PerfSatTrace& rec : perf_sat.records) {
    json limits = json::array();
    limits.push_back({{"time_ns", ns(rec.bound_ps)}, {"limit", rec.start}});
    json samples = json::array();
    for (const PerfSatSampleTrace& smp : rec.samples) {
      samples.push_back({{"end_ns", ns(smp.end_ps)},
                         {"blocks", smp.blocks},
                         {"stalled_cycles", smp.stalled},
                         {"instructions", smp.instructions},
                         {"cycles", smp.cycles},
                         {"next", smp.next},
                         {"state", smp.state}});
      if (smp.next != smp.blocks) limits.push_back({{"time_ns", ns(smp.end_ps)}, {"limit", smp.next}});
    }
    json entry = {{"kernel", r.kernels.at(rec.launch).name},
                  {"launch", rec.launch},
                  {"n_max", rec.n_max},
                  {"start", rec.start},
                  {"detected", rec.detected},
                  {"settled", rec.settled},
                  {"settled_by", rec.settled_by},
                  {"bound_ns", ns(rec.bound_ps)},
                  {"settled_ns", rec.settled ? json(ns(rec.settled_ps)) : json()},
                  {"sample_period_cycles", gpu.ps_to_cycles(rec.period_ps)},
                  {"limit_over_time", limits},
                  {"samples", samples}};
    by_sm.at(rec.sm).push_back(entry);
  }
  json sms = json::array();
  for (std::size_t s = 0; s < by_sm.size(); ++s) sms.push_back({{"id", s}, {"kernels", by_sm[s]}});
  return {{"sample_period_cycles", perf_sat.sample_period_cycles},
          {"max_toggles", perf_sat.max_toggles},
          {"stalled_cycles", "sms[].warp.idle_slots.memory + idle_slots.other (docs/config.md \"Perf-Sat\")"},
          {"sms", sms}};
}
}  // namespace

nlohmann::json stats_json(const RunReport& report) {
  using nlohmann::json;
  const RunResult& r = *report.multiprogram;
  const GpuConfig& gpu = *report.gpu;
  json j;
  j["gpumux_version"] = GPUMUX_VERSION;
  j["schema_version"] = kStatsSchemaVersion;
  j["gpu"] = gpu.name;
  j["workload"] = report.workload->name;
  j["policy"] = r.policy;
  j["seed"] = r.seed;
  j["policy_options"] = report.policy_options;
  j["preemption"] = report.preemption;
  j["copy_policy"] = r.copy_policy;
  j["sm_model"] = r.sm_model;
  j["memory_model"] = r.memory.dram.is_null() ? "simple" : "dram";
  j["tb_interference"] = r.memory.tb_interference.is_null() ? "off" : "on";
  if (r.sm_model == "warp") j["warp_scheduler"] = r.warp_scheduler;
  // Everything else that shaped the run: the input files and the hashes of their effective content
  // (gpumux run --replay reads these back, docs/user-guide.md "Repeating a run").
  j["inputs"] = report.inputs;
  j["config_sha1"] = report.config_sha1;
  j["simulated_ns"] = ns(r.end_ps);
  j["simulated_cycles"] = gpu.ps_to_cycles(r.end_ps);
  j["metrics"] = {
      {"stp", report.metrics.stp}, {"antt", report.metrics.antt}, {"fairness", report.metrics.fairness}};
  json processes = json::array();
  for (std::size_t p = 0; p < r.processes.size(); ++p) {
    json runs = json::array();
    for (const auto& run : r.processes[p].runs) {
      runs.push_back({{"start_ns", ns(run.start_ps)}, {"end_ns", ns(run.end_ps)}});
    }
    processes.push_back({{"name", r.processes[p].name},
                         {"isolated_ns", ns(report.isolated_ps[p])},
                         {"turnaround_ns", ns(mean_turnaround_ps(r.processes[p]))},
                         {"ntt", report.metrics.ntt[p]},
                         {"runs", r.processes[p].runs.size()},
                         {"run_times", runs}});
  }
  j["processes"] = processes;
  json kernels = json::array();
  for (const KernelRecord& k : r.kernels) {
    kernels.push_back({{"name", k.name},
                       {"process", r.processes[k.process].name},
                       {"launch_ns", ns(k.launch_ps)},
                       {"start_ns", ns(k.start_ps)},
                       {"end_ns", ns(k.end_ps)},
                       {"thread_blocks", k.thread_blocks},
                       {"tbs_per_sm", k.tbs_per_sm},
                       {"preemptions", k.preemptions}});
    if (r.sm_model == "warp") {
      const double cycles = gpu.ps_to_cycles(k.end_ps - k.start_ps);
      kernels.back()["instructions"] = k.instructions;
      kernels.back()["ipc"] = cycles > 0 ? static_cast<double>(k.instructions) / cycles : 0.0;
    }
    if (r.perf_sat) {
      const KernelPerfSat ps = kernel_perf_sat(*r.perf_sat, kernels.size() - 1, k.tbs_per_sm);
      const WorkloadClass& wc = ps.workload_class;
      kernels.back()["perf_sat"] = {{"n_max", ps.n_max},
                                    {"sms", ps.sms},
                                    {"settled_sms", ps.settled},
                                    {"detected_mean", ps.detected_mean},
                                    {"detected_min", ps.detected_min},
                                    {"detected_max", ps.detected_max}};
      kernels.back()["workload_class"] = {{"class", wc.name.empty() ? json() : json(wc.name)},
                                          {"reason", wc.reason},
                                          {"detected_median", wc.detected},
                                          {"ipc_at_detected", wc.ipc_at_detected},
                                          {"ipc_one_block_more", wc.ipc_above}};
    }
  }
  j["kernels"] = kernels;
  json preemptions = json::array();
  for (std::size_t i = 0; i < r.preemptions.size(); ++i) {
    const PreemptionTrace& p = r.preemptions[i];
    // `id`: the timeline's preemption slices carry the same number (args.preemption).
    preemptions.push_back({{"id", i},
                           {"sm", p.sm},
                           {"kernel", r.kernels.at(p.kernel).name},
                           {"launch", p.kernel},
                           {"mechanism", to_string(static_cast<PreemptionMechanism>(p.mechanism))},
                           {"requested_ns", ns(p.requested_ps)},
                           {"done_ns", ns(p.done_ps)},
                           {"bytes", p.bytes},
                           {"setup_ns", ns(p.setup_ps)}});
    if (static_cast<PreemptionMechanism>(p.mechanism) == PreemptionMechanism::kContextSwitch) {
      // Tanasic 3.2: the pipeline drains, the trap routine starts, then the context is written.
      json& record = preemptions.back();
      record["drain_ns"] = ns(p.drain_ps);
      record["trap_ns"] = ns(p.trap_ps);
      record["save_start_ns"] = ns(p.save_start_ps);
      record["save_ns"] = ns(p.done_ps - p.save_start_ps);
    }
  }
  j["preemptions"] = preemptions;
  json sms = json::array();
  for (const SmRecord& s : r.sms) {
    sms.push_back({{"id", s.id},
                   {"busy_ns", ns(s.busy_ps)},
                   {"busy_cycles", gpu.ps_to_cycles(s.busy_ps)},
                   {"utilization",
                    r.end_ps == 0 ? 0.0 : static_cast<double>(s.busy_ps) / static_cast<double>(r.end_ps)},
                   {"thread_blocks", s.thread_blocks},
                   {"setups", s.setups},
                   {"setup_ns", ns(s.setup_ps)}});
    if (r.sm_model == "warp") sms.back()["warp"] = warp_sm_json(s.warp);
  }
  j["sms"] = sms;
  if (r.perf_sat) j["perf_sat"] = perf_sat_json(*r.perf_sat, r, gpu);
  if (gpu.active_cores.detector != ActiveCoreDetectorKind::kNone) {
    // Awatramani 4.4: per kernel it ran for, the samples and the count detected (docs/user-guide.md
    // "Active cores and power").
    j["active_cores"] = {
        {"detector", gpu.active_cores.detector == ActiveCoreDetectorKind::kOnac ? "onac" : "seq-det"},
        {"sampling_period_waves", gpu.active_cores.sampling_period_waves},
        {"tolerance", gpu.active_cores.tolerance},
        {"records", r.active_cores}};
  }
  if (r.power.enabled) j["power"] = r.power;
  j["memory"] = {{"bytes", r.memory.bytes},
                 {"transactions", r.memory.transactions},
                 {"busy_ns", ns(r.memory.busy_ps)},
                 {"pcie_to_gpu_bytes", r.memory.pcie_down_bytes},
                 {"pcie_to_host_bytes", r.memory.pcie_up_bytes}};
  if (!r.memory.dram.is_null()) j["memory"]["dram"] = r.memory.dram;
  if (!r.memory.tb_interference.is_null()) j["memory"]["tb_interference"] = r.memory.tb_interference;
  j["invariants"] = {{"thread_blocks_issued", r.tbs_issued},
                     {"thread_blocks_completed", r.tbs_completed},
                     {"thread_blocks_reissued", r.tbs_reissued},
                     {"commands_completed", r.commands_completed}};
  return j;
}

void print_summary(std::ostream& out, const RunReport& report) {
  const RunResult& r = *report.multiprogram;
  char line[256];
  std::snprintf(line, sizeof line,
                "gpumux: %s on %s, policy %s, seed %llu: %.3f ms simulated, %llu thread blocks\n",
                report.workload->name.c_str(), report.gpu->name.c_str(), r.policy.c_str(),
                static_cast<unsigned long long>(r.seed), ns(r.end_ps) / 1e6,
                static_cast<unsigned long long>(r.tbs_completed));
  out << line;
  // The rest of what shaped the run, so the summary alone tells two runs apart (stats.json has it all).
  std::string options;
  for (const auto& [name, value] : report.policy_options.items()) {
    options += (options.empty() ? "" : ", ") + name + "=" +
               (value.is_string() ? value.get<std::string>() : value.dump());
  }
  out << "  policy " << r.policy << " (" << (options.empty() ? "no options" : options) << "), preemption "
      << (report.preemption.empty() ? "-" : report.preemption) << ", copy policy "
      << (r.copy_policy.empty() ? "-" : r.copy_policy) << ", SM model " << r.sm_model
      << (r.sm_model == "warp" ? " (" + r.warp_scheduler + ")" : std::string()) << ", gpumux "
      << GPUMUX_VERSION
      << (report.config_sha1.empty() ? std::string() : ", config " + report.config_sha1.substr(0, 12))
      << "\n\n";
  std::snprintf(line, sizeof line, "  %-20s %6s %16s %16s %8s\n", "process", "runs", "isolated (us)",
                "turnaround (us)", "NTT");
  out << line;
  for (std::size_t p = 0; p < r.processes.size(); ++p) {
    std::snprintf(line, sizeof line, "  %-20s %6zu %16.1f %16.1f %8.3f\n", r.processes[p].name.c_str(),
                  r.processes[p].runs.size(), ns(report.isolated_ps[p]) / 1e3,
                  ns(mean_turnaround_ps(r.processes[p])) / 1e3, report.metrics.ntt[p]);
    out << line;
  }
  std::snprintf(line, sizeof line, "\n  STP %.3f   ANTT %.3f   fairness %.3f\n", report.metrics.stp,
                report.metrics.antt, report.metrics.fairness);
  out << line;
  if (!r.perf_sat) return;
  // Perf-Sat (Awatramani 4.3): per kernel launch, the count detected on its SMs and its workload class.
  out << "\n  Perf-Sat (Awatramani 4.3)\n";
  std::snprintf(line, sizeof line, "  %-20s %6s %6s %9s %8s %8s  %s\n", "kernel", "launch", "N_max",
                "detected", "min-max", "settled", "class");
  out << line;
  for (std::size_t i = 0; i < r.kernels.size(); ++i) {
    const KernelPerfSat ps = kernel_perf_sat(*r.perf_sat, i, r.kernels[i].tbs_per_sm);
    const std::string range = std::to_string(ps.detected_min) + "-" + std::to_string(ps.detected_max);
    const std::string settled = std::to_string(ps.settled) + "/" + std::to_string(ps.sms);
    const std::string cls =
        ps.workload_class.name.empty() ? "- (" + ps.workload_class.reason + ")" : ps.workload_class.name;
    std::snprintf(line, sizeof line, "  %-20s %6zu %6u %9.2f %8s %8s  %s\n", r.kernels[i].name.c_str(), i,
                  ps.n_max, ps.detected_mean, range.c_str(), settled.c_str(), cls.c_str());
    out << line;
  }
}

}  // namespace gpumux
