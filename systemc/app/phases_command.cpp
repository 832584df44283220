// gpumux phases: the compile-time phase analysis of kernel programs (Awatramani 3.3.1, 3.4.2.1):
// per kernel with a `program:`, its phases (pcs, source lines, length in cycles, instruction count)
// and every instruction's phase distance, as text or JSON. Latencies come from a GPU config's
// warp-level SM (default: the Tesla M2090 of Awatramani Table 3.1, configs/gpus/tesla-m2090.yaml).

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "config/yaml_reader.h"
#include "core/error.h"
#include "program/phase_analysis.h"
#include "program/program_parser.h"

namespace gpumux {
namespace {

namespace po = boost::program_options;

constexpr const char* kPhasesUsage =
    "usage: gpumux phases --kernels FILE [--kernel NAME] [--gpu FILE] [--json]\n";

nlohmann::json latencies_json(const program::InstructionLatencies& l) {
  return {{"alu", l.alu},         {"sfu", l.sfu},      {"shared", l.shared}, {"global_issue", l.global_issue},
          {"barrier", l.barrier}, {"branch", l.branch}};
}

nlohmann::json program_json(const program::Program& p) {
  nlohmann::json phases = nlohmann::json::array();
  for (std::size_t i = 0; i < p.phases.size(); ++i) {
    const program::Phase& phase = p.phases[i];
    phases.push_back({{"index", i},
                      {"first_pc", phase.first_pc},
                      {"last_pc", phase.last_pc},
                      {"first_line", p.code[phase.first_pc].line},
                      {"last_line", p.code[phase.last_pc].line},
                      {"length", phase.length},
                      {"instructions", phase.last_pc - phase.first_pc + 1}});
  }
  nlohmann::json code = nlohmann::json::array();
  for (std::size_t pc = 0; pc < p.code.size(); ++pc) {
    const program::Instruction& in = p.code[pc];
    code.push_back({{"pc", pc},
                    {"line", in.line},
                    {"op", program::op_name(in.op)},
                    {"text", program::to_text(in)},
                    {"phase", in.phase},
                    {"phase_distance", in.phase_distance}});
  }
  return {{"source", p.source},
          {"instructions", p.code.size()},
          {"dynamic_instructions", p.dynamic_instructions},
          {"registers", p.registers},
          {"loop_depth", p.loop_depth},
          {"phases", std::move(phases)},
          {"code", std::move(code)}};
}

void print_program(const KernelDesc& k) {
  const program::Program& p = *k.program;
  std::printf(
      "kernel %s (%s:%d): %zu instructions, %zu phases, %llu instructions per warp (warp 0), %u registers\n",
      k.name.c_str(), k.where.file.c_str(), k.where.line, p.code.size(), p.phases.size(),
      static_cast<unsigned long long>(p.dynamic_instructions), p.registers);
  std::printf("  %5s %15s %15s %8s %12s\n", "phase", "first pc:line", "last pc:line", "length",
              "instructions");
  for (std::size_t i = 0; i < p.phases.size(); ++i) {
    const program::Phase& phase = p.phases[i];
    const std::string first =
        std::to_string(phase.first_pc) + ":" + std::to_string(p.code[phase.first_pc].line);
    const std::string last = std::to_string(phase.last_pc) + ":" + std::to_string(p.code[phase.last_pc].line);
    std::printf("  %5zu %15s %15s %8u %12u\n", i, first.c_str(), last.c_str(), phase.length,
                phase.last_pc - phase.first_pc + 1);
  }
  std::printf("  %5s %6s %5s %8s  %s\n", "pc", "line", "phase", "distance", "instruction");
  for (std::size_t pc = 0; pc < p.code.size(); ++pc) {
    const program::Instruction& in = p.code[pc];
    std::printf("  %5zu %6u %5u %8u  %s\n", pc, in.line, in.phase, in.phase_distance,
                program::to_text(in).c_str());
  }
}

}  // namespace

int phases_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux phases options");
  std::string kernels_path;
  std::string kernel_name;
  std::string gpu_path;  // default: configs/gpus/tesla-m2090.yaml, found by config_file()
  options.add_options()("help,h", "show this help")("json", "print one JSON object")(
      "kernels", po::value(&kernels_path), "kernel library (required)")(
      "kernel", po::value(&kernel_name), "only this kernel (exit 2 if it has no program)")(
      "gpu", po::value(&gpu_path),
      "GPU config giving the instruction latencies (default: configs/gpus/tesla-m2090.yaml)");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
    po::store(parsed, vm);
    po::notify(vm);
    reject_positional_arguments("phases", parsed);
  } catch (const po::error& e) {
    std::cerr << "gpumux phases: " << e.what() << '\n' << kPhasesUsage;
    return kExitBadInput;
  }
  if (vm.count("help") != 0U) {
    std::cout << kPhasesUsage << '\n' << options << '\n';
    return kExitOk;
  }
  if (kernels_path.empty()) {
    std::cerr << "gpumux phases: --kernels FILE is required\n" << kPhasesUsage;
    return kExitBadInput;
  }
  if (gpu_path.empty()) gpu_path = config_file("gpus/tesla-m2090.yaml");
  const GpuConfig gpu = load_gpu_config(gpu_path);
  const program::InstructionLatencies latencies = program::instruction_latencies(gpu);
  std::vector<std::shared_ptr<const KernelDesc>> kernels = load_kernel_library(kernels_path, gpu);
  if (vm.count("kernel") != 0U) {
    const auto it =
        std::find_if(kernels.begin(), kernels.end(), [&](const auto& k) { return k->name == kernel_name; });
    if (it == kernels.end()) {
      std::vector<std::string> names;
      names.reserve(kernels.size());
      for (const auto& k : kernels) names.push_back(k->name);
      const std::string guess = config::closest_name(kernel_name, names);
      throw InputError(kernels_path + ": no kernel '" + kernel_name + "'" +
                       (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                       "; kernels: " + config::join_choices(names, " and "));
    }
    if (!(*it)->program) {
      throw InputError((*it)->where, "",
                       "kernel '" + kernel_name +
                           "' has no program: (it runs on TB-level SMs only; "
                           "docs/config.md \"Kernel programs\")");
    }
    kernels = {*it};
  }

  if (vm.count("json") != 0U) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& k : kernels) {
      list.push_back({{"name", k->name},
                      {"library", k->library},
                      {"where", k->where.file + ":" + std::to_string(k->where.line)},
                      {"program", k->program ? program_json(*k->program) : nlohmann::json()}});
    }
    const nlohmann::json out = {{"gpu", gpu.name},
                                {"gpu_file", gpu_path},
                                {"latencies", latencies_json(latencies)},
                                {"kernels", std::move(list)}};
    std::cout << out.dump(2) << '\n';
    return kExitOk;
  }
  std::printf(
      "phases on %s (%s): cycles per instruction alu %u, sfu %u, shared %u, global issue %u, "
      "barrier %u, loop-back %u\n",
      gpu.name.c_str(), gpu_path.c_str(), latencies.alu, latencies.sfu, latencies.shared,
      latencies.global_issue, latencies.barrier, latencies.branch);
  for (const auto& k : kernels) {
    std::printf("\n");
    if (k->program) {
      print_program(*k);
    } else {
      std::printf("kernel %s (%s:%d): no program (TB-level only)\n", k->name.c_str(), k->where.file.c_str(),
                  k->where.line);
    }
  }
  return kExitOk;
}

}  // namespace gpumux
