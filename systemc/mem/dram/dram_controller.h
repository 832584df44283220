#pragma once
// The cycle-level GDDR5 DRAM controller core: the address mapping and one DramChannel per channel
// (dram_channel.h documents the scheduling, timing and refresh semantics). Plain C++: the SystemC wrapper
// enqueues requests as they arrive, sleeps until next_event_ps() (or the next arrival) and calls
// advance(), which returns the completions.
//
// Time: the command clock's period is 1e6 / command_clock_mhz ps rounded to the nearest whole ps
// (1300 MHz: 769 ps), and every command issues on an edge k * period (k >= 0). peak_bytes_per_second()
// uses the same rounded period, so measured bandwidths compare with it exactly.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/types.h"
#include "mem/dram/address_mapping.h"
#include "mem/dram/dram_channel.h"
#include "mem/dram/dram_config.h"

namespace gpumux::dram {

class DramController {
 public:
  using BankStats = dram::BankStats;
  using ChannelStats = dram::ChannelStats;

  /// Throws std::invalid_argument naming the parameter if `config` is not valid.
  explicit DramController(const DramConfig& config);

  /// Requests must be enqueued in non-decreasing arrival_ps, and arrival_ps must not be before the `now`
  /// of the last advance() call (InvariantViolation otherwise). A request is eligible for a command at the
  /// first command-clock edge strictly after its arrival (one cycle to enter the queue).
  void enqueue(const DramRequest& request);

  /// Earliest edge at which advance() may issue a command, or kNever when no channel has a queued
  /// request. Exact for the scheduler (dram_channel.h): calling advance() only at these times (and after
  /// enqueues) gives the same completions as calling it on every edge. Strictly after the last advance().
  [[nodiscard]] TimePs next_event_ps() const;

  /// A lower bound on the done_ps of every completion advance() has yet to return: next_event_ps() plus
  /// the shortest command-to-done time, min(tCL, tWL) + burst; kNever when idle. A wrapper that needs
  /// completions only at their done time may sleep until min(this, next arrival) instead of
  /// next_event_ps(): advance() then issues the commands of several events in one call, with the same
  /// results, and no completion it returns is already late (done_ps >= the `now` it was returned at).
  [[nodiscard]] TimePs next_completion_bound_ps() const;

  /// Issues every command due at edges <= now, in time order (ties: lower channel first; at most one
  /// command per channel per edge), appending one completion per column command. `now` must not go back
  /// (InvariantViolation).
  void advance(TimePs now, std::vector<DramCompletion>& completed);

  [[nodiscard]] TimePs clock_period_ps() const { return period_ps_; }
  [[nodiscard]] const AddressMapping& mapping() const { return mapping_; }
  [[nodiscard]] std::uint32_t atom_bytes() const { return atom_bytes_; }
  /// channels * atom / burst time: every data bus busy all the time.
  [[nodiscard]] double peak_bytes_per_second() const;

  [[nodiscard]] const ChannelStats& channel_stats(std::uint32_t channel) const;
  [[nodiscard]] std::uint32_t channels() const { return static_cast<std::uint32_t>(channels_.size()); }
  /// Requests enqueued to `channel` and not yet issued (reads + writes), including those still waiting
  /// for their eligible edge.
  [[nodiscard]] std::size_t pending(std::uint32_t channel) const;
  /// For waveforms, as of the last advance(): 0 idle (precharged), 1 active with a row open, 2 refreshing.
  /// An idle channel's refreshes are replayed at advance() (dram_channel.h), so they show as closed banks,
  /// and as state 2 only if one is still in progress at that `now`.
  [[nodiscard]] int bank_state(std::uint32_t channel, std::uint32_t bank) const;

  // Additions to the wrapper's interface.
  /// The open row of a bank (bank_state 1), kNoRow otherwise.
  [[nodiscard]] std::uint64_t open_row(std::uint32_t channel, std::uint32_t bank) const;
  /// Whether the channel is draining writes (its scheduler serves only writes).
  [[nodiscard]] bool write_draining(std::uint32_t channel) const;
  /// Every command issued from now on is appended to `log` (null: none): per channel in time order;
  /// across channels in issue order, except that refreshes replayed for an idle channel are appended when
  /// replayed (dram_channel.h "Lazy refresh"), after commands of other channels at later times.
  void set_command_log(std::vector<DramCommand>* log);
  [[nodiscard]] const DramConfig& config() const { return config_; }

 private:
  void check_channel(std::uint32_t channel) const;
  /// Throws the InvariantViolation of a request arriving too early (out of line: its message building
  /// would weigh on enqueue()'s frame).
  [[noreturn, gnu::cold, gnu::noinline]] void fail_arrival(const DramRequest& request) const;
  /// The channel, settled to the last advance(): what every accessor reads.
  const DramChannel& settled(std::uint32_t channel) const;
  // The timing wheel (below).
  void wheel_insert(std::uint32_t channel, std::uint64_t cycle);
  void wheel_erase(std::uint32_t channel, std::uint64_t cycle);
  /// Takes the channels whose next cycle is at most `cycle` off the wheel into due_ and moves the wheel
  /// past `cycle` (every channel must then be stepped past it).
  void take_due(std::uint64_t cycle);
  [[nodiscard]] std::uint64_t wheel_earliest() const;
  /// Calls visit(channel) for each channel taken by take_due(), in channel order.
  template <typename Visit>
  void for_each_due(Visit&& visit) {
    for (std::size_t w = 0; w < words_; ++w) {
      for (std::uint64_t bits = due_[w]; bits != 0; bits &= bits - 1) {
        visit(static_cast<std::uint32_t>(w * 64 + static_cast<unsigned>(__builtin_ctzll(bits))));
      }
    }
  }

  DramConfig config_;
  TimePs period_ps_;
  std::uint32_t atom_bytes_;
  TimePs min_done_latency_ps_;  // (min(tCL, tWL) + burst) * period
  AddressMapping mapping_;
  // Mutable: a channel is brought to now (DramChannel::settle) when it is read, not at every advance(),
  // which would touch every channel (dozens) for the few that issue a command. Settling is idempotent and
  // settling to one time then a later one is the same as settling to the later one, so when it happens
  // changes nothing the accessors show.
  mutable std::vector<DramChannel> channels_;
  std::vector<std::uint64_t> next_cycles_;      // channels_[c].next_cycle(), as the wheel has it
  std::uint64_t earliest_cycle_ = kNeverCycle;  // the least of next_cycles_

  // Which channels have a command due when, so that advance() finds the few due without looking at
  // every channel (dozens): a timing wheel. A channel whose next cycle n lies in [base_, base_ +
  // kWheelCycles) is a bit of bucket n % kWheelCycles; one further ahead is a bit of far_, moved into its
  // bucket as the wheel comes near; an idle one (kNeverCycle) is in neither. Buckets are bit sets over
  // channels (words_ words each), so the channels due come out in channel order.
  static constexpr std::uint64_t kWheelCycles = 256;
  std::size_t words_ = 0;
  std::vector<std::uint64_t> wheel_;                           // bucket b: words b * words_ on
  std::array<std::uint64_t, kWheelCycles / 64> occupied_{};    // bit b: bucket b is not empty
  std::array<std::uint32_t, kWheelCycles> bucket_channels_{};  // channels in bucket b
  std::vector<std::uint64_t> far_;
  std::size_t far_count_ = 0;
  std::uint64_t base_ = 0;          // the first cycle not run yet: no channel's next cycle is before it
  std::vector<std::uint64_t> due_;  // take_due(): the channels taken, a bit each
  std::vector<DramCommand>* log_ = nullptr;
  TimePs last_arrival_ps_ = 0;
  TimePs now_ps_ = 0;
  std::uint64_t now_cycle_ = 0;  // now_ps_ / period
};

}  // namespace gpumux::dram
