#pragma once
// An SM as the rest of the SystemC system sees it, whichever model implements it: the SmPort the
// driver uses, plus the memory initiator socket top/ binds to the memory controller and the figures
// the statistics and the VCD read. top/sm_factory builds one per SM from the GPU config's sm.model.

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>

#include "core/types.h"
#include "sm/sm_port.h"

namespace gpumux {

/// Warp-level figures of one SM (all zero for the TB-level model).
struct WarpSmStats {
  std::uint64_t instructions = 0;      ///< warp instructions issued
  std::uint64_t cycles = 0;            ///< core cycles with at least one resident warp
  std::uint64_t scheduler_cycles = 0;  ///< issue slots offered (schedulers x busy issue cycles)
  std::uint64_t idle_memory = 0;       ///< issue slots lost: every warp waiting on memory
  std::uint64_t idle_barrier = 0;      ///< issue slots lost: warps waiting at a barrier (none on memory)
  std::uint64_t idle_no_warp = 0;      ///< issue slots lost: no warp resident on the scheduler
  std::uint64_t idle_other = 0;        ///< issue slots lost: operands or units not ready
  std::uint64_t alu_busy_cycles = 0;
  std::uint64_t memory_unit_busy_cycles = 0;
  std::uint64_t memory_requests = 0;
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
  /// Resident thread blocks, as an int so sc_trace can sample it for the VCD.
  [[nodiscard]] virtual const int& traced_resident_tbs() const = 0;
  [[nodiscard]] virtual WarpSmStats warp_stats() const { return {}; }
  /// Warp level: resident warps and instructions issued in the latest active cycle (VCD); null at
  /// TB level.
  [[nodiscard]] virtual const int* traced_active_warps() const { return nullptr; }
  [[nodiscard]] virtual const int* traced_issued() const { return nullptr; }
  /// Warp level: warp instructions issued per kernel launch (indexed by KernelId); empty at TB level.
  [[nodiscard]] virtual const std::vector<std::uint64_t>* instructions_by_kernel() const { return nullptr; }
};

}  // namespace gpumux
