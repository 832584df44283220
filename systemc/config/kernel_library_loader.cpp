#include "config/kernel_library_loader.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/gpu_loader.h"
#include "config/limits.h"
#include "config/yaml_reader.h"
#include "program/phase_analysis.h"
#include "program/program_parser.h"

namespace gpumux {

namespace {

using config::kMaxLaunches;
using config::kMaxTbMeanPs;
using config::read_rsd_percent;
using config::YamlMap;
using config::YamlNode;

constexpr std::size_t kMaxKernels = 10'000;

// The keys a kernel library may hold, one list per map. The loader reads against these lists and
// kernel_library_keys() lists them, so a key added here is one the cache-key test covers.
const std::vector<std::string_view> kLibraryKeys = {"name", "kernels"};
const std::vector<std::string_view> kKernelKeys = {
    "name",           "benchmark",        "class1",
    "class2",         "launches",         "thread_blocks",
    "threads_per_tb", "registers_per_tb", "shared_memory_per_tb",
    "tb_time",        "reference",        "program",
    "memory",         "interference",     "global_memory_bytes"};
const std::vector<std::string_view> kTbTimeKeys = {"mean_ns", "mean_us", "mean_cycles", "rsd_percent"};
const std::vector<std::string_view> kMemoryKeys = {"bytes_per_tb", "l2_hit_percent"};
const std::vector<std::string_view> kInterferenceKeys = {"pressure_per_sm_gb_per_s", "sensitivity"};
const std::vector<std::string_view> kSensitivityKeys = {"gb_per_s", "slowdown"};

/// Bubble bandwidths and pressures beyond this are typos (100 TB/s: far beyond any GPU of the papers).
constexpr double kMaxGbPerS = 100'000.0;
/// A measured slowdown outside this range is not a co-runner's doing (noise leaves it near 1; the
/// warp level's largest beside the bubble is about 3).
constexpr double kMinSlowdown = 0.5;
constexpr double kMaxSlowdown = 100.0;

/// A thread block moving more than this is a typo (64 GiB: more than any GPU's memory of the papers).
constexpr double kMaxBytesPerTb = 64.0 * 1024 * 1024 * 1024;

TbMemoryProfile read_memory(const YamlNode& node) {
  const YamlMap m(node, kMemoryKeys);
  TbMemoryProfile profile;
  if (const auto bytes = m.optional("bytes_per_tb")) {
    profile.bytes_per_tb = bytes->as_nonnegative_number();
    if (profile.bytes_per_tb > kMaxBytesPerTb) bytes->fail("more than 64 GiB per thread block");
  }
  if (const auto hit = m.optional("l2_hit_percent")) {
    profile.l2_hit_percent = hit->as_nonnegative_number();
    if (profile.l2_hit_percent > 100.0) hit->fail("a share in percent: 0 to 100");
  }
  return profile;
}

TbInterferenceProfile read_interference(const YamlNode& node) {
  const YamlMap m(node, kInterferenceKeys);
  TbInterferenceProfile profile;
  if (const auto pressure = m.optional("pressure_per_sm_gb_per_s")) {
    profile.pressure_per_sm_gb_per_s = pressure->as_number_in(0.0, kMaxGbPerS, "GB/s");
  }
  if (const auto curve = m.optional("sensitivity")) {
    for (const YamlNode& item : curve->as_list()) {
      const YamlMap point(item, kSensitivityKeys);
      const YamlNode x = point.required("gb_per_s");
      TbInterferenceProfile::Point p;
      p.gb_per_s = x.as_number_in(0.0, kMaxGbPerS, "GB/s");
      p.slowdown = point.required("slowdown").as_number_in(kMinSlowdown, kMaxSlowdown);
      if (!profile.sensitivity.empty() && p.gb_per_s <= profile.sensitivity.back().gb_per_s) {
        x.fail("the sensitivity curve's gb_per_s must rise strictly from point to point");
      }
      profile.sensitivity.push_back(p);
    }
  }
  return profile;
}

TbTimeProfile read_tb_time(const YamlNode& node, const GpuConfig& gpu) {
  const YamlMap m(node, kTbTimeKeys);
  TbTimeProfile profile;
  int means = 0;
  for (const char* unit : {"mean_ns", "mean_us", "mean_cycles"}) {
    const auto value = m.optional(unit);
    if (!value) continue;
    if (++means > 1) value->fail("give exactly one of mean_ns, mean_us or mean_cycles");
    const double mean = value->as_positive_number();
    const std::string u(unit);
    const double ps = u == "mean_ns" ? mean * 1e3 : u == "mean_us" ? mean * 1e6 : mean * gpu.core_period_ps();
    // The longest Parboil thread block is ~2.4 ms (Tanasic Table 1); a minute is far beyond any real one.
    if (ps > kMaxTbMeanPs) {
      std::ostringstream seconds;
      seconds << ps / 1e12;
      value->fail("a mean thread-block time of " + seconds.str() + " s is beyond the 60 s limit");
    }
    profile.mean_ps = to_ps(*value, ps, false);
  }
  if (means == 0) node.fail("needs one of mean_ns, mean_us or mean_cycles (mean thread-block time)");
  if (const auto rsd = m.optional("rsd_percent")) profile.rsd_percent = read_rsd_percent(*rsd);
  return profile;
}

std::shared_ptr<const KernelDesc> read_kernel(const YamlNode& node, const std::string& library,
                                              const GpuConfig& gpu,
                                              const std::vector<std::shared_ptr<const KernelDesc>>& earlier) {
  const YamlMap m(node, kKernelKeys);
  auto k = std::make_shared<KernelDesc>();
  const YamlNode name = m.required("name");
  k->name = name.as_name();
  for (const auto& other : earlier) {
    if (other->name == k->name) {
      name.fail("duplicate kernel name '" + k->name + "' in library '" + library +
                "' (first defined at line " + std::to_string(other->where.line) + ")");
    }
  }
  k->library = library;
  k->where = node.where();
  if (const auto v = m.optional("benchmark")) k->benchmark = v->as_name();
  if (const auto v = m.optional("class1")) k->class1 = v->as_name();
  if (const auto v = m.optional("class2")) k->class2 = v->as_name();
  k->launches = m.optional_u32_in("launches", 1, 1, kMaxLaunches, "launches");
  // CUDA's grid limit in x (2^31 - 1); per-SM resources are checked when a workload uses the kernel.
  k->thread_blocks = m.required_u32_in("thread_blocks", 1, 0x7FFFFFFFU, "thread blocks");
  k->threads_per_tb = m.required_u32_in("threads_per_tb", 1, 65536, "threads");
  k->registers_per_tb = m.required_u32_in("registers_per_tb", 1, 1U << 24U, "registers");
  k->shared_memory_per_tb = m.optional_u32_in("shared_memory_per_tb", 0, 0, 64U << 20U, "bytes");
  k->tb_time = read_tb_time(m.required("tb_time"), gpu);
  // Liang 3.2's G_i: the device memory the kernel's application allocates (up to 1 PB).
  if (const auto v = m.optional("global_memory_bytes")) {
    k->global_memory_bytes = v->as_u64_in(1, 1ULL << 50U, "bytes");
  }
  if (const auto memory = m.optional("memory")) k->memory = read_memory(*memory);
  if (const auto interference = m.optional("interference")) {
    k->interference = read_interference(*interference);
  }
  if (const auto reference = m.optional("reference")) {
    // Published figures for validation tests only; any name, but every value must be a number.
    const YamlMap figures = YamlMap::any_keys(*reference);
    for (const auto& [key, value] : figures.entries()) k->reference[key] = value.as_number();
  }
  if (const auto text = m.optional("program")) {
    // Per-warp trip counts and barrier counts are checked over the warps of one thread block; the
    // phase annotations use this GPU's warp-level latencies (program/phase_analysis.h).
    const std::uint32_t warps = (k->threads_per_tb + gpu.warp_size - 1) / gpu.warp_size;
    auto compiled = std::make_shared<program::Program>(program::compile_program(*text, warps));
    program::analyze_phases(*compiled, program::instruction_latencies(gpu));
    k->program = std::move(compiled);
  }
  return k;
}

}  // namespace

namespace {

std::vector<std::shared_ptr<const KernelDesc>> parse_kernel_library(const std::string& path,
                                                                    const GpuConfig& gpu) {
  const YamlNode root = config::load_yaml_file(path);
  const YamlMap m(root, kLibraryKeys);
  const auto name = m.optional("name");
  const std::string library = name ? name->as_name() : std::filesystem::path(path).stem().string();
  std::vector<std::shared_ptr<const KernelDesc>> kernels;
  const std::vector<YamlNode> items = m.required("kernels").as_list();
  if (items.size() > kMaxKernels) {
    m.required("kernels").fail("at most " + std::to_string(kMaxKernels) + " kernels per library, got " +
                               std::to_string(items.size()));
  }
  kernels.reserve(items.size());
  for (const YamlNode& item : items) {
    kernels.push_back(read_kernel(item, library, gpu, kernels));
  }
  return kernels;
}

}  // namespace

std::vector<std::shared_ptr<const KernelDesc>> load_kernel_library(const std::string& path,
                                                                   const GpuConfig& gpu) {
  // Kept per process by (path, the file's text, the GPU's document): an experiment's workloads name the
  // same library dozens of times (pai-table5: ercbench.yaml 56 times, each parse compiling its programs),
  // which was a fifth of that experiment's run (issue 20). The kernels are const, so sharing them is safe;
  // a file that changes, or the same file for another GPU, is parsed again. Errors are not kept.
  std::ifstream file(path, std::ios::binary);
  if (!file) return parse_kernel_library(path, gpu);  // its error names the file
  std::ostringstream text;
  text << file.rdbuf();
  std::string key = path;
  key += '\0';
  key += gpu_config_document(gpu).dump();
  key += '\0';
  key += text.str();
  constexpr std::size_t kParsedLibrariesKept = 16;
  static std::map<std::string, std::vector<std::shared_ptr<const KernelDesc>>> parsed;
  const auto it = parsed.find(key);
  if (it != parsed.end()) return it->second;
  std::vector<std::shared_ptr<const KernelDesc>> kernels = parse_kernel_library(path, gpu);
  // Bounded: a process that loads many different libraries (the loader's fuzzer) must not grow without end.
  if (parsed.size() >= kParsedLibrariesKept) parsed.clear();
  parsed.emplace(std::move(key), kernels);
  return kernels;
}

std::vector<std::string> kernel_library_keys() {
  std::vector<std::string> keys;
  for (const std::string_view key : kLibraryKeys) {
    if (key != "kernels") {
      keys.emplace_back(key);
      continue;
    }
    for (const std::string_view kernel_key : kKernelKeys) {
      const std::string path = "kernels." + std::string(kernel_key);
      if (kernel_key == "tb_time") {
        for (const std::string_view time_key : kTbTimeKeys) {
          keys.push_back(path + "." + std::string(time_key));
        }
      } else if (kernel_key == "memory") {
        for (const std::string_view memory_key : kMemoryKeys) {
          keys.push_back(path + "." + std::string(memory_key));
        }
      } else if (kernel_key == "interference") {
        for (const std::string_view interference_key : kInterferenceKeys) {
          if (interference_key != "sensitivity") {
            keys.push_back(path + "." + std::string(interference_key));
            continue;
          }
          for (const std::string_view point_key : kSensitivityKeys) {
            keys.push_back(path + ".sensitivity." + std::string(point_key));
          }
        }
      } else {
        keys.push_back(path);
      }
    }
  }
  return keys;
}

nlohmann::json kernel_document(const KernelDesc& kernel) {
  nlohmann::json document = {
      {"library", kernel.library},
      {"name", kernel.name},
      {"benchmark", kernel.benchmark},
      {"class1", kernel.class1},
      {"class2", kernel.class2},
      {"launches", kernel.launches},
      {"thread_blocks", kernel.thread_blocks},
      {"threads_per_tb", kernel.threads_per_tb},
      {"registers_per_tb", kernel.registers_per_tb},
      {"shared_memory_per_tb", kernel.shared_memory_per_tb},
      {"tb_time", {{"mean_ps", kernel.tb_time.mean_ps}, {"rsd_percent", kernel.tb_time.rsd_percent}}},
      {"reference", kernel.reference}};
  // Absent when not given, so the keys of kernels without one stay what they were.
  if (kernel.global_memory_bytes > 0) document["global_memory_bytes"] = kernel.global_memory_bytes;
  // Absent without a `memory:` section, so the keys of kernels without one stay what they were.
  if (kernel.memory.bytes_per_tb > 0 || kernel.memory.l2_hit_percent > 0) {
    document["memory"] = {{"bytes_per_tb", kernel.memory.bytes_per_tb},
                          {"l2_hit_percent", kernel.memory.l2_hit_percent}};
  }
  // Absent without one, so the keys of kernels without one stay what they were.
  if (kernel.interference.any()) {
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& p : kernel.interference.sensitivity) {
      curve.push_back({{"gb_per_s", p.gb_per_s}, {"slowdown", p.slowdown}});
    }
    document["interference"] = {{"pressure_per_sm_gb_per_s", kernel.interference.pressure_per_sm_gb_per_s},
                                {"sensitivity", std::move(curve)}};
  }
  // The program as the model sees it (canonical instruction texts), not as spelled in the file; absent
  // without one, so the keys of TB-level kernels stay what they were.
  if (kernel.program) {
    nlohmann::json code = nlohmann::json::array();
    for (const program::Instruction& in : kernel.program->code) code.push_back(program::to_text(in));
    document["program"] = std::move(code);
  }
  return document;
}

}  // namespace gpumux
