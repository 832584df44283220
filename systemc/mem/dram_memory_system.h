#pragma once
// The `dram` memory model (memory.model: dram): L2 slices in front of GDDR5 channels, shared by every
// initiator (warp loads and stores, DMA copies, context saves and restores), all served in arrival-time
// order: a request is looked up in L2 at the simulated time it arrives (MemoryTarget checks the order),
// and what misses queues at its channel's FR-FCFS scheduler (mem/dram/dram_channel.h).
//
// Path of a request (split at L2 lines; a line lives in one channel, so one slice per channel, as a
// GPU's memory partition pairs an L2 slice with its controller):
//   hit            done after memory.l2.hit_latency_cycles (core cycles, the SM-to-L2 round trip);
//   load miss      the missing sectors are read from DRAM, one request per burst (atom) that holds
//                  them; each reaches the channel half the hit latency after the load (the way to the
//                  slice and the tag lookup) and its data is back the other half after the DRAM's last
//                  beat. A load that finds its sectors already being fetched waits for that fill
//                  (MSHR merge) instead of fetching again;
//   store          write-back, write-allocate without fetch (a warp store writes whole sectors): done
//                  at the hit latency (posted); the dirty sectors reach DRAM when their line is evicted.
// The idle latency of a load that misses is therefore the hit latency plus the DRAM's own: one
// command-clock edge to enter the queue, then ACT, tRCD, RD, tCL and the burst (docs/validation.md).
//
// Timing protocol (mem/memory_port.h): hits and stores complete on the forward path (TLM_COMPLETED);
// a miss is TLM_ACCEPTED and answered with BEGIN_RESP when its last DRAM read issues its column command
// (the completion time is known from then). The DRAM is woken only at the times its controller says
// something may happen (DramController::next_event_ps): one SystemC timed notification per such time,
// none while it is idle. The lines being filled are tracked until their data is back, so a hit on a
// sector whose fill was scheduled but whose data is still on its way waits for it.
//
// Statistics (details()): per channel and bank the row hits, misses and conflicts, reads and writes;
// per channel the achieved bandwidth, mean and peak queue occupancy, refreshes, and the mean and 99th
// percentile of its read latency (arrival at the channel to last data beat); L2 sector hits, misses and
// merges, write-backs; per kernel launch the bytes requested and its L2 hit rate; the request latency
// (arrival to completion) over every request.

#include <cstdint>
#include <memory>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "core/gpu_config.h"
#include "mem/cache/sector_cache.h"
#include "mem/dram/dram_controller.h"
#include "mem/memory_target.h"

namespace gpumux {

/// Counts of values in 1 ns buckets up to a bound, for a mean and exact-to-the-ns percentiles.
class LatencyHistogram {
 public:
  void add(TimePs latency_ps);
  [[nodiscard]] std::uint64_t count() const { return count_; }
  [[nodiscard]] double mean_ns() const;
  /// The smallest whole ns at or below which `fraction` of the values lie (0 without values).
  [[nodiscard]] double percentile_ns(double fraction) const;

 private:
  static constexpr std::size_t kBuckets = 1U << 17U;  ///< 131 us: beyond, the value is kept in `over_`
  std::vector<std::uint64_t> buckets_;
  std::vector<TimePs> over_;
  std::uint64_t count_ = 0;
  double sum_ps_ = 0;
};

class DramMemorySystem final : public MemoryTarget {
 public:
  /// `gpu.memory` must be a checked dram configuration (the GPU loader's checks).
  DramMemorySystem(const sc_core::sc_module_name& name, const GpuConfig& gpu);

  [[nodiscard]] TimePs busy_ps() const override;
  [[nodiscard]] nlohmann::json details(TimePs end_ps) const override;
  [[nodiscard]] const dram::DramController& dram() const { return dram_; }
  [[nodiscard]] const cache::SectorCache& slice(std::uint32_t channel) const { return slices_.at(channel); }
  /// L2 sectors found present, over all sectors loads asked for.
  [[nodiscard]] double l2_load_hit_rate() const;
  /// Commands and burst arrivals from now on, for the waveform (null: none).
  void set_dram_log(DramActivity* log) override;

 private:
  /// A request being served: its pieces (line accesses) not done yet and the latest completion.
  struct Request {
    tlm::tlm_generic_payload* payload = nullptr;
    std::uint32_t initiator = 0;
    std::uint32_t pieces = 0;
    TimePs arrival_ps = 0;
    TimePs done_ps = 0;
  };
  /// A load waiting for sectors of a line being fetched.
  struct Waiter {
    std::uint32_t request = 0;
    std::uint32_t sectors = 0;  ///< still missing
    TimePs done_ps = 0;         ///< its completion as far as known
  };
  /// A line with sectors being fetched from DRAM: when each is back (kNever: not scheduled yet).
  struct LineFill {
    std::vector<TimePs> ready_ps;  ///< per sector of the line; 0: not being fetched
    std::vector<Waiter> waiters;
  };
  /// A DRAM request of the system: the line and sectors it fetches, or a write-back.
  struct Burst {
    std::uint64_t line = 0;
    std::uint32_t sectors = 0;
    std::uint32_t channel = 0;
    bool is_write = false;
    bool live = false;  ///< sent and not answered
    TimePs arrival_ps = 0;
  };
  struct KernelTraffic {
    std::uint64_t bytes = 0;
    std::uint64_t sectors = 0;        ///< L2 sectors its loads and stores touched
    std::uint64_t sector_hits = 0;    ///< load sectors present in L2 (or being fetched)
    std::uint64_t sector_misses = 0;  ///< load sectors fetched from DRAM
  };

  tlm::tlm_sync_enum request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                             sc_core::sc_time& delay) override;
  void blocking_request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                        sc_core::sc_time& delay) override;
  /// One line's part of request `r`: `bytes` at `address`, inside one line.
  void access_line(std::uint32_t r, std::uint64_t address, std::uint32_t bytes, bool is_write,
                   KernelTraffic* traffic);
  void piece_done(std::uint32_t r, TimePs done_ps);
  /// DRAM requests for the `sectors` of `line` (one per burst holding any of them).
  void fetch(std::uint64_t line, std::uint32_t sectors, std::uint32_t channel, bool is_write);
  /// The DRAM process: serves what is due now, answers the requests it completes, sleeps until next.
  void step();
  void wake_dram();
  void on_burst_done(const dram::DramCompletion& c);

  TimePs hit_ps_;        ///< L2 hit round trip
  TimePs to_dram_ps_;    ///< request: SM to the channel's queue
  TimePs from_dram_ps_;  ///< data: channel back to the SM
  std::uint32_t line_bytes_;
  std::uint32_t sector_bytes_;
  std::uint32_t atom_bytes_;
  std::uint32_t sectors_per_atom_;
  dram::DramController dram_;
  std::vector<cache::SectorCache> slices_;  ///< by channel
  std::vector<Request> requests_;
  std::vector<std::uint32_t> free_requests_;
  std::vector<Burst> bursts_;
  std::vector<std::uint32_t> free_bursts_;
  std::unordered_map<std::uint64_t, LineFill> fills_;  ///< by line address (looked up, never iterated)
  /// Lines whose fill data lands at a time: the fill record is dropped once every sector is back.
  std::priority_queue<std::pair<TimePs, std::uint64_t>, std::vector<std::pair<TimePs, std::uint64_t>>,
                      std::greater<>>
      landed_;
  std::vector<dram::DramCompletion> completions_;  ///< scratch
  sc_core::sc_event wake_;
  TimePs wake_at_ps_ = kNever;
  bool enqueued_ = false;  ///< the request being split sent something to the DRAM
  std::uint64_t writebacks_ = 0;
  std::vector<KernelTraffic> kernels_;  ///< by kernel launch
  LatencyHistogram request_latency_;
  std::vector<LatencyHistogram> channel_latency_;  ///< reads, arrival at the channel to last beat
  DramActivity* activity_ = nullptr;               ///< the waveform's channel log (set_dram_log)
};

}  // namespace gpumux
