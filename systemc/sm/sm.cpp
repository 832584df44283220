#include "sm/sm.h"

#include "core/processes.h"

namespace gpumux {

Sm::Sm(const sc_core::sc_module_name& name, SmId id, const GpuConfig& gpu, TbCompletionListener& listener)
    : sc_core::sc_module(name), id_(id), limits_(gpu.sm), listener_(listener) {
  spawn_method("complete_due", wake_, [this] { complete_due(); });
}

TimePs Sm::now_ps() { return sc_core::sc_time_stamp().value(); }

bool Sm::fits(const TbFootprint& f, std::uint32_t shared_memory_config) const {
  if (usage_.thread_blocks + 1 > limits_.max_thread_blocks) return false;
  if (usage_.registers + f.registers > limits_.registers) return false;
  if (usage_.threads + f.threads > limits_.max_threads) return false;
  if (usage_.warps + f.warps > limits_.max_warps) return false;
  // The shared-memory carve-out can only change while the SM is empty.
  const std::uint32_t capacity = usage_.thread_blocks == 0 ? shared_memory_config : shared_memory_capacity_;
  if (shared_memory_config > capacity) return false;
  return usage_.shared_memory + f.shared_memory <= capacity;
}

void Sm::start_tb(KernelId kernel, std::uint32_t tb, const TbFootprint& f, std::uint32_t shared_memory_config,
                  TimePs duration_ps) {
  const TimePs now = now_ps();
  if (usage_.thread_blocks == 0) {
    shared_memory_capacity_ = shared_memory_config;
    busy_since_ps_ = now;
  }
  usage_.thread_blocks += 1;
  usage_.registers += f.registers;
  usage_.shared_memory += f.shared_memory;
  usage_.threads += f.threads;
  usage_.warps += f.warps;
  traced_resident_tbs_ = static_cast<int>(usage_.thread_blocks);

  const TimePs end = now + duration_ps;
  running_.push(Running{end, next_sequence_++, now, kernel, tb, f});
  if (end < wake_at_ps_) {
    wake_at_ps_ = end;
    wake_.notify(sc_core::sc_time::from_value(end - now));
  }
}

void Sm::release(const TbFootprint& f) {
  usage_.thread_blocks -= 1;
  usage_.registers -= f.registers;
  usage_.shared_memory -= f.shared_memory;
  usage_.threads -= f.threads;
  usage_.warps -= f.warps;
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

}  // namespace gpumux
