#include "metrics/run_result.h"

#include <stdexcept>
#include <string>

namespace gpumux {

void to_json(nlohmann::json& j, const RunResult& r) {
  j = nlohmann::json{{"schema_version", kRunResultSchemaVersion},
                     {"policy", r.policy},
                     {"copy_policy", r.copy_policy},
                     {"seed", r.seed},
                     {"sm_model", r.sm_model},
                     {"warp_scheduler", r.warp_scheduler},
                     {"end_ps", r.end_ps},
                     {"tbs_issued", r.tbs_issued},
                     {"tbs_completed", r.tbs_completed},
                     {"commands_completed", r.commands_completed},
                     {"tbs_reissued", r.tbs_reissued},
                     {"preemptions", r.preemptions},
                     {"processes", r.processes},
                     {"kernels", r.kernels},
                     {"commands", r.commands},
                     {"sms", r.sms},
                     {"memory", r.memory},
                     // Absent Perf-Sat is null, as the form always had it.
                     {"perf_sat", r.perf_sat ? nlohmann::json(*r.perf_sat) : nlohmann::json()},
                     {"active_cores", r.active_cores},
                     {"power", r.power},
                     {"wall_seconds", r.wall_seconds}};
}

void from_json(const nlohmann::json& j, RunResult& r) {
  const auto version = j.at("schema_version").get<int>();
  if (version != kRunResultSchemaVersion) {
    throw std::runtime_error("run result schema version " + std::to_string(version) + ", this binary reads " +
                             std::to_string(kRunResultSchemaVersion));
  }
  j.at("policy").get_to(r.policy);
  j.at("copy_policy").get_to(r.copy_policy);
  j.at("seed").get_to(r.seed);
  j.at("sm_model").get_to(r.sm_model);
  j.at("warp_scheduler").get_to(r.warp_scheduler);
  j.at("end_ps").get_to(r.end_ps);
  j.at("tbs_issued").get_to(r.tbs_issued);
  j.at("tbs_completed").get_to(r.tbs_completed);
  j.at("commands_completed").get_to(r.commands_completed);
  j.at("tbs_reissued").get_to(r.tbs_reissued);
  j.at("preemptions").get_to(r.preemptions);
  j.at("processes").get_to(r.processes);
  j.at("kernels").get_to(r.kernels);
  j.at("commands").get_to(r.commands);
  j.at("sms").get_to(r.sms);
  j.at("memory").get_to(r.memory);
  const nlohmann::json& perf_sat = j.at("perf_sat");
  r.perf_sat.reset();
  if (!perf_sat.is_null()) r.perf_sat = perf_sat.get<PerfSatResult>();
  j.at("active_cores").get_to(r.active_cores);
  j.at("power").get_to(r.power);
  j.at("wall_seconds").get_to(r.wall_seconds);
}

double mean_turnaround_ps(const ProcessResult& process) {
  if (process.runs.empty()) return 0.0;
  double sum = 0;
  for (const auto& run : process.runs) sum += static_cast<double>(run.end_ps - run.start_ps);
  return sum / static_cast<double>(process.runs.size());
}

}  // namespace gpumux
