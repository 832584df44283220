#include "metrics/run_result.h"

namespace gpumux {

void to_json(nlohmann::json& j, const RunResult& r) {
  j = nlohmann::json::object();
  j["policy"] = r.policy;
  j["seed"] = r.seed;
  j["end_ps"] = r.end_ps;
  j["tbs_issued"] = r.tbs_issued;
  j["tbs_completed"] = r.tbs_completed;
  j["commands_completed"] = r.commands_completed;
  j["tbs_reissued"] = r.tbs_reissued;
  auto& preemptions = j["preemptions"] = nlohmann::json::array();
  for (const auto& p : r.preemptions) {
    preemptions.push_back({p.sm, p.kernel, p.mechanism, p.requested_ps, p.done_ps, p.bytes});
  }
  j["wall_seconds"] = r.wall_seconds;
  auto& processes = j["processes"] = nlohmann::json::array();
  for (const auto& p : r.processes) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& run : p.runs) runs.push_back({run.start_ps, run.end_ps});
    processes.push_back({{"name", p.name}, {"runs", runs}});
  }
  auto& kernels = j["kernels"] = nlohmann::json::array();
  for (const auto& k : r.kernels) {
    kernels.push_back(
        {k.name, k.process, k.launch_ps, k.start_ps, k.end_ps, k.thread_blocks, k.tbs_per_sm, k.preemptions});
  }
  auto& commands = j["commands"] = nlohmann::json::array();
  for (const auto& c : r.commands) {
    commands.push_back({c.kind, c.process, c.stream, c.queue, c.bytes, c.queued_ps, c.issued_ps, c.done_ps});
  }
  auto& sms = j["sms"] = nlohmann::json::array();
  for (const auto& s : r.sms) sms.push_back({s.id, s.busy_ps, s.thread_blocks});
  j["memory"] = {r.memory.bytes, r.memory.transactions, r.memory.busy_ps, r.memory.pcie_down_bytes,
                 r.memory.pcie_up_bytes};
}

void from_json(const nlohmann::json& j, RunResult& r) {
  r.policy = j.at("policy").get<std::string>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.end_ps = j.at("end_ps").get<TimePs>();
  r.tbs_issued = j.at("tbs_issued").get<std::uint64_t>();
  r.tbs_completed = j.at("tbs_completed").get<std::uint64_t>();
  r.commands_completed = j.at("commands_completed").get<std::uint64_t>();
  r.tbs_reissued = j.at("tbs_reissued").get<std::uint64_t>();
  r.preemptions.clear();
  for (const auto& p : j.at("preemptions")) {
    r.preemptions.push_back({p.at(0).get<std::uint32_t>(), p.at(1).get<std::uint32_t>(),
                             p.at(2).get<std::uint8_t>(), p.at(3).get<TimePs>(), p.at(4).get<TimePs>(),
                             p.at(5).get<std::uint64_t>()});
  }
  r.wall_seconds = j.at("wall_seconds").get<double>();
  r.processes.clear();
  for (const auto& p : j.at("processes")) {
    ProcessResult pr;
    pr.name = p.at("name").get<std::string>();
    for (const auto& run : p.at("runs")) {
      pr.runs.push_back({run.at(0).get<TimePs>(), run.at(1).get<TimePs>()});
    }
    r.processes.push_back(std::move(pr));
  }
  r.kernels.clear();
  for (const auto& k : j.at("kernels")) {
    r.kernels.push_back({k.at(0).get<std::string>(), k.at(1).get<std::uint32_t>(), k.at(2).get<TimePs>(),
                         k.at(3).get<TimePs>(), k.at(4).get<TimePs>(), k.at(5).get<std::uint32_t>(),
                         k.at(6).get<std::uint32_t>(), k.at(7).get<std::uint32_t>()});
  }
  r.commands.clear();
  for (const auto& c : j.at("commands")) {
    r.commands.push_back({c.at(0).get<std::uint8_t>(), c.at(1).get<std::uint32_t>(),
                          c.at(2).get<std::uint32_t>(), c.at(3).get<std::uint32_t>(),
                          c.at(4).get<std::uint64_t>(), c.at(5).get<TimePs>(), c.at(6).get<TimePs>(),
                          c.at(7).get<TimePs>()});
  }
  r.sms.clear();
  for (const auto& s : j.at("sms")) {
    r.sms.push_back({s.at(0).get<std::uint32_t>(), s.at(1).get<TimePs>(), s.at(2).get<std::uint64_t>()});
  }
  const auto& m = j.at("memory");
  r.memory = {m.at(0).get<std::uint64_t>(), m.at(1).get<std::uint64_t>(), m.at(2).get<TimePs>(),
              m.at(3).get<std::uint64_t>(), m.at(4).get<std::uint64_t>()};
}

double mean_turnaround_ps(const ProcessResult& process) {
  if (process.runs.empty()) return 0.0;
  double sum = 0;
  for (const auto& run : process.runs) sum += static_cast<double>(run.end_ps - run.start_ps);
  return sum / static_cast<double>(process.runs.size());
}

}  // namespace gpumux
