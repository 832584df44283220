#include "sm/sm.h"

#include <algorithm>

#include "core/processes.h"

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
      context_buffer_(gpu.context_switch.burst_bytes, 0) {
  spawn_method("complete_due", wake_, [this] { complete_due(); });
  spawn_method("finish_save", save_done_, [this] { finish_save(); });
  context_payload_.set_data_ptr(context_buffer_.data());
  context_payload_.set_byte_enable_ptr(nullptr);
}

TimePs Sm::now_ps() { return sc_core::sc_time_stamp().value(); }

bool Sm::fits(const TbFootprint& f, std::uint32_t shared_memory_config) const {
  if (!saving_.empty()) return false;  // stopped while its context is saved
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

  // A preempted TB first reads its context back (Tanasic 3.2), then runs what it had left.
  const TimePs start = restore_bytes > 0 ? transfer_context(restore_bytes, false) : now;
  const TimePs end = start + duration_ps;
  running_.push(Running{end, next_sequence_++, now, kernel, tb, f});
  if (end < wake_at_ps_) {
    wake_at_ps_ = end;
    wake_.notify(sc_core::sc_time::from_value(end - now));
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

TimePs Sm::transfer_context(std::uint64_t bytes, bool is_write) {
  // Bursts issued at the SM's share of the bandwidth (local time offsets, loosely timed); the memory
  // controller queues them behind other initiators' traffic. Called from method processes: the
  // memory controller's b_transport never waits.
  const TimePs now = now_ps();
  context_payload_.set_command(is_write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  const auto pace = static_cast<double>(context_burst_bytes_) / context_bytes_per_ps_;
  TimePs done = now;
  std::uint64_t left = bytes;
  double offset = 0;
  while (left > 0) {
    const auto size = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, context_burst_bytes_));
    context_payload_.set_address(0x1000'0000ULL * (index(id_) + 1));
    context_payload_.set_data_length(size);
    context_payload_.set_streaming_width(size);
    context_payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    offset += pace * size / context_burst_bytes_;
    // The burst leaves the SM once its share of the bandwidth has carried it.
    sc_core::sc_time delay = sc_core::sc_time::from_value(round_to_ps(offset));
    memory_socket->b_transport(context_payload_, delay);
    done = std::max<TimePs>(done, now + delay.value());
    left -= size;
  }
  return done;
}

void Sm::save_context() {
  const TimePs now = now_ps();
  saving_.clear();
  saving_footprints_.clear();
  saving_bytes_ = 0;
  while (!running_.empty()) {
    const Running r = running_.top();
    running_.pop();
    saving_.push_back({r.kernel, r.tb, r.end_ps > now ? r.end_ps - now : 0});
    saving_footprints_.push_back(r.footprint);
    saving_bytes_ += static_cast<std::uint64_t>(r.footprint.registers) * 4U + r.footprint.shared_memory;
  }
  wake_at_ps_ = kNever;
  wake_.cancel();
  if (saving_.empty()) return;
  const TimePs done = transfer_context(saving_bytes_, true);
  save_done_.notify(sc_core::sc_time::from_value(done - now));
}

void Sm::finish_save() {
  const TimePs now = now_ps();
  for (const TbFootprint& f : saving_footprints_) release(f);
  busy_total_ps_ += now - busy_since_ps_;
  std::vector<PreemptedTb> saved;
  saved.swap(saving_);
  saving_footprints_.clear();
  listener_.on_context_saved(id_, saved, saving_bytes_);
}

}  // namespace gpumux
