#pragma once
// The GPU's memory side handed to a user's own memory model (issue 13; docs/cosim.md): every request of
// the GPU's initiators (warp loads and stores, DMA copies, context saves and restores) leaves through one
// TLM-2.0 initiator socket, `memory_socket`, which the user binds to their memory target in place of the
// built-in `simple` or `dram` model.
//
// The bridge keeps the model's side of the protocol (mem/memory_port.h) and speaks the TLM-2.0 base
// protocol to the user's target:
//   - a request goes out as nb_transport_fw(BEGIN_REQ) at its arrival time (the initiator's annotated
//     delay is passed on), after the same arrival-order check the built-in models make;
//   - TLM_COMPLETED (or TLM_UPDATED with BEGIN_RESP, which the bridge ends with END_RESP): the request
//     completes after the returned delay;
//   - TLM_ACCEPTED (or TLM_UPDATED with END_REQ): the target later sends BEGIN_RESP on the backward
//     path, and the bridge completes the request then (plus that call's delay) and returns
//     TLM_COMPLETED, so the target never waits for an END_RESP.
// A target that registers only b_transport works too: tlm_utils::simple_target_socket turns the
// non-blocking call into a b_transport call in a process of its own and answers with BEGIN_RESP.
// A response with an error status is an InvariantViolation naming the address: the GPU has no way to
// retry.

#include <cstdint>
#include <unordered_map>

#include <tlm_utils/simple_initiator_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "mem/memory_target.h"

namespace gpumux {

class ExternalMemory final : public MemoryTarget {
 public:
  tlm_utils::simple_initiator_socket<ExternalMemory> memory_socket;

  explicit ExternalMemory(const sc_core::sc_module_name& name);

  /// Unknown: the user's model keeps its own figures. 0.
  [[nodiscard]] TimePs busy_ps() const override { return 0; }
  /// {"model": "external", "outstanding": requests not completed at the end}.
  [[nodiscard]] nlohmann::json details(TimePs end_ps) const override;

 protected:
  tlm::tlm_sync_enum request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                             sc_core::sc_time& delay) override;
  void blocking_request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                        sc_core::sc_time& delay) override;

 private:
  struct Outstanding {
    std::uint32_t initiator = 0;
    TimePs arrival_ps = 0;
  };

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  /// Throws InvariantViolation when the user's target answered `payload` with an error.
  void check_response(const tlm::tlm_generic_payload& payload) const;

  /// Accepted requests by payload, until their BEGIN_RESP.
  std::unordered_map<const tlm::tlm_generic_payload*, Outstanding> outstanding_;
};

}  // namespace gpumux
