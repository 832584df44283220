#include "kernelet/instruction_mix.h"

#include <vector>

namespace gpumux::kernelet {

namespace {

std::uint64_t trips_for(const program::Instruction& loop_back, std::uint32_t warp) {
  const std::vector<std::uint32_t>& trips = loop_back.trip_counts;
  return trips.empty() ? 1 : trips[warp % trips.size()];
}

}  // namespace

InstructionMix thread_block_mix(const program::Program& program, std::uint32_t warps) {
  InstructionMix mix;
  const std::vector<program::Instruction>& code = program.code;
  for (std::uint32_t warp = 0; warp < warps; ++warp) {
    for (std::uint32_t pc = 0; pc < code.size(); ++pc) {
      // Passes of this instruction: the trip counts of every loop whose body [target, loop-back] holds it
      // (the loop-back itself belongs to its own loop: once per iteration).
      std::uint64_t passes = 1;
      for (std::uint32_t lb = pc; lb < code.size(); ++lb) {
        const program::Instruction& candidate = code[lb];
        if (candidate.op == program::Op::kLoopBack && candidate.target <= pc) {
          passes *= trips_for(candidate, warp);
        }
      }
      const program::Instruction& in = code[pc];
      mix.instructions += passes;
      if (in.op == program::Op::kGlobalLoad || in.op == program::Op::kGlobalStore) {
        mix.global_memory += passes;
        if (in.access == program::Access::kScattered) mix.uncoalesced_memory += passes;
      }
    }
  }
  return mix;
}

}  // namespace gpumux::kernelet
