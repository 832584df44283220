#pragma once
// One warp's instruction stream (a kernel library's `program:`), compiled from the documented
// instruction language (docs/config.md "Kernel programs") into a flat code array that the warp-level
// SM executes and the phase analysis annotates. Plain C++: no SystemC types.
//
// Loops are flattened: a loop's body is followed by a kLoopBack instruction that jumps back to the
// body's first instruction while the warp's counter for that loop depth is below the trip count.
// Every warp of every thread block runs the same code; a loop's trip count may differ between
// warps (a list indexed by warp-in-TB modulo its length), which is how data-dependent loops are
// expressed, and which is why barrier counts are checked per warp at load time.

#include <cstdint>
#include <string>
#include <vector>

namespace gpumux::program {

/// Register number within a warp's program (r0 .. r254).
using Reg = std::uint8_t;
inline constexpr Reg kNoReg = 255;

enum class Op : std::uint8_t {
  kAlu,          ///< integer / single-precision arithmetic: the ALU lanes
  kSfu,          ///< transcendental: the special function units
  kSharedLoad,   ///< shared-memory read (on-chip, fixed latency)
  kSharedStore,  ///< shared-memory write
  kGlobalLoad,   ///< global-memory read: TLM-2.0 transactions to the memory controller (long latency)
  kGlobalStore,  ///< global-memory write (posted; long latency only for the store unit)
  kBarrier,      ///< __syncthreads: waits for every warp of the thread block
  kLoopBack,     ///< end of a loop body: back to `target` until the trip count is reached
};

enum class Access : std::uint8_t {
  kCoalesced,  ///< the warp's bytes in as few memory segments as they fill
  kScattered,  ///< one segment per active thread (uncoalesced)
  /// Loads only: every warp of the thread block reads the same bytes (a table or a tile each warp reads
  /// in full), coalesced: the reuse a per-SM L1 (memory.l1) or the L2 can serve.
  kBroadcast,
};

/// A scattered access's segments fall in at most this many bytes of its array (32 GiB; the array's
/// address range is 64 GiB, sm/warp/memory_requests.h).
inline constexpr std::uint64_t kMaxScatterBytes = std::uint64_t{1} << 35U;

struct Instruction {
  Op op = Op::kAlu;
  std::vector<Reg> reads;   ///< registers read (must have been written before, in program order)
  Reg write = kNoReg;       ///< register written, or kNoReg
  std::uint32_t bytes = 0;  ///< global load/store: bytes the whole warp moves
  Access access = Access::kCoalesced;
  /// kScattered only: the threads' segments fall anywhere in the array's first `scatter_bytes` bytes
  /// (`scattered within NB`: a table the source indexes at random, such as SPMV's x); 0 = anywhere in
  /// kMaxScatterBytes (data far larger than any cache).
  std::uint64_t scatter_bytes = 0;
  // kLoopBack only.
  std::uint32_t target = 0;                ///< pc of the loop body's first instruction
  std::uint8_t depth = 0;                  ///< loop nesting depth (0 = outermost): the warp's counter
  std::vector<std::uint32_t> trip_counts;  ///< one value, or one per warp-in-TB (index modulo size)
  // Filled by the phase analysis (program/phase_analysis.h).
  std::uint32_t phase = 0;           ///< index into Program::phases
  std::uint32_t phase_distance = 0;  ///< cycles from this instruction to the end of its phase
  // Where it came from, for messages.
  std::uint32_t line = 0;
};

/// A phase (Awatramani 3.3.1): consecutive instructions none of which reads a register produced by
/// a long-latency instruction of the same phase.
struct Phase {
  std::uint32_t first_pc = 0;
  std::uint32_t last_pc = 0;  ///< inclusive
  std::uint32_t length = 0;   ///< cycles: the sum of instruction latencies over the phase
};

struct Program {
  std::vector<Instruction> code;
  std::vector<Phase> phases;
  std::uint32_t registers = 0;   ///< highest register number used + 1
  std::uint32_t loop_depth = 0;  ///< deepest loop nesting + 1 (0: no loops)
  std::string source;            ///< "file:line" of the `program:` key, for messages
  /// Warp instructions one warp executes, loops unrolled (warp 0's trip counts).
  std::uint64_t dynamic_instructions = 0;
};

}  // namespace gpumux::program
