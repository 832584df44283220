#include "config/kernel_library_loader.h"

#include <cmath>
#include <filesystem>

#include "config/yaml_reader.h"

namespace gpumux {

namespace {

using config::YamlMap;
using config::YamlNode;

TbTimeProfile read_tb_time(const YamlNode& node, const GpuConfig& gpu) {
  const YamlMap m(node, {"mean_ns", "mean_us", "mean_cycles", "rsd_percent"});
  TbTimeProfile profile;
  int means = 0;
  for (const char* unit : {"mean_ns", "mean_us", "mean_cycles"}) {
    const auto value = m.optional(unit);
    if (!value) continue;
    if (++means > 1) value->fail("give exactly one of mean_ns, mean_us or mean_cycles");
    const double mean = value->as_positive_number();
    const std::string u(unit);
    if (u == "mean_ns") profile.mean_ps = to_ps(*value, mean * 1e3, false);
    if (u == "mean_us") profile.mean_ps = to_ps(*value, mean * 1e6, false);
    if (u == "mean_cycles") profile.mean_ps = to_ps(*value, mean * gpu.core_period_ps(), false);
  }
  if (means == 0) node.fail("needs one of mean_ns, mean_us or mean_cycles (mean thread-block time)");
  profile.rsd_percent = m.optional_nonnegative("rsd_percent", 0.0);
  return profile;
}

std::shared_ptr<const KernelDesc> read_kernel(const YamlNode& node, const std::string& library,
                                              const GpuConfig& gpu,
                                              const std::vector<std::shared_ptr<const KernelDesc>>& earlier) {
  const YamlMap m(node,
                  {"name", "benchmark", "class1", "class2", "launches", "thread_blocks", "threads_per_tb",
                   "registers_per_tb", "shared_memory_per_tb", "tb_time", "reference"});
  auto k = std::make_shared<KernelDesc>();
  const YamlNode name = m.required("name");
  k->name = name.as_string();
  for (const auto& other : earlier) {
    if (other->name == k->name) {
      name.fail("duplicate kernel name '" + k->name + "' in library '" + library +
                "' (first defined at line " + std::to_string(other->where.line) + ")");
    }
  }
  k->library = library;
  k->where = node.where();
  k->benchmark = m.optional_string("benchmark", "");
  k->class1 = m.optional_string("class1", "");
  k->class2 = m.optional_string("class2", "");
  k->launches = m.optional_u32("launches", 1);
  k->thread_blocks = m.required_u32("thread_blocks");
  k->threads_per_tb = m.required_u32("threads_per_tb");
  k->registers_per_tb = m.required_u32("registers_per_tb");
  k->shared_memory_per_tb = m.optional_u32("shared_memory_per_tb", 0, 0);
  k->tb_time = read_tb_time(m.required("tb_time"), gpu);
  if (const auto reference = m.optional("reference")) {
    // Published figures for validation tests only; any name, but every value must be a number.
    const YamlMap figures = YamlMap::any_keys(*reference);
    for (const auto& [key, value] : figures.entries()) k->reference[key] = value.as_number();
  }
  return k;
}

}  // namespace

std::vector<std::shared_ptr<const KernelDesc>> load_kernel_library(const std::string& path,
                                                                   const GpuConfig& gpu) {
  const YamlNode root = config::load_yaml_file(path);
  const YamlMap m(root, {"name", "kernels"});
  const std::string library = m.optional_string("name", std::filesystem::path(path).stem().string());
  std::vector<std::shared_ptr<const KernelDesc>> kernels;
  for (const YamlNode& item : m.required("kernels").as_list()) {
    kernels.push_back(read_kernel(item, library, gpu, kernels));
  }
  return kernels;
}

}  // namespace gpumux
