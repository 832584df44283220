#pragma once
// A streaming multiprocessor at thread-block fidelity: it holds resident thread blocks of one or
// more kernels within its register, shared-memory, thread, warp and TB-slot budgets, and reports
// each completion at the simulated time it happens. Event-driven: one timed event per distinct
// completion time; nothing runs while all its thread blocks are busy.

#include <cstdint>
#include <queue>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
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

  void complete_due();
  void finish_save();
  void release(const TbFootprint& footprint);
  /// Moves `bytes` between the SM and memory as paced bursts; returns the absolute completion time.
  TimePs transfer_context(std::uint64_t bytes, bool is_write);
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
  std::vector<PreemptedTb> saving_;
  std::vector<TbFootprint> saving_footprints_;
  std::uint64_t saving_bytes_ = 0;
  sc_core::sc_event save_done_;
  tlm::tlm_generic_payload context_payload_;
  std::vector<unsigned char> context_buffer_;
};

}  // namespace gpumux
