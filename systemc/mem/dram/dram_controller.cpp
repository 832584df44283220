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
}

void DramController::enqueue(const DramRequest& request) {
  if (request.arrival_ps < last_arrival_ps_ || request.arrival_ps < now_ps_) {
    throw InvariantViolation("DRAM request " + std::to_string(request.id) + " arrives at " +
                             std::to_string(request.arrival_ps) + " ps, before " +
                             (request.arrival_ps < last_arrival_ps_
                                  ? "the previous request's arrival at " + std::to_string(last_arrival_ps_)
                                  : "the controller's time " + std::to_string(now_ps_)) +
                             " ps");
  }
  last_arrival_ps_ = request.arrival_ps;
  const DramAddress where = mapping_.decode(request.address);
  // The first edge strictly after the arrival: one cycle to enter the queue.
  DramChannel& channel = channels_[where.channel];
  channel.push(request.id, where, request.is_write, request.arrival_ps / period_ps_ + 1);
  next_cycles_[where.channel] = channel.next_cycle();
}

TimePs DramController::next_event_ps() const {
  const std::uint64_t earliest = *std::min_element(next_cycles_.begin(), next_cycles_.end());
  return earliest == kNeverCycle ? kNever : earliest * period_ps_;
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
  if (log_ != nullptr) {
    // The log interleaves the channels' commands in issue order: step them in (cycle, channel) order. A
    // step moves its channel past the cycle, so one pass steps every channel due at the earliest cycle.
    for (;;) {
      const std::uint64_t cycle = *std::min_element(next_cycles_.begin(), next_cycles_.end());
      if (cycle > now_cycle) break;
      for (std::size_t c = 0; c < channels_.size(); ++c) {
        if (next_cycles_[c] != cycle) continue;
        channels_[c].step(cycle, completed);
        next_cycles_[c] = channels_[c].next_cycle();
      }
    }
    for (DramChannel& channel : channels_) channel.settle(now_cycle, now);
  } else {
    // Channels are independent: run each up to `now` in turn, then put the completions in (cycle,
    // channel) order, as stepping them together would have.
    const std::size_t first = completed.size();
    for (std::size_t c = 0; c < channels_.size(); ++c) {
      DramChannel& channel = channels_[c];
      while (channel.next_cycle() <= now_cycle) channel.step(channel.next_cycle(), completed);
      next_cycles_[c] = channel.next_cycle();
      channel.settle(now_cycle, now);
    }
    sort_by_command_time(completed, first);
  }
  now_ps_ = now;
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

const DramController::ChannelStats& DramController::channel_stats(std::uint32_t channel) const {
  check_channel(channel);
  return channels_[channel].stats();
}

std::size_t DramController::pending(std::uint32_t channel) const {
  check_channel(channel);
  return channels_[channel].pending();
}

int DramController::bank_state(std::uint32_t channel, std::uint32_t bank) const {
  check_channel(channel);
  if (bank >= config_.banks) {
    throw InvariantViolation("DRAM bank " + std::to_string(bank) + " out of range (" +
                             std::to_string(config_.banks) + " banks)");
  }
  return channels_[channel].bank_state(bank);
}

std::uint64_t DramController::open_row(std::uint32_t channel, std::uint32_t bank) const {
  (void)bank_state(channel, bank);  // range checks
  return channels_[channel].open_row(bank);
}

bool DramController::write_draining(std::uint32_t channel) const {
  check_channel(channel);
  return channels_[channel].write_draining();
}

void DramController::set_command_log(std::vector<DramCommand>* log) {
  log_ = log;
  for (DramChannel& channel : channels_) channel.set_command_log(log);
}

}  // namespace gpumux::dram
