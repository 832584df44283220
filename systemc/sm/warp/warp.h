#pragma once
// One warp of a warp-level SM: where it is in its kernel's program (PC, loop counters, barriers),
// its scoreboard (when each register's pending write completes) and what it waits for. Plain C++;
// the SM (sm/warp/warp_sm.h) owns the timing and drives these fields.
//
// Barriers (__syncthreads). A warp whose next instruction is a barrier has *arrived* at barrier
// number barriers_passed + 1 and waits (kBarrier) until every warp of its thread block that has
// not finished has arrived at that barrier or passed it; then all of them are *released*
// (barriers_passed + 1) and each issues the barrier instruction in an issue slot of its own. A
// warp released but not yet issued when a context save stops it is saved as not released
// (WarpResume::barriers_passed one less, PC at the barrier): once restored it arrives again and is
// released at once, because the others passed that barrier. So a barrier instruction issues
// exactly once per warp across a context switch and instruction counts are conserved.

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "program/program.h"
#include "sm/sm_port.h"
#include "sm/warp/execution_units.h"

namespace gpumux {

enum class WarpState : std::uint8_t {
  kFree,       ///< slot unused
  kRestoring,  ///< its thread block's context is being read back from memory
  kReady,      ///< issues its next instruction once operands and unit allow
  kBarrier,    ///< arrived at a barrier, waiting for the other warps of its thread block
  kDone,       ///< passed its last instruction; the slot is held until its thread block completes
};

/// Why a warp told its scheduler long_latency_wait (and will be told long_latency_done).
enum class LongWait : std::uint8_t { kNone, kMemory, kBarrier };

/// Cycles as stored in the scoreboard's one-word records: 56 bits, 2^56 cycles are 7e16, far beyond any
/// warp-level run (the model's time horizon, 1e18 ps, is 2e15 cycles at 2 GHz). Checked on store.
inline constexpr unsigned kCycleBits = 56;
inline constexpr std::uint64_t kCycleMask = (std::uint64_t{1} << kCycleBits) - 1;

/// A load's pending write whose memory request has not been answered yet (mem/memory_port.h).
inline constexpr std::uint64_t kUnansweredCycle = kCycleMask;

/// `cycle` for a kCycleBits field; InvariantViolation beyond it.
[[nodiscard]] inline std::uint64_t cycle_field(std::uint64_t cycle) {
  if ((cycle & ~kCycleMask) != 0) {
    throw InvariantViolation("warp-level SM: cycle " + std::to_string(cycle) + " beyond 2^56");
  }
  return cycle & kCycleMask;
}

/// What the SM reads about a warp on every activation (can it issue, when, on which unit): kept apart
/// from Warp, in one small array per SM, so the per-cycle scans touch a few cache lines.
struct HotWarp {
  std::uint64_t operands_ready = 0;  ///< cycle the next instruction's registers are ready (read and WAW)
  WarpState state = WarpState::kFree;
  UnitKind unit = UnitKind::kAlu;  ///< unit of the next instruction
  LongWait long_wait = LongWait::kNone;
};

/// A register's pending write in the scoreboard: when it completes, and whether a global load makes
/// it (a wait on it is a long-latency wait). One word, so an instruction's operands touch one array.
struct PendingWrite {
  std::uint64_t ready_cycle : kCycleBits;
  std::uint64_t from_memory : 1;

  PendingWrite() : ready_cycle(0), from_memory(0) {}
  PendingWrite(std::uint64_t cycle, bool memory)
      : ready_cycle(cycle_field(cycle) & kCycleMask), from_memory(memory ? 1U : 0U) {}
};
static_assert(sizeof(PendingWrite) == 8, "one word per register");

struct Warp {
  std::uint32_t tb = 0;          ///< the SM's resident-TB index
  std::uint32_t warp_in_tb = 0;  ///< selects per-warp loop trip counts
  std::uint64_t age = 0;         ///< launch order on the SM (unique): scheduler priority, tie-breaks
  const program::Program* program = nullptr;
  std::uint64_t grid_warp = 0;   ///< its index among the grid's warps (memory_requests.h)
  std::uint64_t grid_warps = 1;  ///< warps in the grid
  std::uint32_t tb_warps = 1;    ///< warps in its thread block (a broadcast load's element)

  // Position in the program.
  std::uint32_t pc = 0;
  std::vector<std::uint32_t> loop_counters;  ///< per loop depth: passes through the body so far
  std::uint32_t barriers_passed = 0;
  bool barrier_released = false;  ///< released from the barrier at `pc`, not yet issued it

  // Scoreboard.
  std::vector<PendingWrite> scoreboard;  ///< per register
  bool in_scheduler = false;             ///< added to its scheduler and not removed since
  std::uint64_t drain_cycle = 0;         ///< every result it issued is written by this cycle

  /// A fresh warp at the program's first instruction (storage reused: no allocation once warm).
  void start(const program::Program& p, std::uint32_t tb_index, std::uint32_t index_in_tb,
             std::uint64_t order) {
    program = &p;
    tb = tb_index;
    warp_in_tb = index_in_tb;
    age = order;
    pc = 0;
    loop_counters.assign(p.loop_depth, 0);
    barriers_passed = 0;
    barrier_released = false;
    scoreboard.assign(p.registers, PendingWrite{});
    in_scheduler = false;
    drain_cycle = 0;
  }

  /// Continue where a context save stopped it (registers restored: all ready). Returns false when
  /// it had already finished.
  bool resume_from(const WarpResume& r) {
    if (r.loop_counters.size() != loop_counters.size() || r.pc > program->code.size()) {
      throw InvariantViolation("a resumed warp's saved position (pc " + std::to_string(r.pc) + ", " +
                               std::to_string(r.loop_counters.size()) +
                               " loop counters) does not fit its program (" +
                               std::to_string(program->code.size()) + " instructions, loop depth " +
                               std::to_string(loop_counters.size()) + ")");
    }
    pc = r.pc;
    loop_counters = r.loop_counters;
    barriers_passed = r.barriers_passed;
    return !r.done;
  }

  /// Where it stands, for a context save (a released warp that has not issued its barrier is saved
  /// as arrived, see above).
  [[nodiscard]] WarpResume saved(bool done) const {
    WarpResume r;
    r.pc = pc;
    r.loop_counters = loop_counters;
    r.barriers_passed = barriers_passed - (barrier_released ? 1U : 0U);
    r.done = done;
    return r;
  }

  /// The trip count of loop-back `inst` for this warp (a list is indexed by warp-in-TB modulo its size).
  [[nodiscard]] std::uint32_t trip_count(const program::Instruction& inst) const {
    if (inst.trip_counts.empty()) return 1;
    return inst.trip_counts[warp_in_tb % inst.trip_counts.size()];
  }
};

}  // namespace gpumux
