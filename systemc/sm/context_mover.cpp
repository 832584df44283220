#include "sm/context_mover.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.h"

namespace gpumux {

ContextMover::ContextMover(MemoryPort& port, const GpuConfig& gpu, SmId sm, ContextTraffic& traffic)
    : port_(port),
      sm_(sm),
      traffic_(traffic),
      bytes_per_ps_(gpu.memory.bandwidth_gb_per_s * 1e9 / 1e12 /
                    (gpu.context_switch.per_sm_share ? static_cast<double>(gpu.num_sms) : 1.0)),
      burst_bytes_(gpu.context_switch.burst_bytes),
      min_transactions_(gpu.context_switch.min_transactions),
      area_(0x1000'0000ULL * (index(sm) + 1)) {}

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
  t.next_ps = next_burst_ps(t);
  transfers_.push_back(std::move(t));
  find_next();
  traffic_.has_bursts(*this);
}

TimePs ContextMover::next_burst_ps(const Transfer& t) const {
  // The burst leaves the SM once its share of the bandwidth has carried it.
  const double size = static_cast<double>(std::min<std::uint64_t>(t.left, t.burst));
  return t.start_ps + round_to_ps(t.sent_ps + size / bytes_per_ps_);
}

void ContextMover::find_next() {
  next_ps_ = kNever;
  for (std::size_t i = 0; i < transfers_.size(); ++i) {
    if (transfers_[i].next_ps < next_ps_) {
      next_ps_ = transfers_[i].next_ps;
      next_ = i;
    }
  }
}

void ContextMover::send_burst(TimePs ahead_ps) {
  Transfer& t = transfers_[next_];
  const auto size = static_cast<std::uint32_t>(std::min<std::uint64_t>(t.left, t.burst));
  t.sent_ps += static_cast<double>(size) / bytes_per_ps_;
  t.left -= size;
  t.next_ps = t.left > 0 ? next_burst_ps(t) : kNever;
  // The context area: a transfer's bursts at consecutive addresses (wrapping within 256 MB).
  const std::uint64_t address = area_ + (t.offset & 0xFFF'FFFFULL);
  t.offset += size;
  const TimePs done = port_.send_ahead(t.is_write, address, size, *this, t.id, kNoKernelTag, ahead_ps);
  if (done == kPending) {
    ++t.waiting;
  } else {
    t.done_ps = std::max(t.done_ps, done);
  }
  if (t.left == 0 && t.waiting == 0) traffic_.has_finished(*this);
  find_next();
}

void ContextMover::memory_done(std::uint64_t tag, TimePs done_ps) {
  for (Transfer& t : transfers_) {
    if (t.id != tag) continue;
    t.done_ps = std::max(t.done_ps, done_ps);
    --t.waiting;
    if (t.left == 0 && t.waiting == 0) traffic_.has_finished(*this);
    return;
  }
  throw InvariantViolation("SM " + std::to_string(index(sm_)) + ": a context burst answered for no transfer");
}

void ContextMover::finish_answered() {
  // In request order. An owner may request a new transfer from on_done: it goes to the back, after `i`.
  for (std::size_t i = 0; i < transfers_.size();) {
    if (transfers_[i].left == 0 && transfers_[i].waiting == 0) {
      const Done done = std::move(transfers_[i].on_done);
      const TimePs done_ps = transfers_[i].done_ps;
      transfers_.erase(transfers_.begin() + static_cast<std::ptrdiff_t>(i));
      find_next();
      done(done_ps);
    } else {
      ++i;
    }
  }
}

}  // namespace gpumux
