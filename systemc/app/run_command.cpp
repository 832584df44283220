// gpumux run: simulate a workload on a GPU under a policy, with isolated baselines, and report
// multiprogram metrics.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <thread>

#include <boost/program_options.hpp>

#include "app/commands.h"
#include "app/isolated_baselines.h"
#include "app/run_record.h"
#include "config/gpu_loader.h"
#include "config/workload_loader.h"
#include "core/error.h"
#include "metrics/stats_writer.h"
#include "policy/registry.h"
#include "sm/occupancy.h"
#include "sm/warp/phase_trace.h"
#include "top/simulation.h"
#include "wave/waveform.h"

namespace gpumux {

namespace po = boost::program_options;

PolicyOptions parse_policy_options(const std::vector<std::string>& items) {
  PolicyOptions options;
  for (const std::string& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError("--policy-opt expects KEY=VALUE, got '" + item + "'");
    }
    options[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return options;
}

PreemptionMechanism parse_preemption(const std::string& text) {
  if (const auto mechanism = preemption_mechanism_named(text)) return *mechanism;
  throw InputError("--preemption must be context-switch or drain, not '" + text + "'");
}

CopyPolicy parse_copy_policy(const std::string& text) {
  if (const auto policy = copy_policy_named(text)) return *policy;
  throw InputError("--copy-policy must be fcfs or npq, not '" + text + "'");
}

int run_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux run options");
  std::string gpu_path;
  std::string workload_path;
  std::string policy = "fcfs";
  std::string preemption = "context-switch";
  std::string copy_policy = "fcfs";
  std::vector<std::string> policy_opts;
  std::string seed_text = "1";
  std::string out_dir;
  std::string vcd;
  std::string timeline;
  std::string phase_trace;
  std::string phase_interval_text = "100";
  std::string jobs_text = std::to_string(std::max(1U, std::thread::hardware_concurrency()));
  std::string timeout_text = std::to_string(kDefaultWallTimeoutS);
  std::string sm_model;
  std::string memory_model;
  std::string tb_interference;
  std::string warp_scheduler;
  std::string replay;
  std::string dump_config;
  options.add_options()("help,h", "show this help")("gpu", po::value(&gpu_path),
                                                    "GPU config (configs/gpus/*.yaml); required")(
      "workload", po::value(&workload_path), "workload (configs/workloads/*.yaml); required")(
      "replay", po::value(&replay),
      "repeat the run a stats.json records: its GPU and workload files, policy, options, preemption, copy "
      "policy, seed and SM model, checked against the recorded hashes (docs/user-guide.md)")(
      "policy", po::value(&policy)->default_value("fcfs"),
      "thread-block scheduling policy (gpumux list policies)")(
      "policy-opt", po::value(&policy_opts)->composing(),
      "policy option KEY=VALUE (repeatable), e.g. access=exclusive")(
      "preemption", po::value(&preemption)->default_value("context-switch"),
      "how policies that preempt take an SM: context-switch or drain (Tanasic 3.2)")(
      "copy-policy", po::value(&copy_policy)->default_value("fcfs"),
      "order of the copies waiting for a DMA engine: fcfs (arrival) or npq (highest process priority "
      "first, never interrupting a copy; Tanasic 4.2)")(
      "sm-model", po::value(&sm_model),
      "SM fidelity: tb (thread-block durations) or warp (warps execute kernel programs); default: the "
      "GPU file's sm.model")(
      "memory-model", po::value(&memory_model),
      "memory: simple (one bandwidth pipe) or dram (L2 slices and GDDR5 channels); default: the GPU "
      "file's memory.model")(
      "tb-interference", po::value(&tb_interference),
      "TB-level SMs: on slows thread blocks while their kernels' memory demand exceeds the peak bandwidth "
      "(Liang Eq. 3) and by each kernel's measured sensitivity to its co-runners' pressure (the library's "
      "interference:), off never; default: the GPU file's memory.tb_interference")(
      "warp-scheduler", po::value(&warp_scheduler),
      "warp scheduler at the warp level (gpumux list warp-schedulers); default: the GPU file's "
      "sm.warp.scheduler")("seed", po::value(&seed_text)->default_value(seed_text),
                           "random seed, 0 to 2^64-1 (same inputs and seed => identical stats)")(
      "out", po::value(&out_dir), "output directory for stats.json (default out/<workload name>)")(
      "vcd", po::value(&vcd),
      "write a waveform (VCD; FST when FILE ends in .fst) with a GTKWave save file beside it")(
      "timeline", po::value(&timeline), "write a Chrome/Perfetto trace JSON (one track per SM)")(
      "phase-trace", po::value(&phase_trace),
      "warp level: write warps per phase over time, per kernel launch, as JSON (docs/user-guide.md)")(
      "phase-trace-interval", po::value(&phase_interval_text),
      "core cycles between two --phase-trace samples, 1 to 1000000000 (default 100)")(
      "jobs,j", po::value(&jobs_text),
      "isolated baselines simulated in parallel, 1 to 1024 (default: cores)")(
      "timeout", po::value(&timeout_text)->default_value(timeout_text),
      "wall-clock limit per simulation in seconds, baselines included; 0: none")(
      "no-cache", "always re-simulate isolated baselines")(
      "dump-config", po::value(&dump_config),
      "write the run's effective configuration, every default filled in (GPU, workload with its kernels, "
      "policy and its options, preemption, copy policy, seed), as JSON to FILE before simulating")(
      "quiet,q", "print nothing but errors");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
    po::store(parsed, vm);
    if (vm.count("help") != 0U) {
      std::cout << "usage: gpumux run --gpu FILE --workload FILE [options]\n\n" << options << '\n';
      return kExitOk;
    }
    po::notify(vm);
    reject_positional_arguments("run", parsed);
  } catch (const po::error& e) {
    std::cerr << "gpumux run: " << e.what() << "\n(see gpumux run --help)\n";
    return kExitBadInput;
  }
  const bool quiet = vm.count("quiet") != 0U;

  // --replay: every input comes from the stats.json; none may also be given on the command line.
  std::optional<RecordedRun> recorded;
  if (!replay.empty()) {
    for (const char* input : {"gpu", "workload", "policy", "policy-opt", "preemption", "copy-policy", "seed",
                              "sm-model", "warp-scheduler", "memory-model", "tb-interference"}) {
      if (vm.count(input) != 0U && !vm[input].defaulted()) {
        throw InputError(std::string("--replay takes the run's inputs from ") + replay + "; --" + input +
                         " cannot be given with it");
      }
    }
    recorded = read_recorded_run(replay);
    for (const std::string* input : {&recorded->gpu_file, &recorded->workload_file}) {
      if (!std::filesystem::exists(*input)) {
        throw InputError(replay + ": the run's input '" + *input + "' is not found from " +
                         std::filesystem::current_path().string() +
                         "; replay from the directory the run was started in (its paths are relative to it)");
      }
    }
    gpu_path = recorded->gpu_file;
    workload_path = recorded->workload_file;
    policy = recorded->policy;
    preemption = recorded->preemption;
    copy_policy = recorded->copy_policy;
    seed_text = std::to_string(recorded->seed);
    sm_model = recorded->sm_model;
    warp_scheduler = recorded->warp_scheduler;
    memory_model = recorded->memory_model;
    tb_interference = recorded->tb_interference;
  } else {
    for (const char* input : {"gpu", "workload"}) {
      if (vm.count(input) == 0U) {
        std::cerr << "gpumux run: the option '--" << input
                  << "' is required but missing (or --replay STATS)\n(see gpumux run --help)\n";
        return kExitBadInput;
      }
    }
  }

  // Usage errors before any work.
  const std::uint64_t seed =
      parse_integer_option("--seed", seed_text, 0, std::numeric_limits<std::uint64_t>::max());
  const auto jobs = static_cast<unsigned>(parse_integer_option("--jobs", jobs_text, 1, kMaxJobs));
  const auto timeout =
      static_cast<unsigned>(parse_integer_option("--timeout", timeout_text, 0, kMaxWallTimeoutS));
  (void)parse_preemption(preemption);
  (void)parse_copy_policy(copy_policy);
  const std::uint64_t phase_interval = parse_integer_option(
      "--phase-trace-interval", phase_interval_text, PhaseTrace::kMinInterval, PhaseTrace::kMaxInterval);
  if (vm.count("phase-trace-interval") != 0U && phase_trace.empty()) {
    throw InputError("--phase-trace-interval needs --phase-trace FILE");
  }
  GpuConfig gpu = load_gpu_config(gpu_path);
  apply_sm_model_options(gpu, sm_model, warp_scheduler);
  apply_memory_model_option(gpu, memory_model);
  apply_tb_interference_option(gpu, tb_interference);
  if (!phase_trace.empty() && gpu.sm_model != SmModel::kWarp) {
    throw InputError(
        "--phase-trace needs warp-level SMs (--sm-model warp, or a GPU whose sm.model is warp); this "
        "run's SMs are thread-block level (sm.model tb), which have no warps or phases");
  }
  const Workload workload = load_workload(workload_path, gpu);
  if (!quiet) {
    if (const std::string w = workload_gpu_warning(workload, gpu); !w.empty()) {
      std::cerr << "gpumux: warning: " << w << '\n';
    }
    for (const std::string& warning : carveout_warnings(workload, gpu)) {
      std::cerr << "gpumux: warning: " << warning << '\n';
    }
  }
  const PolicyOptions policy_options =
      recorded ? recorded->policy_options : parse_policy_options(policy_opts);
  (void)create_policy(policy,
                      policy_options);  // unknown policy or option: InputError before any simulation
  check_active_cores_policy(gpu, policy);
  const ConfigHashes hashes =
      config_hashes(gpu, workload, policy, effective_policy_options(policy, policy_options),
                    parse_preemption(preemption), parse_copy_policy(copy_policy), seed);
  if (!dump_config.empty()) {
    prepare_output_file("--dump-config", dump_config);
    write_config_dump(
        dump_config, effective_config(gpu, workload, policy, effective_policy_options(policy, policy_options),
                                      parse_preemption(preemption), parse_copy_policy(copy_policy), seed));
  }
  if (recorded) check_replay_hashes(replay, *recorded, hashes);
  // Every output path is usable before anything is simulated.
  if (out_dir.empty()) out_dir = default_output_dir(workload.name);
  prepare_output_dir("--out", out_dir);
  if (!vcd.empty()) prepare_waveform_files(vcd);
  if (!timeline.empty()) prepare_output_file("--timeline", timeline);
  if (!phase_trace.empty()) prepare_output_file("--phase-trace", phase_trace);

  IsolatedOptions iso;
  iso.seed = seed;
  iso.jobs = jobs;
  iso.use_cache = vm.count("no-cache") == 0U;
  iso.wall_timeout_s = timeout;
  const std::vector<RunResult> isolated = isolated_baselines(gpu, workload, iso);

  SimulationSpec spec;
  spec.gpu = gpu;
  spec.workload = workload;
  spec.policy = policy;
  spec.preemption = parse_preemption(preemption);
  spec.copy_policy = parse_copy_policy(copy_policy);
  spec.policy_options = policy_options;
  spec.seed = seed;
  spec.vcd_path = vcd;
  spec.timeline_path = timeline;
  spec.phase_trace_path = phase_trace;
  spec.phase_trace_interval = phase_interval;
  spec.progress = !quiet && isatty(STDERR_FILENO) != 0;
  spec.wall_timeout_s = timeout;
  const RunResult result = simulate(spec);

  RunReport report = make_report(gpu, workload, result, isolated);
  report.policy_options = effective_policy_options(policy, policy_options);
  report.preemption = to_string(spec.preemption);
  report.inputs = {{"gpu_file", gpu_path},
                   {"workload_file", workload_path},
                   {"gpu_sha1", hashes.gpu_sha1},
                   {"workload_sha1", hashes.workload_sha1}};
  report.config_sha1 = hashes.config_sha1;
  const std::string stats_path = out_dir + "/stats.json";
  std::ofstream stats(stats_path);
  if (!(stats << stats_json(report).dump(2) << '\n')) throw InputError("cannot write '" + stats_path + "'");
  if (!quiet) {
    print_summary(std::cout, report);
    std::cout << "\n  stats:    " << stats_path << '\n';
    if (!vcd.empty()) {
      const WaveformFiles files = waveform_files(vcd);
      std::cout << "  waveform: " << files.wave << " (gtkwave " << files.wave << ' ' << files.save << ")\n";
    }
    if (!timeline.empty()) std::cout << "  timeline: " << timeline << '\n';
    if (!phase_trace.empty()) std::cout << "  phases:   " << phase_trace << '\n';
  }
  return kExitOk;
}

}  // namespace gpumux
