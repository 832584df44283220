#include "config/workload_loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "config/kernel_library_loader.h"
#include "config/limits.h"
#include "config/yaml_reader.h"
#include "sm/occupancy.h"

namespace gpumux {

namespace {

using config::kMaxCopyBytes;
using config::kMaxCpuPhasePs;
using config::kMaxLaunches;
using config::kMaxRepeat;
using config::YamlMap;
using config::YamlNode;

/// Processes of one workload: each is a GPU context with its own hardware queue (32 on Kepler).
constexpr std::size_t kMaxProcesses = 1024;

struct Library {
  std::string name;
  std::string path;
  std::vector<std::shared_ptr<const KernelDesc>> kernels;
};

class KernelResolver {
 public:
  void add(const YamlNode& entry, Library library) {
    for (const Library& other : libraries_) {
      if (other.name == library.name) {
        entry.fail("two kernel libraries are both named '" + library.name + "' ('" + other.path + "' and '" +
                   library.path + "'); give one of them a different `name:`");
      }
    }
    libraries_.push_back(std::move(library));
  }

  /// The kernel called `name`, from `library` if given, else from the one library that defines it.
  std::shared_ptr<const KernelDesc> resolve(const YamlNode& name_node,
                                            const std::optional<YamlNode>& library_node) const {
    const std::string name = name_node.as_string();
    std::vector<const Library*> searched;
    if (library_node) {
      const std::string wanted = library_node->as_string();
      for (const Library& lib : libraries_) {
        if (lib.name == wanted) searched.push_back(&lib);
      }
      if (searched.empty()) {
        library_node->fail("unknown kernel library '" + wanted + "'; loaded: " + library_names());
      }
    } else {
      for (const Library& lib : libraries_) searched.push_back(&lib);
    }
    std::vector<std::shared_ptr<const KernelDesc>> found;
    std::vector<std::string> all_names;
    for (const Library* lib : searched) {
      for (const auto& k : lib->kernels) {
        if (k->name == name) found.push_back(k);
        all_names.push_back(k->name);
      }
    }
    if (found.size() == 1) return found.front();
    if (found.empty()) {
      std::string message = "unknown kernel '" + name + "'";
      if (const std::string hint = config::closest_name(name, all_names); !hint.empty()) {
        message += " (did you mean '" + hint + "'?)";
      }
      name_node.fail(message + "; searched kernel libraries: " +
                     (library_node ? library_node->as_string() : library_names()));
    }
    std::vector<std::string> where;
    where.reserve(found.size());
    for (const auto& k : found) where.push_back(k->library);
    name_node.fail("kernel '" + name + "' is defined in several kernel libraries (" +
                   config::join_choices(where, " and ") +
                   "); add `library: <name>` to this kernel command to choose one");
  }

 private:
  [[nodiscard]] std::string library_names() const {
    std::vector<std::string> names;
    for (const Library& lib : libraries_) names.push_back(lib.name);
    return config::join_choices(names, " and ");
  }

  std::vector<Library> libraries_;
};

/// Why one thread block of `k` cannot be resident on an SM of `gpu`: every resource it exceeds.
std::string misfit_reason(const KernelDesc& k, const GpuConfig& gpu) {
  const TbFootprint f = footprint_of(k, gpu.warp_size);
  std::vector<std::string> reasons;
  if (f.registers > gpu.sm.registers) {
    reasons.push_back(std::to_string(f.registers) + " registers per thread block > " +
                      std::to_string(gpu.sm.registers) + " in the SM register file");
  }
  const std::uint32_t largest =
      gpu.sm.shared_memory_configs.empty() ? 0 : gpu.sm.shared_memory_configs.back();
  if (f.shared_memory > largest) {
    reasons.push_back(std::to_string(f.shared_memory) +
                      " B of shared memory per thread block > largest carve-out " + std::to_string(largest) +
                      " B");
  }
  if (f.threads > gpu.sm.max_threads) {
    reasons.push_back(std::to_string(f.threads) + " threads per thread block > " +
                      std::to_string(gpu.sm.max_threads) + " threads per SM");
  }
  if (f.warps > gpu.sm.max_warps) {
    reasons.push_back(std::to_string(f.warps) + " warps per thread block > " +
                      std::to_string(gpu.sm.max_warps) + " warps per SM");
  }
  if (reasons.empty()) reasons.push_back("no thread-block slot");  // unreachable with max_thread_blocks >= 1
  std::string text;
  for (const std::string& r : reasons) text += (text.empty() ? "" : "; ") + r;
  return text;
}

/// "" when `w` is meant for `gpu` (no `gpus:`, or `gpu` among them), else why it may not fit: appended to
/// a misfit error, which then says the workload was written for other GPUs.
std::string meant_for_note(const Workload& w, const GpuConfig& gpu) {
  if (w.gpus.empty() || std::find(w.gpus.begin(), w.gpus.end(), gpu.name) != w.gpus.end()) return "";
  return "; this workload is meant for GPU " + config::join_choices(w.gpus, " and ") + " (gpus:, line " +
         std::to_string(w.gpus_where.line) + "), not '" + gpu.name + "'";
}

CommandSpec read_command(const YamlNode& node, const KernelResolver& kernels, const GpuConfig& gpu,
                         const std::string& note) {
  const YamlMap m(node, {"cpu", "h2d", "d2h", "kernel", "sync", "join"});
  if (m.entries().size() != 1) {
    node.fail("a command is a map with exactly one key: cpu, h2d, d2h, kernel, sync or join");
  }
  const auto& [kind, value] = m.entries().front();
  if (kind == "sync" || kind == "join") {
    // sync: {} (cudaStreamSynchronize) and join: {} (every stream of the process): no fields.
    if (!value.is_map()) value.fail("expected " + kind + ": {} (no fields), got " + value.describe());
    [[maybe_unused]] const YamlMap no_fields(value, {});  // rejects any key
    CommandSpec cmd;
    cmd.kind = kind == "sync" ? CommandKind::kSync : CommandKind::kJoin;
    cmd.where = node.where();
    return cmd;
  }
  if (!value.is_map()) {
    const char* form = kind == "cpu"      ? "{ns|us|ms: time}"
                       : kind == "kernel" ? "{name: kernel, ...}"
                                          : "{bytes: N}";
    value.fail(std::string("expected ") + form + ", got " + value.describe());
  }
  CommandSpec cmd;
  cmd.where = node.where();
  if (kind == "cpu") {
    const YamlMap t(value, {"ns", "us", "ms"});
    if (t.entries().size() != 1) {
      value.fail("give the CPU time in exactly one unit: {ns: N}, {us: N} or {ms: N}");
    }
    const auto& [unit, amount] = t.entries().front();
    const double scale = unit == "ns" ? 1e3 : unit == "us" ? 1e6 : 1e9;
    cmd.kind = CommandKind::kCpu;
    const double ps = amount.as_positive_number() * scale;
    if (ps > kMaxCpuPhasePs) amount.fail("a CPU phase may last at most one hour");
    cmd.cpu_ps = to_ps(amount, ps, true);
    if (cmd.cpu_ps == 0) amount.fail("CPU time rounds to 0 ps");
  } else if (kind == "h2d" || kind == "d2h") {
    const YamlMap c(value, {"bytes"});
    cmd.kind = kind == "h2d" ? CommandKind::kHostToDevice : CommandKind::kDeviceToHost;
    cmd.bytes = c.required("bytes").as_u64_in(1, kMaxCopyBytes, "bytes");
  } else {
    const YamlMap k(value, {"name", "launches", "library"});
    cmd.kind = CommandKind::kKernel;
    cmd.kernel = kernels.resolve(k.required("name"), k.optional("library"));
    cmd.launches = k.optional_u32_in("launches", cmd.kernel->launches, 1, kMaxLaunches, "launches");
    cmd.where = value.where();
    if (compute_occupancy(*cmd.kernel, gpu).tbs_per_sm == 0) {
      value.fail("kernel '" + cmd.kernel->name + "' (library '" + cmd.kernel->library +
                 "') does not fit on an SM of GPU '" + gpu.name + "': " + misfit_reason(*cmd.kernel, gpu) +
                 note);
    }
  }
  return cmd;
}

std::size_t count_joins(const StreamSpec& stream) {
  return static_cast<std::size_t>(
      std::count_if(stream.commands.begin(), stream.commands.end(),
                    [](const CommandSpec& c) { return c.kind == CommandKind::kJoin; }));
}

/// A join waits for every stream of the process to reach its matching join, so streams with different
/// numbers of joins would wait for ever: InputError at the first join that has no partner.
void check_joins(const ProcessSpec& p) {
  std::size_t most = 0;
  for (const StreamSpec& s : p.streams) most = std::max(most, count_joins(s));
  for (std::size_t i = 0; i < p.streams.size(); ++i) {
    const std::size_t joins = count_joins(p.streams[i]);
    if (joins == most) continue;
    const StreamSpec& fuller = *std::find_if(p.streams.begin(), p.streams.end(),
                                             [most](const StreamSpec& s) { return count_joins(s) == most; });
    const CommandSpec& unmatched = *std::find_if(fuller.commands.begin(), fuller.commands.end(),
                                                 [n = std::size_t{0}, joins](const CommandSpec& c) mutable {
                                                   return c.kind == CommandKind::kJoin && n++ == joins;
                                                 });
    throw InputError(unmatched.where, "join",
                     "process '" + p.name + "': stream " + std::to_string(i) + " has " +
                         std::to_string(joins) + " join step(s) and another stream " + std::to_string(most) +
                         "; every stream of a process must have the same number of joins (a join waits "
                         "for all of them)");
  }
}

ProcessSpec read_process(const YamlNode& node, const KernelResolver& kernels, const GpuConfig& gpu,
                         const std::vector<ProcessSpec>& earlier, const std::string& note) {
  const YamlMap m(node, {"name", "priority", "tokens", "arrival_ns", "repeat", "streams"});
  ProcessSpec p;
  p.where = node.where();
  const YamlNode name = m.required("name");
  p.name = name.as_name();
  for (const ProcessSpec& other : earlier) {
    if (other.name == p.name) {
      name.fail("duplicate process name '" + p.name + "' (first at line " + std::to_string(other.where.line) +
                ")");
    }
  }
  if (const auto priority = m.optional("priority")) p.priority = priority->as_i32();
  if (const auto tokens = m.optional("tokens")) {
    const std::uint32_t t = tokens->as_u32(1);
    if (t > static_cast<std::uint32_t>(std::numeric_limits<int>::max())) tokens->fail("too many tokens");
    p.tokens = static_cast<int>(t);
  }
  if (const auto arrival = m.optional("arrival_ns")) {
    const double ps = arrival->as_nonnegative_number() * 1e3;
    if (ps > kMaxCpuPhasePs) arrival->fail("a process may arrive at most one hour after the start");
    p.arrival_ps = to_ps(*arrival, ps, true);
  }
  p.repeat = m.optional_u32_in("repeat", 1, 1, kMaxRepeat, "runs");
  for (const YamlNode& stream_node : m.required("streams").as_list()) {
    StreamSpec stream;
    for (const YamlNode& command : stream_node.as_list()) {
      stream.commands.push_back(read_command(command, kernels, gpu, note));
    }
    p.streams.push_back(std::move(stream));
  }
  check_joins(p);
  return p;
}

template <typename Enum>
Enum read_choice(const YamlMap& m, std::string_view key, Enum fallback,
                 const std::vector<std::pair<std::string, Enum>>& choices) {
  const auto node = m.optional(key);
  if (!node) return fallback;
  const std::string text = node->as_string();
  std::vector<std::string> names;
  for (const auto& [name, value] : choices) {
    if (name == text) return value;
    names.push_back(name);
  }
  node->fail("unknown value '" + text + "'; expected " + config::join_choices(names));
}

/// Time of one command if it ran alone on the GPU, in ps (a double: the estimate itself must not
/// overflow). Kernels: launches x waves x mean thread-block time; copies: bytes at the slower of
/// PCIe and memory, plus one latency of each per burst.
double alone_time_ps(const CommandSpec& cmd, const GpuConfig& gpu) {
  switch (cmd.kind) {
    case CommandKind::kCpu:
      return static_cast<double>(cmd.cpu_ps);
    case CommandKind::kSync:
    case CommandKind::kJoin:
      return 0;
    case CommandKind::kHostToDevice:
    case CommandKind::kDeviceToHost: {
      const double bytes_per_ps =
          std::min(gpu.pcie.bytes_per_second(), gpu.memory.bandwidth_gb_per_s * 1e9) / 1e12;
      const double bursts = std::ceil(static_cast<double>(cmd.bytes) / gpu.pcie.burst_bytes);
      return static_cast<double>(cmd.bytes) / bytes_per_ps +
             (bursts + 1) * (gpu.pcie.latency_ns + gpu.memory.latency_ns) * 1e3;
    }
    case CommandKind::kKernel: {
      const double per_wave =
          static_cast<double>(compute_occupancy(*cmd.kernel, gpu).tbs_per_sm) * gpu.num_sms;
      const double waves = std::ceil(cmd.kernel->thread_blocks / per_wave);
      return cmd.launches * waves * static_cast<double>(cmd.kernel->tb_time.mean_ps);
    }
  }
  return 0;
}

/// The whole workload run back to back (every process's every run, one command after another) must
/// end before the model's time horizon, or times inside the model could overflow. The error names
/// the command at which the sum passes it.
void check_time_horizon(const Workload& w, const GpuConfig& gpu) {
  const auto horizon = static_cast<double>(kTimeHorizonPs);
  const char* why =
      " (~11.6 days; the workload's every run, back to back). Lower repeat, launches or sizes, or "
      "shorten the workload";
  double total = 0;
  double launches = 0;
  for (const ProcessSpec& p : w.processes) {
    const double runs = w.replay == ReplayMode::kFixed ? p.repeat : std::max(p.repeat, w.replay_limit);
    total += static_cast<double>(p.arrival_ps);
    for (const StreamSpec& stream : p.streams) {
      for (const CommandSpec& cmd : stream.commands) {
        total += runs * alone_time_ps(cmd, gpu);
        if (cmd.kind == CommandKind::kKernel) launches += runs * cmd.launches;
        if (launches > static_cast<double>(config::kMaxWorkloadLaunches)) {
          // Each launch is a record in the run's tables and in stats.json (~200 bytes each).
          throw InputError(cmd.where, "",
                           "process '" + p.name + "': with this command the workload launches more than " +
                               std::to_string(config::kMaxWorkloadLaunches) +
                               " kernels over all its runs; lower repeat, replay_limit or launches");
        }
        if (total >= horizon) {
          throw InputError(cmd.where, "",
                           "process '" + p.name + "' (" + std::to_string(p.repeat) +
                               " run(s)): with this command the workload's time passes the model's "
                               "horizon of 1e18 ps" +
                               why);
        }
      }
    }
  }
}

}  // namespace

KernelLaunchMode read_kernel_launch_mode(const config::YamlNode& node) {
  const std::string text = node.as_string();
  if (text == "synchronous") return KernelLaunchMode::kSynchronous;
  if (text == "asynchronous") return KernelLaunchMode::kAsynchronous;
  node.fail("unknown value '" + text + "'; expected " +
            config::join_choices({"synchronous", "asynchronous"}));
}

Workload load_workload(const std::string& path, const GpuConfig& gpu) {
  const YamlNode root = config::load_yaml_file(path);
  const YamlMap m(root, {"name", "gpus", "kernel_libraries", "replay", "replay_limit", "tb_duration",
                         "tb_rsd_percent", "kernel_launch", "processes"});
  Workload w;
  w.source_file = path;
  // The name becomes the default output folder (out/<name>/), so it must be one path component.
  if (const auto name = m.optional("name")) {
    w.name = name->as_path_component();
  } else {
    w.name = std::filesystem::path(path).stem().string();
  }
  if (const auto gpus = m.optional("gpus")) {
    w.gpus_where = gpus->where();
    const std::vector<YamlNode> names = gpus->as_list();
    for (const YamlNode& name : names) {
      const std::string gpu_name = name.as_name();
      if (std::find(w.gpus.begin(), w.gpus.end(), gpu_name) != w.gpus.end()) {
        name.fail("GPU '" + gpu_name + "' is listed twice");
      }
      w.gpus.push_back(gpu_name);
    }
  }
  w.replay = read_choice(m, "replay", ReplayMode::kFixed,
                         {{"fixed", ReplayMode::kFixed}, {"until_all_done", ReplayMode::kUntilAllDone}});
  w.replay_limit = m.optional_u32_in("replay_limit", w.replay_limit, 1, kMaxRepeat, "runs");
  w.tb_duration = read_choice(m, "tb_duration", TbDurationMode::kProfile,
                              {{"profile", TbDurationMode::kProfile}, {"fixed", TbDurationMode::kFixed}});
  if (const auto launch = m.optional("kernel_launch")) w.kernel_launch = read_kernel_launch_mode(*launch);

  // Library paths are relative to the workload file, so a workload works from any current directory.
  KernelResolver kernels;
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  for (const YamlNode& entry : m.required("kernel_libraries").as_list()) {
    const std::filesystem::path given(entry.as_string());
    const std::string resolved = (given.is_absolute() ? given : base / given).lexically_normal().string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(resolved, ec)) {
      entry.fail("kernel library '" + given.string() + "' not found (looked for '" + resolved +
                 "'; paths are relative to the workload file)");
    }
    Library library;
    library.path = resolved;
    library.kernels = load_kernel_library(resolved, gpu);
    library.name = library.kernels.empty() ? std::filesystem::path(resolved).stem().string()
                                           : library.kernels.front()->library;
    kernels.add(entry, std::move(library));
    w.kernel_libraries.push_back(resolved);
  }

  const std::vector<YamlNode> processes = m.required("processes").as_list();
  if (processes.size() > kMaxProcesses) {
    m.required("processes")
        .fail("at most " + std::to_string(kMaxProcesses) + " processes, got " +
              std::to_string(processes.size()));
  }
  for (const YamlNode& node : processes) {
    w.processes.push_back(read_process(node, kernels, gpu, w.processes, meant_for_note(w, gpu)));
  }
  if (const auto rsd = m.optional("tb_rsd_percent")) {
    if (w.tb_duration == TbDurationMode::kFixed) {
      rsd->fail("has no effect with tb_duration: fixed (thread blocks then always take their mean)");
    }
    override_tb_rsd(w, config::read_rsd_percent(*rsd));
  }
  check_time_horizon(w, gpu);
  return w;
}

std::string workload_gpu_warning(const Workload& workload, const GpuConfig& gpu) {
  if (workload.gpus.empty() ||
      std::find(workload.gpus.begin(), workload.gpus.end(), gpu.name) != workload.gpus.end()) {
    return "";
  }
  return "workload '" + workload.name + "' is meant for GPU " + config::join_choices(workload.gpus, " and ") +
         " (" + workload.source_file + ":" + std::to_string(workload.gpus_where.line) + ": gpus:), not '" +
         gpu.name + "' (" + gpu.source_file + ")";
}

}  // namespace gpumux
