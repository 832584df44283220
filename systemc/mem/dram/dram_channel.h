#pragma once
// One GDDR5 channel of the cycle-level DRAM model: its banks, read and write queues, FR-FCFS scheduler and
// refresh. Plain C++ (no SystemC): the DramController (dram_controller.h) owns one per channel and the
// SystemC wrapper drives the controller. Times are command-clock cycles (tCK) inside, ps at the interface.
//
// Semantics (what the tests in tb/unit/dram_controller_test.cpp check):
//
// Requests. Each request moves one burst (the atom). It enters the channel's scheduler queue at the first
//   command-clock edge strictly after its arrival (one cycle to enter the queue) and is a candidate from
//   that edge on. Reads and writes wait in separate queues, oldest first.
//
// Commands and timing (names as in the GDDR5 standard JEDEC JESD212, simplified: one tRCD for reads and
//   writes, no bank groups, all-bank refresh; B = burst_length / beats_per_clock cycles of data bus time):
//   per bank   ACT->RD/WR >= tRCD; ACT->PRE >= tRAS; PRE->ACT >= tRP; RD->PRE >= tRTP;
//              WR->PRE >= tWL + B + tWR (write recovery counts from the end of the write data).
//   channel    ACT->ACT (any banks) >= tRRD; at most four ACTs in any tFAW window;
//              column->column >= max(tCCD, B); WR->RD >= tWL + B + tWTR;
//              RD->WR >= tCL + B + 2 - tWL: the read data must have left the bus, plus two cycles of bus
//              turnaround. The 2 is our assumption (a typical controller setting), not a JESD212 value.
//              The data bus never carries two bursts at once; at most one command per tCK.
//   Read data occupies the bus [RD + tCL, RD + tCL + B), write data [WR + tWL, WR + tWL + B); a read
//   completes with its last beat (RD + tCL + B), a write when its data is written (WR + tWL + B).
//
// Page policy: open page. A row stays open after its access until a request for another row of the bank
//   (a conflict) or a refresh needs the bank.
//
// Scheduling, each cycle (Rixner et al., "Memory Access Scheduling", ISCA 2000: first-ready, first-come
//   first-served, FR-FCFS), within the current mode:
//   Mode: reads, except during a write drain. A drain starts when the pending writes reach
//   write_drain_high, or when no read is pending and a write is; it ends when the pending writes are at
//   most write_drain_low and a read is pending (or no write is left). Only requests of the mode's queue
//   are candidates, and only the oldest read_queue (write_queue) of them: the window.
//   1. Row hits first: the oldest request in the window whose row is open and whose column command is
//      legal now issues its RD/WR. Row-hit cap: a hit is skipped while its bank has served row_hit_cap
//      consecutive hits to the open row (counted since the row's ACT) and an older request of the window
//      waits for another row of that bank. So an older request waits for at most row_hit_cap younger hits
//      (fewer if the open row's streak had already started). Caps of this kind are common: Ramulator's
//      FRFCFS_Cap scheduler and GPGPU-Sim's frfcfs_cap option bound row hits served ahead of older
//      requests; Mutlu & Moscibroda (STFM, MICRO 2007) discuss FR-FCFS's unfairness to such requests.
//      Our counter is our own definition, not taken from one of them. 0 = no cap: plain FR-FCFS, under
//      which a stream of hits can postpone an older conflicting request indefinitely.
//   2. Otherwise row commands, oldest request first: ACT for a request whose bank is closed, PRE for one
//      whose bank has another row open. Our choice for "the oldest cannot proceed this cycle": any request
//      of the window may issue its ACT/PRE when it is legal, the oldest such request winning (first
//      ready, then first come, as for column commands); so a younger request to a ready bank does not
//      wait behind an older one whose bank is still busy, which keeps the banks working in parallel. Two
//      rules keep this from hurting older requests: a PRE is never issued while the window holds an
//      uncapped row hit to the open row (that hit is served first), and requests to one bank get ACT/PRE
//      in age order (same legality, oldest wins).
//   A column command is issued only for the request it serves; ACT/PRE may then serve younger requests to
//   the same row too.
//
// Refresh (if enabled): all-bank refresh due every tREFI per channel (first at tREFI). When due, the
//   channel stops issuing ACTs and column commands, precharges its open banks as soon as tRAS, tRTP and
//   the write recovery allow (lowest bank first among those ready), then issues REF once all banks are
//   closed and tRP has passed; every bank is then unavailable for tRFC. The next refresh is due tREFI after
//   the previous one was due (a late refresh does not shift the schedule).
//   Lazy refresh: while a channel has no queued request, refreshes are not scheduled as events (so an idle
//   channel never forces a wakeup): when the next request enters the queue (or when the controller is
//   advanced), the refresh commands that fell in the idle time are replayed at the cycles they would have
//   had, by the same rules, and counted; after the first of them the rest are closed form (REF exactly
//   when due). This is exact: an idle channel's refreshes delay nobody, and one that would still be in
//   progress (or about to start) when the request enters delays it exactly as if simulated every cycle. A
//   refresh that falls due while requests are queued is simulated as an event.
//
// Statistics: each request is counted once, at its column command: a row hit if no ACT was issued for it
//   (its row was open, possibly opened for an older request), a row conflict if a PRE was issued for it,
//   else a row miss (the bank was closed and it needed an ACT).
//
// Determinism and speed: no hashing, no randomness, no allocation per request once the storage has grown
// to the most requests held at once. A queued request is one slot of a per-channel pool (what the
// scheduler and its completion need, side by side; slots are reused, so a channel's requests stay in a
// few cache lines), linked into its kind's age list and its bank's list, so admitting and serving it take
// constant time, and the window's last request is tracked as requests come and go. Each bank caches, per
// mode (reads, writes), the command FR-FCFS would give it (from its own list, oldest first, inside the
// window), recomputed only when that bank's state or its part of the window changes (a switch of mode
// recomputes only the banks changed since that mode last ran; a request entering the window changes its
// bank's command only if the bank had none or had a PRE for want of the hit it brings, and after an ACT
// or a PRE the bank's next command is known: its request's RD/WR, the ACT for its oldest request). A
// candidate's key (cycle, rank) carries its bank in the rank's low bits, so a decision is a loop without
// data-dependent branches that keeps one minimum over the banks (over those with a command unless more than
// half have one), or, when requests have only entered the queue since the last decision, a comparison of the
// changed banks with its winner. The channel computes the first cycle any candidate becomes legal and sleeps
// until then (or until a request enters), which is exact because every rule above is a lower bound on a cycle
// that only commands or arrivals move.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/types.h"
#include "mem/dram/address_mapping.h"
#include "mem/dram/dram_config.h"

namespace gpumux::dram {

struct DramRequest {
  std::uint64_t id = 0;       ///< the caller's tag, returned in the completion
  std::uint64_t address = 0;  ///< byte address; the request moves one atom
  bool is_write = false;
  TimePs arrival_ps = 0;  ///< when it reaches the controller
};

struct DramCompletion {
  std::uint64_t id = 0;
  TimePs command_ps = 0;  ///< when its column command (RD/WR) issued
  TimePs done_ps = 0;     ///< read: last data beat on the bus (RD + tCL + B); write: WR + tWL + B
};

struct BankStats {
  std::uint64_t row_hits = 0;
  std::uint64_t row_misses = 0;     ///< bank closed: needed an ACT
  std::uint64_t row_conflicts = 0;  ///< another row open: needed a PRE first
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
};

struct ChannelStats {
  std::vector<BankStats> banks;
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  std::uint64_t refreshes = 0;  ///< REF commands, including those replayed for idle time
  TimePs data_bus_busy_ps = 0;  ///< bursts * burst time
  /// Sum over time of (requests in the scheduler queues) * ps, for the mean occupancy. A request counts
  /// from the edge it enters the queue to its column command.
  double queue_occupancy_integral = 0;
  std::uint64_t max_queue = 0;     ///< most requests in the scheduler queues at once
  std::uint64_t write_drains = 0;  ///< drains forced by write_drain_high (not those for lack of reads)
};

/// One DRAM command, for waveforms and checks (DramController::set_command_log).
enum class DramCommandKind : std::uint8_t { kActivate, kPrecharge, kRead, kWrite, kRefresh };

inline constexpr std::uint64_t kNoRequest = std::numeric_limits<std::uint64_t>::max();
inline constexpr std::uint64_t kNoRow = std::numeric_limits<std::uint64_t>::max();

struct DramCommand {
  TimePs time_ps = 0;
  std::uint64_t row = 0;                  ///< ACT, RD, WR: the row; PRE: the row closed; REF: 0
  std::uint64_t request_id = kNoRequest;  ///< the request it was issued for; kNoRequest for refresh
  std::uint32_t channel = 0;
  std::uint32_t bank = 0;  ///< REF: 0 (all banks)
  DramCommandKind kind = DramCommandKind::kActivate;
};

inline constexpr std::uint64_t kNeverCycle = std::numeric_limits<std::uint64_t>::max();

class DramChannel {
 public:
  /// `config` must be valid (validate()); `period_ps` is its command-clock period.
  DramChannel(const DramConfig& config, std::uint32_t index, TimePs period_ps);

  /// Queues a request that enters the scheduler at `eligible_cycle`, which must not precede the
  /// eligible cycle of the previous push nor any cycle already stepped (the controller checks arrivals).
  /// Inline: once per request, from the controller's enqueue().
  void push(std::uint64_t id, const DramAddress& where, bool is_write, std::uint64_t eligible_cycle) {
    if (incoming_end_ == incoming_.size()) make_incoming_room();
    // Field by field (see enqueue()), into storage already there (an emplace_back would zero it first).
    Incoming& incoming = incoming_[incoming_end_++];
    incoming.eligible_cycle = eligible_cycle;
    incoming.id = id;
    incoming.row = where.row;
    incoming.bank = where.bank;
    incoming.is_write = is_write;
    // Pushes come in eligible order: only the first of the pending ones sets the next eligible cycle.
    if (next_incoming_cycle_ == kNeverCycle) next_incoming_cycle_ = eligible_cycle;
    next_cycle_ = std::min(next_cycle_, eligible_cycle);
  }

  /// The next cycle at which step() may change anything (kNeverCycle: none). Exact for the scheduler:
  /// no command is issued before it, and stepping only at these cycles is the same as every cycle.
  [[nodiscard]] std::uint64_t next_cycle() const { return next_cycle_; }

  /// Processes cycle `cycle` (== next_cycle()): admits the requests eligible by then and issues at most
  /// one command; a column command appends its completion.
  void step(std::uint64_t cycle, std::vector<DramCompletion>& completed);

  /// Brings the statistics and bank states up to `now_cycle` / `now_ps` (every step() at or before it
  /// done; stats() is up to date only after it): replays the refreshes of an idle channel up to now and
  /// integrates the queue occupancy. Settling to one time and then to a later one is the same as settling to
  /// the later one only (the replay stops and resumes at the same command; the integral is a closed form),
  /// so the controller may settle a channel only when it is read.
  void settle(std::uint64_t now_cycle, TimePs now_ps) {
    // Inline and cheap: a logging controller calls it for every channel at every advance().
    now_cycle_ = now_cycle;
    if (queued_ == 0 && refresh_enabled_ && refresh_due_ <= now_cycle) catch_up_refresh(now_cycle + 1);
    // The integral of the queue occupancy over time is the sum of every request's time in the queue: the
    // served ones' column-command times minus their admission times, plus now minus the admission times of
    // those still queued (every admission and command is at or before now). Kept as two sums rather than
    // integrated at every admission and column command; in request-ps, exact (modulo 2^64 like the
    // sum it replaces), and a double only here, where the statistics are read from.
    const std::uint64_t occupancy = served_ps_sum_ - admitted_ps_sum_ + queued_ * now_ps;
    stats_.queue_occupancy_integral = static_cast<double>(occupancy);
    // Every burst occupies the data bus for the same time.
    stats_.data_bus_busy_ps = (stats_.reads + stats_.writes) * burst_ * period_ps_;
  }

  [[nodiscard]] const ChannelStats& stats() const { return stats_; }
  /// Requests pushed and not yet served (column command issued), including those not yet eligible.
  [[nodiscard]] std::size_t pending() const { return incoming_end_ - incoming_front_ + queued(); }
  /// 0 idle (precharged), 1 a row open, 2 refreshing (REF issued, tRFC not over), as of the last settle().
  [[nodiscard]] int bank_state(std::uint32_t bank) const;
  /// The open row of `bank`, kNoRow when closed.
  [[nodiscard]] std::uint64_t open_row(std::uint32_t bank) const;
  [[nodiscard]] bool write_draining() const { return draining_; }
  /// Every command issued from now on is appended to `log` (null: none).
  void set_command_log(std::vector<DramCommand>* log) { log_ = log; }

 private:
  enum class RowOutcome : std::uint8_t { kHit, kMiss, kConflict };
  // kColumn: the mode's column command, RD while reading, WR while draining (a plan is issued in the mode it
  // was made in: the mode changes only when a plan is made), so that a decision's table of channel-wide
  // bounds has one entry for both.
  enum class Cmd : std::uint8_t { kNone, kActivate, kPrecharge, kColumn, kRefreshPrecharge, kRefresh };

  static constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();

  // A queued request: everything the scheduler and its completion need, and its places in two lists of
  // its kind (reads or writes), both oldest first and linked by slot of requests_ (kNoSlot at the ends;
  // slots are reused, so the requests of a channel stay in a few cache lines): the age list of the kind
  // and the list of its bank.
  struct Request {
    std::uint64_t seq;  // age: push order within the channel
    std::uint64_t row;
    std::uint64_t id;
    std::uint32_t bank;
    std::uint32_t older;
    std::uint32_t younger;
    std::uint32_t bank_next;  // the next younger of its bank
    std::uint32_t bank_prev;
    RowOutcome outcome;
  };
  // The ends of a bank's list.
  struct BankList {
    std::uint32_t oldest = kNoSlot;
    std::uint32_t youngest = kNoSlot;
  };
  // A request pushed and not yet admitted.
  struct Incoming {
    std::uint64_t eligible_cycle;
    std::uint64_t id;
    std::uint64_t row;
    std::uint32_t bank;
    bool is_write;
  };
  struct Bank {
    bool open = false;
    std::uint64_t row = 0;
    std::uint64_t act_ready = 0;  // earliest ACT: PRE + tRP, end of refresh
    std::uint64_t pre_ready = 0;  // earliest PRE: ACT + tRAS, RD + tRTP, WR + tWL + B + tWR
    std::uint64_t col_ready = 0;  // earliest RD/WR: ACT + tRCD
    std::uint32_t streak = 0;     // row hits served since the open row's ACT
  };
  // The command FR-FCFS would give a bank next (for its oldest eligible window request), cached until
  // the bank's state or its part of the window changes (every change of a Bank's bounds invalidates it).
  // Its issue cycle is the max of the cached bank bound and the channel-wide bound of its command kind
  // (tRRD, tFAW, column spacing, turnarounds), which other banks' commands move.
  struct Candidate {
    std::uint64_t bank_ready = kNeverCycle;  // the bank's own bound on the command (e.g. ACT + tRCD)
    // Tie break at equal cycles: row hits first, then the oldest. Bit 63: a row command; then the request's
    // seq; the low bank_bits_ bits: the bank. Ranks are distinct (one request each), so the bank never
    // decides an order, but names the winner of a scan: the scan keeps only the least key (a key and a
    // bank apart took a second compare per bank).
    std::uint64_t rank = kNeverCycle;
    std::uint32_t slot = 0;  // of its request
    Cmd cmd = Cmd::kNone;
  };
  // A set of banks: bit b of one word for the first 64 banks (every shipped GPU has 16), further words
  // only past them, so that the usual set costs neither a loop nor an indirection.
  class BankSet {
   public:
    void resize(std::uint32_t banks) { more_.assign(banks > 64 ? (banks - 1) / 64 : 0, 0); }
    [[nodiscard]] bool contains(std::uint32_t bank) const { return (word(bank) & bit(bank)) != 0; }
    void insert(std::uint32_t bank) { word(bank) |= bit(bank); }
    void erase(std::uint32_t bank) { word(bank) &= ~bit(bank); }
    /// Inserts `bank` if `filter` holds it.
    void insert_if_in(std::uint32_t bank, const BankSet& filter) {
      word(bank) |= filter.word(bank) & bit(bank);
    }
    void insert_all(std::uint32_t banks) {
      for (std::uint32_t b = 0; b < banks; ++b) insert(b);
    }
    /// Calls visit(b) for each bank b of the set, lowest first; `clear`: empties the set first.
    template <bool clear, typename Visit>
    [[gnu::always_inline]] void visit_each(Visit&& visit) {
      visit_word<clear>(first_, 0, visit);
      if (__builtin_expect(!more_.empty(), 0)) {
        for (std::size_t w = 0; w < more_.size(); ++w) visit_word<clear>(more_[w], (w + 1) * 64, visit);
      }
    }

   private:
    static std::uint64_t bit(std::uint32_t bank) { return std::uint64_t{1} << (bank % 64); }
    std::uint64_t& word(std::uint32_t bank) {
      return __builtin_expect(bank < 64, 1) ? first_ : more_[bank / 64 - 1];
    }
    [[nodiscard]] const std::uint64_t& word(std::uint32_t bank) const {
      return __builtin_expect(bank < 64, 1) ? first_ : more_[bank / 64 - 1];
    }
    template <bool clear, typename Visit>
    [[gnu::always_inline]] static void visit_word(std::uint64_t& word, std::size_t base, Visit& visit) {
      std::uint64_t bits = word;
      if (clear) word = 0;
      for (; bits != 0; bits &= bits - 1) {
        visit(static_cast<std::uint32_t>(base + static_cast<unsigned>(__builtin_ctzll(bits))));
      }
    }
    std::uint64_t first_ = 0;          // banks 0 to 63
    std::vector<std::uint64_t> more_;  // banks 64 on
  };
  // The queued requests of one kind: all of them in age order (to find the window, the oldest `window`)
  // and each bank's (to find a bank's candidate without scanning the others); and each bank's candidate
  // for this kind's mode. Each mode keeps its own, so that a switch between reads and writes (frequent
  // when few requests are queued) recomputes only the banks that changed meanwhile.
  struct RequestQueue {
    std::uint32_t youngest = kNoSlot;         // the end of the age list
    std::uint32_t window_youngest = kNoSlot;  // the window's last request, while size >= window
    std::size_t size = 0;
    std::size_t window = 0;
    std::vector<BankList> by_bank;
    std::vector<Candidate> candidates;  // per bank
    // Sets of banks: those whose candidate is to be recomputed, and those with a candidate (a command; a
    // decision looks at those only, rather than at every bank, unless nearly all banks have one) and
    // their count.
    BankSet stale;
    BankSet with_candidate;
    std::uint32_t with_count = 0;
  };
  struct Plan {
    std::uint64_t cycle = kNeverCycle;
    Cmd cmd = Cmd::kNone;
    std::uint32_t bank = 0;
    std::uint32_t slot = 0;  // of the request, for request commands
  };
  // Candidate::rank's flag of a row command (ACT, PRE): after every hit at the same cycle.
  static constexpr std::uint64_t kRowCommandRank = std::uint64_t{1} << 63;
  // A candidate's order, (issue cycle, rank), as one number (cycle in the high half): one compare, which
  // compiles to conditional moves.
  __extension__ using Key = unsigned __int128;  // GCC and Clang; __extension__: no -Wpedantic warning
  static constexpr Key kNoKey = ~Key{0};
  struct Best {
    Key key = kNoKey;
    std::uint32_t bank = 0;
  };

  [[nodiscard]] std::size_t queued() const { return queued_; }
  [[nodiscard]] bool incoming_due(std::uint64_t cycle) const { return next_incoming_cycle_ <= cycle; }
  [[nodiscard]] bool wants_drain() const;
  [[nodiscard]] std::uint64_t window_end(const RequestQueue& queue) const {
    return queue.size > queue.window ? requests_[queue.window_youngest].seq : kNeverCycle;
  }
  void admit(std::uint64_t cycle);
  /// Room for one more pushed request in incoming_ (out of line: rare).
  void make_incoming_room();
  /// Links the request into `queue`'s lists; returns its slot.
  std::uint32_t enqueue(RequestQueue& queue, const Incoming& incoming);
  /// Whether `slot`, entering `queue`'s window as its youngest request, changes its bank's candidate.
  [[nodiscard]] bool entering_changes_candidate(const RequestQueue& queue, std::uint32_t slot) const;
  void dequeue(RequestQueue& queue, std::uint32_t slot);
  void update_mode();
  void replan(std::uint64_t from);
  void plan_requests(std::uint64_t from);
  void compute_candidate(std::uint32_t bank, RequestQueue& queue, std::uint64_t window_end);
  /// The bank's part of `queue`'s window changed.
  void invalidate_candidate(RequestQueue& queue, std::uint32_t bank) {
    queue.stale.insert(bank);
    if (bank == best_.bank && &queue == (best_for_writes_ ? &writes_ : &reads_)) best_valid_ = false;
  }
  /// The bank's state changed: its candidates in both modes. A known lack of a candidate stands: a bank
  /// has one exactly when it has a request in the mode's window, whatever its state.
  void invalidate_bank(std::uint32_t bank) {
    reads_.stale.insert_if_in(bank, reads_.with_candidate);
    writes_.stale.insert_if_in(bank, writes_.with_candidate);
    if (bank == best_.bank) best_valid_ = false;
  }
  void invalidate_candidates();
  void plan_refresh(std::uint64_t from);
  void issue(std::uint64_t cycle, std::vector<DramCompletion>& completed);
  void serve(std::uint64_t cycle, std::vector<DramCompletion>& completed);
  void activate(std::uint64_t cycle, std::uint32_t bank, std::uint64_t row);
  void precharge(std::uint64_t cycle, std::uint32_t bank);
  void refresh(std::uint64_t cycle);
  void catch_up_refresh(std::uint64_t until);
  void log(std::uint64_t cycle, DramCommandKind kind, std::uint32_t bank, std::uint64_t row,
           std::uint64_t request_id) {
    if (log_ == nullptr) return;
    // Field by field (see enqueue()).
    DramCommand& command = log_->emplace_back();
    command.time_ps = cycle * period_ps_;
    command.row = row;
    command.request_id = request_id;
    command.channel = index_;
    command.bank = bank;
    command.kind = kind;
  }

  // Configuration, in cycles.
  std::uint32_t index_;
  TimePs period_ps_;
  DramTiming t_;
  std::uint64_t burst_;          // B
  std::uint64_t column_gap_;     // max(tCCD, B)
  std::uint64_t write_to_read_;  // tWL + B + tWTR
  std::uint64_t read_to_write_;  // max(0, tCL + B + 2 - tWL)
  std::uint64_t write_to_pre_;   // tWL + B + tWR
  std::size_t drain_high_;
  std::size_t drain_low_;
  std::uint32_t hit_cap_;
  bool refresh_enabled_;
  std::uint32_t bank_count_;
  std::uint32_t sparse_max_;  // a decision visits the banks with a command when at most this many: 1/2
  unsigned bank_bits_;        // bits of a bank index in Candidate::rank
  std::uint32_t bank_mask_;   // (1 << bank_bits_) - 1
  std::uint64_t seq_limit_;   // 2^(63 - bank_bits_): the first seq Candidate::rank cannot hold

  // Requests: pushed and not yet admitted (in push order, incoming_[incoming_front_, incoming_end_); the
  // vector's size is its capacity), and queued.
  std::vector<Request> requests_;
  std::vector<std::uint32_t> free_slots_;  // of requests_
  std::vector<Incoming> incoming_;
  std::size_t incoming_front_ = 0;
  std::size_t incoming_end_ = 0;
  std::uint64_t next_incoming_cycle_ = kNeverCycle;  // incoming_[incoming_front_]'s eligible cycle, if any
  std::uint64_t next_seq_ = 0;
  RequestQueue reads_;
  RequestQueue writes_;
  std::size_t queued_ = 0;  // reads + writes in the queues
  bool draining_ = false;
  bool sizes_changed_ = false;  // since update_mode() last looked

  // Bank and channel timing state (earliest legal cycles).
  std::vector<Bank> banks_;
  std::uint32_t open_banks_ = 0;
  std::uint64_t act_ready_ = 0;  // tRRD and tFAW
  std::uint64_t rrd_ready_ = 0;
  // The last four ACT cycles plus tFAW, a ring (0 before the fourth ACT: no bound yet).
  std::array<std::uint64_t, 4> faw_{};
  std::uint32_t faw_next_ = 0;
  std::uint64_t column_ready_ = 0;      // last column + max(tCCD, B)
  std::uint64_t read_after_write_ = 0;  // last WR + tWL + B + tWTR
  std::uint64_t write_after_read_ = 0;  // last RD + read_to_write_
  std::uint64_t bus_free_ = 0;          // end of the last burst on the data bus
  std::uint64_t read_ready_ = 0;        // earliest RD by every channel constraint
  std::uint64_t write_ready_ = 0;       // earliest WR by every channel constraint
  std::uint64_t next_command_ = 0;      // one command per cycle: last command + 1
  std::uint64_t refresh_due_ = 0;       // kNeverCycle without refresh
  std::uint64_t refresh_end_ = 0;       // last REF + tRFC

  // Scheduler state.
  Plan plan_;
  bool plan_dirty_ = true;
  std::uint64_t next_cycle_ = kNeverCycle;
  // The least candidate of the last plan_requests(), of the writes' candidates or the reads'. Still the
  // least but for the stale banks while no command has issued, the mode is the same and its bank's
  // candidate has not changed: the other banks' bounds have not moved and a later `from`, up to its
  // cycle, raises none of them above it.
  Best best_;
  bool best_for_writes_ = false;
  bool best_valid_ = false;

  // Statistics.
  ChannelStats stats_;
  // For stats_.queue_occupancy_integral (settle()): the sums of the admission times of every request
  // admitted and of the column-command times of every request served, in ps (modulo 2^64).
  std::uint64_t admitted_ps_sum_ = 0;
  std::uint64_t served_ps_sum_ = 0;
  std::uint64_t now_cycle_ = 0;
  std::vector<DramCommand>* log_ = nullptr;
};

}  // namespace gpumux::dram
