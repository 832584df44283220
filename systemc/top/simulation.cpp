#include "top/simulation.h"

#include <sys/wait.h>

#include <unistd.h>
#include <csignal>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>

#include <systemc>

#include "core/error.h"
#include "core/processes.h"
#include "core/progress_line.h"
#include "metrics/timeline.h"
#include "top/gpu_system.h"

namespace gpumux {
namespace {

std::string strip_vcd_suffix(const std::string& path) {
  const std::string suffix = ".vcd";
  if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return path.substr(0, path.size() - suffix.size());
  }
  return path;
}

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

  TimelineRecorder timeline;
  if (!spec.timeline_path.empty()) {
    system->engine().driver().set_trace_sink(&timeline);
  }
  sc_core::sc_trace_file* vcd = nullptr;
  if (!spec.vcd_path.empty()) {
    vcd = sc_core::sc_create_vcd_trace_file(strip_vcd_suffix(spec.vcd_path).c_str());
    // Model times are picoseconds (core clocks such as 1/706 MHz are not whole nanoseconds); a coarser
    // unit makes SystemC warn (W713) on every value change that falls between two units.
    vcd->set_time_unit(1, sc_core::SC_PS);
    system->attach_trace(vcd);
  }

  sc_core::sc_start();
  if (process_failure()) std::rethrow_exception(process_failure());

  if (vcd != nullptr) sc_core::sc_close_vcd_trace_file(vcd);
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
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (!spec.timeline_path.empty()) {
    timeline.write(spec.timeline_path, result, system->dispatcher().records(), spec.gpu.num_sms);
  }
  return result;
}

namespace {

/// Child side: run `work`, write {"ok":true,"result":...} or {"ok":false,"error":...} to `path`,
/// never return.
[[noreturn]] void run_child(const std::function<nlohmann::json()>& work, const std::string& path) {
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
  {
    std::ofstream file(path);
    file << out.dump();
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // skip SystemC's static teardown: this process simulated once and is done
}

struct Child {
  pid_t pid = -1;
  std::string path;
  std::size_t slot = 0;
};

Child start_child(const std::function<nlohmann::json()>& work, std::size_t slot) {
  char tmpl[] = "/tmp/gpumux-sim-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) throw SimulationFailed("cannot create a temporary file for a simulation result");
  close(fd);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw SimulationFailed("fork failed");
  if (pid == 0) run_child(work, tmpl);
  return Child{pid, tmpl, slot};
}

nlohmann::json finish_child(const Child& child, int status) {
  std::ifstream file(child.path);
  std::stringstream text;
  text << file.rdbuf();
  std::remove(child.path.c_str());
  nlohmann::json out;
  try {
    out = nlohmann::json::parse(text.str());
  } catch (const std::exception&) {
    std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                          : "exit code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
      why = "no progress: the wall-clock limit ran out while the workload had not finished (livelock?)";
    }
    throw SimulationFailed("simulation process died without a result (" + why + ")");
  }
  if (!out.value("ok", false)) {
    const std::string error = out.value("error", std::string("unknown failure"));
    if (out.value("input_error", false)) throw InputError(error);
    throw SimulationFailed(error);
  }
  return out.at("result");
}

std::vector<nlohmann::json> run_all_in_children(const std::vector<std::function<nlohmann::json()>>& work,
                                                unsigned jobs) {
  if (jobs == 0) jobs = 1;
  std::vector<nlohmann::json> results(work.size());
  std::vector<Child> running;
  std::size_t next = 0;
  std::exception_ptr failure;  // the first failure; the other children are still reaped
  while (next < work.size() || !running.empty()) {
    while (!failure && next < work.size() && running.size() < jobs) {
      running.push_back(start_child(work[next], next));
      ++next;
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) throw SimulationFailed("waitpid failed");
    for (auto it = running.begin(); it != running.end(); ++it) {
      if (it->pid != pid) continue;
      try {
        results[it->slot] = finish_child(*it, status);
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

nlohmann::json run_in_child(const std::function<nlohmann::json()>& work) {
  return run_all_in_children({work}, 1).front();
}

RunResult simulate(const SimulationSpec& spec) { return simulate_all({spec}, 1).front(); }

std::vector<RunResult> simulate_all(const std::vector<SimulationSpec>& specs, unsigned jobs) {
  std::vector<std::function<nlohmann::json()>> work;
  work.reserve(specs.size());
  for (const SimulationSpec& spec : specs) {
    work.emplace_back([&spec] {
      if (spec.wall_timeout_s > 0) alarm(spec.wall_timeout_s);  // SIGALRM ends a livelocked child
      return nlohmann::json(simulate_in_this_process(spec));
    });
  }
  std::vector<RunResult> results;
  for (const auto& j : run_all_in_children(work, jobs)) results.push_back(j.get<RunResult>());
  return results;
}

}  // namespace gpumux
