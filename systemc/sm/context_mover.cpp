#include "sm/context_mover.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/processes.h"

namespace gpumux {

ContextMover::ContextMover(MemoryPort& port, const GpuConfig& gpu, SmId sm)
    : port_(port),
      sm_(sm),
      bytes_per_ps_(gpu.memory.bandwidth_gb_per_s * 1e9 / 1e12 /
                    (gpu.context_switch.per_sm_share ? static_cast<double>(gpu.num_sms) : 1.0)),
      burst_bytes_(gpu.context_switch.burst_bytes),
      min_transactions_(gpu.context_switch.min_transactions),
      area_(0x1000'0000ULL * (index(sm) + 1)) {
  spawn_thread("memory_initiator", [this] { run(); });
}

void ContextMover::request(bool is_write, std::uint64_t bytes, TimePs start_ps, Done on_done) {
  const TimePs now = sc_core::sc_time_stamp().value();
  if (start_ps < now) {
    throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now)) + " ns on SM " +
                             std::to_string(index(sm_)) + ": a context transfer requested to start at " +
                             std::to_string(ns_from_ps(start_ps)) + " ns, in the past");
  }
  Transfer t;
  t.id = next_id_++;
  t.is_write = is_write;
  t.start_ps = start_ps;
  t.left = bytes;
  // At least min_transactions pieces of whole granules, at most burst_bytes (see the header).
  const std::uint64_t piece = (bytes + min_transactions_ - 1) / min_transactions_;
  const std::uint64_t granules = (piece + kGranuleBytes - 1) / kGranuleBytes;
  t.burst = static_cast<std::uint32_t>(std::min<std::uint64_t>(burst_bytes_, granules * kGranuleBytes));
  t.done_ps = start_ps;
  t.on_done = std::move(on_done);
  transfers_.push_back(std::move(t));
  requested_.notify(sc_core::SC_ZERO_TIME);
}

TimePs ContextMover::next_burst_ps(const Transfer& t) const {
  // The burst leaves the SM once its share of the bandwidth has carried it.
  const double size = static_cast<double>(std::min<std::uint64_t>(t.left, t.burst));
  return t.start_ps + round_to_ps(t.sent_ps + size / bytes_per_ps_);
}

void ContextMover::memory_done(std::uint64_t tag, TimePs done_ps) {
  for (Transfer& t : transfers_) {
    if (t.id != tag) continue;
    t.done_ps = std::max(t.done_ps, done_ps);
    --t.waiting;
    if (t.left == 0 && t.waiting == 0) requested_.notify(sc_core::SC_ZERO_TIME);  // the thread finishes it
    return;
  }
  throw InvariantViolation("SM " + std::to_string(index(sm_)) + ": a context burst answered for no transfer");
}

void ContextMover::finish_answered() {
  for (auto it = transfers_.begin(); it != transfers_.end();) {
    if (it->left == 0 && it->waiting == 0) {
      const Done done = std::move(it->on_done);
      const TimePs done_ps = it->done_ps;
      it = transfers_.erase(it);
      done(done_ps);
    } else {
      ++it;
    }
  }
}

void ContextMover::run() {
  quantum_keeper_.reset();
  while (true) {
    finish_answered();
    // Transfers with bursts left to send; those only waiting for answers are not candidates.
    const bool sending =
        std::any_of(transfers_.begin(), transfers_.end(), [](const Transfer& t) { return t.left > 0; });
    if (!sending) {
      sc_core::wait(requested_);
      quantum_keeper_.reset();
      continue;
    }
    // The earliest burst of any transfer (ties: the transfer requested first).
    auto next = transfers_.end();
    TimePs at = kNever;
    for (auto it = transfers_.begin(); it != transfers_.end(); ++it) {
      if (it->left == 0) continue;
      const TimePs t = next_burst_ps(*it);
      if (t < at) {
        at = t;
        next = it;
      }
    }
    const TimePs now = sc_core::sc_time_stamp().value();
    if (at < now) {
      throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now)) + " ns on SM " +
                               std::to_string(index(sm_)) + ": a context burst due at " +
                               std::to_string(ns_from_ps(at)) + " ns was not sent in time");
    }
    quantum_keeper_.set(sc_core::sc_time::from_value(at - now));
    if (at > now && quantum_keeper_.need_sync()) {
      // Synchronise (the quantum keeper's sync, woken early if a transfer requested meanwhile has
      // an earlier burst), then choose again.
      sc_core::wait(quantum_keeper_.get_local_time(), requested_);
      quantum_keeper_.reset();
      continue;
    }
    Transfer& t = *next;
    const auto size = static_cast<std::uint32_t>(std::min<std::uint64_t>(t.left, t.burst));
    t.sent_ps += static_cast<double>(size) / bytes_per_ps_;
    t.left -= size;
    // The context area: a transfer's bursts at consecutive addresses (wrapping within 256 MB).
    const std::uint64_t address = area_ + (t.offset & 0xFFF'FFFFULL);
    t.offset += size;
    const TimePs done = port_.send(t.is_write, address, size, *this, t.id);
    if (done == kPending) {
      ++t.waiting;
    } else {
      t.done_ps = std::max(t.done_ps, done);
    }
  }
}

}  // namespace gpumux
