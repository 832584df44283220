#include "wave/waveform.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "policy/policy.h"
#include "wave/gtkwave_save.h"
#include "wave/vcd_writer.h"

namespace gpumux {

const char* to_string(SmActivity activity) {
  switch (activity) {
    case SmActivity::kIdle:
      return "idle";
    case SmActivity::kRunning:
      return "running";
    case SmActivity::kRestoring:
      return "restoring";
    case SmActivity::kSetup:
      return "setup";
    case SmActivity::kDraining:
      return "draining";
    case SmActivity::kPipelineDrain:
      return "pipeline_drain";
    case SmActivity::kTrap:
      return "trap";
    case SmActivity::kSaving:
      return "saving";
  }
  return "?";
}

bool wants_fst(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".fst") == 0;
}

WaveformFiles waveform_files(const std::string& path) {
  std::filesystem::path p(path);
  std::filesystem::path stem = p;
  if (p.extension() == ".vcd" || p.extension() == ".fst") stem.replace_extension();
  const std::string s = std::filesystem::absolute(stem).lexically_normal().string();
  return {path,
          s + ".gtkw",
          {s + ".sm_activity.txt", s + ".smst_state.txt", s + ".kernel.txt", s + ".tokens.txt",
           s + ".issue_units.txt", s + ".ksrt_state.txt", s + ".bank_state.txt"}};
}

namespace {

/// `n` with leading zeros, wide enough for `count` items (2 digits, 3 above 100), so names sort.
std::string zero_padded(std::uint32_t n, std::uint32_t count) {
  const int width = count > 100 ? 3 : 2;
  char text[16];
  std::snprintf(text, sizeof text, "%0*u", width, n);
  return text;
}

/// A token signal's value for an empty entry: 0x8000, the one 16-bit count a policy never holds (its
/// filter shows "-").
constexpr std::uint64_t kNoTokens = 0x8000;

std::uint64_t kernel_value(std::optional<KernelId> k) { return k ? index(*k) : kNoKernelValue; }

/// Builds every signal and remembers the GTKWave layout.
class Builder {
 public:
  Builder(const WaveformInput& in, const WaveformFiles& files) : in_(in), files_(files) {}

  void build() {
    host();
    frontend();
    engine();
    for (std::uint32_t s = 0; s < in_.num_sms; ++s) sm(s);
    memory();
    dram_channels();
  }

  VcdWriter& vcd() { return vcd_; }
  const std::vector<GtkwGroup>& groups() const { return groups_; }

 private:
  VcdWriter::Signal add(GtkwGroup& group, const std::string& path, unsigned width,
                        const std::string& filter = "", bool is_signed = false) {
    group.traces.push_back({path, width, filter, is_signed});
    return vcd_.add(path, width);
  }

  /// A count that steps at the given times: +1 at each `up`, -1 at each `down`.
  void level(VcdWriter::Signal s, std::vector<std::pair<TimePs, int>> steps) {
    std::sort(steps.begin(), steps.end());
    std::int64_t v = 0;
    for (const auto& [t, d] : steps) {
      v += d;
      vcd_.change(s, t, static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)));
    }
  }

  void host() {
    GtkwGroup g{"host", {}, true};
    for (std::size_t p = 0; p < in_.result.processes.size(); ++p) {
      const std::string scope = "gpu.host.process_" + zero_padded(static_cast<std::uint32_t>(p), 100) + ".";
      const auto running = add(g, scope + "running", 1);
      const auto runs = add(g, scope + "runs_completed", 32);
      std::uint64_t done = 0;
      for (const ProcessRun& r : in_.result.processes[p].runs) {
        vcd_.change(running, r.start_ps, 1);
        vcd_.change(running, r.end_ps, 0);
        vcd_.change(runs, r.end_ps, ++done);
      }
    }
    groups_.push_back(std::move(g));
  }

  void frontend() {
    GtkwGroup queues{"frontend (hardware queues)", {}, true};
    std::vector<std::vector<std::pair<TimePs, int>>> waiting(in_.command_queues);
    std::vector<std::vector<std::pair<TimePs, int>>> in_progress(in_.command_queues);
    std::vector<std::pair<TimePs, int>> issued;
    std::vector<std::pair<TimePs, int>> completed;
    for (const CommandRecord& c : in_.commands) {
      const std::uint32_t q = c.command.queue;
      if (q >= in_.command_queues) throw std::logic_error("waveform: a command on a queue the GPU lacks");
      waiting[q].emplace_back(c.command.queued_ps, +1);
      waiting[q].emplace_back(c.command.issued_ps, -1);
      in_progress[q].emplace_back(c.command.issued_ps, +1);
      in_progress[q].emplace_back(c.done_ps, -1);
      issued.emplace_back(c.command.issued_ps, +1);
      completed.emplace_back(c.done_ps, +1);
    }
    for (std::uint32_t q = 0; q < in_.command_queues; ++q) {
      if (waiting[q].empty()) continue;  // queues nobody used stay out of the view
      const std::string scope = "gpu.frontend.queue_" + zero_padded(q, in_.command_queues) + ".";
      level(add(queues, scope + "waiting", 16), waiting[q]);
      level(add(queues, scope + "in_progress", 16), in_progress[q]);
    }
    groups_.push_back(std::move(queues));
    GtkwGroup dispatcher{"dispatcher", {}, false};
    level(add(dispatcher, "gpu.dispatcher.issued", 32), issued);
    level(add(dispatcher, "gpu.dispatcher.completed", 32), completed);
    groups_.push_back(std::move(dispatcher));
  }

  void engine() {
    GtkwGroup g{"engine (active queue and KSRT, PTBQ)", {}, false};
    std::vector<std::pair<TimePs, int>> running;
    for (const KernelRecord& k : in_.result.kernels) {
      running.emplace_back(k.start_ps, +1);
      running.emplace_back(k.end_ps, -1);
    }
    level(add(g, "gpu.engine.running_kernels", 16), running);
    // The active queue: KSRT entries in use, and each entry's kernel (Tanasic 3.3).
    std::vector<std::pair<TimePs, int>> active;
    std::map<std::uint32_t, VcdWriter::Signal> entries;
    std::map<std::uint32_t, VcdWriter::Signal> states;
    for (const ActivityLog::KsrtChange& c : in_.log.ksrt_changes()) {
      if (c.state) continue;  // a state change, not an entry taken or freed
      active.emplace_back(c.time_ps, c.kernel ? +1 : -1);
      entries.emplace(c.slot, 0);  // the entries the run used, in slot order
    }
    level(add(g, "gpu.engine.active_queue", 16), active);
    for (auto& [slot, signal] : entries) {
      const std::string entry = "gpu.engine.ksrt_" + zero_padded(slot, in_.active_kernels) + ".";
      signal = add(g, entry + "kernel", 32, files_.filters.kernel);
      vcd_.change(signal, 0, kNoKernelValue);
      states[slot] = add(g, entry + "state", 2, files_.filters.ksrt_state);
    }
    for (const ActivityLog::KsrtChange& c : in_.log.ksrt_changes()) {
      if (c.state) {
        vcd_.change(states.at(c.slot), c.time_ps, static_cast<std::uint64_t>(*c.state));
        continue;
      }
      vcd_.change(entries.at(c.slot), c.time_ps, kernel_value(c.kernel));
      vcd_.change(states.at(c.slot), c.time_ps,
                  c.kernel ? static_cast<std::uint64_t>(KsrtState::kWaiting) : std::uint64_t{0});
    }
    // The policy's tokens per table entry (DSS, Tanasic 3.4), as a 16-bit two's complement: negative
    // counts are debts. Entries the policy never filled stay out of the view.
    std::map<std::uint32_t, VcdWriter::Signal> tokens;
    for (const ActivityLog::TokenChange& c : in_.log.token_changes()) tokens.emplace(c.slot, 0);
    for (auto& [slot, signal] : tokens) {
      signal = add(g, "gpu.engine.policy_tokens_" + zero_padded(slot, in_.active_kernels), 16,
                   files_.filters.tokens, true);
    }
    for (const ActivityLog::TokenChange& c : in_.log.token_changes()) {
      const std::uint64_t v =
          c.tokens ? static_cast<std::uint64_t>(static_cast<std::uint16_t>(*c.tokens)) : kNoTokens;
      vcd_.change(tokens.at(c.slot), c.time_ps, v);
    }
    // PTBQ: a thread block waits there from the save that stopped it to its next stretch.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const ActivityLog::Stretch*>> by_tb;
    for (const ActivityLog::Stretch& s : in_.log.stretches()) {
      by_tb[{index(s.what.kernel), s.what.tb}].push_back(&s);
    }
    std::vector<std::pair<TimePs, int>> ptbq;
    for (auto& [key, list] : by_tb) {
      std::sort(list.begin(), list.end(), [](const auto* a, const auto* b) { return a->run < b->run; });
      for (std::size_t i = 0; i + 1 < list.size(); ++i) {
        ptbq.emplace_back(list[i]->what.end_ps, +1);
        ptbq.emplace_back(list[i + 1]->what.start_ps, -1);
      }
    }
    level(add(g, "gpu.engine.ptbq_waiting", 32), ptbq);
    groups_.push_back(std::move(g));
  }

  void sm(std::uint32_t s) {
    const std::string name = "sm_" + zero_padded(s, in_.num_sms);
    const std::string scope = "gpu." + name + ".";
    GtkwGroup g{name, {}, s >= 4};  // the first SMs open, the rest collapsed
    const auto smst_state = add(g, scope + "smst_state", 2, files_.filters.smst_state);
    const auto smst_kernel = add(g, scope + "smst_kernel", 32, files_.filters.kernel);
    const auto smst_next = add(g, scope + "smst_next", 32, files_.filters.kernel);
    const auto activity = add(g, scope + "activity", 3, files_.filters.sm_activity);
    const auto kernel = add(g, scope + "kernel", 32, files_.filters.kernel);
    const auto resident = add(g, scope + "resident_tbs", 16);
    const auto started = add(g, scope + "tbs_started", 32);
    const auto ended = add(g, scope + "tbs_ended", 32);
    const auto preemptions = add(g, scope + "preemptions", 32);
    vcd_.change(smst_kernel, 0, kNoKernelValue);
    vcd_.change(smst_next, 0, kNoKernelValue);
    vcd_.change(kernel, 0, kNoKernelValue);
    for (const ActivityLog::SmstChange& c : in_.log.smst_changes()) {
      if (c.sm != s) continue;
      vcd_.change(smst_state, c.time_ps, static_cast<std::uint64_t>(c.state));
      vcd_.change(smst_kernel, c.time_ps, kernel_value(c.kernel));
      vcd_.change(smst_next, c.time_ps, kernel_value(c.next));
    }
    if (in_.warp_level) {
      const auto warps = add(g, scope + "active_warps", 16);
      const auto issued = add(g, scope + "issued", 16);
      const auto units = add(g, scope + "issue_units", 4, files_.filters.issue_units);
      for (const ActivityLog::WarpSample& w : in_.log.warp_samples()) {
        if (w.sm != s) continue;
        vcd_.change(warps, w.time_ps, w.active_warps);
        vcd_.change(issued, w.time_ps, w.issued);
        vcd_.change(units, w.time_ps, w.units);
      }
    }
    activity_signals(s, activity, kernel, resident, started, ended, preemptions);
    groups_.push_back(std::move(g));
  }

  /// The SM's activity, the kernel of its latest resident block and its thread-block counts, from a
  /// sweep over its stretches, restores, setups and preemptions in time order.
  void activity_signals(std::uint32_t s, VcdWriter::Signal activity, VcdWriter::Signal kernel,
                        VcdWriter::Signal resident, VcdWriter::Signal started, VcdWriter::Signal ended,
                        VcdWriter::Signal preemptions) {
    enum class Kind : std::uint8_t { kStart, kEnd, kRestored, kSetupStart, kSetupEnd, kPhase, kRequest };
    struct Event {
      TimePs t;
      Kind kind;
      std::size_t index;  ///< stretch (start, end, restored) or the phase's SmActivity
    };
    std::vector<Event> events;
    const auto& stretches = in_.log.stretches();
    for (std::size_t i = 0; i < stretches.size(); ++i) {
      const ActivityLog::Stretch& x = stretches[i];
      if (index(x.what.sm) != s) continue;
      events.push_back({x.what.start_ps, Kind::kStart, i});
      events.push_back({x.what.end_ps, Kind::kEnd, i});
      if (x.restored_ps > x.what.start_ps) events.push_back({x.restored_ps, Kind::kRestored, i});
    }
    for (const ActivityLog::Interval& u : in_.log.setups()) {
      if (u.sm != s) continue;
      events.push_back({u.start_ps, Kind::kSetupStart, 0});
      events.push_back({u.end_ps, Kind::kSetupEnd, 0});
    }
    for (const PreemptionTrace& p : in_.result.preemptions) {
      if (p.sm != s) continue;
      events.push_back({p.requested_ps, Kind::kRequest, 0});
      const auto phase = [&](TimePs t, SmActivity a) {
        events.push_back({t, Kind::kPhase, static_cast<std::size_t>(a)});
      };
      if (static_cast<PreemptionMechanism>(p.mechanism) == PreemptionMechanism::kContextSwitch) {
        phase(p.requested_ps, SmActivity::kPipelineDrain);
        if (p.save_start_ps > p.requested_ps + p.drain_ps) {
          phase(p.requested_ps + p.drain_ps, SmActivity::kTrap);
        }
        phase(p.save_start_ps, SmActivity::kSaving);
      } else {
        phase(p.requested_ps, SmActivity::kDraining);
      }
      phase(p.done_ps, SmActivity::kIdle);  // the preemption is over
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t < b.t; });

    std::map<std::pair<TimePs, std::size_t>, std::uint32_t> resident_by_start;  // -> kernel
    std::uint64_t restoring = 0;
    std::uint64_t setups = 0;
    std::uint64_t n_started = 0;
    std::uint64_t n_ended = 0;
    std::uint64_t n_preemptions = 0;
    SmActivity phase = SmActivity::kIdle;
    std::size_t i = 0;
    while (i < events.size()) {
      const TimePs t = events[i].t;
      for (; i < events.size() && events[i].t == t; ++i) {
        const Event& e = events[i];
        const bool of_stretch = e.kind == Kind::kStart || e.kind == Kind::kEnd || e.kind == Kind::kRestored;
        const ActivityLog::Stretch& x = stretches[of_stretch ? e.index : 0];
        switch (e.kind) {
          case Kind::kStart:
            resident_by_start[{x.what.start_ps, e.index}] = index(x.what.kernel);
            ++n_started;
            if (x.restored_ps > x.what.start_ps) ++restoring;
            break;
          case Kind::kEnd:
            resident_by_start.erase({x.what.start_ps, e.index});
            ++n_ended;
            if (x.restored_ps > x.what.start_ps && x.restored_ps >= x.what.end_ps) --restoring;
            break;
          case Kind::kRestored:
            if (x.restored_ps < x.what.end_ps) --restoring;
            break;
          case Kind::kSetupStart:
            ++setups;
            break;
          case Kind::kSetupEnd:
            --setups;
            break;
          case Kind::kPhase:
            phase = static_cast<SmActivity>(e.index);
            break;
          case Kind::kRequest:
            ++n_preemptions;
            break;
        }
      }
      const auto n_resident = static_cast<std::uint64_t>(resident_by_start.size());
      SmActivity a = phase;
      if (a == SmActivity::kIdle) {
        if (setups > 0) {
          a = SmActivity::kSetup;
        } else if (n_resident > 0) {
          a = restoring == n_resident ? SmActivity::kRestoring : SmActivity::kRunning;
        }
      }
      vcd_.change(activity, t, static_cast<std::uint64_t>(a));
      vcd_.change(kernel, t, resident_by_start.empty() ? kNoKernelValue : resident_by_start.rbegin()->second);
      vcd_.change(resident, t, n_resident);
      vcd_.change(started, t, n_started);
      vcd_.change(ended, t, n_ended);
      vcd_.change(preemptions, t, n_preemptions);
    }
  }

  void memory() {
    GtkwGroup g{"memory controller", {}, false};
    const auto bytes = add(g, "gpu.mem.bytes_served", 48);
    const auto in_flight = add(g, "gpu.mem.requests_in_flight", 16);
    std::vector<std::pair<TimePs, int>> flight;
    std::vector<std::pair<TimePs, std::uint64_t>> served;
    for (const MemoryTransfer& m : in_.log.memory_transfers()) {
      flight.emplace_back(m.arrival_ps, +1);
      flight.emplace_back(m.done_ps, -1);
      served.emplace_back(m.done_ps, m.bytes);
    }
    level(in_flight, flight);
    std::sort(served.begin(), served.end());
    std::uint64_t total = 0;
    for (const auto& [t, b] : served) vcd_.change(bytes, t, total += b);
    groups_.push_back(std::move(g));
  }

  /// The dram model (memory.model dram): per channel the requests queued (a burst from its arrival to its
  /// column command) and per bank its state: closed, open (ACT .. PRE) or refreshing (REF, tRFC long).
  void dram_channels() {
    const DramActivity& d = in_.log.dram();
    if (d.channels == 0) return;
    GtkwGroup g{"dram channels", {}, false};
    std::vector<std::vector<std::pair<TimePs, int>>> queue(d.channels);
    for (const auto& [t, c] : d.arrivals) queue.at(c).emplace_back(t, +1);
    std::vector<VcdWriter::Signal> banks;
    for (std::uint32_t c = 0; c < d.channels; ++c) {
      const std::string scope = "gpu.mem.dram.ch" + zero_padded(c, d.channels) + ".";
      const auto depth = add(g, scope + "queue", 16);
      for (std::uint32_t b = 0; b < d.banks; ++b) {
        banks.push_back(add(g, scope + "bank" + zero_padded(b, d.banks), 2, files_.filters.bank_state));
      }
      // Column commands take their request off the queue.
      for (const dram::DramCommand& cmd : d.commands) {
        if (cmd.channel == c && cmd.request_id != dram::kNoRequest &&
            (cmd.kind == dram::DramCommandKind::kRead || cmd.kind == dram::DramCommandKind::kWrite)) {
          queue[c].emplace_back(cmd.time_ps, -1);
        }
      }
      level(depth, queue[c]);
    }
    // Refreshes first: an ACT at the very edge a refresh ends (REF + tRFC) is given later and wins.
    for (const dram::DramCommand& cmd : d.commands) {
      if (cmd.kind != dram::DramCommandKind::kRefresh) continue;
      for (std::uint32_t b = 0; b < d.banks; ++b) {
        vcd_.change(banks.at(cmd.channel * d.banks + b), cmd.time_ps, 2);
        vcd_.change(banks.at(cmd.channel * d.banks + b), cmd.time_ps + d.refresh_ps, 0);
      }
    }
    for (const dram::DramCommand& cmd : d.commands) {
      if (cmd.kind == dram::DramCommandKind::kActivate || cmd.kind == dram::DramCommandKind::kPrecharge) {
        vcd_.change(banks.at(cmd.channel * d.banks + cmd.bank), cmd.time_ps,
                    cmd.kind == dram::DramCommandKind::kActivate ? 1 : 0);
      }
    }
    groups_.push_back(std::move(g));
  }

  const WaveformInput& in_;
  const WaveformFiles& files_;
  VcdWriter vcd_;
  std::vector<GtkwGroup> groups_;
};

void write_filters(const WaveformFiles& files, const WaveformInput& in) {
  std::vector<std::pair<std::uint64_t, std::string>> activity;
  for (std::uint8_t a = 0; a <= static_cast<std::uint8_t>(SmActivity::kSaving); ++a) {
    activity.emplace_back(a, to_string(static_cast<SmActivity>(a)));
  }
  write_translate_filter(files.filters.sm_activity, activity);
  write_translate_filter(files.filters.smst_state,
                         {{static_cast<std::uint64_t>(SmState::kIdle), "idle"},
                          {static_cast<std::uint64_t>(SmState::kRunning), "running"},
                          {static_cast<std::uint64_t>(SmState::kReserved), "reserved"}});
  std::vector<std::pair<std::uint64_t, std::string>> kernels{{kNoKernelValue, "-"}};
  for (std::size_t k = 0; k < in.result.kernels.size(); ++k) {
    const KernelRecord& r = in.result.kernels[k];
    kernels.emplace_back(
        k, r.name + "#" + std::to_string(k) + "(" + in.result.processes.at(r.process).name + ")");
  }
  write_translate_filter(files.filters.kernel, kernels);
  // Tokens are shown as signed decimals (Tanasic 3.4: a count may go negative, a debt); the filter
  // only names the empty entry.
  write_translate_filter_text(files.filters.tokens, {{"-32768", "-"}});
  // The units a warp-level SM issued to in its latest active cycle (bit i: UnitKind i).
  std::vector<std::pair<std::uint64_t, std::string>> units{{0, "-"}};
  const std::array<const char*, 4> names = {"alu", "sfu", "ldst", "bar"};
  for (std::uint64_t mask = 1; mask < 16; ++mask) {
    std::string text;
    for (unsigned b = 0; b < names.size(); ++b) {
      if (((mask >> b) & 1U) != 0) text += (text.empty() ? "" : "+") + std::string(names[b]);
    }
    units.emplace_back(mask, text);
  }
  write_translate_filter(files.filters.issue_units, units);
  write_translate_filter(files.filters.ksrt_state,
                         {{0, "-"},
                          {static_cast<std::uint64_t>(KsrtState::kWaiting), "waiting"},
                          {static_cast<std::uint64_t>(KsrtState::kRunning), "running"},
                          {static_cast<std::uint64_t>(KsrtState::kPreempted), "preempted"}});
  write_translate_filter(files.filters.bank_state, {{0, "closed"}, {1, "open"}, {2, "refresh"}});
}

}  // namespace

void write_waveform(const std::string& path, const WaveformInput& input, const std::string& version) {
  const WaveformFiles files = waveform_files(path);
  Builder builder(input, files);
  builder.build();
  const bool fst = wants_fst(path);
  const std::string vcd_path = fst ? path + ".tmp.vcd" : path;
  {
    std::ofstream out(vcd_path);
    if (!out) throw std::runtime_error("cannot write waveform file '" + vcd_path + "'");
    builder.vcd().write(out, version);
    if (!out) throw std::runtime_error("cannot write waveform file '" + vcd_path + "'");
  }
  if (fst) {
    if (path.find('\'') != std::string::npos) {
      throw std::runtime_error("an FST file name may not contain a quote: '" + path + "'");
    }
    // FST by the distribution's converter (package gtkwave), so the format is GTKWave's own.
    const std::string command = "vcd2fst '" + vcd_path + "' '" + path + "' > /dev/null 2>&1";
    const int status = std::system(command.c_str());  // NOLINT(cert-env33-c): a fixed tool, quoted paths
    std::filesystem::remove(vcd_path);
    if (status != 0) {
      throw std::runtime_error("vcd2fst could not convert the waveform to '" + path + "' (exit status " +
                               std::to_string(status) + ")");
    }
  }
  write_filters(files, input);
  write_gtkw_save(files.save, std::filesystem::absolute(path).lexically_normal().string(), builder.groups());
}

}  // namespace gpumux
