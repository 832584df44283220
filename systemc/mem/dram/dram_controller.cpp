#include "mem/dram/dram_controller.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace gpumux::dram {
namespace {

// Validation must precede the members computed from the config (a zero beats_per_clock divides).
const DramConfig& validated(const DramConfig& config) {
  validate(config);
  return config;
}

/// Sorts completed[first..] by command time, keeping the order of equal times: each channel's run is
/// already sorted and the runs are in channel order, so this is (cycle, channel) order.
void sort_by_command_time(std::vector<DramCompletion>& completed, std::size_t first) {
  const auto begin = completed.begin() + static_cast<std::ptrdiff_t>(first);
  const auto earlier = [](const DramCompletion& a, const DramCompletion& b) {
    return a.command_ps < b.command_ps;
  };
  // Usually a handful: insertion sort, which allocates nothing (std::stable_sort takes a buffer).
  constexpr std::size_t kInsertionSortMax = 64;
  if (completed.size() - first > kInsertionSortMax) {
    std::stable_sort(begin, completed.end(), earlier);
    return;
  }
  for (auto it = begin; it != completed.end(); ++it) {
    const DramCompletion moving = *it;
    auto hole = it;
    for (; hole != begin && earlier(moving, *(hole - 1)); --hole) *hole = *(hole - 1);
    *hole = moving;
  }
}

}  // namespace

DramController::DramController(const DramConfig& config)
    : config_(validated(config)),
      period_ps_(command_clock_period_ps(config)),
      atom_bytes_(dram::atom_bytes(config)),
      min_done_latency_ps_((std::min(config.timing.tCL, config.timing.tWL) + burst_cycles(config.timing)) *
                           period_ps_),
      mapping_(config_) {
  channels_.reserve(config.channels);
  for (std::uint32_t c = 0; c < config.channels; ++c) channels_.emplace_back(config, c, period_ps_);
  next_cycles_.assign(config.channels, kNeverCycle);
  words_ = (config.channels + 63) / 64;
  wheel_.assign(kWheelCycles * words_, 0);
  far_.assign(words_, 0);
  due_.assign(words_, 0);
}

// Inlined: once per channel stepped.
[[gnu::always_inline]] inline void DramController::wheel_insert(std::uint32_t channel, std::uint64_t cycle) {
  if (cycle == kNeverCycle) return;
  const std::uint64_t bit = std::uint64_t{1} << (channel % 64);
  if (cycle - base_ < kWheelCycles) {
    const std::uint64_t bucket = cycle % kWheelCycles;
    wheel_[bucket * words_ + channel / 64] |= bit;
    ++bucket_channels_[bucket];
    occupied_[bucket / 64] |= std::uint64_t{1} << (bucket % 64);
  } else {
    far_[channel / 64] |= bit;
    ++far_count_;
  }
}

// Inlined: once per request whose push brings its channel's next cycle forward (most of them).
[[gnu::always_inline]] inline void DramController::wheel_erase(std::uint32_t channel, std::uint64_t cycle) {
  if (cycle == kNeverCycle) return;
  const std::uint64_t bit = std::uint64_t{1} << (channel % 64);
  if (cycle - base_ < kWheelCycles) {
    const std::uint64_t bucket = cycle % kWheelCycles;
    wheel_[bucket * words_ + channel / 64] &= ~bit;
    // The bucket's count of channels tells whether it is now empty without a look at its words.
    if (--bucket_channels_[bucket] == 0) occupied_[bucket / 64] &= ~(std::uint64_t{1} << (bucket % 64));
  } else {
    far_[channel / 64] &= ~bit;
    --far_count_;
  }
}

void DramController::enqueue(const DramRequest& request) {
  if (request.arrival_ps < last_arrival_ps_ || request.arrival_ps < now_ps_) fail_arrival(request);
  last_arrival_ps_ = request.arrival_ps;
  const DramAddress where = mapping_.decode(request.address);
  // The first edge strictly after the arrival: one cycle to enter the queue.
  DramChannel& channel = channels_[where.channel];
  channel.push(request.id, where, request.is_write, request.arrival_ps / period_ps_ + 1);
  // A push only brings the channel's next cycle forward, to an edge after the last advance().
  const std::uint64_t next = channel.next_cycle();
  if (next != next_cycles_[where.channel]) {
    wheel_erase(where.channel, next_cycles_[where.channel]);
    next_cycles_[where.channel] = next;
    wheel_insert(where.channel, next);
    earliest_cycle_ = std::min(earliest_cycle_, next);
  }
}

void DramController::fail_arrival(const DramRequest& request) const {
  throw InvariantViolation("DRAM request " + std::to_string(request.id) + " arrives at " +
                           std::to_string(request.arrival_ps) + " ps, before " +
                           (request.arrival_ps < last_arrival_ps_
                                ? "the previous request's arrival at " + std::to_string(last_arrival_ps_)
                                : "the controller's time " + std::to_string(now_ps_)) +
                           " ps");
}

TimePs DramController::next_event_ps() const {
  return earliest_cycle_ == kNeverCycle ? kNever : earliest_cycle_ * period_ps_;
}

TimePs DramController::next_completion_bound_ps() const {
  const TimePs next = next_event_ps();
  return next == kNever ? kNever : next + min_done_latency_ps_;
}

void DramController::advance(TimePs now, std::vector<DramCompletion>& completed) {
  if (now < now_ps_) {
    throw InvariantViolation("DRAM controller advanced to " + std::to_string(now) + " ps, before its time " +
                             std::to_string(now_ps_) + " ps");
  }
  const std::uint64_t now_cycle = now / period_ps_;
  now_ps_ = now;
  now_cycle_ = now_cycle;
  if (log_ != nullptr) {
    // The log interleaves the channels' commands in issue order: step them in (cycle, channel) order. A
    // step moves its channel past the cycle, so one pass steps every channel due at the earliest cycle.
    for (std::uint64_t cycle = wheel_earliest(); cycle <= now_cycle; cycle = wheel_earliest()) {
      take_due(cycle);
      for_each_due([&](std::uint32_t c) {
        DramChannel& channel = channels_[c];
        channel.step(cycle, completed);
        next_cycles_[c] = channel.next_cycle();
        wheel_insert(c, next_cycles_[c]);
      });
    }
    take_due(now_cycle);  // none left: moves the wheel to now
    // Settled now rather than when read: an idle channel's refreshes are logged as they are replayed.
    for (DramChannel& channel : channels_) channel.settle(now_cycle, now);
  } else {
    // Channels are independent: run each one due up to `now` in turn, then put the completions in (cycle,
    // channel) order, as stepping them together would have.
    const std::size_t first = completed.size();
    take_due(now_cycle);
    for_each_due([&](std::uint32_t c) {
      DramChannel& channel = channels_[c];
      while (channel.next_cycle() <= now_cycle) channel.step(channel.next_cycle(), completed);
      next_cycles_[c] = channel.next_cycle();
      wheel_insert(c, next_cycles_[c]);
    });
    sort_by_command_time(completed, first);
  }
  earliest_cycle_ = wheel_earliest();
}

void DramController::take_due(std::uint64_t cycle) {
  std::fill(due_.begin(), due_.end(), 0);
  if (cycle < base_) return;  // no channel is due before base_
  // The buckets of base_..cycle (all of them if the wheel turns fully), found a word of `occupied_` at a
  // time rather than cycle by cycle.
  std::uint64_t left = cycle - base_ >= kWheelCycles ? kWheelCycles : cycle - base_ + 1;
  for (std::uint64_t at = base_ % kWheelCycles; left != 0;) {
    const std::uint64_t offset = at % 64;
    const std::uint64_t take = std::min(left, 64 - offset);
    const std::uint64_t range = (take == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << take) - 1) << offset;
    std::uint64_t& occupied = occupied_[at / 64];
    for (std::uint64_t bits = occupied & range; bits != 0; bits &= bits - 1) {
      const std::uint64_t bucket = at / 64 * 64 + static_cast<unsigned>(__builtin_ctzll(bits));
      std::uint64_t* const words = &wheel_[bucket * words_];
      for (std::size_t w = 0; w < words_; ++w) {
        due_[w] |= words[w];
        words[w] = 0;
      }
      bucket_channels_[bucket] = 0;
    }
    occupied &= ~range;
    at = (at + take) % kWheelCycles;
    left -= take;
  }
  base_ = cycle + 1;
  if (far_count_ == 0) return;
  // Far channels now due, or near enough for a bucket.
  for (std::size_t w = 0; w < words_; ++w) {
    for (std::uint64_t bits = far_[w]; bits != 0; bits &= bits - 1) {
      const auto c = static_cast<std::uint32_t>(w * 64 + static_cast<unsigned>(__builtin_ctzll(bits)));
      const std::uint64_t next = next_cycles_[c];
      if (next <= cycle) {
        due_[w] |= std::uint64_t{1} << (c % 64);
      } else if (next - base_ >= kWheelCycles) {
        continue;
      } else {
        wheel_insert(c, next);
      }
      far_[w] &= ~(std::uint64_t{1} << (c % 64));
      --far_count_;
    }
  }
}

std::uint64_t DramController::wheel_earliest() const {
  // The first non-empty bucket from base_'s on, around the wheel: its cycle is the earliest, since every
  // far channel comes after every bucket.
  constexpr std::size_t kWords = kWheelCycles / 64;
  const std::uint64_t start = base_ % kWheelCycles;
  for (std::size_t k = 0; k <= kWords; ++k) {
    const std::size_t w = (start / 64 + k) % kWords;
    std::uint64_t bits = occupied_[w];
    if (k == 0) bits &= ~std::uint64_t{0} << (start % 64);            // from start on
    if (k == kWords) bits &= (std::uint64_t{1} << (start % 64)) - 1;  // wrapped: before start
    if (bits == 0) continue;
    const std::uint64_t bucket = w * 64 + static_cast<unsigned>(__builtin_ctzll(bits));
    return base_ + (bucket + kWheelCycles - start) % kWheelCycles;
  }
  std::uint64_t earliest = kNeverCycle;
  if (far_count_ == 0) return earliest;
  for (std::size_t w = 0; w < words_; ++w) {
    for (std::uint64_t bits = far_[w]; bits != 0; bits &= bits - 1) {
      earliest = std::min(earliest, next_cycles_[w * 64 + static_cast<unsigned>(__builtin_ctzll(bits))]);
    }
  }
  return earliest;
}

double DramController::peak_bytes_per_second() const {
  const double burst_ps = static_cast<double>(burst_cycles(config_.timing)) * static_cast<double>(period_ps_);
  return static_cast<double>(channels_.size()) * atom_bytes_ / burst_ps * 1e12;
}

void DramController::check_channel(std::uint32_t channel) const {
  if (channel >= channels_.size()) {
    throw InvariantViolation("DRAM channel " + std::to_string(channel) + " out of range (" +
                             std::to_string(channels_.size()) + " channels)");
  }
}

const DramChannel& DramController::settled(std::uint32_t channel) const {
  check_channel(channel);
  DramChannel& settling = channels_[channel];
  settling.settle(now_cycle_, now_ps_);
  return settling;
}

const DramController::ChannelStats& DramController::channel_stats(std::uint32_t channel) const {
  return settled(channel).stats();
}

std::size_t DramController::pending(std::uint32_t channel) const { return settled(channel).pending(); }

int DramController::bank_state(std::uint32_t channel, std::uint32_t bank) const {
  check_channel(channel);
  if (bank >= config_.banks) {
    throw InvariantViolation("DRAM bank " + std::to_string(bank) + " out of range (" +
                             std::to_string(config_.banks) + " banks)");
  }
  return settled(channel).bank_state(bank);
}

std::uint64_t DramController::open_row(std::uint32_t channel, std::uint32_t bank) const {
  (void)bank_state(channel, bank);  // range checks
  return settled(channel).open_row(bank);
}

bool DramController::write_draining(std::uint32_t channel) const { return settled(channel).write_draining(); }

void DramController::set_command_log(std::vector<DramCommand>* log) {
  // The refreshes an idle channel replays up to now happened before the log was set (or cleared).
  for (std::uint32_t c = 0; c < channels(); ++c) (void)settled(c);
  log_ = log;
  for (DramChannel& channel : channels_) channel.set_command_log(log);
}

}  // namespace gpumux::dram
