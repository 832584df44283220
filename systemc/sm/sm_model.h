#pragma once
// An SM as the rest of the SystemC system sees it, whichever model implements it: the SmPort the
// driver uses, plus the memory initiator socket top/ binds to the memory controller and the figures
// the statistics and the VCD read. top/sm_factory builds one per SM from the GPU config's sm.model.

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>

#include "core/types.h"
#include "core/warp_stats.h"
#include "sm/sm_port.h"
#include "sm/sm_setup.h"

namespace gpumux {

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
  /// Its setups for kernels so far (GpuConfig context_switch.setup_cycles).
  [[nodiscard]] virtual const SmSetup& setup() const = 0;
  [[nodiscard]] virtual WarpSmStats warp_stats() const { return {}; }
  /// Warp level: resident warps and instructions issued in the latest active cycle (VCD); null at
  /// TB level.
  [[nodiscard]] virtual const int* traced_active_warps() const { return nullptr; }
  [[nodiscard]] virtual const int* traced_issued() const { return nullptr; }
  /// Warp level: warp instructions issued per kernel launch (indexed by KernelId); empty at TB level.
  [[nodiscard]] virtual const std::vector<std::uint64_t>* instructions_by_kernel() const { return nullptr; }
};

}  // namespace gpumux
