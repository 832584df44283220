#pragma once
// The kernel-program language (docs/config.md "Kernel programs"): a kernel library's `program:` is a
// YAML list whose items are instructions (one string each, so every instruction has its own file:line
// for messages) or loops ({loop: N, body: [...]}, N a trip count or a list of per-warp trip counts).
// compile_program turns it into a program::Program: flat code with kLoopBack instructions, checked
// for everything the warp-level SM relies on (registers written before they are read, every warp of
// a thread block reaching every barrier equally often, bounded sizes). Errors are InputErrors naming
// file, line and key (YamlNode::fail).
//
// Instruction strings (registers r0 .. r254; `<-` separates the register written from those read):
//   alu rD <- rS[, rS...]                 ALU operation
//   sfu rD <- rS[, rS...]                 special-function (transcendental) operation
//   lds rD <- rA[, ...]                   shared-memory load
//   sts rV[, ...]                         shared-memory store (reads the listed registers)
//   ldg rD <- rA[, ...] NB [coalesced|scattered [within MB]|broadcast]   global load of N bytes per warp
//   stg rV[, ...] NB [coalesced|scattered [within MB]]             global store of N bytes per warp
//   (`within MB`: the scattered segments fall in the array's first M bytes, a table of that size)
//   bar                                   barrier (__syncthreads)

#include <cstdint>
#include <string>
#include <string_view>

#include "config/yaml_reader.h"
#include "program/program.h"

namespace gpumux::program {

// Limits. Beyond them a program is a typo or would exhaust the model's time or memory; every real
// kernel is far below (Awatramani's longest, Heartwall, has 1523 instructions, 3.5.1).
inline constexpr std::uint32_t kMaxStaticInstructions = 100'000;  ///< after flattening, loop-backs included
inline constexpr std::uint64_t kMaxDynamicInstructions = 1'000'000'000;  ///< per warp, loops unrolled
inline constexpr std::uint32_t kMaxLoopDepth = 8;  ///< loops inside loops (Instruction::depth < 8)
inline constexpr std::uint32_t kMaxTripCount = 1'000'000;
inline constexpr std::uint32_t kMaxPerWarpTripCounts = 4096;  ///< entries of a per-warp trip-count list
inline constexpr std::uint32_t kMaxAccessBytes = 1U << 20U;   ///< bytes one warp loads or stores at once
inline constexpr std::uint32_t kMaxSources = 4;               ///< registers one instruction reads
inline constexpr Reg kMaxRegister = 254;                      ///< r0 .. r254 (255 is kNoReg)
/// r0 .. r(kLiveInRegisters - 1) hold values when a warp starts and may be read without being
/// written: r0 the thread's index in its block, r1 its block's index (CUDA threadIdx, blockIdx).
inline constexpr Reg kLiveInRegisters = 2;

/// One instruction's text parsed on its own (no dependence checks): `error` is empty on success,
/// else why the text is not an instruction (without a location; compile_program adds it).
struct ParsedInstruction {
  Instruction instruction;
  std::string error;
};
[[nodiscard]] ParsedInstruction parse_instruction(std::string_view text);

/// Compiles the value of a kernel's `program:` key. `warps_per_tb` (ceil(threads per TB / warp
/// size)) is the range of warp-in-TB indices over which per-warp trip counts and barrier counts are
/// checked. Fills code, registers, loop_depth, source and dynamic_instructions; not the phases
/// (program/phase_analysis.h).
[[nodiscard]] Program compile_program(const config::YamlNode& node, std::uint32_t warps_per_tb);

/// "alu", "ldg", ... ("loop" for kLoopBack).
[[nodiscard]] const char* op_name(Op op);

/// The canonical text of an instruction: what parse_instruction reads back ("ldg r1 <- r0 128B
/// coalesced"); a loop-back reads "loop -> pc 3 depth 0 trips 4,8". Used by `gpumux phases` and the
/// isolated-baseline cache key (the program as the model sees it, independent of spelling).
[[nodiscard]] std::string to_text(const Instruction& instruction);

}  // namespace gpumux::program
