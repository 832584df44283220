#pragma once
// A thread block's dynamic instruction mix, counted from its kernel's program: what Kernelet's
// pre-execution reads from the profiler (4.4: "the number of memory instructions issued and the total number
// of instructions executed, and calculate Rm as their ratio"). The programs carry no data, so every thread
// block executes the same mix and the count is exact. Plain C++: no SystemC types.

#include <cstdint>

#include "program/program.h"

namespace gpumux::kernelet {

struct InstructionMix {
  std::uint64_t instructions = 0;        ///< warp instructions of one thread block, loop-backs included
  std::uint64_t global_memory = 0;       ///< of them, global loads and stores
  std::uint64_t uncoalesced_memory = 0;  ///< of those, scattered ones (one segment per thread)

  /// Rm (Kernelet Table 1): global memory instructions / all instructions.
  [[nodiscard]] double memory_ratio() const {
    return instructions == 0 ? 0.0 : static_cast<double>(global_memory) / static_cast<double>(instructions);
  }
  /// The share of global memory instructions that are uncoalesced (4.4, "Uncoalesced Access").
  [[nodiscard]] double uncoalesced_share() const {
    return global_memory == 0 ? 0.0
                              : static_cast<double>(uncoalesced_memory) / static_cast<double>(global_memory);
  }
};

/// The mix of one thread block of `warps` warps: each instruction counted once per pass of each warp, i.e.
/// the product of its enclosing loops' trip counts for that warp (a loop-back once per iteration of its
/// own loop).
[[nodiscard]] InstructionMix thread_block_mix(const program::Program& program, std::uint32_t warps);

}  // namespace gpumux::kernelet
