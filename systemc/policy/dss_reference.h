#pragma once
// DssReference: the cycle-level reference model of the Dynamic Spatial Sharing token policy
// (Tanasic et al., ISCA 2014, 3.4, Algorithm 1). Plain C++ with no SystemC, TLM or gpumux engine
// types: the simulator policy `dss` (policy/dss.h) drives it, and the SystemVerilog implementation is
// checked against it cycle by cycle under Verilator. One call of step() is one clock cycle.
//
// State (what the RTL holds in registers):
//  - per KSRT slot: valid, tokens (signed, `token_bits` wide, negative = debt), has_tbs (the kernel has
//    thread blocks left to issue);
//  - per SM: state idle / running / reserved, kernel slot (+ valid bit), next slot (+ valid bit);
//  - the search FSM: phase idle / scan / decide, the scan index and the candidate registers.
//
// Inputs: at most one event per cycle, always accepted (no back-pressure):
//   kernel_insert{slot, tokens}  a kernel entered the active queue in KSRT entry `slot`; has_tbs := 1.
//   kernel_finish{slot}          the kernel left the KSRT. SMs still running it keep state running
//                                but lose their kernel (kernel_valid := 0, "orphans") until sm_idle; the
//                                preempted-kernel field of reserved SMs is cleared likewise; SMs
//                                reserved with next == slot lose their next (next_valid := 0).
//   sm_idle{sm}                  the SM became idle. A running SM returns its token to its kernel if it
//                                still has one; a reserved SM returns its token to `next` if valid.
//                                An already idle SM only restarts the search.
//   preempt_done{sm}             a reserved SM finished its preemption: with a valid next it is now
//                                running `next` (its token is already counted there); without one it
//                                becomes idle.
//   has_tbs{slot, flag}          the kernel's "has thread blocks to issue" bit changed.
//
// Start of a search: Tanasic runs the algorithm "only on the following events: (1) a kernel is
// inserted in the active queue and (2) an SM becomes idle": kernel_insert, sm_idle, and preempt_done
// without a valid next (the SM becomes idle). Extension (Config::start_on_preempt_done, default on):
// every preempt_done also starts a search. A kernel whose SMs are all still draining towards it holds
// no running SM, so it cannot be ksr_min; without this extra start, three kernels arriving together
// settle at 4/6/3 SMs instead of 5/4/4 until some SM happens to go idle.
//
// The search (Algorithm 1 as hardware). One iteration is a scan of index i = 0 .. N-1,
// N = max(num_sms, num_slots), P = entries_per_cycle entries per cycle, followed by one decision
// cycle: ceil(N / P) + 1 cycles (iteration_cycles()). P = 1 is Tanasic's serial scan ("This operation
// takes as many cycles as SMs", 3.4): N + 1 cycles. Scan cycle c examines entries c*P .. c*P + P - 1
// (those below N); for each, slot i and SM i are examined in parallel:
//   ksr_max  highest tokens among valid slots with has_tbs (ties: lowest slot index);
//   ksr_min  lowest tokens among valid slots holding at least one running SM (reserved SMs do not
//            count; ties: lowest slot index), with min_sm, the lowest-index running SM of that slot
//            (SM i contributes candidate (tokens[kernel(i)], kernel(i)) when running with a kernel);
//   idle_sm  lowest-index idle SM.
// A scan cycle folds its entries into the candidates in index order, as the serial scan would one
// cycle each: the three choices are a maximum / minimum over a key that includes the index (ksr_max:
// most tokens, then lowest slot; ksr_min: fewest tokens, then lowest slot, then lowest SM; idle_sm:
// lowest SM), so any grouping of the entries gives the same candidates and the decisions do not
// depend on P, only the cycles they take do. The RTL reduces a cycle's P entries with a comparator
// tree whose merge keeps the lower-index side on a tie.
// Decision cycle:
//   1. idle_sm and ksr_max exist: assign idle_sm to ksr_max (SM running), tokens[max]--.
//   2. else ksr_max and ksr_min exist and tokens[max] > tokens[min] + 1: reserve min_sm for ksr_max
//      (SM reserved, next := max), tokens[min]++, tokens[max]--.
//   3. else stop (steady state): the FSM goes idle.
// After a decision the next iteration starts at once; the search runs until it stops.
//
// Interpretation: Algorithm 1 literally returns when KSR[max] = KSR[min] before looking at idle SMs,
// which would leave SMs idle with a single active kernel. The prose says debt exists "to prevent the
// underutilization of resources", so here idle SMs are always given to ksr_max (rule 1 comes first).
// Only running SMs are reserved (rule 2 never picks a reserved SM); a reservation's target changes only
// when its `next` kernel finishes (next becomes invalid; preempt_done then makes the SM idle).
//
// Events during a search are merged into the state in the cycle they arrive (no FIFO), and that cycle
// does no search work: if a search is in progress it restarts from scan index 0 in the next cycle
// (the iteration's candidates may be stale). A decision is therefore always based on a full scan of
// the state as it is in the decision cycle.
//
// Tokens: `token_bits`-wide two's complement, range [-2^(w-1), 2^(w-1) - 1]. kernel_insert clamps its
// tokens to [-2^(w-1) + num_sms, 2^(w-1) - 1]; since a kernel holds at most num_sms SMs and tokens +
// SMs held is constant (below), no increment or decrement can then overflow: the RTL needs no
// saturating adders. Requires num_sms <= 2^(w-1) - 1 (8 bits: up to 127 SMs).
//
// Token conservation (checked by check_invariants()): for every valid slot, tokens + SMs held ==
// tokens given at insert, where an SM is held by slot k when it is running with kernel k, or reserved
// with next == k. `granted` (the tokens given at insert) is a model-only shadow for this check.
//
// Output timing: outputs are those of the cycle being stepped (Mealy, from the state before the clock
// edge and the event of the cycle); assign / reserve are valid in decision cycles only, and their
// table updates are visible from the next cycle. Outputs::busy is 1 in every cycle the FSM is not
// idle (a search cycle); busy() tells whether more cycles are needed after the last step.
//
// Protocol violations by the caller (bad index, insert into a valid slot, finish or has_tbs of an
// invalid slot, preempt_done of a non-reserved SM) throw std::invalid_argument and leave the state
// unchanged; in the RTL they are assertion failures.

#include <cstdint>
#include <string>
#include <vector>

#include "policy/dss_encoding.h"

namespace gpumux {

class DssReference {
 public:
  struct Config {
    std::uint32_t num_sms = 13;         ///< N_SM: SMST entries
    std::uint32_t num_slots = 13;       ///< KSRT entries (N_SM in Tanasic's design)
    std::uint32_t token_bits = 8;       ///< signed token width, 2..31; num_sms <= 2^(w-1) - 1
    bool start_on_preempt_done = true;  ///< see the header comment (false: Tanasic's two events only)
    /// P: KSRT / SMST entries the search compares per cycle, 1 (Tanasic's serial scan) to N =
    /// max(num_sms, num_slots) (a comparator tree over every entry: one scan cycle). Changes only the
    /// cycles a decision takes (iteration_cycles()), never the decision.
    std::uint32_t entries_per_cycle = 1;
  };

  /// The event kinds, encoded as the RTL's event_kind_i (declared once in rtl/dss_pkg.sv; the header is
  /// generated from it).
  using EventKind = dss_encoding::EventKind;

  /// The event of one cycle (kNone: no event).
  struct Inputs {
    EventKind kind = EventKind::kNone;
    std::uint32_t index = 0;  ///< slot (insert, finish, has_tbs) or SM (sm_idle, preempt_done)
    std::int32_t tokens = 0;  ///< kernel_insert: tokens given
    bool flag = false;        ///< has_tbs: new value

    static Inputs none() { return {}; }
    static Inputs kernel_insert(std::uint32_t slot, std::int32_t tokens) {
      return {EventKind::kKernelInsert, slot, tokens, false};
    }
    static Inputs kernel_finish(std::uint32_t slot) { return {EventKind::kKernelFinish, slot, 0, false}; }
    static Inputs sm_idle(std::uint32_t sm) { return {EventKind::kSmIdle, sm, 0, false}; }
    static Inputs preempt_done(std::uint32_t sm) { return {EventKind::kPreemptDone, sm, 0, false}; }
    static Inputs has_tbs(std::uint32_t slot, bool value) { return {EventKind::kHasTbs, slot, 0, value}; }
  };

  /// Idle SM -> running for `slot`.
  struct Assign {
    bool valid = false;
    std::uint32_t sm = 0;
    std::uint32_t slot = 0;
  };
  /// Running SM -> reserved, to be set up for `next_slot` after preemption.
  struct Reserve {
    bool valid = false;
    std::uint32_t sm = 0;
    std::uint32_t next_slot = 0;
  };
  struct Outputs {
    Assign assign;
    Reserve reserve;
    bool busy = false;  ///< the FSM was not idle in this cycle (a search cycle)
  };

  /// Encoded as in the SMST and the VCD (rtl/dss_pkg.sv: 0 idle, 1 running, 2 reserved).
  using SmState = dss_encoding::SmState;

  /// A KSRT entry as the policy sees it.
  struct Slot {
    bool valid = false;
    std::int32_t tokens = 0;
    bool has_tbs = false;
    std::int32_t granted = 0;  ///< model-only shadow: tokens given at insert (after clamping)
  };

  /// An SMST entry as the policy sees it.
  struct Sm {
    SmState state = SmState::kIdle;
    bool kernel_valid = false;  ///< running: its kernel; reserved: the kernel being preempted
    std::uint32_t kernel = 0;
    bool next_valid = false;  ///< reserved: the kernel it is reserved for
    std::uint32_t next = 0;
  };

  enum class Phase : std::uint8_t { kIdle, kScan, kDecide };

  /// The search registers of the current iteration.
  struct Scan {
    std::uint32_t index = 0;  ///< next entry to scan (kScan): the scan cycle times entries_per_cycle
    bool idle_valid = false;
    std::uint32_t idle_sm = 0;
    bool max_valid = false;
    std::uint32_t max_slot = 0;
    std::int32_t max_tokens = 0;
    bool min_valid = false;
    std::uint32_t min_slot = 0;
    std::int32_t min_tokens = 0;
    std::uint32_t min_sm = 0;
  };

  struct Stats {
    std::uint64_t cycles = 0;             ///< steps
    std::uint64_t busy_cycles = 0;        ///< cycles spent searching (the decision latency, summed)
    std::uint64_t searches = 0;           ///< searches started from idle
    std::uint64_t iterations = 0;         ///< completed scans (decision cycles)
    std::uint64_t restarts = 0;           ///< iterations restarted by an event
    std::uint64_t assigns = 0;            ///< decisions of rule 1
    std::uint64_t reservations = 0;       ///< decisions of rule 2
    std::uint64_t max_search_cycles = 0;  ///< longest search, first busy cycle to the stop, inclusive
  };

  struct Check {
    bool ok = true;
    std::string message;  ///< the first violation found, empty when ok
    explicit operator bool() const { return ok; }
  };

  /// Throws std::invalid_argument on an invalid configuration.
  explicit DssReference(const Config& config);

  /// Back to the reset state: every slot invalid, every SM idle, FSM idle, statistics zero.
  void reset();
  /// One clock cycle.
  Outputs step(const Inputs& in);

  [[nodiscard]] const Config& config() const { return config_; }
  [[nodiscard]] std::uint32_t num_sms() const { return config_.num_sms; }
  [[nodiscard]] std::uint32_t num_slots() const { return config_.num_slots; }
  /// N = max(num_sms, num_slots): entries one iteration scans.
  [[nodiscard]] std::uint32_t scan_length() const { return scan_length_; }

  /// Scan cycles per iteration for `config`: ceil(N / P), N = max(num_sms, num_slots), P =
  /// entries_per_cycle (N at P = 1, 1 at P = N). Does not validate `config` (the constructor does).
  [[nodiscard]] static std::uint32_t scan_cycles(const Config& config);
  /// The decision latency of `config` in clock cycles: the cycles of one search iteration, its scan
  /// (scan_cycles()) plus the decision cycle, ceil(N / P) + 1. A decision comes this many cycles after
  /// the event cycle that started (or last restarted) its search, and each further decision of the
  /// same search this many cycles after the previous one; a search that stops spends one more
  /// iteration finding nothing to do. Filling an idle GPU with one kernel therefore takes
  /// (num_sms + 1) x iteration_cycles() cycles after the event. Tanasic's serial scan (P = 1): N + 1.
  [[nodiscard]] static std::uint32_t iteration_cycles(const Config& config);
  [[nodiscard]] std::int32_t token_min() const { return token_min_; }
  [[nodiscard]] std::int32_t token_max() const { return token_max_; }
  /// The range kernel_insert clamps its tokens to.
  [[nodiscard]] std::int32_t insert_min() const {
    return token_min_ + static_cast<std::int32_t>(config_.num_sms);
  }

  [[nodiscard]] const Slot& slot(std::uint32_t i) const { return slots_.at(i); }
  [[nodiscard]] const Sm& sm(std::uint32_t i) const { return sms_.at(i); }
  [[nodiscard]] const std::vector<Slot>& slots() const { return slots_; }
  [[nodiscard]] const std::vector<Sm>& sms() const { return sms_; }
  [[nodiscard]] Phase phase() const { return phase_; }
  [[nodiscard]] const Scan& scan() const { return scan_; }
  /// More cycles are needed (the FSM is not idle after the last step).
  [[nodiscard]] bool busy() const { return phase_ != Phase::kIdle; }
  [[nodiscard]] const Stats& stats() const { return stats_; }

  /// SMs held by `slot`: running with that kernel, or reserved with it as next.
  [[nodiscard]] std::uint32_t held_sms(std::uint32_t slot) const;
  /// Token conservation, token range and table consistency.
  [[nodiscard]] Check check_invariants() const;

  static const char* to_string(EventKind kind);
  static const char* to_string(SmState state);

 private:
  /// Applies an event to the tables; returns whether it starts a search.
  bool apply_event(const Inputs& in);
  void validate_event(const Inputs& in) const;
  void begin_scan();
  void scan_entry(std::uint32_t i);
  /// The decision cycle; false = stop.
  bool decide(Outputs& out);

  Config config_;
  std::uint32_t scan_length_ = 0;
  std::int32_t token_min_ = 0;
  std::int32_t token_max_ = 0;
  std::vector<Slot> slots_;
  std::vector<Sm> sms_;
  Phase phase_ = Phase::kIdle;
  Scan scan_;
  Stats stats_;
  std::uint64_t search_cycles_ = 0;  ///< busy cycles of the search in progress
};

}  // namespace gpumux
