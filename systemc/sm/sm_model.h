#pragma once
// An SM as the rest of the SystemC system sees it, whichever model implements it: the SmPort the
// driver uses, plus the memory initiator socket top/ binds to the memory controller and the figures
// the statistics read. top/sm_factory builds one per SM from the GPU config's sm.model.

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>

#include "core/types.h"
#include "core/warp_stats.h"
#include "sm/sm_port.h"
#include "sm/sm_setup.h"

namespace gpumux {

/// Receives a warp-level SM's activity for the waveform (wave/waveform.h); optional.
class WarpActivitySink {
 public:
  virtual ~WarpActivitySink() = default;
  /// From `time_ps` on, `active_warps` warps are resident and `issued` instructions issued in the
  /// SM's latest active cycle, to the units in `units` (bit i: UnitKind i, sm/warp/execution_units.h).
  virtual void on_warp_activity(SmId sm, TimePs time_ps, std::uint32_t active_warps, std::uint32_t issued,
                                std::uint32_t units) = 0;
};

class SmModule : public sc_core::sc_module, public SmPort {
 public:
  using sc_core::sc_module::sc_module;

  /// Context save/restore traffic and (warp level) global memory requests.
  [[nodiscard]] virtual tlm::tlm_initiator_socket<>& memory_initiator() = 0;
  [[nodiscard]] virtual SmId id() const = 0;
  /// Time with at least one resident thread block, up to now.
  [[nodiscard]] virtual TimePs busy_ps() const = 0;
  [[nodiscard]] virtual std::uint64_t tbs_completed() const = 0;
  /// Thread blocks resident now (running, restoring, or waiting for the SM's setup).
  [[nodiscard]] virtual std::uint32_t resident_tbs() const = 0;
  /// Its setups for kernels so far (GpuConfig context_switch.setup_cycles).
  [[nodiscard]] virtual const SmSetup& setup() const = 0;
  [[nodiscard]] virtual WarpSmStats warp_stats() const { return {}; }
  /// Warp instructions issued by operation class (warp-level SMs; zero at TB level).
  [[nodiscard]] virtual OpCounts op_counts() const { return {}; }
  /// Warp level: report active warps and issue to `sink` (null: stop); TB-level SMs have none to report.
  virtual void set_warp_activity_sink(WarpActivitySink* /*sink*/) {}
  /// Warp level: warp instructions issued per kernel launch (indexed by KernelId); empty at TB level.
  [[nodiscard]] virtual const std::vector<std::uint64_t>* instructions_by_kernel() const { return nullptr; }
};

}  // namespace gpumux
