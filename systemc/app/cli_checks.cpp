// Command-line checks shared by the subcommands: integer options within their documented range,
// no stray positional arguments, and output paths that are usable before anything is simulated.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

#include "app/commands.h"

#include "config/gpu_loader.h"
#include "config/yaml_reader.h"
#include "core/error.h"
#include "sm/warp_scheduler/registry.h"
#include "wave/waveform.h"

namespace gpumux {

std::uint64_t parse_integer_option(const std::string& option, const std::string& text, std::uint64_t min,
                                   std::uint64_t max) {
  const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  // from_chars into an unsigned type takes digits only (no sign, no spaces, so "-5" cannot wrap) and
  // reports overflow of uint64 as an error; the whole text must be the number.
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  const bool ok = !text.empty() && error == std::errc() && stop == end;
  if (!ok || value < min || value > max) {
    throw InputError(option + " must be " + range + ", not '" + text + "'");
  }
  return value;
}

void reject_positional_arguments(const std::string& command,
                                 const boost::program_options::parsed_options& parsed) {
  for (const auto& option : parsed.options) {
    if (option.position_key < 0 || !option.string_key.empty()) continue;
    const std::string value = option.original_tokens.empty() ? "" : option.original_tokens.front();
    throw InputError("unexpected argument '" + value + "': gpumux " + command +
                     " takes no such argument (see gpumux " + command + " --help)");
  }
}

namespace {

/// Creates `dir` (and its parents) if missing and checks that a file can be created in it, by
/// creating and removing one (this also holds for root and read-only file systems).
void ensure_writable_dir(const std::string& option, const std::string& dir, const std::string& what) {
  const std::string shown = dir.empty() ? "." : dir;
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw InputError(option + ": cannot create " + what + " '" + shown + "': " + ec.message());
  }
  if (!std::filesystem::is_directory(shown, ec)) {
    throw InputError(option + ": " + what + " '" + shown + "' is not a directory");
  }
  std::string probe = shown + "/.gpumux-write-check-XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    throw InputError(option + ": cannot write in " + what + " '" + shown + "': " + std::strerror(errno));
  }
  close(fd);
  unlink(probe.c_str());
}

}  // namespace

void prepare_output_dir(const std::string& option, const std::string& dir) {
  ensure_writable_dir(option, dir, "output directory");
}

void prepare_output_file(const std::string& option, const std::string& path) {
  if (path.empty() || path.back() == '/') {
    throw InputError(option + ": '" + path + "' is not a file name");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(option + ": '" + path + "' is a directory, not a file");
  }
  ensure_writable_dir(option, std::filesystem::path(path).parent_path().string(), "directory");
}

void prepare_waveform_files(const std::string& path) {
  prepare_output_file("--vcd", path);
  if (!wants_fst(path)) return;
  if (path.find('\'') != std::string::npos) {
    throw InputError("--vcd: an FST file name may not contain a quote");
  }
  // FST comes from the distribution's converter; without it the run would end in an error after
  // simulating, so refuse now.
  if (std::system("command -v vcd2fst > /dev/null 2>&1") != 0) {  // NOLINT(cert-env33-c): fixed command
    throw InputError("--vcd " + path +
                     ": writing FST needs vcd2fst (Debian package gtkwave, which scripts/setup installs); "
                     "give a .vcd file name instead");
  }
}

std::string default_output_dir(const std::string& workload_name) {
  // Defence in depth (the workload loader checks names too): out/<name> must be a folder of out/.
  const bool safe = !workload_name.empty() && workload_name != "." && workload_name != ".." &&
                    workload_name.find_first_of("/\\") == std::string::npos &&
                    workload_name.find('\0') == std::string::npos;
  if (!safe) {
    throw InputError("workload name '" + workload_name +
                     "' cannot name the default output folder (out/<name> would not be a folder of out/); "
                     "give --out DIR");
  }
  return "out/" + workload_name;
}

void apply_sm_model_options(GpuConfig& gpu, const std::string& sm_model, const std::string& warp_scheduler) {
  std::optional<SmModel> model;
  if (sm_model == "tb") {
    model = SmModel::kThreadBlock;
  } else if (sm_model == "warp") {
    model = SmModel::kWarp;
  } else if (!sm_model.empty()) {
    throw InputError("--sm-model must be tb or warp, not '" + sm_model + "'");
  }
  if (!warp_scheduler.empty() && find_warp_scheduler(warp_scheduler) == nullptr) {
    std::string known;
    for (const std::string& name : warp_scheduler_names()) known += (known.empty() ? "" : ", ") + name;
    throw InputError("--warp-scheduler: unknown warp scheduler '" + warp_scheduler + "' (known: " + known +
                     "; gpumux list warp-schedulers)");
  }
  apply_sm_settings(gpu, model, warp_scheduler);
  if (gpu.sm_model == SmModel::kWarp && gpu.warp.alu.count == 0) {
    throw InputError(
        "--sm-model warp: GPU '" + gpu.name + "' (" + gpu.source_file +
        ") has no sm.warp section (execution units, latencies, warp schedulers); see docs/config.md");
  }
}

void apply_memory_model_option(GpuConfig& gpu, const std::string& memory_model) {
  if (memory_model.empty()) return;
  if (memory_model == "simple") {
    gpu.memory.model = MemoryModel::kSimple;
  } else if (memory_model == "dram") {
    if (gpu.memory.dram.channels == 0 || gpu.memory.l2.cache.capacity_bytes == 0) {
      throw InputError("--memory-model dram: GPU '" + gpu.name + "' (" + gpu.source_file +
                       ") has no memory.dram and memory.l2 sections; see docs/config.md \"Memory\"");
    }
    gpu.memory.model = MemoryModel::kDram;
  } else {
    throw InputError("--memory-model must be simple or dram, not '" + memory_model + "'");
  }
}

void apply_tb_interference_option(GpuConfig& gpu, const std::string& tb_interference) {
  if (tb_interference.empty()) return;
  if (tb_interference != "on" && tb_interference != "off") {
    throw InputError("--tb-interference must be on or off, not '" + tb_interference + "'");
  }
  gpu.memory.tb_interference = tb_interference == "on";
}

std::vector<std::shared_ptr<const KernelDesc>> pick_kernels(
    const std::vector<std::shared_ptr<const KernelDesc>>& all, const std::vector<std::string>& names,
    const std::string& file) {
  if (names.empty()) return all;
  std::vector<std::shared_ptr<const KernelDesc>> out;
  for (const std::string& name : names) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& k) { return k->name == name; });
    if (it == all.end()) {
      std::vector<std::string> known;
      known.reserve(all.size());
      for (const auto& k : all) known.push_back(k->name);
      const std::string guess = config::closest_name(name, known);
      throw InputError("--kernel " + name + ": " + file + " has no kernel '" + name + "'" +
                       (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                       "; kernels: " + config::join_choices(known, " and "));
    }
    if (std::find(out.begin(), out.end(), *it) == out.end()) out.push_back(*it);
  }
  return out;
}

}  // namespace gpumux
