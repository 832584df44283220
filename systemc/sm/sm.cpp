#include "sm/sm.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/processes.h"
#include "core/tlm_quantum.h"

namespace gpumux {

Sm::Sm(const sc_core::sc_module_name& name, SmId id, const GpuConfig& gpu, TbCompletionListener& listener)
    : sc_core::sc_module(name),
      memory_socket("memory_socket"),
      id_(id),
      limits_(gpu.sm),
      listener_(listener),
      context_bytes_per_ps_(gpu.memory.bandwidth_gb_per_s * 1e9 / 1e12 /
                            (gpu.context_switch.per_sm_share ? static_cast<double>(gpu.num_sms) : 1.0)),
      context_burst_bytes_(gpu.context_switch.burst_bytes),
      context_pace_ps_(static_cast<double>(gpu.context_switch.burst_bytes) / context_bytes_per_ps_),
      context_buffer_(gpu.context_switch.burst_bytes, 0) {
  spawn_method("complete_due", wake_, [this] { complete_due(); });
  spawn_method("finish_save", save_done_, [this] { finish_save(); });
  spawn_thread("memory_initiator", [this] { run_transfers(); });
  context_payload_.set_data_ptr(context_buffer_.data());
  context_payload_.set_byte_enable_ptr(nullptr);
  context_payload_.set_address(0x1000'0000ULL * (index(id_) + 1));
}

TimePs Sm::now_ps() { return sc_core::sc_time_stamp().value(); }

std::uint64_t Sm::context_bytes(const TbFootprint& f) {
  return static_cast<std::uint64_t>(f.registers) * 4U + f.shared_memory;
}

bool Sm::fits(const TbFootprint& f, std::uint32_t shared_memory_config) const {
  if (saving_) return false;  // stopped while its context is saved
  // The shared-memory carve-out can only change while the SM is empty.
  const std::uint32_t capacity = usage_.thread_blocks == 0 ? shared_memory_config : shared_memory_capacity_;
  if (shared_memory_config > capacity) return false;
  return usage_.fits(limits_, f, capacity);
}

void Sm::start_tb(KernelId kernel, std::uint32_t tb, const TbFootprint& f, std::uint32_t shared_memory_config,
                  TimePs duration_ps, std::uint64_t restore_bytes) {
  const TimePs now = now_ps();
  if (usage_.thread_blocks == 0) {
    shared_memory_capacity_ = shared_memory_config;
    busy_since_ps_ = now;
  }
  usage_.add(f);
  traced_resident_tbs_ = static_cast<int>(usage_.thread_blocks);

  const Running record{0, next_sequence_++, now, kernel, tb, f};
  if (restore_bytes > 0) {
    // A preempted TB first reads its context back (Tanasic 3.2), then runs what it had left.
    Transfer restore;
    restore.is_write = false;
    restore.start_ps = now;
    restore.left = restore_bytes;
    restore.done_ps = now;
    restore.tb = record;
    restore.duration_ps = duration_ps;
    request_transfer(restore);
    return;
  }
  Running running = record;
  running.end_ps = now + duration_ps;
  push_running(running);
}

void Sm::push_running(const Running& tb) {
  running_.push(tb);
  if (tb.end_ps < wake_at_ps_) {
    wake_at_ps_ = tb.end_ps;
    wake_.notify(sc_core::sc_time::from_value(tb.end_ps - now_ps()));
  }
}

void Sm::release(const TbFootprint& f) {
  usage_.remove(f);
  traced_resident_tbs_ = static_cast<int>(usage_.thread_blocks);
}

void Sm::complete_due() {
  const TimePs now = now_ps();
  wake_at_ps_ = kNever;
  while (!running_.empty() && running_.top().end_ps <= now) {
    const Running done = running_.top();
    running_.pop();
    release(done.footprint);
    ++tbs_completed_;
    if (usage_.thread_blocks == 0) busy_total_ps_ += now - busy_since_ps_;
    // The driver may start new thread blocks from inside this call; they end in the future.
    listener_.on_tb_complete(id_, done.kernel, done.tb, done.start_ps);
  }
  if (!running_.empty() && running_.top().end_ps < wake_at_ps_) {
    wake_at_ps_ = running_.top().end_ps;
    wake_.notify(sc_core::sc_time::from_value(wake_at_ps_ - now));
  }
}

TimePs Sm::busy_ps() const {
  return busy_total_ps_ + (usage_.thread_blocks > 0 ? now_ps() - busy_since_ps_ : 0);
}

void Sm::request_transfer(const Transfer& transfer) {
  transfers_.push_back(transfer);
  transfer_requested_.notify(sc_core::SC_ZERO_TIME);
}

TimePs Sm::next_burst_ps(const Transfer& t) const {
  // The burst leaves the SM once its share of the bandwidth has carried it.
  const double size = static_cast<double>(std::min<std::uint64_t>(t.left, context_burst_bytes_));
  return t.start_ps + round_to_ps(t.sent_ps + context_pace_ps_ * size / context_burst_bytes_);
}

void Sm::run_transfers() {
  quantum_keeper_.reset();
  while (true) {
    if (transfers_.empty()) {
      sc_core::wait(transfer_requested_);
      quantum_keeper_.reset();
      continue;
    }
    // The earliest burst of any transfer (ties: the transfer requested first).
    auto next = transfers_.begin();
    TimePs at = next_burst_ps(*next);
    for (auto it = std::next(transfers_.begin()); it != transfers_.end(); ++it) {
      const TimePs t = next_burst_ps(*it);
      if (t < at) {
        at = t;
        next = it;
      }
    }
    const TimePs now = now_ps();
    if (at < now) {
      throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now)) + " ns on SM " +
                               std::to_string(index(id_)) + ": a context burst due at " +
                               std::to_string(ns_from_ps(at)) + " ns was not sent in time");
    }
    quantum_keeper_.set(sc_core::sc_time::from_value(at - now));
    if (at > now && quantum_keeper_.need_sync()) {
      // Synchronise (the quantum keeper's sync, woken early if a transfer requested meanwhile has
      // an earlier burst), then choose again.
      sc_core::wait(quantum_keeper_.get_local_time(), transfer_requested_);
      quantum_keeper_.reset();
      continue;
    }
    Transfer& t = *next;
    const auto size = static_cast<std::uint32_t>(std::min<std::uint64_t>(t.left, context_burst_bytes_));
    t.sent_ps += context_pace_ps_ * size / context_burst_bytes_;
    t.left -= size;
    context_payload_.set_command(t.is_write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    context_payload_.set_data_length(size);
    context_payload_.set_streaming_width(size);
    context_payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = quantum_keeper_.get_local_time();
    memory_socket->b_transport(context_payload_, delay);
    if (context_payload_.is_response_error()) {
      throw InvariantViolation("SM " + std::to_string(index(id_)) +
                               ": a context burst failed: " + context_payload_.get_response_string());
    }
    t.done_ps = std::max<TimePs>(t.done_ps, now_ps() + delay.value());
    if (t.left == 0) {
      const Transfer finished = t;
      transfers_.erase(next);
      transfer_done(finished);
    }
  }
}

void Sm::transfer_done(const Transfer& t) {
  if (t.is_write) {
    save_sent_ = true;
    save_ready_ps_ = std::max(save_ready_ps_, t.done_ps);
    maybe_finish_save();
    return;
  }
  Running tb = t.tb;
  tb.end_ps = t.done_ps + t.duration_ps;
  if (!t.saved) {
    push_running(tb);
    return;
  }
  // Restored for a save that stopped the SM meanwhile: it never ran, so all of it is left to run.
  saved_.push_back({{tb.kernel, tb.tb, t.duration_ps}, tb.footprint, tb.end_ps, tb.sequence});
  save_ready_ps_ = std::max(save_ready_ps_, t.done_ps);
  --restores_to_save_;
  maybe_finish_save();
}

void Sm::maybe_finish_save() {
  if (!save_sent_ || restores_to_save_ > 0) return;
  save_done_.notify(sc_core::sc_time::from_value(save_ready_ps_ - now_ps()));
}

void Sm::save_context() {
  const TimePs now = now_ps();
  saved_.clear();
  saving_bytes_ = 0;
  restores_to_save_ = 0;
  while (!running_.empty()) {
    const Running r = running_.top();
    running_.pop();
    saved_.push_back(
        {{r.kernel, r.tb, r.end_ps > now ? r.end_ps - now : 0}, r.footprint, r.end_ps, r.sequence});
    saving_bytes_ += context_bytes(r.footprint);
  }
  for (Transfer& t : transfers_) {
    if (t.is_write) continue;
    t.saved = true;
    ++restores_to_save_;
    saving_bytes_ += context_bytes(t.tb.footprint);
  }
  wake_at_ps_ = kNever;
  wake_.cancel();
  if (saved_.empty() && restores_to_save_ == 0) return;
  saving_ = true;
  save_sent_ = false;
  save_ready_ps_ = now;
  Transfer save;
  save.is_write = true;
  save.start_ps = now;
  save.left = saving_bytes_;
  save.done_ps = now;
  request_transfer(save);
}

void Sm::finish_save() {
  const TimePs now = now_ps();
  // In the order the thread blocks would have completed (as they were stopped).
  std::sort(saved_.begin(), saved_.end(), [](const SavedTb& a, const SavedTb& b) {
    return a.end_ps != b.end_ps ? a.end_ps < b.end_ps : a.sequence < b.sequence;
  });
  std::vector<PreemptedTb> saved;
  saved.reserve(saved_.size());
  for (const SavedTb& s : saved_) {
    release(s.footprint);
    saved.push_back(s.tb);
  }
  busy_total_ps_ += now - busy_since_ps_;
  saved_.clear();
  saving_ = false;
  listener_.on_context_saved(id_, saved, saving_bytes_);
}

}  // namespace gpumux
