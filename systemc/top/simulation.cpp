#include "top/simulation.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#include <unistd.h>
#include <cerrno>
#include <csignal>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>

#include <systemc>

#include "core/error.h"
#include "core/processes.h"
#include "core/progress_line.h"
#include "metrics/timeline.h"
#include "top/gpu_system.h"
#include "wave/waveform.h"

namespace gpumux {
namespace {

/// Child side, for the SIGALRM handler: where the result goes and where the simulation is. Written
/// by the child's own thread, read by the handler that interrupts it (hence volatile).
volatile int g_result_fd = -1;
const sc_core::sc_simcontext* volatile g_context = nullptr;
const SmDriver* volatile g_driver = nullptr;

/// Shows the running simulation to the SIGALRM handler while it lives (declare it after the system).
class WatchdogView {
 public:
  explicit WatchdogView(const SmDriver& driver) {
    g_context = sc_core::sc_get_curr_simcontext();
    g_driver = &driver;
  }
  ~WatchdogView() { g_driver = nullptr; }
  WatchdogView(const WatchdogView&) = delete;
  WatchdogView& operator=(const WatchdogView&) = delete;
};

/// Simulated time and thread blocks done, twice a second after the first two seconds of a run.
class RunProgress {
 public:
  explicit RunProgress(bool enabled) : line_(enabled) {}
  void tick(const SmDriver& driver) {
    if (!line_.enabled()) return;
    const double elapsed = line_.elapsed_s();
    if (elapsed < 2.0 || elapsed - last_ < 0.5) return;
    last_ = elapsed;
    char text[160];
    std::snprintf(text, sizeof text, "%.0fs wall, %.3f ms simulated, %llu thread blocks done", elapsed,
                  ns_from_ps(driver.now()) / 1e6, static_cast<unsigned long long>(driver.tbs_completed()));
    line_.show(text);
  }

 private:
  ProgressLine line_;
  double last_ = 0;
};

}  // namespace

RunResult simulate_in_this_process(const SimulationSpec& spec) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  const auto wall_start = std::chrono::steady_clock::now();
  RunProgress progress(spec.progress);
  GpuSystem* system_ptr = nullptr;
  auto system =
      std::make_unique<GpuSystem>("gpu", spec, [&] { progress.tick(system_ptr->engine().driver()); });
  system_ptr = system.get();
  const WatchdogView watchdog_view(system->engine().driver());  // for the wall-clock limit's report

  // The timeline and the waveform are written from what the run recorded, once it has ended.
  ActivityLog activity;
  if (!spec.timeline_path.empty() || !spec.vcd_path.empty()) system->attach_activity_log(activity);
  if (!spec.vcd_path.empty()) system->attach_dram_log(activity.dram());

  sc_core::sc_start();
  if (process_failure()) std::rethrow_exception(process_failure());

  if (!system->host().all_finished()) {
    std::ostringstream msg;
    msg << "run made no progress: no event is pending at " << ns_from_ps(sc_core::sc_time_stamp().value())
        << " ns but the workload has not finished";
    for (const auto& line : system->host().unfinished()) msg << "\n  " << line;
    const auto& driver = system->engine().driver();
    for (std::uint32_t s = 0; s < driver.num_sms(); ++s) {
      const SmStatus& sm = driver.sm(SmId{s});
      if (sm.running_tbs > 0 || sm.state != SmState::kIdle) {
        msg << "\n  SM " << s << " is " << to_string(sm.state) << " with " << sm.running_tbs
            << " thread blocks";
      }
    }
    throw InvariantViolation(msg.str());
  }
  system->engine().driver().check_final_invariants();

  RunResult result = system->collect(spec);
  system->finish_phase_trace(result.end_ps);
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (!spec.timeline_path.empty()) {
    write_timeline(spec.timeline_path, activity, result, system->dispatcher().records(), spec.gpu.num_sms);
  }
  if (!spec.vcd_path.empty()) {
    write_waveform(
        spec.vcd_path,
        {activity, result, system->dispatcher().records(), spec.gpu.num_sms, spec.gpu.frontend.command_queues,
         spec.gpu.active_kernels, spec.gpu.sm_model == SmModel::kWarp},
        std::string("gpumux ") + GPUMUX_VERSION);
  }
  return result;
}

namespace {

// ---------------------------------------------------------------------------------------------------
// Child processes. Each child returns its result through a temporary file that is unlinked right
// after mkstemp (the parent keeps the descriptor and the child inherits it), dies with its parent
// (PR_SET_PDEATHSIG) and stops itself at its wall-clock limit (SIGALRM) with a record of how far it
// got.

/// Writes `value` in decimal ending just before `end`; returns the first character.
char* format_decimal(char* end, std::uint64_t value) {
  do {
    *--end = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  return end;
}

/// SIGALRM in a child: the wall-clock limit ran out. Writes {"ok":false,"timeout":true,...} with
/// the simulated time and thread blocks reached, then exits. Async-signal-safe: no allocation, no
/// locks, only pwrite and _exit (the simulation is interrupted on this thread, so what it reads is
/// not being written).
void on_wall_timeout(int /*signal*/) {
  char text[192];
  std::size_t n = 0;
  auto append = [&](const char* from, const char* to) {
    while (from != to && n < sizeof text) text[n++] = *from++;
  };
  auto append_text = [&](const char* t) {
    const char* end = t;
    while (*end != '\0') ++end;
    append(t, end);
  };
  char digits[24];
  char* const digits_end = digits + sizeof digits;
  append_text("{\"ok\":false,\"timeout\":true");
  if (g_context != nullptr) {
    append_text(",\"simulated_ps\":");
    append(format_decimal(digits_end, g_context->time_stamp().value()), digits_end);
  }
  if (g_driver != nullptr) {
    append_text(",\"tbs_completed\":");
    append(format_decimal(digits_end, g_driver->tbs_completed()), digits_end);
  }
  append_text("}");
  if (g_result_fd >= 0) (void)!pwrite(g_result_fd, text, n, 0);
  _exit(kExitInternal);
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent reports a result it cannot parse
    done += static_cast<std::size_t>(n);
  }
}

/// Child side: run `work`, write {"ok":true,"result":...} or {"ok":false,"error":...} to `fd`,
/// never return.
[[noreturn]] void run_child(const std::function<nlohmann::json()>& work, int fd, unsigned wall_timeout_s) {
  g_result_fd = fd;
  if (wall_timeout_s > 0) {
    struct sigaction action {};
    action.sa_handler = on_wall_timeout;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, nullptr);
    alarm(wall_timeout_s);
  }
  nlohmann::json out;
  int code = kExitOk;
  try {
    out = {{"ok", true}, {"result", work()}};
  } catch (const InputError& e) {
    // Bad input only detectable once the model is built (e.g. a policy option too small for the
    // GPU): still exit code 2 in the parent.
    out = {{"ok", false}, {"error", e.what()}, {"input_error", true}};
    code = kExitBadInput;
  } catch (const sc_core::sc_report& e) {
    out = {{"ok", false}, {"error", e.what()}};
    code = kExitInternal;
  } catch (const std::exception& e) {
    out = {{"ok", false}, {"error", e.what()}};
    code = kExitInternal;
  }
  const std::string text = out.dump();
  alarm(0);  // done: the handler must not overwrite the result
  write_all(fd, text);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // skip SystemC's static teardown: this process simulated once and is done
}

struct ChildWork {
  std::function<nlohmann::json()> work;
  std::string label;  ///< names the simulation in messages; empty: none
  unsigned wall_timeout_s = 0;
};

struct Child {
  pid_t pid = -1;
  int fd = -1;  ///< the unlinked result file
  std::size_t slot = 0;
};

std::string temp_dir() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

Child start_child(const ChildWork& work, std::size_t slot) {
  std::string path = temp_dir() + "/gpumux-sim-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    throw SimulationFailed("cannot create a temporary file for a simulation result in '" + temp_dir() +
                           "' ($TMPDIR): " + std::strerror(errno));
  }
  unlink(path.c_str());  // nothing is left behind, however this process or the child ends
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(fd);
    throw SimulationFailed(std::string("fork failed: ") + std::strerror(error));
  }
  if (pid == 0) {
    // Die with the parent; if it is already gone (it died before prctl), the signal never comes.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(kExitInternal);
    run_child(work.work, fd, work.wall_timeout_s);
  }
  return Child{pid, fd, slot};
}

std::string read_all(int fd) {
  std::string text;
  char buffer[65536];
  off_t offset = 0;
  while (true) {
    const ssize_t n = pread(fd, buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    offset += n;
  }
  return text;
}

std::string with_label(const ChildWork& work, const std::string& message) {
  return work.label.empty() ? message : work.label + ": " + message;
}

nlohmann::json finish_child(const Child& child, const ChildWork& work, int status) {
  const std::string text = read_all(child.fd);
  close(child.fd);
  nlohmann::json out;
  try {
    out = nlohmann::json::parse(text);
  } catch (const std::exception&) {
    const std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exit code " + std::to_string(WEXITSTATUS(status));
    throw SimulationFailed(with_label(work, "simulation process died without a result (" + why + ")"));
  }
  if (out.value("timeout", false)) {
    std::ostringstream msg;
    msg << "no result within the wall-clock limit of " << work.wall_timeout_s << " s (--timeout "
        << work.wall_timeout_s << ")";
    if (out.contains("simulated_ps")) {
      msg << "; stopped at " << ns_from_ps(out["simulated_ps"].get<TimePs>()) / 1e6 << " ms simulated";
    }
    if (out.contains("tbs_completed")) {
      msg << ", " << out["tbs_completed"].get<std::uint64_t>() << " thread blocks done";
    }
    msg << ". A livelock, or a run longer than the limit: raise it with --timeout S (0: no limit)";
    throw SimulationFailed(with_label(work, msg.str()));
  }
  if (!out.value("ok", false)) {
    const std::string error = out.value("error", std::string("unknown failure"));
    if (out.value("input_error", false)) throw InputError(error);
    throw SimulationFailed(with_label(work, error));
  }
  return out.at("result");
}

std::vector<nlohmann::json> run_all_in_children(const std::vector<ChildWork>& work, unsigned jobs) {
  if (jobs == 0) jobs = 1;
  std::vector<nlohmann::json> results(work.size());
  std::vector<Child> running;
  std::size_t next = 0;
  std::exception_ptr failure;  // the first failure; the other children are stopped and reaped
  while (next < work.size() || !running.empty()) {
    while (!failure && next < work.size() && running.size() < jobs) {
      try {
        running.push_back(start_child(work[next], next));
      } catch (const std::exception&) {
        failure = std::current_exception();
        break;
      }
      ++next;
    }
    if (failure) {
      for (const Child& c : running) kill(c.pid, SIGKILL);
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw SimulationFailed(std::string("waitpid failed: ") + std::strerror(errno));
    }
    for (auto it = running.begin(); it != running.end(); ++it) {
      if (it->pid != pid) continue;
      try {
        results[it->slot] = finish_child(*it, work[it->slot], status);
      } catch (const std::exception&) {
        if (!failure) failure = std::current_exception();
      }
      running.erase(it);
      break;
    }
  }
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace

std::string describe_simulation(const SimulationSpec& spec) {
  std::string text = "workload '" + spec.workload.name + "', policy " + spec.policy;
  if (!spec.policy_options.empty()) {
    std::string options;
    for (const auto& [key, value] : spec.policy_options) {
      options += (options.empty() ? "" : ", ") + key + "=" + value;
    }
    text += " (" + options + ")";
  }
  if (spec.preemption == PreemptionMechanism::kDrain) text += ", preemption drain";
  if (spec.copy_policy != CopyPolicy::kFcfs) {
    text += std::string(", copy policy ") + to_string(spec.copy_policy);
  }
  return text + ", seed " + std::to_string(spec.seed);
}

nlohmann::json run_in_child(const std::function<nlohmann::json()>& work, unsigned wall_timeout_s) {
  return run_all_in_children({ChildWork{work, "", wall_timeout_s}}, 1).front();
}

RunResult simulate(const SimulationSpec& spec) { return simulate_all({spec}, 1).front(); }

std::vector<RunResult> simulate_all(const std::vector<SimulationSpec>& specs, unsigned jobs) {
  const auto whole = [](std::size_t /*index*/, const RunResult& result) { return nlohmann::json(result); };
  std::vector<RunResult> results;
  for (const auto& j : simulate_all_reduced(specs, jobs, whole)) results.push_back(j.get<RunResult>());
  return results;
}

std::vector<nlohmann::json> simulate_all_reduced(
    const std::vector<SimulationSpec>& specs, unsigned jobs,
    const std::function<nlohmann::json(std::size_t, const RunResult&)>& reduce) {
  std::vector<ChildWork> work;
  work.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const SimulationSpec& spec = specs[i];
    work.push_back(ChildWork{[&spec, &reduce, i] { return reduce(i, simulate_in_this_process(spec)); },
                             describe_simulation(spec), spec.wall_timeout_s});
  }
  return run_all_in_children(work, jobs);
}

}  // namespace gpumux
