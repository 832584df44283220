#include "frontend/dma_engine.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/processes.h"
#include "core/tlm_quantum.h"

namespace gpumux {

DmaEngine::DmaEngine(const sc_core::sc_module_name& name, const PcieConfig& pcie, CopyPolicy policy,
                     std::vector<int> process_priority, CommandCompletionListener& listener, bool run_ahead)
    : sc_core::sc_module(name),
      link_socket("link_socket"),
      memory_socket("memory_socket"),
      burst_bytes_(pcie.burst_bytes),
      burst_pace_ps_(
          static_cast<TimePs>(static_cast<double>(pcie.burst_bytes) / pcie.bytes_per_second() * 1e12)),
      listener_(listener),
      queue_(policy, std::move(process_priority)),
      run_ahead_(run_ahead),
      memory_(memory_socket, std::string(basename()), pcie.burst_bytes) {
  payload_.set_byte_enable_ptr(nullptr);
  payload_.set_dmi_allowed(false);
  spawn_thread("run", [this] { run(); });
}

void DmaEngine::accept(const GpuCommand& command) {
  queue_.push(command);
  work_.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngine::run() {
  while (true) {
    while (queue_.empty()) sc_core::wait(work_);
    // The engine is free: the copy policy picks among the copies waiting now; the copy then runs to
    // its end, whatever arrives meanwhile (non-preemptive).
    const GpuCommand command = queue_.pop_next();
    copying_ = true;
    copy(command);
    copying_ = false;
    turn_.take();
    listener_.command_done(command);
  }
}

sc_core::sc_time DmaEngine::reach(TimePs at_ps) {
  const TimePs now = sc_core::sc_time_stamp().value();
  local_ps_ = at_ps;
  if (run_ahead_ && at_ps > now && horizon_.before(at_ps)) return sc_core::sc_time::from_value(at_ps - now);
  horizon_.forget();
  advance_to(quantum_keeper_, at_ps);
  turn_.take();
  return quantum_keeper_.get_local_time();
}

TimePs DmaEngine::link_transport(TimePs at_ps) {
  sc_core::sc_time delay = reach(at_ps);
  payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  link_socket->b_transport(payload_, delay);
  if (payload_.is_response_error()) {
    throw InvariantViolation(std::string(name()) +
                             ": a copy burst failed: " + payload_.get_response_string());
  }
  return sc_core::sc_time_stamp().value() + delay.value();
}

TimePs DmaEngine::memory_transport(bool is_write, std::uint64_t address, std::uint32_t size, TimePs at_ps) {
  const TimePs ahead = reach(at_ps).value();
  const std::uint64_t tag = responses_.size();
  responses_.push_back(kPending);
  const TimePs done = memory_.send_ahead(is_write, address, size, *this, tag, kNoKernelTag, ahead);
  responses_[tag] = done;
  if (done == kPending) ++waiting_;
  return done;
}

void DmaEngine::memory_done(std::uint64_t tag, TimePs done_ps) {
  responses_.at(tag) = done_ps;
  --waiting_;
  response_.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngine::copy(const GpuCommand& command) {
  // The command is the direction as GPU memory sees it, on both stages: a write into memory for a
  // host-to-device copy (downstream on the link), a read from memory for a device-to-host one.
  const bool to_device = command.kind == CommandKind::kHostToDevice;
  std::vector<unsigned char> burst(burst_bytes_);
  payload_.set_command(to_device ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  payload_.set_data_ptr(burst.data());

  struct InFlight {
    std::uint64_t address;
    std::uint32_t size;
    std::uint64_t tag;  ///< a memory read's response (device to host), else unused
    TimePs arrival_ps;  ///< at the destination; kPending: a memory read not answered yet
  };
  std::deque<InFlight> in_flight;  // arrival order: each stage serves this engine's bursts in order
  responses_.clear();
  waiting_ = 0;
  quantum_keeper_.reset();
  horizon_.forget();  // the engine waited for this copy
  local_ps_ = 0;
  TimePs next_issue = sc_core::sc_time_stamp().value();
  TimePs done = next_issue;
  std::uint64_t left = command.bytes;
  // Each copy gets its own region of GPU memory (the DRAM model maps it to channels and rows).
  const std::uint64_t base = copy_base_;
  copy_base_ += (command.bytes + 0xFFFF) & ~std::uint64_t{0xFFFF};
  std::uint64_t address = 0;
  while (left > 0 || !in_flight.empty()) {
    if (!in_flight.empty() && in_flight.front().arrival_ps == kPending) {
      in_flight.front().arrival_ps = responses_[in_flight.front().tag];
    }
    const bool front_known = !in_flight.empty() && in_flight.front().arrival_ps != kPending;
    // Whichever stage acts first goes first, so every transaction is sent at its own time.
    if (front_known && (left == 0 || in_flight.front().arrival_ps <= next_issue)) {
      InFlight b = in_flight.front();
      in_flight.pop_front();
      // The next stage takes this engine's bursts in order: a memory read answered before an older one
      // (the dram model's FR-FCFS reorders them) goes on when its turn comes, not at its own arrival.
      b.arrival_ps = std::max<TimePs>({b.arrival_ps, local_ps_, sc_core::sc_time_stamp().value()});
      if (to_device) {
        done = std::max(done, memory_transport(true, base + b.address, b.size, b.arrival_ps));
      } else {
        payload_.set_address(b.address);
        payload_.set_data_length(b.size);
        payload_.set_streaming_width(b.size);
        done = std::max(done, link_transport(b.arrival_ps));
      }
      continue;
    }
    if (!in_flight.empty() && !front_known) {
      // A memory read not answered yet: its answer may come before the next burst is due.
      const TimePs now = sc_core::sc_time_stamp().value();
      if (left == 0) {
        sc_core::wait(response_);
        continue;
      }
      if (next_issue > now) {
        sc_core::wait(sc_core::sc_time::from_value(next_issue - now), response_);
        continue;
      }
    }
    const auto size = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, burst_bytes_));
    if (to_device) {
      payload_.set_address(address);
      payload_.set_data_length(size);
      payload_.set_streaming_width(size);
      in_flight.push_back({address, size, 0, link_transport(next_issue)});
    } else {
      const std::uint64_t tag = responses_.size();
      in_flight.push_back({address, size, tag, memory_transport(false, base + address, size, next_issue)});
    }
    address += size;
    left -= size;
    next_issue += burst_pace_ps_ * size / burst_bytes_;
  }
  // Writes into memory not answered yet (the dram model): the copy ends when the last one is taken.
  while (waiting_ > 0) sc_core::wait(response_);
  for (const TimePs t : responses_) done = std::max(done, t);
  // The copy completes when its last burst is delivered (done is never before the last transaction).
  quantum_keeper_.set(sc_core::sc_time::from_value(done - sc_core::sc_time_stamp().value()));
  quantum_keeper_.sync();
  bytes_copied_ += command.bytes;
}

}  // namespace gpumux
