#pragma once
// Context save and restore traffic of one SM (Tanasic 3.2), shared by both SM models: a loosely-timed
// TLM-2.0 initiator of the memory controller through the SM's memory port. A transfer is a run of bursts
// paced at the SM's bandwidth share from the moment it is requested (GpuConfig::context_switch); the GPU's
// ContextTraffic thread (sm/context_traffic.h) sends the bursts of every SM's transfers in time order, each
// at its own time, so the memory controller serves them in arrival order with every other initiator's. The
// owner learns when each transfer's last burst is served.
//
// Transaction size. A transfer is cut into at least context_switch.min_transactions pieces (64 by default),
// each a multiple of kGranuleBytes (one warp's store of a 4-byte register: 32 x 4 B) and at most
// context_switch.burst_bytes. Why: when every SM saves at once (a ppq exclusive preemption, say), their paced
// streams are in phase, so the controller gets N_SM transactions at the same instants and serves them one
// after another; the last SM's last one ends one round of transactions later than its share alone would give.
// With whole 4 KB bursts a small save (genhists: 44 KB, 11 bursts) ended 9% after Tanasic Table 1's time;
// with at least 64 pieces a save ends within 1/64 (1.6%) of it, while a large save keeps its 4 KB bursts (and
// the simulation its speed: 128-byte transactions throughout cost 3.7x the run time of the DSS demo).

#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm>

#include "core/gpu_config.h"
#include "core/types.h"
#include "mem/memory_port.h"
#include "sm/context_traffic.h"

namespace gpumux {

class ContextMover final : private MemoryClient {
 public:
  /// Called from the ContextTraffic thread when a transfer's last burst was answered, with the absolute
  /// time its last byte is served (for a read: when the data is back).
  using Done = std::function<void(TimePs done_ps)>;

  /// `port`: the SM's memory port (shared with its warps' requests at warp level); `traffic`: the GPU's
  /// context traffic thread.
  ContextMover(MemoryPort& port, const GpuConfig& gpu, SmId sm, ContextTraffic& traffic);

  static constexpr std::uint64_t kGranuleBytes = 128;

  /// Moves `bytes` (a save when `is_write`, else a restore) from `start_ps` (now or later: after the
  /// trap routine or the SM's setup). `bytes` > 0.
  void request(bool is_write, std::uint64_t bytes, TimePs start_ps, Done on_done);

 private:
  friend class ContextTraffic;

  struct Transfer {
    std::uint64_t id = 0;  ///< the tag of its memory requests
    bool is_write = false;
    TimePs start_ps = 0;
    double sent_ps = 0;  ///< local time of the last burst sent, from start_ps (the pace is fractional)
    std::uint64_t left = 0;
    std::uint32_t burst = 0;    ///< transaction size of this transfer
    TimePs next_ps = kNever;    ///< when its next burst leaves (kNever: all sent)
    TimePs done_ps = 0;         ///< latest completion of a burst sent so far
    std::uint64_t offset = 0;   ///< bytes sent so far (the next burst's address in the SM's context area)
    std::uint32_t waiting = 0;  ///< bursts the memory has accepted and not answered yet (dram model)
    Done on_done;
  };

  // For ContextTraffic.
  [[nodiscard]] std::uint32_t sm_index() const { return index(sm_); }
  /// When its next burst leaves (kNever: none left to send).
  [[nodiscard]] TimePs next_burst_at() const { return next_ps_; }
  /// Sends the next burst, due `ahead_ps` after SystemC's now (ContextTraffic's run-ahead; 0: now).
  void send_burst(TimePs ahead_ps);
  /// Calls on_done of every transfer whose bursts are all sent and answered, and removes it.
  void finish_answered();
  bool listed_sending_ = false;    ///< in ContextTraffic's list of movers with bursts to send
  bool listed_finishing_ = false;  ///< in ContextTraffic's list of movers with a transfer answered

  [[nodiscard]] TimePs next_burst_ps(const Transfer& t) const;
  /// The earliest next burst over the transfers (ties: the one requested first).
  void find_next();
  void memory_done(std::uint64_t tag, TimePs done_ps) override;

  MemoryPort& port_;
  SmId sm_;
  ContextTraffic& traffic_;
  double bytes_per_ps_;  ///< the SM's share of memory bandwidth for save/restore
  std::uint32_t burst_bytes_;
  std::uint32_t min_transactions_;
  std::vector<Transfer> transfers_;  ///< in request order
  TimePs next_ps_ = kNever;          ///< the earliest next burst of any transfer
  std::size_t next_ = 0;             ///< its transfer
  std::uint64_t next_id_ = 0;
  std::uint64_t area_;  ///< base address of the SM's context save area
};

}  // namespace gpumux
