#pragma once
// The execution units of a warp-level SM (ALU lanes, special function units, load/store units) as
// issue-side resources: when can the next warp instruction enter a unit, and when is its result
// ready. A warp instruction works on warp_size threads; a unit of `count` lanes takes it in
// ceil(warp_size / count) cycles (its initiation interval: Fermi's 4 SFUs need 8 cycles per warp,
// its 16 load/store units 2). A unit wider than a warp (Kepler's 192 ALU lanes) holds
// floor(count / warp_size) warp instructions at once: it has that many pipes, each with interval 1
// (lanes beyond a multiple of the warp size are not used). Results are ready `latency_cycles` after
// issue, whatever the pipe (ExecutionUnitConfig in core/gpu_config.h).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/gpu_config.h"
#include "program/program.h"

namespace gpumux {

/// Which unit an instruction occupies at issue.
enum class UnitKind : std::uint8_t {
  kAlu,        ///< ALU lanes: kAlu, and kLoopBack (a branch costs one ALU-like issue, program.h)
  kSfu,        ///< special function units: kSfu
  kLoadStore,  ///< load/store units: shared-memory and global accesses
  kNone,       ///< no unit: kBarrier (only the issue slot)
};
inline constexpr std::size_t kUnitKinds = 3;  ///< units with pipes (kNone excluded)

[[nodiscard]] inline UnitKind unit_of(program::Op op) {
  switch (op) {
    case program::Op::kAlu:
    case program::Op::kLoopBack:
      return UnitKind::kAlu;
    case program::Op::kSfu:
      return UnitKind::kSfu;
    case program::Op::kSharedLoad:
    case program::Op::kSharedStore:
    case program::Op::kGlobalLoad:
    case program::Op::kGlobalStore:
      return UnitKind::kLoadStore;
    case program::Op::kBarrier:
      return UnitKind::kNone;
  }
  return UnitKind::kNone;
}

class ExecutionUnit {
 public:
  ExecutionUnit(const ExecutionUnitConfig& config, std::uint32_t warp_size)
      : interval_((warp_size + config.count - 1) / config.count),
        latency_(config.latency_cycles),
        pipe_free_(std::max<std::uint32_t>(1, config.count / warp_size), 0) {}

  [[nodiscard]] std::uint32_t interval() const { return interval_; }
  [[nodiscard]] std::uint32_t latency() const { return latency_; }
  [[nodiscard]] std::uint32_t pipes() const { return static_cast<std::uint32_t>(pipe_free_.size()); }
  /// The first cycle at which a warp instruction can enter the unit.
  [[nodiscard]] std::uint64_t free_cycle() const { return earliest_free_; }

  /// A warp instruction enters the unit at `cycle` (>= free_cycle()): the earliest free pipe (the
  /// lowest-numbered on a tie) is busy for one initiation interval.
  void occupy(std::uint64_t cycle) {
    std::size_t pipe = 0;
    for (std::size_t p = 1; p < pipe_free_.size(); ++p) {
      if (pipe_free_[p] < pipe_free_[pipe]) pipe = p;
    }
    pipe_free_[pipe] = cycle + interval_;
    earliest_free_ = *std::min_element(pipe_free_.begin(), pipe_free_.end());
  }

  /// Every pipe free from `cycle` on (a new SM, or one emptied by a context save).
  void reset(std::uint64_t cycle) {
    std::fill(pipe_free_.begin(), pipe_free_.end(), cycle);
    earliest_free_ = cycle;
  }

 private:
  std::uint32_t interval_;
  std::uint32_t latency_;
  std::vector<std::uint64_t> pipe_free_;  ///< per pipe: first cycle it takes a new instruction
  std::uint64_t earliest_free_ = 0;
};

}  // namespace gpumux
