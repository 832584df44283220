#pragma once
// A warp scheduler (Awatramani 3.2, 3.4): chooses, among the warps resident on its share of an SM,
// the one that issues next. One interface for the single-level policies (lrr, gto, phase-aware) and
// the two-level ones (ready, pending and active queues of Fig. 3.6). Plain C++, no SystemC types, so
// a scheduler can later serve as the reference model of an RTL block.
//
// The SM owns the warps and the timing; the scheduler owns only the order. The SM tells it when a
// warp arrives or leaves, when it starts waiting on a long-latency operation and when that wait
// ends, and asks it which warp issues, passing a view that says whether a warp can issue now.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/typed_options.h"

namespace gpumux {

/// A warp's slot on the scheduler (0 .. capacity-1), stable while the warp is resident.
using WarpSlot = std::uint32_t;

/// What the scheduler may ask the SM about a warp at the moment of a decision.
class WarpQuery {
 public:
  virtual ~WarpQuery() = default;
  /// The warp's next instruction can issue now (operands ready, unit free, not at a barrier).
  [[nodiscard]] virtual bool can_issue(WarpSlot warp) const = 0;
  /// Phase distance of the warp's next instruction (Awatramani 3.4.2.1): cycles to its phase's end.
  [[nodiscard]] virtual std::uint32_t phase_distance(WarpSlot warp) const = 0;
  /// Length of the phase the warp's next instruction belongs to (two-level phase-aware sorting).
  [[nodiscard]] virtual std::uint32_t phase_length(WarpSlot warp) const = 0;
};

/// Construction parameters every scheduler receives.
struct WarpSchedulerSetup {
  std::uint32_t capacity = 0;          ///< warp slots this scheduler serves
  std::uint32_t ready_queue_size = 6;  ///< two-level: warps in the ready queue (Awatramani Table 3.1)
  OptionValues options;                ///< the scheduler's typed options (warp_scheduler_option_specs)
};

class WarpScheduler {
 public:
  virtual ~WarpScheduler() = default;
  [[nodiscard]] virtual std::string name() const = 0;

  /// A warp became resident; `age` orders warps by launch (smaller = older; unique). Two-level
  /// phase-aware reads the length of the warp's first phase from `query` here (it sorts the active
  /// queue on entry, 3.4.2.2); the others ignore it.
  virtual void add_warp(WarpSlot warp, std::uint64_t age, const WarpQuery& query) = 0;
  /// The warp finished (or its thread block was saved by a context switch).
  virtual void remove_warp(WarpSlot warp) = 0;
  /// The warp's next instruction depends on an outstanding long-latency operation (two-level: it
  /// leaves the ready queue for the pending queue).
  virtual void long_latency_wait(WarpSlot warp) = 0;
  /// Every long-latency operation the warp waited on completed (two-level: pending -> active tail,
  /// then the priority logic sorts the active queue; phase-aware reads the length of the phase the
  /// warp now enters from `query`, once per phase, Awatramani 3.4.2.2).
  virtual void long_latency_done(WarpSlot warp, const WarpQuery& query) = 0;
  /// The warp to issue now, or none when no warp the policy would consider can issue.
  [[nodiscard]] virtual std::optional<WarpSlot> select(const WarpQuery& query) = 0;
  /// The chosen warp issued (round robin rotates; greedy stays).
  virtual void issued(WarpSlot warp) = 0;
};

}  // namespace gpumux
