#include "stm/kernel_profile.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "config/yaml_reader.h"
#include "core/error.h"

namespace gpumux::stm {

namespace {

using config::YamlMap;
using config::YamlNode;

// The keys a profile file may hold (docs/config.md "Profile files"); anything else is an error.
const std::vector<std::string_view> kProfileKeys = {
    "gpu",    "sms",    "peak_bandwidth_gb_per_s", "global_memory_bytes", "sm_model", "memory_model",
    "method", "kernels"};
const std::vector<std::string_view> kKernelKeys = {"kernel",        "thread_blocks", "global_memory_bytes",
                                                   "tb_latency_ns", "latency_ns",    "bandwidth_gb_per_s"};

// Ranges as for GPU files and kernel libraries (docs/config.md "Ranges"): the same physical bounds.
constexpr std::uint32_t kMaxSms = 1024;
constexpr double kMinPeakGbPerS = 0.1;
constexpr double kMaxGbPerS = 100'000.0;
constexpr std::uint32_t kMaxThreadBlocks = 0x7FFFFFFFU;  // CUDA's grid limit in x
constexpr std::size_t kMaxKernels = 10'000;

/// One of `choices`, else an error listing them.
std::string read_choice(const YamlNode& node, const std::vector<std::string>& choices) {
  std::string value = node.as_name();
  for (const std::string& choice : choices) {
    if (value == choice) {
      return value;
    }
  }
  node.fail("must be " + config::join_choices(choices) + ", got '" + value + "'");
}

/// A list of exactly `sms` numbers, R[1..M] or B[1..M]: positive for latencies, non-negative for bandwidths.
std::vector<double> read_per_sm_list(const YamlNode& node, std::uint32_t sms, bool positive) {
  const std::vector<YamlNode> items = node.as_list();
  if (items.size() != sms) {
    node.fail("needs one value per SM count m = 1.." + std::to_string(sms) + " (sms: " + std::to_string(sms) +
              "), got " + std::to_string(items.size()));
  }
  std::vector<double> values;
  values.reserve(items.size());
  for (const YamlNode& item : items) {
    if (positive) {
      values.push_back(item.as_positive_number());
    } else {
      values.push_back(item.as_number_in(0.0, kMaxGbPerS, "GB/s"));
    }
  }
  return values;
}

/// One kernel's profile; `seen` maps the names read so far to their lines, for duplicates.
KernelProfile read_kernel(const YamlNode& node, std::uint32_t sms, std::map<std::string, int>& seen) {
  const YamlMap m(node, kKernelKeys);
  KernelProfile k;
  const YamlNode name = m.required("kernel");
  k.kernel = name.as_name();
  const auto [first, added] = seen.emplace(k.kernel, name.where().line);
  if (!added) {
    name.fail("duplicate kernel '" + k.kernel + "' (first profiled at line " + std::to_string(first->second) +
              ")");
  }
  k.thread_blocks = m.required_u32_in("thread_blocks", 1, kMaxThreadBlocks, "thread blocks");
  if (const auto bytes = m.optional("global_memory_bytes")) {
    k.global_memory_bytes = bytes->as_u64(0);
  }
  k.tb_latency_ns = m.required_positive("tb_latency_ns");
  k.latency_ns = read_per_sm_list(m.required("latency_ns"), sms, true);
  k.bandwidth_gb_per_s = read_per_sm_list(m.required("bandwidth_gb_per_s"), sms, false);
  return k;
}

/// `value` with 17 significant digits: strtod reads back the same double (IEEE 754 binary64).
std::string number_text(double value) {
  if (!std::isfinite(value)) {
    throw std::invalid_argument("write_profile_file: non-finite number " + std::to_string(value));
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

/// A name as a YAML scalar, quoted where YAML needs it (yaml-cpp decides, as the reader's parser).
std::string scalar_text(const std::string& name) {
  YAML::Emitter out;
  out << name;
  return out.c_str();
}

/// What load_profile_file would reject, as std::invalid_argument: a writer must not produce a file its
/// reader refuses (the profiles come from a program, so this is a programming error, not bad input).
void check_writable(const ProfileSet& profiles) {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("write_profile_file: " + what);
  };
  const auto check_name = [&fail](const std::string& key, const std::string& name) {
    if (name.empty() || name.size() > config::kMaxNameBytes || !config::text_problem(name, false).empty()) {
      fail(key + " '" + name + "' is not a name load_profile_file accepts");
    }
  };
  check_name("gpu", profiles.gpu);
  if (profiles.sms < 1 || profiles.sms > kMaxSms) {
    fail("sms must be 1.." + std::to_string(kMaxSms) + ", got " + std::to_string(profiles.sms));
  }
  if (!(profiles.peak_bandwidth_gb_per_s >= kMinPeakGbPerS &&
        profiles.peak_bandwidth_gb_per_s <= kMaxGbPerS)) {
    fail("peak_bandwidth_gb_per_s out of range");
  }
  // The reader takes integers as int64.
  constexpr auto kMaxBytes = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (profiles.global_memory_bytes > kMaxBytes) {
    fail("global_memory_bytes above 2^63 - 1");
  }
  if (profiles.kernels.empty() || profiles.kernels.size() > kMaxKernels) {
    fail("1.." + std::to_string(kMaxKernels) + " kernels, got " + std::to_string(profiles.kernels.size()));
  }
  std::set<std::string> names;
  for (const KernelProfile& k : profiles.kernels) {
    check_name("kernel", k.kernel);
    if (!names.insert(k.kernel).second) {
      fail("duplicate kernel '" + k.kernel + "'");
    }
    if (k.thread_blocks < 1 || k.thread_blocks > kMaxThreadBlocks || !(k.tb_latency_ns > 0) ||
        k.global_memory_bytes > kMaxBytes || k.latency_ns.size() != profiles.sms ||
        k.bandwidth_gb_per_s.size() != profiles.sms) {
      fail("kernel '" + k.kernel +
           "': thread_blocks, global_memory_bytes, tb_latency_ns or the length of its lists (sms: " +
           std::to_string(profiles.sms) + ") out of range");
    }
    for (std::uint32_t m = 1; m <= profiles.sms; ++m) {
      if (!(k.R(m) > 0) || !(k.B(m) >= 0 && k.B(m) <= kMaxGbPerS)) {
        fail("kernel '" + k.kernel + "': R[" + std::to_string(m) + "] must be positive and B[" +
             std::to_string(m) + "] within 0.." + number_text(kMaxGbPerS) + " GB/s");
      }
    }
  }
  if (profiles.sm_model != "tb" && profiles.sm_model != "warp") {
    fail("sm_model must be tb or warp, got '" + profiles.sm_model + "'");
  }
  if (profiles.method != "dummy" && profiles.method != "partition") {
    fail("method must be dummy or partition, got '" + profiles.method + "'");
  }
  if (profiles.memory_model != "simple" && profiles.memory_model != "dram") {
    fail("memory_model must be simple or dram, got '" + profiles.memory_model + "'");
  }
}

std::string number_list(const std::vector<double>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    text += (i == 0 ? "" : ", ") + number_text(values[i]);
  }
  return text + "]";
}

}  // namespace

const KernelProfile* ProfileSet::find(const std::string& kernel) const {
  for (const KernelProfile& k : kernels) {
    if (k.kernel == kernel) {
      return &k;
    }
  }
  return nullptr;
}

ProfileSet load_profile_file(const std::string& path) {
  const YamlNode root = config::load_yaml_file(path);
  const YamlMap m(root, kProfileKeys);
  ProfileSet profiles;
  profiles.gpu = m.required("gpu").as_name();
  profiles.sms = m.required_u32_in("sms", 1, kMaxSms, "SMs");
  profiles.peak_bandwidth_gb_per_s =
      m.required("peak_bandwidth_gb_per_s").as_number_in(kMinPeakGbPerS, kMaxGbPerS, "GB/s");
  if (const auto bytes = m.optional("global_memory_bytes")) {
    profiles.global_memory_bytes = bytes->as_u64(0);
  }
  profiles.sm_model = read_choice(m.required("sm_model"), {"tb", "warp"});
  profiles.memory_model = read_choice(m.required("memory_model"), {"simple", "dram"});
  if (const auto method = m.optional("method")) {
    profiles.method = read_choice(*method, {"dummy", "partition"});
  }
  const YamlNode kernels = m.required("kernels");
  const std::vector<YamlNode> items = kernels.as_list();
  if (items.size() > kMaxKernels) {
    kernels.fail("at most " + std::to_string(kMaxKernels) + " kernels per profile file, got " +
                 std::to_string(items.size()));
  }
  std::map<std::string, int> seen;
  profiles.kernels.reserve(items.size());
  for (const YamlNode& item : items) {
    profiles.kernels.push_back(read_kernel(item, profiles.sms, seen));
  }
  return profiles;
}

void write_profile_file(const std::string& path, const ProfileSet& profiles) {
  check_writable(profiles);
  std::string text =
      "# Kernel profiles for spatial-temporal multitasking (Liang et al. 3.2; docs/config.md\n"
      "# \"Profile files\"): R[m] = latency_ns[m - 1], B[m] = bandwidth_gb_per_s[m - 1].\n";
  text += "gpu: " + scalar_text(profiles.gpu) + "\n";
  text += "sms: " + std::to_string(profiles.sms) + "\n";
  text += "peak_bandwidth_gb_per_s: " + number_text(profiles.peak_bandwidth_gb_per_s) + "\n";
  text += "global_memory_bytes: " + std::to_string(profiles.global_memory_bytes) + "\n";
  text += "sm_model: " + scalar_text(profiles.sm_model) + "\n";
  text += "memory_model: " + scalar_text(profiles.memory_model) + "\n";
  text += "method: " + scalar_text(profiles.method) + "\n";
  text += "kernels:\n";
  for (const KernelProfile& k : profiles.kernels) {
    text += "  - kernel: " + scalar_text(k.kernel) + "\n";
    text += "    thread_blocks: " + std::to_string(k.thread_blocks) + "\n";
    text += "    global_memory_bytes: " + std::to_string(k.global_memory_bytes) + "\n";
    text += "    tb_latency_ns: " + number_text(k.tb_latency_ns) + "\n";
    text += "    latency_ns: " + number_list(k.latency_ns) + "\n";
    text += "    bandwidth_gb_per_s: " + number_list(k.bandwidth_gb_per_s) + "\n";
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!(out << text) || !out.flush()) {
    throw InputError("cannot write profile file '" + path + "'");
  }
}

}  // namespace gpumux::stm
