// dss_token_policy: the Dynamic Spatial Sharing token policy (Tanasic et al., ISCA 2014, 3.4,
// Algorithm 1) as synthesizable hardware.
//
// The block holds the token counts of the Kernel Status Register Table (KSRT: one signed counter per
// entry, negative = debt) and the fields of the SM Status Table (SMST) the policy needs, takes the
// scheduling framework's events (at most one per cycle, no back-pressure), runs the serial search one
// table entry per cycle and emits the table writes it decides: assign an idle SM to a kernel, or
// reserve a running SM for a kernel that has fewer SMs than its tokens.
//
// It is cycle-equivalent to the C++ reference model gpumux::DssReference
// (systemc/policy/dss_reference.h): same inputs and outputs in every clock, same scan order,
// tie-breaks, restart rule and clamping. tb/rtl checks that under Verilator, every output in every
// cycle, and rtl/formal/dss_token_policy_props.sv states the safety properties.
//
// Timing, in short (the header of dss_reference.h is the full contract):
//  - An event is merged into the tables in the cycle it arrives; that cycle does no search work, and a
//    search in progress restarts at scan index 0 in the next cycle.
//  - A search (started by kernel_insert, sm_idle, and preempt_done) repeats iterations of N = max(NumSms,
//    NumSlots) scan cycles plus one decision cycle: the search takes as many cycles as there are SMs,
//    plus one to decide.
//  - Scan cycle i looks at KSRT entry i and SMST entry i in parallel and updates three candidates:
//    ksr_max (most tokens among kernels with thread blocks left), ksr_min (fewest tokens among kernels
//    holding a running SM, with that kernel's lowest running SM) and the lowest idle SM. Ties go to the
//    lowest index.
//  - Decision cycle: (1) idle SM and ksr_max: assign it, tokens[max]--; (2) else, when
//    tokens[max] > tokens[min] + 1: reserve min's SM for max, tokens[min]++, tokens[max]--; (3) else
//    stop. The outputs are Mealy (decision outputs in the decision cycle, from the registered state),
//    and the table writes are visible from the next cycle.
//  - Insert tokens are clamped to [-2^(TokenW-1) + NumSms, 2^(TokenW-1) - 1]: a kernel holds at most
//    NumSms SMs and tokens + SMs held is constant, so no counter can overflow (no saturating adders).

module dss_token_policy #(
  /// N_SM: SMST entries (13 in Tanasic's K20c). The search takes max(NumSms, NumSlots) + 1 cycles per
  /// iteration, so latency grows linearly with it; area grows linearly too (the scan reads one entry
  /// per cycle through a NumSms:1 multiplexer instead of comparing all entries at once).
  parameter int unsigned NumSms = 13,
  /// KSRT entries (N_SM in Tanasic's design, which limits active kernels to the number of SMs).
  parameter int unsigned NumSlots = 13,
  /// Width of a signed token counter. Must satisfy NumSms <= 2^(TokenW-1) - 1 so that the debt of a
  /// kernel holding every SM fits (8 bits: up to 127 SMs).
  parameter int unsigned TokenW = 8,
  /// Width of the tokens the OS gives on kernel_insert (clamped into the counter range).
  parameter int unsigned InTokenW = 32,
  /// 1: every preempt_done starts a search (gpumux's extension, see dss_reference.h); 0: only
  /// Tanasic's two events (kernel inserted, SM became idle) do.
  parameter bit StartOnPreemptDone = 1'b1,
  /// Scan length: cycles of one iteration before its decision cycle.
  localparam int unsigned ScanLen = (NumSms > NumSlots) ? NumSms : NumSlots,
  localparam int unsigned SmW = (NumSms > 1) ? $clog2(NumSms) : 1,
  localparam int unsigned SlotW = (NumSlots > 1) ? $clog2(NumSlots) : 1,
  localparam int unsigned IdxW = (ScanLen > 1) ? $clog2(ScanLen) : 1
) (
  input  logic                       clk_i,
  // Lint waiver (SYNCASYNCNET): the assertions' `disable iff (!rst_ni)` reads the reset outside a
  // flop, which Verilator counts as a synchronous use; every register resets asynchronously.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                       rst_ni,
  /* verilator lint_on SYNCASYNCNET */

  // Event of this cycle (at most one, always accepted). Kinds: 0 none, 1 kernel_insert,
  // 2 kernel_finish, 3 sm_idle, 4 preempt_done, 5 has_tbs (DssReference::EventKind).
  /// Event kind (EvNone when no event).
  input  logic [2:0]                 event_kind_i,
  /// KSRT entry (kernel_insert, kernel_finish, has_tbs) or SM (sm_idle, preempt_done).
  input  logic [IdxW-1:0]            event_index_i,
  /// kernel_insert: the tokens the OS gives the kernel (two's complement; clamped).
  input  logic signed [InTokenW-1:0] event_tokens_i,
  /// has_tbs: the kernel's new "has thread blocks to issue" bit.
  input  logic                       event_flag_i,

  /// Decision rule 1: SM assign_sm_o (idle) is set up for the kernel in KSRT entry assign_slot_o.
  output logic                       assign_valid_o,
  output logic [SmW-1:0]             assign_sm_o,
  output logic [SlotW-1:0]           assign_slot_o,
  /// Decision rule 2: SM reserve_sm_o (running) is preempted for the kernel in entry reserve_next_o.
  output logic                       reserve_valid_o,
  output logic [SmW-1:0]             reserve_sm_o,
  output logic [SlotW-1:0]           reserve_next_o,
  /// The search FSM is not idle in this cycle (a search cycle).
  output logic                       busy_o,

  // Table read ports (the registered state, entry i at bits [i*W +: W]): the SM driver reads the
  // SMST, the co-simulation and the formal properties compare them with the reference model.
  /// KSRT: entry holds a kernel.
  output logic [NumSlots-1:0]        slot_valid_o,
  /// KSRT: signed token counts.
  output logic [NumSlots*TokenW-1:0] slot_tokens_o,
  /// KSRT: the kernel has thread blocks to issue.
  output logic [NumSlots-1:0]        slot_has_tbs_o,
  /// SMST: 0 idle, 1 running, 2 reserved.
  output logic [NumSms*2-1:0]        sm_state_o,
  /// SMST: running: its kernel; reserved: the kernel being preempted (valid bit + KSRT entry).
  output logic [NumSms-1:0]          sm_kernel_valid_o,
  output logic [NumSms*SlotW-1:0]    sm_kernel_o,
  /// SMST: reserved: the kernel the SM is reserved for (valid bit + KSRT entry).
  output logic [NumSms-1:0]          sm_next_valid_o,
  output logic [NumSms*SlotW-1:0]    sm_next_o
);

  ///////////////
  // Constants //
  ///////////////

  localparam logic [2:0] EvNone         = 3'd0;
  localparam logic [2:0] EvKernelInsert = 3'd1;
  localparam logic [2:0] EvKernelFinish = 3'd2;
  localparam logic [2:0] EvSmIdle       = 3'd3;
  localparam logic [2:0] EvPreemptDone  = 3'd4;
  localparam logic [2:0] EvHasTbs       = 3'd5;

  localparam logic [1:0] SmIdle     = 2'd0;
  localparam logic [1:0] SmRunning  = 2'd1;
  localparam logic [1:0] SmReserved = 2'd2;

  localparam int TokenMaxI  = (1 << (TokenW - 1)) - 1;
  localparam int InsertMinI = -TokenMaxI - 1 + NumSms;
  localparam logic signed [InTokenW-1:0] InsertMinIn = InTokenW'(InsertMinI);
  localparam logic signed [InTokenW-1:0] InsertMaxIn = InTokenW'(TokenMaxI);
  localparam logic [TokenW-1:0] InsertMinTok = TokenW'(InsertMinI);
  localparam logic [TokenW-1:0] InsertMaxTok = TokenW'(TokenMaxI);

  localparam logic [IdxW:0] NumSmsIdx   = (IdxW + 1)'(NumSms);
  localparam logic [IdxW:0] NumSlotsIdx = (IdxW + 1)'(NumSlots);
  localparam logic [IdxW-1:0] LastIdx   = IdxW'(ScanLen - 1);

  ///////////
  // State //
  ///////////

  // Search FSM
  typedef enum logic [1:0] {
    PhaseIdle   = 2'd0,
    PhaseScan   = 2'd1,
    PhaseDecide = 2'd2
  } phase_e;

  phase_e phase_q, phase_d;

  // KSRT
  logic [NumSlots-1:0]        slot_valid_q, slot_valid_d;
  logic [NumSlots*TokenW-1:0] slot_tokens_q, slot_tokens_d;
  logic [NumSlots-1:0]        slot_has_tbs_q, slot_has_tbs_d;

  // SMST
  logic [NumSms*2-1:0]     sm_state_q, sm_state_d;
  logic [NumSms-1:0]       sm_kernel_valid_q, sm_kernel_valid_d;
  logic [NumSms*SlotW-1:0] sm_kernel_q, sm_kernel_d;
  logic [NumSms-1:0]       sm_next_valid_q, sm_next_valid_d;
  logic [NumSms*SlotW-1:0] sm_next_q, sm_next_d;

  // Search registers of the current iteration
  logic [IdxW-1:0]   scan_idx_q, scan_idx_d;
  logic              idle_valid_q, idle_valid_d;
  logic [SmW-1:0]    idle_sm_q, idle_sm_d;
  logic              max_valid_q, max_valid_d;
  logic [SlotW-1:0]  max_slot_q, max_slot_d;
  logic [TokenW-1:0] max_tokens_q, max_tokens_d;
  logic              min_valid_q, min_valid_d;
  logic [SlotW-1:0]  min_slot_q, min_slot_d;
  logic [TokenW-1:0] min_tokens_q, min_tokens_d;
  logic [SmW-1:0]    min_sm_q, min_sm_d;

  //////////////////
  // Event decode //
  //////////////////

  logic              event_valid;
  logic [SlotW-1:0]  ev_slot;
  logic [SmW-1:0]    ev_sm;
  logic [1:0]        ev_sm_state;
  logic              ev_sm_kernel_valid;
  logic [SlotW-1:0]  ev_sm_kernel;
  logic              ev_sm_next_valid;
  logic [SlotW-1:0]  ev_sm_next;
  logic [TokenW-1:0] insert_tokens;
  logic              idle_returns;   // sm_idle gives the SM's token back to a kernel
  logic [SlotW-1:0]  idle_return_slot;
  logic [TokenW-1:0] idle_return_tokens;

  assign event_valid        = event_kind_i != EvNone;
  assign ev_slot            = event_index_i[SlotW-1:0];
  assign ev_sm              = event_index_i[SmW-1:0];
  assign ev_sm_state        = sm_state_q[ev_sm*2 +: 2];
  assign ev_sm_kernel_valid = sm_kernel_valid_q[ev_sm];
  assign ev_sm_kernel       = sm_kernel_q[ev_sm*SlotW +: SlotW];
  assign ev_sm_next_valid   = sm_next_valid_q[ev_sm];
  assign ev_sm_next         = sm_next_q[ev_sm*SlotW +: SlotW];

  // A running SM returns its token to its kernel (if still valid), a reserved SM to its next kernel.
  assign idle_returns       = (ev_sm_state == SmRunning && ev_sm_kernel_valid) ||
                              (ev_sm_state == SmReserved && ev_sm_next_valid);
  assign idle_return_slot   = (ev_sm_state == SmRunning) ? ev_sm_kernel : ev_sm_next;
  assign idle_return_tokens = slot_tokens_q[idle_return_slot*TokenW +: TokenW];

  // Clamp the OS's tokens so that no later increment or decrement can overflow.
  always_comb begin
    if ($signed(event_tokens_i) < InsertMinIn) begin
      insert_tokens = InsertMinTok;
    end else if ($signed(event_tokens_i) > InsertMaxIn) begin
      insert_tokens = InsertMaxTok;
    end else begin
      insert_tokens = event_tokens_i[TokenW-1:0];
    end
  end

  /////////////////
  // Scan datapath //
  /////////////////

  logic [SlotW-1:0]  scan_slot;
  logic [SmW-1:0]    scan_sm;
  logic              scan_has_slot;  // index i names a KSRT entry
  logic              scan_has_sm;    // index i names an SM
  logic [TokenW-1:0] scan_slot_tokens;
  logic [1:0]        scan_sm_state;
  logic [SlotW-1:0]  scan_sm_kernel;
  logic [TokenW-1:0] scan_kernel_tokens;
  logic              take_max, take_idle, take_min;

  assign scan_slot          = scan_idx_q[SlotW-1:0];
  assign scan_sm            = scan_idx_q[SmW-1:0];
  assign scan_has_slot      = {1'b0, scan_idx_q} < NumSlotsIdx;
  assign scan_has_sm        = {1'b0, scan_idx_q} < NumSmsIdx;
  assign scan_slot_tokens   = slot_tokens_q[scan_slot*TokenW +: TokenW];
  assign scan_sm_state      = sm_state_q[scan_sm*2 +: 2];
  assign scan_sm_kernel     = sm_kernel_q[scan_sm*SlotW +: SlotW];
  assign scan_kernel_tokens = slot_tokens_q[scan_sm_kernel*TokenW +: TokenW];

  // ksr_max: strictly more tokens replaces the candidate, so ties keep the lowest slot.
  assign take_max = scan_has_slot && slot_valid_q[scan_slot] && slot_has_tbs_q[scan_slot] &&
                    (!max_valid_q || $signed(scan_slot_tokens) > $signed(max_tokens_q));
  // Lowest idle SM.
  assign take_idle = scan_has_sm && scan_sm_state == SmIdle && !idle_valid_q;
  // ksr_min over running SMs with a kernel: fewer tokens, or as many in a lower slot. The first SM of
  // the final ksr_min sets min_sm and no later SM of the same slot displaces it.
  assign take_min = scan_has_sm && scan_sm_state == SmRunning && sm_kernel_valid_q[scan_sm] &&
                    (!min_valid_q ||
                     $signed(scan_kernel_tokens) < $signed(min_tokens_q) ||
                     (scan_kernel_tokens == min_tokens_q && scan_sm_kernel < min_slot_q));

  ////////////////////
  // Decision rules //
  ////////////////////

  logic                     rule_assign, rule_reserve;
  logic signed [TokenW:0]   max_tokens_ext, min_tokens_ext_p1;

  assign max_tokens_ext    = {max_tokens_q[TokenW-1], max_tokens_q};
  assign min_tokens_ext_p1 = {min_tokens_q[TokenW-1], min_tokens_q} + (TokenW + 1)'(1);
  assign rule_assign       = idle_valid_q && max_valid_q;
  assign rule_reserve      = !rule_assign && max_valid_q && min_valid_q &&
                             (max_tokens_ext > min_tokens_ext_p1);

  ///////////////////
  // Control       //
  ///////////////////

  logic ev_insert, ev_finish, ev_idle, ev_preempt, ev_has_tbs;
  logic scan_cycle, decide_cycle, decide_assign, decide_reserve;
  logic start_search;   // the event starts a search (FSM idle)
  logic clear_search;   // begin an iteration at scan index 0 in the next cycle

  assign ev_insert      = event_kind_i == EvKernelInsert;
  assign ev_finish      = event_kind_i == EvKernelFinish;
  assign ev_idle        = event_kind_i == EvSmIdle;
  assign ev_preempt     = event_kind_i == EvPreemptDone;
  assign ev_has_tbs     = event_kind_i == EvHasTbs;
  // An event cycle does no search work.
  assign scan_cycle     = !event_valid && phase_q == PhaseScan;
  assign decide_cycle   = !event_valid && phase_q == PhaseDecide;
  assign decide_assign  = decide_cycle && rule_assign;
  assign decide_reserve = decide_cycle && rule_reserve;

  // Tanasic's two events start a search (kernel inserted, SM became idle, incl. a preempt_done that
  // leaves the SM idle); every preempt_done does with StartOnPreemptDone.
  assign start_search = ev_insert || ev_idle ||
                        (ev_preempt && (StartOnPreemptDone || !ev_sm_next_valid));
  // A search in progress restarts at index 0 after any event; after a decision the next iteration
  // starts at once.
  assign clear_search = (event_valid && (phase_q != PhaseIdle || start_search)) ||
                        decide_assign || decide_reserve;

  //////////////////////
  // Search FSM       //
  //////////////////////

  always_comb begin
    phase_d      = phase_q;
    scan_idx_d   = scan_idx_q;
    idle_valid_d = idle_valid_q;
    idle_sm_d    = idle_sm_q;
    max_valid_d  = max_valid_q;
    max_slot_d   = max_slot_q;
    max_tokens_d = max_tokens_q;
    min_valid_d  = min_valid_q;
    min_slot_d   = min_slot_q;
    min_tokens_d = min_tokens_q;
    min_sm_d     = min_sm_q;

    if (clear_search) begin
      phase_d      = PhaseScan;
      scan_idx_d   = '0;
      idle_valid_d = 1'b0;
      idle_sm_d    = '0;
      max_valid_d  = 1'b0;
      max_slot_d   = '0;
      max_tokens_d = '0;
      min_valid_d  = 1'b0;
      min_slot_d   = '0;
      min_tokens_d = '0;
      min_sm_d     = '0;
    end else if (scan_cycle) begin
      if (take_max) begin
        max_valid_d  = 1'b1;
        max_slot_d   = scan_slot;
        max_tokens_d = scan_slot_tokens;
      end
      if (take_idle) begin
        idle_valid_d = 1'b1;
        idle_sm_d    = scan_sm;
      end
      if (take_min) begin
        min_valid_d  = 1'b1;
        min_slot_d   = scan_sm_kernel;
        min_tokens_d = scan_kernel_tokens;
        min_sm_d     = scan_sm;
      end
      scan_idx_d = scan_idx_q + IdxW'(1);
      if (scan_idx_q == LastIdx) begin
        phase_d = PhaseDecide;
      end
    end else if (decide_cycle) begin
      // Neither rule applies: steady state, stop.
      phase_d = PhaseIdle;
    end
  end

  // Decision outputs (Mealy: the decision cycle's registered candidates). The tables did not change
  // since the scan (any event restarts it), so the candidates' token counts are current.
  assign assign_valid_o  = decide_assign;
  assign assign_sm_o     = decide_assign ? idle_sm_q : '0;
  assign assign_slot_o   = decide_assign ? max_slot_q : '0;
  assign reserve_valid_o = decide_reserve;
  assign reserve_sm_o    = decide_reserve ? min_sm_q : '0;
  assign reserve_next_o  = decide_reserve ? max_slot_q : '0;

  ///////////////////////////////
  // KSRT: per-entry next state //
  ///////////////////////////////

  logic [TokenW-1:0] idle_return_inc, max_tokens_dec, min_tokens_inc;
  assign idle_return_inc = idle_return_tokens + TokenW'(1);
  assign max_tokens_dec  = max_tokens_q - TokenW'(1);
  assign min_tokens_inc  = min_tokens_q + TokenW'(1);

  always_comb begin
    slot_valid_d   = slot_valid_q;
    slot_tokens_d  = slot_tokens_q;
    slot_has_tbs_d = slot_has_tbs_q;
    for (int unsigned i = 0; i < NumSlots; i++) begin
      if (ev_slot == SlotW'(i)) begin
        if (ev_insert) begin
          slot_valid_d[i]                   = 1'b1;
          slot_tokens_d[i*TokenW +: TokenW] = insert_tokens;
          slot_has_tbs_d[i]                 = 1'b1;
        end
        if (ev_finish) begin
          slot_valid_d[i]                   = 1'b0;
          slot_tokens_d[i*TokenW +: TokenW] = '0;
          slot_has_tbs_d[i]                 = 1'b0;
        end
        if (ev_has_tbs) begin
          slot_has_tbs_d[i] = event_flag_i;
        end
      end
      // sm_idle returns the SM's token.
      if (ev_idle && idle_returns && idle_return_slot == SlotW'(i)) begin
        slot_tokens_d[i*TokenW +: TokenW] = idle_return_inc;
      end
      // Both rules take a token from ksr_max; a reservation gives one back to ksr_min (another
      // entry: its count is lower by more than one).
      if ((decide_assign || decide_reserve) && max_slot_q == SlotW'(i)) begin
        slot_tokens_d[i*TokenW +: TokenW] = max_tokens_dec;
      end
      if (decide_reserve && min_slot_q == SlotW'(i)) begin
        slot_tokens_d[i*TokenW +: TokenW] = min_tokens_inc;
      end
    end
  end

  ///////////////////////////////
  // SMST: per-entry next state //
  ///////////////////////////////

  always_comb begin
    sm_state_d        = sm_state_q;
    sm_kernel_valid_d = sm_kernel_valid_q;
    sm_kernel_d       = sm_kernel_q;
    sm_next_valid_d   = sm_next_valid_q;
    sm_next_d         = sm_next_q;
    for (int unsigned j = 0; j < NumSms; j++) begin
      // kernel_finish: SMs still running (or being preempted from) the kernel keep their state
      // without it until sm_idle; SMs reserved for it lose their next kernel.
      if (ev_finish) begin
        if (sm_kernel_valid_q[j] && sm_kernel_q[j*SlotW +: SlotW] == ev_slot) begin
          sm_kernel_valid_d[j] = 1'b0;
        end
        if (sm_next_valid_q[j] && sm_next_q[j*SlotW +: SlotW] == ev_slot) begin
          sm_next_valid_d[j] = 1'b0;
        end
      end
      if (ev_sm == SmW'(j)) begin
        if (ev_idle) begin
          sm_state_d[j*2 +: 2]          = SmIdle;
          sm_kernel_valid_d[j]          = 1'b0;
          sm_kernel_d[j*SlotW +: SlotW] = '0;
          sm_next_valid_d[j]            = 1'b0;
          sm_next_d[j*SlotW +: SlotW]   = '0;
        end
        // preempt_done: with a next kernel the SM now runs it (its token is already counted
        // there); without one it becomes idle.
        if (ev_preempt) begin
          sm_state_d[j*2 +: 2]          = sm_next_valid_q[j] ? SmRunning : SmIdle;
          sm_kernel_valid_d[j]          = sm_next_valid_q[j];
          sm_kernel_d[j*SlotW +: SlotW] = sm_next_valid_q[j] ? sm_next_q[j*SlotW +: SlotW] : '0;
          sm_next_valid_d[j]            = 1'b0;
          sm_next_d[j*SlotW +: SlotW]   = '0;
        end
      end
      if (decide_assign && idle_sm_q == SmW'(j)) begin
        sm_state_d[j*2 +: 2]          = SmRunning;
        sm_kernel_valid_d[j]          = 1'b1;
        sm_kernel_d[j*SlotW +: SlotW] = max_slot_q;
        sm_next_valid_d[j]            = 1'b0;
        sm_next_d[j*SlotW +: SlotW]   = '0;
      end
      if (decide_reserve && min_sm_q == SmW'(j)) begin
        sm_state_d[j*2 +: 2]        = SmReserved;
        sm_next_valid_d[j]          = 1'b1;
        sm_next_d[j*SlotW +: SlotW] = max_slot_q;
      end
    end
  end

  assign busy_o = phase_q != PhaseIdle;

  ///////////////
  // Registers //
  ///////////////

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      phase_q           <= PhaseIdle;
      slot_valid_q      <= '0;
      slot_tokens_q     <= '0;
      slot_has_tbs_q    <= '0;
      sm_state_q        <= '0;
      sm_kernel_valid_q <= '0;
      sm_kernel_q       <= '0;
      sm_next_valid_q   <= '0;
      sm_next_q         <= '0;
      scan_idx_q        <= '0;
      idle_valid_q      <= 1'b0;
      idle_sm_q         <= '0;
      max_valid_q       <= 1'b0;
      max_slot_q        <= '0;
      max_tokens_q      <= '0;
      min_valid_q       <= 1'b0;
      min_slot_q        <= '0;
      min_tokens_q      <= '0;
      min_sm_q          <= '0;
    end else begin
      phase_q           <= phase_d;
      slot_valid_q      <= slot_valid_d;
      slot_tokens_q     <= slot_tokens_d;
      slot_has_tbs_q    <= slot_has_tbs_d;
      sm_state_q        <= sm_state_d;
      sm_kernel_valid_q <= sm_kernel_valid_d;
      sm_kernel_q       <= sm_kernel_d;
      sm_next_valid_q   <= sm_next_valid_d;
      sm_next_q         <= sm_next_d;
      scan_idx_q        <= scan_idx_d;
      idle_valid_q      <= idle_valid_d;
      idle_sm_q         <= idle_sm_d;
      max_valid_q       <= max_valid_d;
      max_slot_q        <= max_slot_d;
      max_tokens_q      <= max_tokens_d;
      min_valid_q       <= min_valid_d;
      min_slot_q        <= min_slot_d;
      min_tokens_q      <= min_tokens_d;
      min_sm_q          <= min_sm_d;
    end
  end

  assign slot_valid_o      = slot_valid_q;
  assign slot_tokens_o     = slot_tokens_q;
  assign slot_has_tbs_o    = slot_has_tbs_q;
  assign sm_state_o        = sm_state_q;
  assign sm_kernel_valid_o = sm_kernel_valid_q;
  assign sm_kernel_o       = sm_kernel_q;
  assign sm_next_valid_o   = sm_next_valid_q;
  assign sm_next_o         = sm_next_q;

  ////////////////
  // Assertions //
  ////////////////

`ifndef SYNTHESIS
  // Parameters: the debt of a kernel holding every SM must fit in a token counter.
  initial begin
    ParamTokenW_A: assert (TokenW >= 2 && TokenW <= 31 && NumSms <= TokenMaxI && InTokenW >= TokenW)
      else $fatal(1, "dss_token_policy: TokenW=%0d cannot count the debt of %0d SMs", TokenW, NumSms);
  end

  // Event protocol (the reference model throws std::invalid_argument on these).
  logic ev_names_slot, ev_needs_kernel, ev_names_sm;
  assign ev_names_slot   = event_kind_i == EvKernelInsert || event_kind_i == EvKernelFinish ||
                           event_kind_i == EvHasTbs;
  assign ev_needs_kernel = event_kind_i == EvKernelFinish || event_kind_i == EvHasTbs;
  assign ev_names_sm     = event_kind_i == EvSmIdle || event_kind_i == EvPreemptDone;

  EventKind_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      event_kind_i <= EvHasTbs)
    else $error("dss_token_policy: unknown event kind %0d", event_kind_i);
  SlotIndex_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !ev_names_slot || {1'b0, event_index_i} < NumSlotsIdx)
    else $error("dss_token_policy: no KSRT entry %0d", event_index_i);
  SmIndex_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !ev_names_sm || {1'b0, event_index_i} < NumSmsIdx)
    else $error("dss_token_policy: no SM %0d", event_index_i);
  InsertFreeSlot_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      event_kind_i != EvKernelInsert || !slot_valid_q[ev_slot])
    else $error("dss_token_policy: kernel_insert into busy KSRT entry %0d", ev_slot);
  SlotHoldsKernel_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !ev_needs_kernel || slot_valid_q[ev_slot])
    else $error("dss_token_policy: event for empty KSRT entry %0d", ev_slot);
  PreemptReserved_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      event_kind_i != EvPreemptDone || ev_sm_state == SmReserved)
    else $error("dss_token_policy: preempt_done of SM %0d, which is not reserved", ev_sm);

  // A decision only ever writes an SM in the state its rule requires, and one per cycle.
  AssignIdleSm_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !assign_valid_o || sm_state_q[assign_sm_o*2 +: 2] == SmIdle);
  ReserveRunningSm_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !reserve_valid_o || sm_state_q[reserve_sm_o*2 +: 2] == SmRunning);
  OneDecision_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !(assign_valid_o && reserve_valid_o));
`endif

endmodule
