#include "metrics/timeline.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gpumux {

namespace {

double us(TimePs ps) { return static_cast<double>(ps) / 1e6; }  // trace timestamps are in microseconds

// Track ids of the SM process: SM s has its control track (preemptions, setups) at s * kLanesPerSm and
// its thread-block lanes after it.
constexpr std::uint64_t kLanesPerSm = 100000;

}  // namespace

void write_timeline(const std::string& path, const ActivityLog& log, const RunResult& result,
                    const std::vector<CommandRecord>& commands, std::uint32_t num_sms) {
  using nlohmann::json;
  json events = json::array();
  constexpr int kSmPid = 1;
  constexpr int kQueuePid = 2;
  constexpr int kProcessPid = 3;
  auto name_process = [&](int pid, const std::string& name) {
    events.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", name}}}});
  };
  auto name_track = [&](int pid, std::uint64_t tid, const std::string& name) {
    events.push_back(
        {{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", name}}}});
    events.push_back({{"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"name", "thread_sort_index"},
                      {"args", {{"sort_index", tid}}}});
  };
  name_process(kSmPid, "SMs");
  name_process(kQueuePid, "Command queues");
  name_process(kProcessPid, "Kernel launches by process");
  for (std::uint32_t s = 0; s < num_sms; ++s) name_track(kSmPid, s * kLanesPerSm, "SM " + std::to_string(s));
  for (std::size_t p = 0; p < result.processes.size(); ++p) {
    name_track(kProcessPid, p, result.processes[p].name);
  }

  // Thread-block stretches on lanes: each stretch takes the lowest lane of its SM free at its start,
  // so the slices of a lane never overlap (Perfetto nests overlapping slices of one track).
  std::vector<std::size_t> order(log.stretches().size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const TbStretch& x = log.stretches()[a].what;
    const TbStretch& y = log.stretches()[b].what;
    if (x.sm != y.sm) return index(x.sm) < index(y.sm);
    return x.start_ps != y.start_ps ? x.start_ps < y.start_ps : a < b;
  });
  std::vector<std::vector<TimePs>> lane_free(num_sms);  // per SM, per lane: when it is free again
  for (const std::size_t i : order) {
    const ActivityLog::Stretch& s = log.stretches()[i];
    const TbStretch& w = s.what;
    const std::uint32_t sm = index(w.sm);
    if (sm >= num_sms || w.end_ps < w.start_ps) throw std::logic_error("timeline: a stretch outside the run");
    auto& lanes = lane_free[sm];
    auto lane = std::find_if(lanes.begin(), lanes.end(), [&](TimePs free) { return free <= w.start_ps; });
    if (lane == lanes.end()) {
      lanes.push_back(0);
      lane = lanes.end() - 1;
      name_track(kSmPid, sm * kLanesPerSm + lanes.size(),
                 "SM " + std::to_string(sm) + " lane " + std::to_string(lanes.size()));
    }
    *lane = w.end_ps;
    const std::uint64_t tid = sm * kLanesPerSm + 1 + static_cast<std::uint64_t>(lane - lanes.begin());
    const KernelRecord& k = result.kernels.at(index(w.kernel));
    const json args = {{"tb", w.tb},
                       {"run", s.run},
                       {"launch", index(w.kernel)},
                       {"process", result.processes.at(k.process).name},
                       {"ended", w.completed ? "completed" : "preempted"}};
    if (s.restored_ps > w.start_ps) {
      events.push_back({{"ph", "X"},
                        {"pid", kSmPid},
                        {"tid", tid},
                        {"name", "restore " + k.name},
                        {"cat", "restore"},
                        {"ts", us(w.start_ps)},
                        {"dur", us(s.restored_ps - w.start_ps)},
                        {"args", args}});
    }
    if (w.end_ps > s.restored_ps || s.restored_ps == w.start_ps) {
      events.push_back({{"ph", "X"},
                        {"pid", kSmPid},
                        {"tid", tid},
                        {"name", k.name},
                        {"cat", "thread block"},
                        {"ts", us(s.restored_ps)},
                        {"dur", us(w.end_ps - s.restored_ps)},
                        {"args", args}});
    }
  }

  // Control tracks: preemptions (request, drain, trap routine, context save) and setups.
  for (std::size_t i = 0; i < result.preemptions.size(); ++i) {
    const PreemptionTrace& p = result.preemptions[i];
    const std::uint64_t tid = p.sm * kLanesPerSm;
    const std::string victim = result.kernels.at(p.kernel).name;
    const json args = {{"preemption", i}, {"kernel", victim}, {"launch", p.kernel}, {"bytes", p.bytes}};
    events.push_back({{"ph", "i"},
                      {"s", "t"},
                      {"pid", kSmPid},
                      {"tid", tid},
                      {"name", "preemption request"},
                      {"ts", us(p.requested_ps)},
                      {"args", args}});
    if (p.done_ps == 0) continue;  // still in progress at the end (cannot happen in a finished run)
    auto slice = [&](const char* name, TimePs from, TimePs to) {
      if (to <= from) return;
      events.push_back({{"ph", "X"},
                        {"pid", kSmPid},
                        {"tid", tid},
                        {"name", name},
                        {"cat", "preemption"},
                        {"ts", us(from)},
                        {"dur", us(to - from)},
                        {"args", args}});
    };
    if (p.save_start_ps > 0) {
      slice("pipeline drain", p.requested_ps, p.requested_ps + p.drain_ps);
      slice("trap routine", p.requested_ps + p.drain_ps, p.save_start_ps);
      slice("context save", p.save_start_ps, p.done_ps);
    } else {
      slice("draining", p.requested_ps, p.done_ps);
    }
  }
  for (const ActivityLog::Interval& s : log.setups()) {
    events.push_back({{"ph", "X"},
                      {"pid", kSmPid},
                      {"tid", s.sm * kLanesPerSm},
                      {"name", "setup"},
                      {"cat", "setup"},
                      {"ts", us(s.start_ps)},
                      {"dur", us(s.end_ps - s.start_ps)}});
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
