#include "metrics/timeline.h"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gpumux {

void TimelineRecorder::on_tb(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps, TimePs end_ps) {
  slices_.push_back({index(sm), index(kernel), tb, start_ps, end_ps});
}

namespace {
double us(TimePs ps) { return static_cast<double>(ps) / 1e6; }  // trace timestamps are in microseconds
}  // namespace

void TimelineRecorder::write(const std::string& path, const RunResult& result,
                             const std::vector<CommandRecord>& commands, std::uint32_t num_sms) const {
  using nlohmann::json;
  json events = json::array();
  constexpr int kSmPid = 1;
  constexpr int kQueuePid = 2;
  constexpr int kProcessPid = 3;
  auto name_process = [&](int pid, const std::string& name) {
    events.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", name}}}});
  };
  name_process(kSmPid, "SMs");
  name_process(kQueuePid, "Command queues");
  name_process(kProcessPid, "Kernel launches by process");
  for (std::uint32_t s = 0; s < num_sms; ++s) {
    events.push_back({{"ph", "M"},
                      {"pid", kSmPid},
                      {"tid", s},
                      {"name", "thread_name"},
                      {"args", {{"name", "SM " + std::to_string(s)}}}});
  }
  for (std::size_t p = 0; p < result.processes.size(); ++p) {
    events.push_back({{"ph", "M"},
                      {"pid", kProcessPid},
                      {"tid", p},
                      {"name", "thread_name"},
                      {"args", {{"name", result.processes[p].name}}}});
  }
  for (const Slice& s : slices_) {
    const KernelRecord& k = result.kernels[s.kernel];
    events.push_back(
        {{"ph", "X"},
         {"pid", kSmPid},
         {"tid", s.sm},
         {"name", k.name},
         {"ts", us(s.start_ps)},
         {"dur", us(s.end_ps - s.start_ps)},
         {"args", {{"tb", s.tb}, {"launch", s.kernel}, {"process", result.processes[k.process].name}}}});
  }
  for (std::size_t i = 0; i < result.kernels.size(); ++i) {
    const KernelRecord& k = result.kernels[i];
    events.push_back(
        {{"ph", "X"},
         {"pid", kProcessPid},
         {"tid", k.process},
         {"name", k.name},
         {"ts", us(k.launch_ps)},
         {"dur", us(k.end_ps - k.launch_ps)},
         {"args", {{"launch", i}, {"start_us", us(k.start_ps)}, {"thread_blocks", k.thread_blocks}}}});
  }
  for (const CommandRecord& c : commands) {
    std::string name = to_string(c.command.kind);
    if (c.command.kernel != nullptr) name += " " + c.command.kernel->name;
    if (c.command.bytes > 0) name += " " + std::to_string(c.command.bytes) + " B";
    events.push_back({{"ph", "X"},
                      {"pid", kQueuePid},
                      {"tid", c.command.queue},
                      {"name", name},
                      {"ts", us(c.command.queued_ps)},
                      {"dur", us(c.done_ps - c.command.queued_ps)},
                      {"args",
                       {{"process", result.processes[index(c.command.process)].name},
                        {"issued_us", us(c.command.issued_ps)}}}});
  }
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write timeline file '" + path + "'");
  out << json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump() << '\n';
}

}  // namespace gpumux
