#pragma once
// Running simulations. SystemC elaborates once per process, so every simulation runs in a forked
// child process of its own: the parent (command line, experiments, tests) never touches SystemC,
// and any number of simulations - isolated baselines, experiment grids, test cases - run in one
// program, several at a time with `jobs`.

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu_config.h"
#include "core/workload.h"
#include "frontend/copy_policy.h"
#include "metrics/run_result.h"
#include "policy/registry.h"

namespace gpumux {

/// Default wall-clock limit of every child simulation, in seconds (one hour): `gpumux run` and its
/// isolated baselines, experiment runs and experiment baselines. `--timeout S` changes it, 0: none.
inline constexpr unsigned kDefaultWallTimeoutS = 3600;
/// Largest accepted `--timeout`, in seconds (one week).
inline constexpr unsigned kMaxWallTimeoutS = 7U * 24U * 3600U;

struct SimulationSpec {
  GpuConfig gpu;
  Workload workload;
  std::string policy = "fcfs";
  PolicyOptions policy_options;
  PreemptionMechanism preemption = PreemptionMechanism::kContextSwitch;
  /// How the DMA engines order the copies waiting in their DMA queues (frontend/copy_policy.h).
  CopyPolicy copy_policy = CopyPolicy::kFcfs;
  std::uint64_t seed = 1;
  std::string vcd_path;       ///< empty: no VCD
  std::string timeline_path;  ///< empty: no timeline
  /// Warp level: warps per phase over time (sm/warp/phase_trace.h); empty: no trace.
  std::string phase_trace_path;
  std::uint64_t phase_trace_interval = 100;  ///< core cycles between two samples
  bool progress = false;                     ///< progress line on stderr
  /// Temporal decoupling: the TB-level SMs' completion calendar (sm/tb/tb_calendar.h) and the context
  /// save and restore thread (sm/context_traffic.h, `simple` memory) run ahead of SystemC's clock when
  /// nothing else is pending before their next instant. Results are the same either way; off is for the
  /// tests that check so, and for comparing speed.
  bool run_ahead = true;
  /// Wall-clock limit in seconds (0: none). A simulation that exceeds it (a livelock: events keep
  /// coming but the workload never finishes) is stopped and reported as failed, naming the workload,
  /// policy, seed, the limit and the simulated time it reached.
  unsigned wall_timeout_s = kDefaultWallTimeoutS;
};

/// Thrown in the parent when a simulation child failed (invariant violation, stuck run, crash).
class SimulationFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs one simulation in this process. Call at most once per process (SystemC elaborates once).
[[nodiscard]] RunResult simulate_in_this_process(const SimulationSpec& spec);

/// As simulate_all(), but each child hands its RunResult to `reduce(index in specs, result)` and returns only
/// what that makes: for callers that need a few figures of many large results (an experiment grid: a Tanasic
/// mix's RunResult lists tens of thousands of commands), so the parent neither parses nor holds them, and
/// stays small to fork from.
[[nodiscard]] std::vector<nlohmann::json> simulate_all_reduced(
    const std::vector<SimulationSpec>& specs, unsigned jobs,
    const std::function<nlohmann::json(std::size_t, const RunResult&)>& reduce);

/// Runs one simulation in a forked child and returns its result. Throws SimulationFailed.
[[nodiscard]] RunResult simulate(const SimulationSpec& spec);

/// Runs `work` in a forked child process and returns the JSON it produced. For anything that
/// elaborates SystemC (simulations, the bare-kernel benchmark loop). Throws SimulationFailed, also
/// when the child runs longer than `wall_timeout_s` seconds of wall-clock time (0: no limit).
///
/// Every child dies with its parent (PR_SET_PDEATHSIG: SIGKILL when the parent exits or is killed,
/// by SIGKILL, SIGTERM or SIGINT alike) and leaves no file behind: it returns its result through a
/// temporary file in $TMPDIR (default /tmp) that is unlinked as soon as it is created.
[[nodiscard]] nlohmann::json run_in_child(const std::function<nlohmann::json()>& work,
                                          unsigned wall_timeout_s = kDefaultWallTimeoutS);

/// "workload 'NAME', policy P (options), preemption drain, copy policy npq, seed S": names a simulation
/// in messages (preemption and copy policy only when not the default).
[[nodiscard]] std::string describe_simulation(const SimulationSpec& spec);

/// Runs several simulations, at most `jobs` children at a time; results in input order. The first
/// failure (named by describe_simulation) stops the other running children and is thrown.
[[nodiscard]] std::vector<RunResult> simulate_all(const std::vector<SimulationSpec>& specs, unsigned jobs);

}  // namespace gpumux
