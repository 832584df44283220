#include "kernelet/characterisation.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>

#include "config/yaml_reader.h"
#include "core/error.h"

namespace gpumux::kernelet {

namespace {

using config::YamlMap;
using config::YamlNode;

// The keys a characterisation file may hold (docs/config.md "Characterisation files"); anything else is an
// error.
const std::vector<std::string_view> kFileKeys = {
    "gpu", "sms", "core_clock_mhz", "sm_model", "memory_model", "request_bytes", "model", "kernels", "pairs"};
const std::vector<std::string_view> kModelKeys = {"warp_schedulers",     "peak_ipc_per_sm", "latency_cycles",
                                                  "requests_per_cycle",  "latency_slope",   "latency_offset",
                                                  "uncoalesced_requests"};
const std::vector<std::string_view> kKernelKeys = {"kernel",
                                                   "thread_blocks",
                                                   "threads_per_tb",
                                                   "registers_per_tb",
                                                   "shared_memory_per_tb",
                                                   "warps_per_tb",
                                                   "tbs_per_sm",
                                                   "instructions_per_tb",
                                                   "memory_ratio",
                                                   "uncoalesced_share",
                                                   "ipc",
                                                   "pur",
                                                   "mur",
                                                   "min_slice_tbs"};
const std::vector<std::string_view> kPairKeys = {"first",         "second",    "first_per_sm",
                                                 "second_per_sm", "first_ipc", "second_ipc"};

// Physical bounds, as for GPU files and kernel libraries (docs/config.md "Ranges").
constexpr std::uint32_t kMaxSms = 1024;
constexpr std::uint32_t kMaxThreadBlocks = 0x7FFFFFFFU;  // CUDA's grid limit in x
constexpr std::uint32_t kMaxPerSm = 4096;
constexpr double kMaxIpc = 1024;    // warp instructions per cycle per SM: far above any GPU
constexpr double kMaxCycles = 1e9;  // a latency of a second at 1 GHz is a typo
constexpr double kMaxInstructionsPerTb = 1e15;
constexpr std::size_t kMaxEntries = 100'000;

KernelCharacter read_kernel(const YamlNode& node, std::map<std::string, int>& seen) {
  const YamlMap m(node, kKernelKeys);
  KernelCharacter k;
  const YamlNode name = m.required("kernel");
  k.kernel = name.as_name();
  const auto [first, added] = seen.emplace(k.kernel, name.where().line);
  if (!added) {
    name.fail("duplicate kernel '" + k.kernel + "' (first at line " + std::to_string(first->second) + ")");
  }
  k.thread_blocks = m.required_u32_in("thread_blocks", 1, kMaxThreadBlocks, "thread blocks");
  k.threads_per_tb = m.required_u32_in("threads_per_tb", 1, 1U << 20U, "threads");
  k.registers_per_tb = m.required_u32_in("registers_per_tb", 0, 1U << 30U, "registers");
  k.shared_memory_per_tb = m.required_u32_in("shared_memory_per_tb", 0, 1U << 30U, "bytes");
  k.warps_per_tb = m.required_u32_in("warps_per_tb", 1, 1U << 15U, "warps");
  k.tbs_per_sm = m.required_u32_in("tbs_per_sm", 1, kMaxPerSm, "thread blocks");
  k.instructions_per_tb =
      m.required("instructions_per_tb").as_number_in(1, kMaxInstructionsPerTb, "instructions");
  k.memory_ratio = m.required("memory_ratio").as_number_in(0, 1);
  k.uncoalesced_share = m.required("uncoalesced_share").as_number_in(0, 1);
  k.ipc = m.required("ipc").as_number_in(0, kMaxIpc, "instructions per cycle");
  k.pur = m.required("pur").as_number_in(0, kMaxIpc);
  k.mur = m.required("mur").as_number_in(0, kMaxIpc);
  k.min_slice_tbs = m.optional_u32_in("min_slice_tbs", 0, 0, kMaxThreadBlocks, "thread blocks");
  return k;
}

PairMeasurement read_pair(const YamlNode& node, const Characterisation& c) {
  const YamlMap m(node, kPairKeys);
  PairMeasurement p;
  for (const auto& [key, field] : {std::pair{"first", &p.first}, std::pair{"second", &p.second}}) {
    const YamlNode name = m.required(key);
    *field = name.as_name();
    if (c.find(*field) == nullptr) name.fail("kernel '" + *field + "' is not among the file's kernels");
  }
  p.first_per_sm = m.required_u32_in("first_per_sm", 1, kMaxPerSm, "thread blocks");
  p.second_per_sm = m.required_u32_in("second_per_sm", 1, kMaxPerSm, "thread blocks");
  p.first_ipc = m.required("first_ipc").as_number_in(0, kMaxIpc, "instructions per cycle");
  p.second_ipc = m.required("second_ipc").as_number_in(0, kMaxIpc, "instructions per cycle");
  return p;
}

std::string read_choice(const YamlNode& node, const std::vector<std::string>& choices) {
  std::string value = node.as_name();
  for (const std::string& choice : choices) {
    if (value == choice) return value;
  }
  node.fail("must be " + config::join_choices(choices) + ", got '" + value + "'");
}

/// `value` with 17 significant digits: strtod reads back the same double.
std::string number_text(double value) {
  if (!std::isfinite(value)) {
    throw std::invalid_argument("write_characterisation: non-finite number " + std::to_string(value));
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string scalar_text(const std::string& name) {
  YAML::Emitter out;
  out << name;
  return out.c_str();
}

/// What load_characterisation would reject, as std::invalid_argument (the contents come from a program).
void check_writable(const Characterisation& c) {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("write_characterisation: " + what);
  };
  const auto in = [](double v, double lo, double hi) { return v >= lo && v <= hi; };
  if (c.sms < 1 || c.sms > kMaxSms) fail("sms out of range");
  if (!in(c.core_clock_mhz, 1, 100'000)) fail("core_clock_mhz out of range");
  if (c.kernels.empty() || c.kernels.size() > kMaxEntries) fail("no kernels, or too many");
  std::set<std::string> names;
  for (const KernelCharacter& k : c.kernels) {
    if (!names.insert(k.kernel).second) fail("duplicate kernel '" + k.kernel + "'");
    if (k.thread_blocks < 1 || k.warps_per_tb < 1 || k.tbs_per_sm < 1 || k.threads_per_tb < 1 ||
        !in(k.instructions_per_tb, 1, kMaxInstructionsPerTb) || !in(k.memory_ratio, 0, 1) ||
        !in(k.uncoalesced_share, 0, 1) || !in(k.ipc, 0, kMaxIpc) || !in(k.pur, 0, kMaxIpc) ||
        !in(k.mur, 0, kMaxIpc)) {
      fail("kernel '" + k.kernel + "': a field out of range");
    }
  }
  for (const PairMeasurement& p : c.pairs) {
    if (names.count(p.first) == 0 || names.count(p.second) == 0 || p.first_per_sm < 1 ||
        p.second_per_sm < 1 || !in(p.first_ipc, 0, kMaxIpc) || !in(p.second_ipc, 0, kMaxIpc)) {
      fail("pair " + p.first + "+" + p.second + ": a field out of range");
    }
  }
}

}  // namespace

const KernelCharacter* Characterisation::find(const std::string& kernel) const {
  for (const KernelCharacter& k : kernels) {
    if (k.kernel == kernel) return &k;
  }
  return nullptr;
}

const PairMeasurement* Characterisation::find_pair(const std::string& first, std::uint32_t first_per_sm,
                                                   const std::string& second,
                                                   std::uint32_t second_per_sm) const {
  for (const PairMeasurement& p : pairs) {
    if ((p.first == first && p.first_per_sm == first_per_sm && p.second == second &&
         p.second_per_sm == second_per_sm) ||
        (p.first == second && p.first_per_sm == second_per_sm && p.second == first &&
         p.second_per_sm == first_per_sm)) {
      return &p;
    }
  }
  return nullptr;
}

Characterisation load_characterisation(const std::string& path) {
  const YamlNode root = config::load_yaml_file(path);
  const YamlMap m(root, kFileKeys);
  Characterisation c;
  c.gpu = m.required("gpu").as_name();
  c.sms = m.required_u32_in("sms", 1, kMaxSms, "SMs");
  c.core_clock_mhz = m.required("core_clock_mhz").as_number_in(1, 100'000, "MHz");
  c.sm_model = read_choice(m.required("sm_model"), {"warp"});
  c.memory_model = read_choice(m.required("memory_model"), {"simple", "dram"});
  c.request_bytes = m.required_u32_in("request_bytes", 1, 1U << 20U, "bytes");
  {
    const YamlMap mm(m.required("model"), kModelKeys);
    c.model.warp_schedulers = mm.required_u32_in("warp_schedulers", 1, 64, "schedulers");
    c.model.peak_ipc_per_sm =
        mm.required("peak_ipc_per_sm").as_number_in(0.001, kMaxIpc, "instructions per cycle");
    c.model.latency_cycles = mm.required("latency_cycles").as_number_in(0, kMaxCycles, "cycles");
    c.model.requests_per_cycle =
        mm.required("requests_per_cycle").as_number_in(1e-6, 1e6, "requests per cycle");
    c.model.latency_slope = mm.required("latency_slope").as_number_in(0, kMaxCycles);
    c.model.latency_offset = mm.required("latency_offset").as_number_in(-kMaxCycles, kMaxCycles, "cycles");
    c.model.uncoalesced_requests = mm.required("uncoalesced_requests").as_number_in(1, 1024, "requests");
  }
  const YamlNode kernels = m.required("kernels");
  const std::vector<YamlNode> items = kernels.as_list();
  if (items.size() > kMaxEntries) kernels.fail("at most " + std::to_string(kMaxEntries) + " kernels");
  std::map<std::string, int> seen;
  for (const YamlNode& item : items) c.kernels.push_back(read_kernel(item, seen));
  if (const auto pairs = m.optional("pairs")) {
    const std::vector<YamlNode> list = pairs->as_list(false);
    if (list.size() > kMaxEntries) pairs->fail("at most " + std::to_string(kMaxEntries) + " pairs");
    for (const YamlNode& item : list) c.pairs.push_back(read_pair(item, c));
  }
  return c;
}

void write_characterisation(const std::string& path, const Characterisation& c) {
  check_writable(c);
  std::string text =
      "# Kernel characterisation for Kernelet (Zhong and He 4.3-4.4; docs/config.md \"Characterisation\n"
      "# files\"), written by gpumux characterise.\n";
  text += "gpu: " + scalar_text(c.gpu) + "\n";
  text += "sms: " + std::to_string(c.sms) + "\n";
  text += "core_clock_mhz: " + number_text(c.core_clock_mhz) + "\n";
  text += "sm_model: " + scalar_text(c.sm_model) + "\n";
  text += "memory_model: " + scalar_text(c.memory_model) + "\n";
  text += "request_bytes: " + std::to_string(c.request_bytes) + "\n";
  text += "model:\n";
  text += "  warp_schedulers: " + std::to_string(c.model.warp_schedulers) + "\n";
  text += "  peak_ipc_per_sm: " + number_text(c.model.peak_ipc_per_sm) + "\n";
  text += "  latency_cycles: " + number_text(c.model.latency_cycles) + "\n";
  text += "  requests_per_cycle: " + number_text(c.model.requests_per_cycle) + "\n";
  text += "  latency_slope: " + number_text(c.model.latency_slope) + "\n";
  text += "  latency_offset: " + number_text(c.model.latency_offset) + "\n";
  text += "  uncoalesced_requests: " + number_text(c.model.uncoalesced_requests) + "\n";
  text += "kernels:\n";
  for (const KernelCharacter& k : c.kernels) {
    text += "  - kernel: " + scalar_text(k.kernel) + "\n";
    text += "    thread_blocks: " + std::to_string(k.thread_blocks) + "\n";
    text += "    threads_per_tb: " + std::to_string(k.threads_per_tb) + "\n";
    text += "    registers_per_tb: " + std::to_string(k.registers_per_tb) + "\n";
    text += "    shared_memory_per_tb: " + std::to_string(k.shared_memory_per_tb) + "\n";
    text += "    warps_per_tb: " + std::to_string(k.warps_per_tb) + "\n";
    text += "    tbs_per_sm: " + std::to_string(k.tbs_per_sm) + "\n";
    text += "    instructions_per_tb: " + number_text(k.instructions_per_tb) + "\n";
    text += "    memory_ratio: " + number_text(k.memory_ratio) + "\n";
    text += "    uncoalesced_share: " + number_text(k.uncoalesced_share) + "\n";
    text += "    ipc: " + number_text(k.ipc) + "\n";
    text += "    pur: " + number_text(k.pur) + "\n";
    text += "    mur: " + number_text(k.mur) + "\n";
    text += "    min_slice_tbs: " + std::to_string(k.min_slice_tbs) + "\n";
  }
  if (!c.pairs.empty()) {
    text += "pairs:\n";
    for (const PairMeasurement& p : c.pairs) {
      text += "  - {first: " + scalar_text(p.first) + ", second: " + scalar_text(p.second) +
              ", first_per_sm: " + std::to_string(p.first_per_sm) +
              ", second_per_sm: " + std::to_string(p.second_per_sm) +
              ", first_ipc: " + number_text(p.first_ipc) + ", second_ipc: " + number_text(p.second_ipc) +
              "}\n";
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!(out << text) || !out.flush()) throw InputError("cannot write characterisation file '" + path + "'");
}

}  // namespace gpumux::kernelet
