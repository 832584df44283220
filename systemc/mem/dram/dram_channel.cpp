#include "mem/dram/dram_channel.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace gpumux::dram {
namespace {

// The errors, out of line: their message building would otherwise weigh on the hot functions' frames.
[[noreturn, gnu::cold, gnu::noinline]] void fail(std::uint32_t channel, const std::string& what) {
  throw InvariantViolation("DRAM channel " + std::to_string(channel) + ": " + what);
}

}  // namespace

DramChannel::DramChannel(const DramConfig& config, std::uint32_t index, TimePs period_ps)
    : index_(index),
      period_ps_(period_ps),
      t_(config.timing),
      burst_(burst_cycles(config.timing)),
      column_gap_(std::max<std::uint64_t>(config.timing.tCCD, burst_)),
      write_to_read_(std::uint64_t{config.timing.tWL} + burst_ + config.timing.tWTR),
      read_to_write_(std::uint64_t{config.timing.tCL} + burst_ + 2 > config.timing.tWL
                         ? std::uint64_t{config.timing.tCL} + burst_ + 2 - config.timing.tWL
                         : 0),
      write_to_pre_(std::uint64_t{config.timing.tWL} + burst_ + config.timing.tWR),
      drain_high_(config.write_drain_high),
      drain_low_(config.write_drain_low),
      hit_cap_(config.row_hit_cap),
      refresh_enabled_(config.refresh),
      bank_count_(config.banks),
      sparse_max_(config.banks / 2),
      bank_bits_(config.banks > 1 ? 64 - static_cast<unsigned>(__builtin_clzll(config.banks - 1)) : 0),
      bank_mask_(static_cast<std::uint32_t>((std::uint64_t{1} << bank_bits_) - 1)),
      seq_limit_(std::uint64_t{1} << (63 - bank_bits_)),
      banks_(config.banks),
      // Without refresh, never due: the hot paths test the due cycle alone.
      refresh_due_(config.refresh ? config.timing.tREFI : kNeverCycle) {
  for (RequestQueue* queue : {&reads_, &writes_}) {
    queue->by_bank.resize(config.banks);
    queue->candidates.resize(config.banks);
    queue->stale.resize(config.banks);
    queue->with_candidate.resize(config.banks);
  }
  reads_.window = config.read_queue;
  writes_.window = config.write_queue;
  stats_.banks.resize(config.banks);
  invalidate_candidates();  // none computed yet
}

void DramChannel::make_incoming_room() {
  if (incoming_front_ > 0) {
    // The admitted entries before the front go first (push() calls this only when the storage is full).
    std::copy(incoming_.begin() + static_cast<std::ptrdiff_t>(incoming_front_),
              incoming_.begin() + static_cast<std::ptrdiff_t>(incoming_end_), incoming_.begin());
    incoming_end_ -= incoming_front_;
    incoming_front_ = 0;
  }
  if (incoming_end_ == incoming_.size()) incoming_.resize(std::max<std::size_t>(16, incoming_.size() * 2));
}

// step() runs once per command and the functions of a command (admit, replan and its decision, issue and
// serve) are always inlined into it: one function per command rather than a chain of calls, each saving
// and restoring registers (about a sixteenth of the instructions of the bench's random pattern).
void DramChannel::step(std::uint64_t cycle, std::vector<DramCompletion>& completed) {
  if (incoming_due(cycle)) admit(cycle);
  if (plan_dirty_ || plan_.cmd == Cmd::kNone) replan(cycle);
  if (plan_.cycle < cycle) {
    fail(index_, "a command planned for cycle " + std::to_string(plan_.cycle) + " was missed (now cycle " +
                     std::to_string(cycle) + ")");
  }
  if (plan_.cmd != Cmd::kNone && plan_.cycle == cycle) {
    issue(cycle, completed);
    replan(cycle + 1);
  }
  next_cycle_ = std::min(plan_.cycle, next_incoming_cycle_);
}

int DramChannel::bank_state(std::uint32_t bank) const {
  if (refresh_end_ > now_cycle_ && refresh_end_ - t_.tRFC <= now_cycle_) return 2;
  return banks_[bank].open ? 1 : 0;
}

std::uint64_t DramChannel::open_row(std::uint32_t bank) const {
  return banks_[bank].open ? banks_[bank].row : kNoRow;
}

[[gnu::always_inline]] inline void DramChannel::admit(std::uint64_t cycle) {
  // The refreshes an idle channel skipped happened before this request could be considered.
  if (queued() == 0) {
    catch_up_refresh(cycle);
    plan_dirty_ = true;
  }
  const TimePs cycle_ps = cycle * period_ps_;
  // Called when at least one is due (incoming_due()).
  do {
    admitted_ps_sum_ += cycle_ps;
    const Incoming& incoming = incoming_[incoming_front_++];
    RequestQueue& queue = incoming.is_write ? writes_ : reads_;
    const std::uint32_t slot = enqueue(queue, incoming);
    ++queued_;
    // A request past the window changes no decision until it enters the window; one of the other mode
    // none until the mode changes (which wants_drain() below sees).
    if (queue.size <= queue.window && entering_changes_candidate(queue, slot)) {
      invalidate_candidate(queue, incoming.bank);
      if (incoming.is_write == draining_) plan_dirty_ = true;
    }
  } while (incoming_front_ < incoming_end_ && incoming_[incoming_front_].eligible_cycle <= cycle);
  // Drop the admitted entries at once when none is left (the usual case); else make_incoming_room() moves
  // the rest down when the storage is full, so a queue that never empties stays linear in its length.
  if (incoming_front_ == incoming_end_) {
    incoming_front_ = 0;
    incoming_end_ = 0;
    next_incoming_cycle_ = kNeverCycle;
  } else {
    next_incoming_cycle_ = incoming_[incoming_front_].eligible_cycle;
  }
  stats_.max_queue = std::max<std::uint64_t>(stats_.max_queue, queued());
  // A new mode takes a decision; the same one spares update_mode() the look at the new sizes.
  if (wants_drain() != draining_) {
    plan_dirty_ = true;
  } else {
    sizes_changed_ = false;
  }
}

[[gnu::always_inline]] inline std::uint32_t DramChannel::enqueue(RequestQueue& queue,
                                                                 const Incoming& incoming) {
  std::uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (requests_.size() == kNoSlot) {
      fail(index_, "too many requests queued");
    }
    slot = static_cast<std::uint32_t>(requests_.size());
    requests_.emplace_back();
  }
  BankList& bank = queue.by_bank[incoming.bank];
  // Field by field: a Request built apart and copied in would be read back whole right after its fields
  // were stored, which the CPU cannot forward (a stall).
  Request& request = requests_[slot];
  // The seq shares Candidate::rank with the bank and a flag: 2^(63 - bank_bits_) pushes (5e17 with 16
  // banks) before it would overflow.
  if (next_seq_ == seq_limit_) fail(index_, "request sequence number overflow");
  request.seq = next_seq_++;
  request.row = incoming.row;
  request.id = incoming.id;
  request.bank = incoming.bank;
  request.older = queue.youngest;
  request.younger = kNoSlot;
  request.bank_next = kNoSlot;
  request.bank_prev = bank.youngest;
  request.outcome = RowOutcome::kHit;
  if (queue.youngest != kNoSlot) requests_[queue.youngest].younger = slot;
  queue.youngest = slot;
  if (++queue.size == queue.window) queue.window_youngest = slot;
  sizes_changed_ = true;
  if (bank.youngest == kNoSlot) {
    bank.oldest = slot;
  } else {
    requests_[bank.youngest].bank_next = slot;
  }
  bank.youngest = slot;
  return slot;
}

[[gnu::always_inline]] inline bool DramChannel::entering_changes_candidate(const RequestQueue& queue,
                                                                           std::uint32_t slot) const {
  // The request is the youngest of its bank in the window, so it changes the bank's candidate (see
  // compute_candidate()) only if the bank had none, or had a PRE for want of a hit and it is a hit that is
  // not capped. An ACT (for the bank's oldest) or an older hit stands.
  const Request& request = requests_[slot];
  const std::uint32_t b = request.bank;
  if (queue.stale.contains(b)) return true;  // to be recomputed anyway
  const Candidate& candidate = queue.candidates[b];
  if (candidate.cmd == Cmd::kNone) return true;
  if (candidate.cmd != Cmd::kPrecharge) return false;
  const Bank& bank = banks_[b];
  return request.row == bank.row && !(hit_cap_ != 0 && bank.streak >= hit_cap_);
}

[[gnu::always_inline]] inline void DramChannel::dequeue(RequestQueue& queue, std::uint32_t slot) {
  const Request& request = requests_[slot];
  BankList& bank = queue.by_bank[request.bank];
  if (request.bank_prev == kNoSlot) {
    bank.oldest = request.bank_next;
  } else {
    requests_[request.bank_prev].bank_next = request.bank_next;
  }
  if (request.bank_next == kNoSlot) {
    bank.youngest = request.bank_prev;
  } else {
    requests_[request.bank_next].bank_prev = request.bank_prev;
  }
  // The request is in the window (only those are served): the one after the window's last, if any, enters.
  if (queue.size > queue.window) {
    queue.window_youngest = requests_[queue.window_youngest].younger;
  } else if (queue.size == queue.window) {
    queue.window_youngest = kNoSlot;
  }
  if (request.older != kNoSlot) requests_[request.older].younger = request.younger;
  if (request.younger == kNoSlot) {
    queue.youngest = request.older;
  } else {
    requests_[request.younger].older = request.older;
  }
  --queue.size;
  sizes_changed_ = true;
  free_slots_.push_back(slot);
}

[[gnu::always_inline]] inline bool DramChannel::wants_drain() const {
  // Evaluated at every decision with outcomes the predictor cannot guess: computed without branches.
  const std::size_t reads = reads_.size;
  const std::size_t writes = writes_.size;
  const bool start = (writes >= drain_high_) | ((writes > 0) & (reads == 0));
  const bool stop = (writes == 0) | ((writes <= drain_low_) & (reads > 0));
  return draining_ ? !stop : start;
}

[[gnu::always_inline]] inline void DramChannel::update_mode() {
  // The mode depends on the queues' sizes and itself only, and is stable (wants_drain() agrees with the
  // mode it chose), so it is looked at again only once a size changed.
  if (!sizes_changed_) return;
  sizes_changed_ = false;
  const bool drain = wants_drain();
  // Only drains forced by the high watermark count (not those for want of reads).
  stats_.write_drains += static_cast<std::uint64_t>(drain & !draining_ & (writes_.size >= drain_high_));
  draining_ = drain;
}

[[gnu::always_inline]] inline void DramChannel::replan(std::uint64_t from) {
  plan_dirty_ = false;
  if (queued() == 0) {
    // Idle: refresh is replayed lazily (catch_up_refresh), so there is nothing to wake up for.
    plan_ = Plan{};
    return;
  }
  if (refresh_due_ <= from) {
    plan_refresh(from);
    return;
  }
  plan_requests(from);
  if (plan_.cycle == kNeverCycle) {
    fail(index_, std::to_string(queued()) + " requests queued but no command can ever issue");
  }
  // Refresh takes over when due: wake then to plan it (no command of this plan issues before).
  if (plan_.cycle >= refresh_due_) plan_ = Plan{refresh_due_, Cmd::kNone, 0, 0};
}

[[gnu::always_inline]] inline void DramChannel::plan_requests(std::uint64_t from) {
  update_mode();
  const bool writing = draining_;
  if (writing != best_for_writes_) {
    best_valid_ = false;
    best_for_writes_ = writing;
  }
  RequestQueue& queue = writing ? writes_ : reads_;
  const std::uint64_t end = window_end(queue);
  const std::uint64_t column_ready = std::max(from, writing ? write_ready_ : read_ready_);
  // The channel-wide bound of each command kind (indexed by Cmd), every one at least `from`.
  // A candidate's command is one of the first four; kNone's entry is never the larger (a bank without a
  // command has bank_ready kNeverCycle).
  const std::uint64_t channel_ready[] = {from, std::max(from, act_ready_), from, column_ready};
  static_assert(static_cast<int>(Cmd::kNone) == 0 && static_cast<int>(Cmd::kActivate) == 1 &&
                static_cast<int>(Cmd::kPrecharge) == 2 && static_cast<int>(Cmd::kColumn) == 3);

  // Every candidate's earliest legal cycle is a max of fixed bounds, so between state changes the first
  // cycle anything issues is the minimum over the candidates, and the command issued then is the one the
  // per-cycle rule picks: a row hit before a row command at the same cycle, the oldest first among equals;
  // that is, the least (cycle, rank). Ranks are distinct (one request each) but for banks without a
  // candidate, which never win.
  Best best;
  const auto consider = [&](std::uint32_t b) __attribute__((always_inline)) {
    const Candidate& candidate = queue.candidates[b];
    const std::uint64_t ready =
        std::max(candidate.bank_ready, channel_ready[static_cast<int>(candidate.cmd)]);
    const Key key = (Key{ready} << 64U) | candidate.rank;
    // Branch-free: which bank wins is data dependent and would mispredict often. The bank is in the key.
    best.key = std::min(best.key, key);
  };
  if (best_valid_ && from <= static_cast<std::uint64_t>(best_.key >> 64U)) {
    // Only requests have entered since the last plan (best_valid_): its winner still beats every bank
    // but the changed ones.
    best = best_;
    queue.stale.visit_each<true>([&](std::uint32_t b) __attribute__((always_inline)) {
      compute_candidate(b, queue, end);
      consider(b);
    });
  } else {
    queue.stale.visit_each<true>([&](std::uint32_t b)
                                     __attribute__((always_inline)) { compute_candidate(b, queue, end); });
    // The banks without a candidate never win: skip them unless they are few, then look at every bank in
    // a loop without a data-dependent branch, unrolled (its own increment, compare and branch were a fifth
    // of a bank's instructions). By the instruction counts of the bench's random pattern a bank visited
    // through the set costs about half as much again as one looked at in the unrolled loop, so the loop
    // pays once more than half to five eighths of the banks have a candidate; at half it also runs more
    // often, and its exit is never mispredicted.
    if (queue.with_count <= sparse_max_) {
      queue.with_candidate.visit_each<false>(consider);
    } else {
#pragma GCC unroll 16
      for (std::uint32_t b = 0; b < bank_count_; ++b) consider(b);
    }
  }
  best.bank = static_cast<std::uint32_t>(best.key) & bank_mask_;  // (kNoKey: unused)
  // Field by field: a copy of the whole would store the key's halves and load it back at once, which the
  // CPU cannot forward (a stall of a dozen cycles).
  best_.key = best.key;
  best_.bank = best.bank;
  best_valid_ = true;
  if (static_cast<std::uint64_t>(best.key >> 64U) == kNeverCycle) {  // kNoKey: a command's cycle is finite
    plan_ = Plan{};
    return;
  }
  const Candidate& candidate = queue.candidates[best.bank];
  plan_ = Plan{static_cast<std::uint64_t>(best.key >> 64U), candidate.cmd, best.bank, candidate.slot};
}

[[gnu::always_inline]] inline void DramChannel::compute_candidate(std::uint32_t b, RequestQueue& queue,
                                                                  std::uint64_t end) {
  // Filled in place, field by field: a Candidate built apart and copied in would be read back whole right
  // after its fields were stored one by one, which the CPU cannot forward (a stall of a dozen cycles).
  Candidate& candidate = queue.candidates[b];
  queue.with_count -= queue.with_candidate.contains(b) ? 1 : 0;
  const auto set = [&](std::uint64_t bank_ready, std::uint32_t slot, bool row_command, Cmd cmd)
      __attribute__((always_inline)) {
    candidate.bank_ready = bank_ready;
    candidate.rank = (row_command ? kRowCommandRank : 0) | requests_[slot].seq << bank_bits_ | b;
    candidate.slot = slot;
    candidate.cmd = cmd;
    queue.with_candidate.insert(b);
    ++queue.with_count;
  };
  const std::uint32_t oldest = queue.by_bank[b].oldest;
  if (oldest == kNoSlot || requests_[oldest].seq > end) {
    // Nothing of this bank in the window. (Its key, (kNeverCycle, kNeverCycle), never wins.)
    candidate.bank_ready = kNeverCycle;
    candidate.rank = kNeverCycle;
    candidate.slot = 0;
    candidate.cmd = Cmd::kNone;
    queue.with_candidate.erase(b);
    return;
  }
  const Bank& bank = banks_[b];
  if (!bank.open) {
    // The oldest opens its row.
    set(bank.act_ready, oldest, true, Cmd::kActivate);
    return;
  }
  // The oldest row hit, unless capped: the bank's streak has reached the cap and an older request waits
  // for another row. Without an uncapped hit, the oldest conflict precharges (there is one: the window
  // holds a request of this bank).
  const bool capped = hit_cap_ != 0 && bank.streak >= hit_cap_;
  std::uint32_t conflict = kNoSlot;
  for (std::uint32_t slot = oldest; slot != kNoSlot && requests_[slot].seq <= end;
       slot = requests_[slot].bank_next) {
    if (requests_[slot].row == bank.row) {
      if (conflict == kNoSlot || !capped) {
        set(bank.col_ready, slot, false, Cmd::kColumn);
        return;
      }
    } else if (conflict == kNoSlot) {
      conflict = slot;
      if (capped) break;  // every younger hit is capped
    }
  }
  set(bank.pre_ready, conflict, true, Cmd::kPrecharge);
}

void DramChannel::invalidate_candidates() {
  for (RequestQueue* queue : {&reads_, &writes_}) {
    queue->stale.insert_all(static_cast<std::uint32_t>(queue->candidates.size()));
  }
  best_valid_ = false;
}

void DramChannel::plan_refresh(std::uint64_t from) {
  Plan best;
  std::uint64_t ref_ready = from;
  for (std::uint32_t b = 0; b < banks_.size(); ++b) {
    const Bank& bank = banks_[b];
    if (bank.open) {
      const std::uint64_t ready = std::max(from, bank.pre_ready);
      if (ready < best.cycle) best = Plan{ready, Cmd::kRefreshPrecharge, b, 0};
    } else {
      ref_ready = std::max(ref_ready, bank.act_ready);
    }
  }
  plan_ = open_banks_ > 0 ? best : Plan{ref_ready, Cmd::kRefresh, 0, 0};
}

[[gnu::always_inline]] inline void DramChannel::issue(std::uint64_t cycle,
                                                      std::vector<DramCompletion>& completed) {
  next_command_ = cycle + 1;
  plan_dirty_ = true;
  best_valid_ = false;  // every command moves a bound of its bank and most move a channel-wide one
  switch (plan_.cmd) {
    case Cmd::kRefreshPrecharge:
      log(cycle, DramCommandKind::kPrecharge, plan_.bank, banks_[plan_.bank].row, kNoRequest);
      precharge(cycle, plan_.bank);
      return;
    case Cmd::kRefresh:
      refresh(cycle);
      return;
    case Cmd::kActivate: {
      Request& entry = requests_[plan_.slot];
      if (entry.outcome == RowOutcome::kHit) entry.outcome = RowOutcome::kMiss;
      log(cycle, DramCommandKind::kActivate, plan_.bank, entry.row, entry.id);
      activate(cycle, plan_.bank, entry.row);
      // Its request is now the bank's oldest request of the window and an uncapped hit (streak 0): the
      // bank's next candidate in this mode is its column command, which compute_candidate() would find.
      RequestQueue& queue = draining_ ? writes_ : reads_;
      Candidate& candidate = queue.candidates[plan_.bank];
      candidate.bank_ready = banks_[plan_.bank].col_ready;
      candidate.rank = entry.seq << bank_bits_ | plan_.bank;
      candidate.cmd = Cmd::kColumn;
      queue.stale.erase(plan_.bank);
      return;
    }
    case Cmd::kPrecharge: {
      Request& entry = requests_[plan_.slot];
      entry.outcome = RowOutcome::kConflict;
      log(cycle, DramCommandKind::kPrecharge, plan_.bank, banks_[plan_.bank].row, entry.id);
      precharge(cycle, plan_.bank);
      // The bank is closed now: its next candidate in this mode is the ACT for its oldest request (which is
      // in the window, since a younger one of the bank is), as compute_candidate() would find.
      RequestQueue& queue = draining_ ? writes_ : reads_;
      const std::uint32_t oldest = queue.by_bank[plan_.bank].oldest;
      Candidate& candidate = queue.candidates[plan_.bank];
      candidate.bank_ready = banks_[plan_.bank].act_ready;
      candidate.rank = kRowCommandRank | requests_[oldest].seq << bank_bits_ | plan_.bank;
      candidate.slot = oldest;
      candidate.cmd = Cmd::kActivate;
      queue.stale.erase(plan_.bank);
      return;
    }
    case Cmd::kColumn:
      serve(cycle, completed);
      return;
    case Cmd::kNone:
      break;
  }
  fail(index_, "issuing an empty plan");
}

[[gnu::always_inline]] inline void DramChannel::serve(std::uint64_t cycle,
                                                      std::vector<DramCompletion>& completed) {
  RequestQueue& queue = draining_ ? writes_ : reads_;
  const std::uint32_t bank_index = plan_.bank;
  const Request& entry = requests_[plan_.slot];
  const std::uint64_t id = entry.id;
  Bank& bank = banks_[bank_index];
  const bool is_write = draining_;  // the plan's mode
  const std::uint64_t data_start = cycle + (is_write ? t_.tWL : t_.tCL);
  const std::uint64_t done = data_start + burst_;
  log(cycle, is_write ? DramCommandKind::kWrite : DramCommandKind::kRead, bank_index, entry.row, id);
  const TimePs command_ps = cycle * period_ps_;
  completed.push_back({id, command_ps, done * period_ps_});
  served_ps_sum_ += command_ps;

  // The outcome's counter by a table rather than a switch: which outcome comes is data, and a mispredicted
  // branch costs more than the lookup.
  static constexpr std::uint64_t BankStats::*kOutcomeCounter[] = {
      &BankStats::row_hits, &BankStats::row_misses, &BankStats::row_conflicts};
  static_assert(static_cast<int>(RowOutcome::kHit) == 0 && static_cast<int>(RowOutcome::kMiss) == 1 &&
                static_cast<int>(RowOutcome::kConflict) == 2);
  BankStats& bank_stats = stats_.banks[bank_index];
  ++(bank_stats.*kOutcomeCounter[static_cast<int>(entry.outcome)]);
  bank.streak += entry.outcome == RowOutcome::kHit ? 1 : 0;
  if (is_write) {
    ++bank_stats.writes;
    ++stats_.writes;
    bank.pre_ready = std::max(bank.pre_ready, cycle + write_to_pre_);
    read_after_write_ = std::max(read_after_write_, cycle + write_to_read_);
  } else {
    ++bank_stats.reads;
    ++stats_.reads;
    bank.pre_ready = std::max<std::uint64_t>(bank.pre_ready, cycle + t_.tRTP);
    write_after_read_ = std::max(write_after_read_, cycle + read_to_write_);
  }
  column_ready_ = cycle + column_gap_;
  bus_free_ = std::max(bus_free_, done);
  read_ready_ = std::max({column_ready_, read_after_write_, bus_free_ > t_.tCL ? bus_free_ - t_.tCL : 0});
  write_ready_ = std::max({column_ready_, write_after_read_, bus_free_ > t_.tWL ? bus_free_ - t_.tWL : 0});

  // Leave the queues; the request after the window's last (if any) enters the window.
  dequeue(queue, plan_.slot);
  --queued_;
  invalidate_bank(bank_index);
  if (queue.size >= queue.window && entering_changes_candidate(queue, queue.window_youngest)) {
    invalidate_candidate(queue, requests_[queue.window_youngest].bank);
  }
}

[[gnu::always_inline]] inline void DramChannel::activate(std::uint64_t cycle, std::uint32_t bank_index,
                                                         std::uint64_t row) {
  Bank& bank = banks_[bank_index];
  bank.open = true;
  bank.row = row;
  bank.streak = 0;
  bank.col_ready = cycle + t_.tRCD;
  bank.pre_ready = std::max<std::uint64_t>(bank.pre_ready, cycle + t_.tRAS);
  invalidate_bank(bank_index);
  ++open_banks_;
  faw_[faw_next_] = cycle + t_.tFAW;
  faw_next_ = (faw_next_ + 1) % 4;
  rrd_ready_ = cycle + t_.tRRD;
  // The slot to be overwritten next holds the fourth-latest ACT plus tFAW: the next ACT's tFAW bound.
  act_ready_ = std::max(rrd_ready_, faw_[faw_next_]);
}

[[gnu::always_inline]] inline void DramChannel::precharge(std::uint64_t cycle, std::uint32_t bank_index) {
  Bank& bank = banks_[bank_index];
  bank.open = false;
  bank.act_ready = std::max<std::uint64_t>(bank.act_ready, cycle + t_.tRP);
  invalidate_bank(bank_index);
  --open_banks_;
}

void DramChannel::refresh(std::uint64_t cycle) {
  log(cycle, DramCommandKind::kRefresh, 0, 0, kNoRequest);
  refresh_end_ = cycle + t_.tRFC;
  for (Bank& bank : banks_) bank.act_ready = std::max(bank.act_ready, refresh_end_);
  invalidate_candidates();
  refresh_due_ += t_.tREFI;
  ++stats_.refreshes;
}

void DramChannel::catch_up_refresh(std::uint64_t until) {
  if (!refresh_enabled_) return;
  plan_dirty_ = true;  // plan_ is reused below
  while (refresh_due_ < until) {
    const std::uint64_t from = std::max(refresh_due_, next_command_);
    bool settled = open_banks_ == 0 && from == refresh_due_;
    for (std::size_t b = 0; settled && b < banks_.size(); ++b) settled = banks_[b].act_ready <= refresh_due_;
    if (settled) {
      // Every bank closed and ready: each REF issues exactly when due (tRFC < tREFI keeps it so), and the
      // ones before `until` are n evenly spaced commands.
      const std::uint64_t n = (until - 1 - refresh_due_) / t_.tREFI + 1;
      if (log_ != nullptr) {
        for (std::uint64_t k = 0; k < n; ++k) {
          log(refresh_due_ + k * t_.tREFI, DramCommandKind::kRefresh, 0, 0, kNoRequest);
        }
      }
      const std::uint64_t last = refresh_due_ + (n - 1) * t_.tREFI;
      refresh_end_ = last + t_.tRFC;
      for (Bank& bank : banks_) bank.act_ready = std::max(bank.act_ready, refresh_end_);
      invalidate_candidates();
      refresh_due_ += n * t_.tREFI;
      stats_.refreshes += n;
      next_command_ = last + 1;
      return;
    }
    // Replay the command the refresh state machine would issue next, if before `until`.
    plan_refresh(from);
    if (plan_.cycle >= until) return;
    next_command_ = plan_.cycle + 1;
    if (plan_.cmd == Cmd::kRefresh) {
      refresh(plan_.cycle);
    } else {
      log(plan_.cycle, DramCommandKind::kPrecharge, plan_.bank, banks_[plan_.bank].row, kNoRequest);
      precharge(plan_.cycle, plan_.bank);
    }
  }
}

}  // namespace gpumux::dram
