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
  channels_[where.channel].push(request.id, where, request.is_write, request.arrival_ps / period_ps_ + 1);
}

TimePs DramController::next_event_ps() const {
  std::uint64_t earliest = kNeverCycle;
  for (const DramChannel& channel : channels_) earliest = std::min(earliest, channel.next_cycle());
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
  // Channels are independent; stepping them in (cycle, channel) order keeps the completions in time
  // order whatever the caller's wake-up pattern.
  for (;;) {
    std::uint64_t cycle = kNeverCycle;
    std::size_t next = 0;
    for (std::size_t c = 0; c < channels_.size(); ++c) {
      if (channels_[c].next_cycle() < cycle) {
        cycle = channels_[c].next_cycle();
        next = c;
      }
    }
    if (cycle > now_cycle) break;
    channels_[next].step(cycle, completed);
  }
  for (DramChannel& channel : channels_) channel.settle(now_cycle, now);
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
  for (DramChannel& channel : channels_) channel.set_command_log(log);
}

}  // namespace gpumux::dram
