#pragma once
// Compile-time phase analysis (Awatramani 3.3.1, 3.4.2.1): splits a program into phases, regions of
// computation separated by instructions that wait on a long-latency operation, and annotates each
// instruction with its phase distance (cycles from it to the end of its phase) and each phase with
// its length, which the phase-aware warp schedulers read (sm/warp_scheduler/). Plain C++.
//
// The rules (docs/config.md "Kernel programs", "Phases"):
//  - Long-op registers are the destinations of global loads, the program's only long-latency
//    results (shared memory is on-chip with a fixed latency of a few tens of cycles; 3.4.2.1 names
//    memory loads). Scanning top to bottom, the first instruction that reads a long-op register of
//    the current phase - or writes one: a scoreboard blocks a write-after-write on a pending
//    register just as it blocks a read - starts a new phase, and the set is cleared (3.4.2.1: loads
//    issued close together are assumed to complete together).
//  - Each basic block starts a phase: a loop body's first instruction and the instruction after a
//    loop-back (3.4.2.1).
//  - A barrier is long latency (3.3.1, footnote 1: synchronization instructions are): the warp waits
//    at it for the rest of its thread block, so the instruction after a `bar` starts a new phase.
//  - Backwards within each phase, instruction latencies are summed (3.3.2): an instruction's phase
//    distance includes its own latency, and a phase's length is its first instruction's distance.
//    A global load or store counts its issue cost, not its memory latency: the phase ends before
//    the load's consumer, so the memory latency is what the next phase waits for.

#include <cstdint>

#include "core/gpu_config.h"
#include "program/program.h"

namespace gpumux::program {

/// Cycles each kind of instruction adds to a phase's length.
struct InstructionLatencies {
  std::uint32_t alu = 1;           ///< ALU result latency
  std::uint32_t sfu = 1;           ///< SFU result latency
  std::uint32_t shared = 1;        ///< shared-memory load or store
  std::uint32_t global_issue = 1;  ///< global load or store: the load/store unit's issue cost
  std::uint32_t barrier = 1;       ///< issuing a barrier (the wait is the next phase's)
  std::uint32_t branch = 1;        ///< a loop-back
};

/// The latencies of the GPU's warp-level SM (core/gpu_config.h WarpLevelConfig): the ALU and SFU
/// latencies, the shared-memory latency; a global access costs the load/store unit's initiation
/// interval, ceil(warp_size / load/store units) cycles (the issue interval when the unit count is
/// not given); a barrier and a loop-back cost one issue interval.
[[nodiscard]] InstructionLatencies instruction_latencies(const GpuConfig& gpu);

/// The cycles `instruction` adds to its phase.
[[nodiscard]] std::uint32_t latency(const Instruction& instruction, const InstructionLatencies& latencies);

/// Fills program.phases and every instruction's phase and phase_distance (replacing earlier ones).
/// Distances and lengths saturate at the largest uint32_t.
void analyze_phases(Program& program, const InstructionLatencies& latencies);

}  // namespace gpumux::program
