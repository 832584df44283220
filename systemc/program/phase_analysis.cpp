#include "program/phase_analysis.h"

#include <algorithm>
#include <bitset>
#include <limits>
#include <vector>

namespace gpumux::program {

InstructionLatencies instruction_latencies(const GpuConfig& gpu) {
  const WarpLevelConfig& w = gpu.warp;
  InstructionLatencies l;
  l.alu = w.alu.latency_cycles;
  l.sfu = w.sfu.latency_cycles;
  l.shared = w.shared_memory_latency_cycles;
  l.global_issue = w.load_store.count > 0 ? (gpu.warp_size + w.load_store.count - 1) / w.load_store.count
                                          : w.issue_interval_cycles;
  l.barrier = w.issue_interval_cycles;
  l.branch = w.issue_interval_cycles;
  return l;
}

std::uint32_t latency(const Instruction& instruction, const InstructionLatencies& latencies) {
  switch (instruction.op) {
    case Op::kAlu:
      return latencies.alu;
    case Op::kSfu:
      return latencies.sfu;
    case Op::kSharedLoad:
    case Op::kSharedStore:
      return latencies.shared;
    case Op::kGlobalLoad:
    case Op::kGlobalStore:
      return latencies.global_issue;
    case Op::kBarrier:
      return latencies.barrier;
    case Op::kLoopBack:
      return latencies.branch;
  }
  return 0;
}

void analyze_phases(Program& program, const InstructionLatencies& latencies) {
  std::vector<Instruction>& code = program.code;
  program.phases.clear();
  if (code.empty()) return;

  // Basic-block leaders (3.4.2.1 "each basic block starts a new phase"): loop bodies' first
  // instructions and the instructions after loop-backs.
  std::vector<bool> leader(code.size(), false);
  for (std::size_t pc = 0; pc < code.size(); ++pc) {
    if (code[pc].op != Op::kLoopBack) continue;
    if (code[pc].target < code.size()) leader[code[pc].target] = true;
    if (pc + 1 < code.size()) leader[pc + 1] = true;
  }

  // Forward: split into phases.
  std::bitset<256> long_ops;  // destinations of the current phase's global loads
  for (std::size_t pc = 0; pc < code.size(); ++pc) {
    Instruction& in = code[pc];
    bool starts = pc == 0 || leader[pc] || code[pc - 1].op == Op::kBarrier;
    for (const Reg r : in.reads) starts = starts || long_ops.test(r);
    if (in.write != kNoReg) starts = starts || long_ops.test(in.write);
    if (starts) {
      if (!program.phases.empty()) program.phases.back().last_pc = static_cast<std::uint32_t>(pc - 1);
      Phase phase;
      phase.first_pc = static_cast<std::uint32_t>(pc);
      program.phases.push_back(phase);
      long_ops.reset();
    }
    in.phase = static_cast<std::uint32_t>(program.phases.size() - 1);
    if (in.op == Op::kGlobalLoad && in.write != kNoReg) long_ops.set(in.write);
  }
  program.phases.back().last_pc = static_cast<std::uint32_t>(code.size() - 1);

  // Backward: distances to the end of each phase, each instruction's own latency included (3.3.2).
  for (Phase& phase : program.phases) {
    std::uint64_t distance = 0;
    for (std::uint32_t pc = phase.last_pc + 1; pc-- > phase.first_pc;) {
      distance = std::min<std::uint64_t>(distance + latency(code[pc], latencies),
                                         std::numeric_limits<std::uint32_t>::max());
      code[pc].phase_distance = static_cast<std::uint32_t>(distance);
    }
    phase.length = code[phase.first_pc].phase_distance;
  }
}

}  // namespace gpumux::program
