#include "app/experiment/report_json.h"

#include <cmath>
#include <optional>

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
  j["description"] = c.description;
  j["analysis"] = c.analysis;
  j["gpu"] = g.gpu.name;
  json runs_spec = json::array();
  for (const ExperimentRun& run : c.runs) {
    runs_spec.push_back({{"label", run.label},
                         {"policy", run.policy},
                         {"preemption", to_string(run.preemption)},
                         {"options", run.options},
                         {"policy_options", effective_policy_options(run.policy, run.options)}});
  }
  j["grid"] = {{"workloads", g.workloads.size()},
               {"runs", runs_spec},
               {"seeds", c.seeds},
               {"simulations", g.points.size()},
               {"baseline", c.runs.front().label}};
  if (c.tb_rsd_percent) j["grid"]["tb_rsd_percent"] = *c.tb_rsd_percent;
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
    json entry = {{"workload", g.workloads[point.workload].workload.name},
                  {"label", run.label},
                  {"policy", run.policy},
                  {"options", run.options},
                  {"preemption", to_string(run.preemption)},
                  {"seed", c.seeds[point.seed]}};
    if (i < results.outcomes.size() && results.outcomes[i]) {
      const RunOutcome& o = *results.outcomes[i];
      const auto metric = [&](double v) { return o.valid ? json(v) : json(nullptr); };
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
                             {"isolated_ns", p.isolated_ps / 1000.0},
                             {"turnaround_ns", p.turnaround_ps / 1000.0},
                             {"ntt", metric(p.ntt)}});
      }
      entry["processes"] = processes;
    }
    runs.push_back(entry);
  }
  j["runs"] = runs;
  return j;
}

}  // namespace gpumux
