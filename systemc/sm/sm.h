#pragma once
// A streaming multiprocessor at thread-block fidelity: it holds resident thread blocks of one or
// more kernels within its register, shared-memory, thread, warp and TB-slot budgets, and reports
// each completion at the simulated time it happens. Event-driven: one timed event per distinct
// completion time; nothing runs while all its thread blocks are busy.
//
// Context switch (Tanasic 3.2): the SM is a loosely-timed TLM-2.0 initiator of the memory controller.
// A save or a restore is a transfer of bursts paced at the SM's bandwidth share from the moment it is
// requested; one thread sends the bursts of all the SM's transfers in time order, each at its own
// time, keeping its local time in a tlm_utils::tlm_quantumkeeper (core/tlm_quantum.h), so the memory
// controller serves them in arrival order with every other initiator's. A re-issued thread block
// starts running when its context is back; a save that stops the SM while a thread block is still
// being restored completes after that restore.

#include <cstdint>
#include <queue>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <systemc>
#include <tlm>

#include "core/gpu_config.h"
#include "sm/sm_port.h"

namespace gpumux {

class Sm final : public sc_core::sc_module, public SmPort {
 public:
  /// Context save and restore traffic to the memory controller (TLM-2.0 writes and reads).
  tlm_utils::simple_initiator_socket<Sm> memory_socket;

  Sm(const sc_core::sc_module_name& name, SmId id, const GpuConfig& gpu, TbCompletionListener& listener);

  [[nodiscard]] bool fits(const TbFootprint& footprint, std::uint32_t shared_memory_config) const override;
  void start_tb(KernelId kernel, std::uint32_t tb, const TbFootprint& footprint,
                std::uint32_t shared_memory_config, TimePs duration_ps, std::uint64_t restore_bytes) override;
  void save_context() override;
  [[nodiscard]] const SmUsage& usage() const override { return usage_; }

  [[nodiscard]] SmId id() const { return id_; }
  /// Time with at least one resident thread block, up to now.
  [[nodiscard]] TimePs busy_ps() const;
  [[nodiscard]] std::uint64_t tbs_completed() const { return tbs_completed_; }
  /// Resident thread blocks, as an int so sc_trace can sample it for the VCD.
  [[nodiscard]] const int& traced_resident_tbs() const { return traced_resident_tbs_; }

 private:
  struct Running {
    TimePs end_ps = 0;
    std::uint64_t sequence = 0;  ///< issue order: deterministic tie-break between equal end times
    TimePs start_ps = 0;
    KernelId kernel{};
    std::uint32_t tb = 0;
    TbFootprint footprint{};
    bool operator>(const Running& other) const {
      return end_ps != other.end_ps ? end_ps > other.end_ps : sequence > other.sequence;
    }
  };

  /// A thread block stopped by a context save, with its place in completion order.
  struct SavedTb {
    PreemptedTb tb;
    TbFootprint footprint{};
    TimePs end_ps = 0;
    std::uint64_t sequence = 0;
  };
  /// A context save (write) or restore (read) in progress: bursts still to send, paced from start_ps.
  struct Transfer {
    bool is_write = false;
    TimePs start_ps = 0;
    double sent_ps = 0;  ///< local time of the last burst sent, from start_ps (the pace is fractional)
    std::uint64_t left = 0;
    TimePs done_ps = 0;      ///< latest completion of a burst sent so far
    Running tb{};            ///< restore: the thread block waiting for its context (end_ps unset)
    TimePs duration_ps = 0;  ///< restore: what it runs once its context is back
    bool saved = false;      ///< restore: a save stopped the SM meanwhile; the TB goes to the save
  };

  void complete_due();
  void finish_save();
  void release(const TbFootprint& footprint);
  void push_running(const Running& tb);
  void request_transfer(const Transfer& transfer);
  /// The SM's initiator thread: sends every transfer's bursts in time order.
  void run_transfers();
  [[nodiscard]] TimePs next_burst_ps(const Transfer& t) const;
  void transfer_done(const Transfer& t);
  void maybe_finish_save();
  [[nodiscard]] static std::uint64_t context_bytes(const TbFootprint& f);
  [[nodiscard]] static TimePs now_ps();

  SmId id_;
  const SmResources& limits_;
  TbCompletionListener& listener_;
  SmUsage usage_;
  std::uint32_t shared_memory_capacity_ = 0;  ///< carve-out chosen by the first resident TB
  std::priority_queue<Running, std::vector<Running>, std::greater<>> running_;
  std::uint64_t next_sequence_ = 0;
  TimePs wake_at_ps_ = kNever;
  sc_core::sc_event wake_;
  TimePs busy_since_ps_ = 0;
  TimePs busy_total_ps_ = 0;
  std::uint64_t tbs_completed_ = 0;
  int traced_resident_tbs_ = 0;
  // Context switch.
  double context_bytes_per_ps_;  ///< the SM's share of memory bandwidth for save/restore
  std::uint32_t context_burst_bytes_;
  double context_pace_ps_;           ///< one full burst at that share
  std::vector<Transfer> transfers_;  ///< in request order
  sc_core::sc_event transfer_requested_;
  tlm_utils::tlm_quantumkeeper quantum_keeper_;
  tlm::tlm_generic_payload context_payload_;
  std::vector<unsigned char> context_buffer_;
  bool saving_ = false;  ///< stopped for a context save, from save_context() to on_context_saved
  bool save_sent_ = false;
  std::uint32_t restores_to_save_ = 0;  ///< restores still running whose TBs the save includes
  TimePs save_ready_ps_ = 0;            ///< the save's last write taken, and those restores done
  std::vector<SavedTb> saved_;
  std::uint64_t saving_bytes_ = 0;
  sc_core::sc_event save_done_;
};

}  // namespace gpumux
