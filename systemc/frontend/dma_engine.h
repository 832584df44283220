#pragma once
// A DMA (copy) engine: moves a copy command's bytes between the host and GPU memory as TLM-2.0 bursts,
// a loosely-timed initiator on two sockets: the PCIe link and the memory controller. A copy is a
// two-stage pipeline: bursts leave the source at the link's pace (host to device: across the link;
// device to host: read from memory) and each is handed to the destination when it arrives there
// (written to memory; sent across the link), with several bursts in flight. The engine keeps its
// local time in a tlm_utils::tlm_quantumkeeper and sends every transaction at its own time
// (core/tlm_quantum.h), so the memory controller sees its bursts in time order with every other
// initiator's. The copy completes when its last burst is delivered.
//
// Temporal decoupling (`simple` memory only, whose requests carry their arrival as annotated delay, and
// the PCIe link, which books its channels the same way): while nothing else in the model has activity
// pending before a transaction's time (sc_time_to_pending_activity()), no other initiator can reach the
// link or memory before it, so the engine sends it at once, annotated with its time, instead of waiting
// for it, as the context traffic does (sm/context_traffic.h). A copy's end is reported at SystemC's
// clock, as without running ahead; at an instant where others act, the engine takes its equal-time turn.
//
// Copies the dispatcher issues wait in the engine's DMA queue (frontend/dma_queue.h); when the engine
// is free it takes the one its copy policy picks (fcfs: the first to arrive; npq: the highest process
// priority) and moves it to the end.

#include <cstdint>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <systemc>
#include <tlm>

#include "core/equal_time_order.h"
#include "core/gpu_config.h"
#include "core/tlm_quantum.h"
#include "frontend/copy_policy.h"
#include "frontend/dma_queue.h"
#include "frontend/gpu_command.h"
#include "mem/memory_port.h"

namespace gpumux {

class DmaEngine final : public sc_core::sc_module, public CommandEngine, private MemoryClient {
 public:
  tlm_utils::simple_initiator_socket<DmaEngine> link_socket;  ///< to the PCIe link
  MemoryPort::Socket memory_socket;                           ///< to the memory (mem/memory_port.h)

  /// `process_priority[p]`: the workload's priority of process p, which `policy` npq orders copies by.
  /// `run_ahead`: send transactions ahead of SystemC's clock when nothing else is pending before them
  /// (the `simple` memory model; see above).
  DmaEngine(const sc_core::sc_module_name& name, const PcieConfig& pcie, CopyPolicy policy,
            std::vector<int> process_priority, CommandCompletionListener& listener, bool run_ahead = false);

  void accept(const GpuCommand& command) override;
  /// Equal-time order (core/equal_time_order.h): the engine takes a turn of rank `rank` before each
  /// transaction and before it reports a copy done.
  void set_equal_time_order(EqualTimeOrder& order, std::uint64_t rank) { turn_.attach(order, rank); }
  [[nodiscard]] std::uint64_t bytes_copied() const { return bytes_copied_; }
  /// Copies queued or in progress, as an int the VCD samples.

 private:
  void run();
  void copy(const GpuCommand& command);
  /// Brings the engine to absolute time `at_ps` for a transaction: ahead of SystemC's clock when it may
  /// run ahead (see above), else by waiting for it and taking an equal-time turn. Returns the delay to
  /// annotate the transaction with.
  sc_core::sc_time reach(TimePs at_ps);
  /// Sends the payload's burst across the link at absolute time `at_ps`; returns its arrival.
  TimePs link_transport(TimePs at_ps);
  /// Sends a burst to memory at absolute time `at_ps`; returns its completion, or kPending (the
  /// answer lands in responses_ when memory_done() is called).
  TimePs memory_transport(bool is_write, std::uint64_t address, std::uint32_t size, TimePs at_ps);
  void memory_done(std::uint64_t tag, TimePs done_ps) override;

  std::uint32_t burst_bytes_;
  TimePs burst_pace_ps_;
  CommandCompletionListener& listener_;
  DmaQueue queue_;        ///< copies waiting for the engine
  bool copying_ = false;  ///< a copy is in progress (taken from queue_)
  sc_core::sc_event work_;
  EqualTimeTurn turn_;
  bool run_ahead_;
  RunAheadHorizon horizon_;
  TimePs local_ps_ = 0;  ///< the time of the copy's last transaction (ahead of SystemC's clock, or at it)
  tlm_utils::tlm_quantumkeeper quantum_keeper_;
  tlm::tlm_generic_payload payload_;  ///< link transactions
  MemoryPort memory_;
  std::vector<TimePs> responses_;  ///< the current copy's memory requests: completion, or kPending
  std::uint64_t waiting_ = 0;      ///< of those, still kPending
  sc_core::sc_event response_;     ///< an answer came (memory_done)
  std::uint64_t copy_base_ = 0x8000'0000'0000ULL;  ///< next copy's address region
  std::uint64_t bytes_copied_ = 0;
};

}  // namespace gpumux
