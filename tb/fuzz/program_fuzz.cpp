// libFuzzer harness: kernel programs (program/program_parser.h, program/phase_analysis.h), through the
// kernel-library loader against the shipped Kepler K20c. Seeds: tb/fuzz/seeds/program/ (libraries whose
// kernels carry programs; the shipped libraries have none yet). See docs/fuzzing.md.
//
// Besides "every bad program is an InputError" (run_loader), every program the loader accepts must
// satisfy what the warp-level SM relies on; a violation aborts, which libFuzzer reports as a crash:
// loop-backs jump backwards to a body start at a consistent depth, registers are in range and read only
// after a write (or live-in), phases tile the code in order, and distances and lengths add up.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "config/kernel_library_loader.h"
#include "fuzz/fuzz_support.h"
#include "program/phase_analysis.h"
#include "program/program_parser.h"

namespace {

using gpumux::program::Instruction;
using gpumux::program::Op;
using gpumux::program::Program;

[[noreturn]] void broken(const Program& p, std::size_t pc, const std::string& what) {
  std::fprintf(stderr, "fuzz harness: program %s, pc %zu: %s\n", p.source.c_str(), pc, what.c_str());
  std::abort();
}

void check(const Program& p, const gpumux::program::InstructionLatencies& latencies) {
  if (p.code.empty() || p.code.size() > gpumux::program::kMaxStaticInstructions) broken(p, 0, "code size");
  if (p.loop_depth > gpumux::program::kMaxLoopDepth) broken(p, 0, "loop depth");
  if (p.loop_depth == 0 && p.dynamic_instructions != p.code.size()) broken(p, 0, "dynamic count");
  if (p.dynamic_instructions > gpumux::program::kMaxDynamicInstructions) broken(p, 0, "dynamic count");
  std::uint32_t written = (1U << gpumux::program::kLiveInRegisters) - 1U;  // bit per register below 32
  for (std::size_t pc = 0; pc < p.code.size(); ++pc) {
    const Instruction& in = p.code[pc];
    for (const auto r : in.reads) {
      if (r >= p.registers || r > gpumux::program::kMaxRegister) broken(p, pc, "read register out of range");
      if (r < 32 && (written & (1U << r)) == 0) broken(p, pc, "register read before a write");
    }
    if (in.write != gpumux::program::kNoReg) {
      if (in.write >= p.registers) broken(p, pc, "written register out of range");
      if (in.write < 32) written |= 1U << in.write;
    }
    if (in.op == Op::kLoopBack) {
      if (in.target > pc || in.trip_counts.empty() || in.depth >= p.loop_depth) broken(p, pc, "loop-back");
      for (const auto n : in.trip_counts) {
        if (n == 0 || n > gpumux::program::kMaxTripCount) broken(p, pc, "trip count");
      }
    }
    if ((in.op == Op::kGlobalLoad || in.op == Op::kGlobalStore) &&
        (in.bytes == 0 || in.bytes > gpumux::program::kMaxAccessBytes)) {
      broken(p, pc, "bytes");
    }
    // Canonical text reads back as the same instruction.
    if (in.op != Op::kLoopBack) {
      const std::string text = gpumux::program::to_text(in);
      const auto again = gpumux::program::parse_instruction(text);
      if (!again.error.empty() || gpumux::program::to_text(again.instruction) != text) {
        broken(p, pc, "canonical text '" + text + "' does not read back");
      }
    }
  }
  if (p.phases.empty() || p.phases.front().first_pc != 0 || p.phases.back().last_pc + 1 != p.code.size()) {
    broken(p, 0, "phases do not cover the code");
  }
  for (std::size_t i = 0; i < p.phases.size(); ++i) {
    const auto& phase = p.phases[i];
    if (phase.first_pc > phase.last_pc || (i > 0 && phase.first_pc != p.phases[i - 1].last_pc + 1)) {
      broken(p, phase.first_pc, "phases out of order");
    }
    std::uint64_t sum = 0;
    for (std::uint32_t pc = phase.first_pc; pc <= phase.last_pc; ++pc) {
      if (p.code[pc].phase != i) broken(p, pc, "instruction's phase index");
      sum += gpumux::program::latency(p.code[pc], latencies);
    }
    if (phase.length != std::min<std::uint64_t>(sum, std::numeric_limits<std::uint32_t>::max()) ||
        p.code[phase.first_pc].phase_distance != phase.length) {
      broken(p, phase.first_pc, "phase length");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpumux::fuzz::InputFile input("kernels");
  const gpumux::GpuConfig& gpu = gpumux::fuzz::kepler_k20c();
  const std::string& path = input.write(data, size);
  gpumux::fuzz::run_loader([&] {
    for (const auto& kernel : gpumux::load_kernel_library(path, gpu)) {
      if (kernel->program) check(*kernel->program, gpumux::program::instruction_latencies(gpu));
    }
  });
  return 0;
}
