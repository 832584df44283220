// dss_token_policy: the Dynamic Spatial Sharing token policy (Tanasic et al., ISCA 2014, 3.4,
// Algorithm 1) as synthesizable hardware.
//
// The block holds the token counts of the Kernel Status Register Table (KSRT: one signed counter per
// entry, negative = debt) and the fields of the SM Status Table (SMST) the policy needs, takes the
// scheduling framework's events (at most one per cycle, no back-pressure), runs the search over the
// tables, EntriesPerCycle entries per cycle (1: Tanasic's serial scan), and emits the table writes it
// decides: assign an idle SM to a kernel, or reserve a running SM for a kernel that has fewer SMs than
// its tokens.
//
// It is cycle-equivalent to the C++ reference model gpumux::DssReference
// (systemc/policy/dss_reference.h): same inputs and outputs in every clock, same scan order,
// tie-breaks, restart rule and clamping. tb/rtl checks that under Verilator, every output in every
// cycle, and rtl/formal/dss_token_policy_props.sv states the safety properties.
//
// Timing, in short (the header of dss_reference.h is the full contract):
//  - An event is merged into the tables in the cycle it arrives; that cycle does no search work, and a
//    search in progress restarts at scan index 0 in the next cycle.
//  - A search (started by kernel_insert, sm_idle, and preempt_done) repeats iterations of
//    ceil(N / P) scan cycles plus one decision cycle, N = max(NumSms, NumSlots), P = EntriesPerCycle.
//    At P = 1 this is Tanasic's serial scan (3.4: "This operation takes as many cycles as SMs"): N + 1
//    cycles per iteration; at P = N a comparator tree over every entry: 2 cycles.
//  - Scan cycle c looks at entries c*P .. c*P + P - 1 (lanes 0 .. P-1; entries past N are ignored),
//    KSRT entry i and SMST entry i in parallel, and updates three candidates: ksr_max (most tokens
//    among kernels with thread blocks left), ksr_min (fewest tokens among kernels holding a running
//    SM, with that kernel's lowest running SM) and the lowest idle SM. Ties go to the lowest index.
//  - The parallel search: a tournament tree (the grant tree of rtl/leaky_bucket.sv, three comparisons
//    per node) over the registered candidates (leaf 0: the entries of earlier scan cycles) and the P
//    lanes (leaves 1 .. P). Each candidate is a maximum or minimum over a key that ends in the index
//    (ksr_max: tokens, then lower slot; ksr_min: tokens, then lower slot, then lower SM; idle: lower
//    SM), and a node takes its right (higher-index) child only when that is strictly better, so the
//    tree computes exactly what the serial scan computes over the same entries in index order: the same
//    decisions for every P, only sooner. At P = 1 the tree is one node: the serial scan's compare.
//  - Decision cycle: (1) idle SM and ksr_max: assign it, tokens[max]--; (2) else, when
//    tokens[max] > tokens[min] + 1: reserve min's SM for max, tokens[min]++, tokens[max]--; (3) else
//    stop. The outputs are Mealy (decision outputs in the decision cycle, from the registered state),
//    and the table writes are visible from the next cycle.
//  - Insert tokens are clamped to [-2^(TokenW-1) + NumSms, 2^(TokenW-1) - 1]: a kernel holds at most
//    NumSms SMs and tokens + SMs held is constant, so no counter can overflow (no saturating adders).
//
// Encodings: the event kinds and SM states come from rtl/dss_pkg.sv, which the properties and the C++
// reference (through the generated dss_encoding.h) share. The KSRT and SMST are arrays of entries,
// each read and written whole through a packed struct (ksrt_entry_t, smst_entry_t): no field is
// sliced out of a bus by hand except at the read ports. Written for what yosys 0.23 (synthesis and
// formal) reads correctly: it takes a package's constants but not its types (fields are
// `logic [dss_pkg::SmStateW-1:0]`); it silently drops the outer dimension of an array of structs,
// packed or unpacked, and misreads `table[i].field`, so a table is an unpacked array of entry-wide
// words (flip-flops by mem2reg) and an entry is copied into a struct variable before its fields are
// used; it has no multi-dimensional packed ports, so the read ports stay one flat bus per field
// (entry i at bits [i*W +: W]).

module dss_token_policy #(
  /// N_SM: SMST entries (13 in Tanasic's K20c). The search takes ceil(max(NumSms, NumSlots) /
  /// EntriesPerCycle) + 1 cycles per iteration.
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
  /// P: table entries compared per scan cycle, 1 .. max(NumSms, NumSlots). 1 is Tanasic's serial
  /// scan (one entry per cycle through an N:1 multiplexer: least area, N + 1 cycles per decision);
  /// larger P trades area (P lanes, each reading its SM's kernel's tokens through a NumSlots:1
  /// multiplexer, and a comparator tree over P + 1 leaves) for latency (ceil(N / P) + 1 cycles). The
  /// decisions are the same for every P (DssReference::Config::entries_per_cycle).
  parameter int unsigned EntriesPerCycle = 1,
  /// Scan length: table entries one iteration looks at.
  localparam int unsigned ScanLen = (NumSms > NumSlots) ? NumSms : NumSlots,
  /// Scan cycles of one iteration before its decision cycle: ceil(ScanLen / EntriesPerCycle).
  localparam int unsigned ScanCycles = (ScanLen + EntriesPerCycle - 1) / EntriesPerCycle,
  localparam int unsigned SmW = (NumSms > 1) ? $clog2(NumSms) : 1,
  localparam int unsigned SlotW = (NumSlots > 1) ? $clog2(NumSlots) : 1,
  localparam int unsigned IdxW = (ScanLen > 1) ? $clog2(ScanLen) : 1,
  localparam int unsigned CycW = (ScanCycles > 1) ? $clog2(ScanCycles) : 1
) (
  input  logic                       clk_i,
  // Lint waiver (SYNCASYNCNET): the assertions' `disable iff (!rst_ni)` reads the reset outside a
  // flop, which Verilator counts as a synchronous use; every register resets asynchronously.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                       rst_ni,
  /* verilator lint_on SYNCASYNCNET */

  // Event of this cycle (at most one, always accepted).
  /// Event kind: dss_pkg::event_kind_e (EvNone when no event).
  input  logic [dss_pkg::EventKindW-1:0] event_kind_i,
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
  /// SMST: dss_pkg::sm_state_e (idle, running, reserved).
  output logic [NumSms*dss_pkg::SmStateW-1:0] sm_state_o,
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

  localparam int unsigned SmStateW = dss_pkg::SmStateW;

  localparam int TokenMaxI  = (1 << (TokenW - 1)) - 1;
  localparam int InsertMinI = -TokenMaxI - 1 + NumSms;
  localparam logic signed [InTokenW-1:0] InsertMinIn = InTokenW'(InsertMinI);
  localparam logic signed [InTokenW-1:0] InsertMaxIn = InTokenW'(TokenMaxI);
  localparam logic [TokenW-1:0] InsertMinTok = TokenW'(InsertMinI);
  localparam logic [TokenW-1:0] InsertMaxTok = TokenW'(TokenMaxI);

  localparam logic [IdxW:0] NumSmsIdx   = (IdxW + 1)'(NumSms);
  localparam logic [IdxW:0] NumSlotsIdx = (IdxW + 1)'(NumSlots);
  localparam logic [CycW-1:0] LastCycle = CycW'(ScanCycles - 1);

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

  // KSRT entry
  typedef struct packed {
    logic              valid;    // holds a kernel
    logic [TokenW-1:0] tokens;   // signed token count
    logic              has_tbs;  // the kernel has thread blocks to issue
  } ksrt_entry_t;

  // SMST entry
  typedef struct packed {
    logic [SmStateW-1:0] state;         // dss_pkg::sm_state_e
    logic                kernel_valid;  // running: its kernel; reserved: the kernel being preempted
    logic [SlotW-1:0]    kernel;
    logic                next_valid;    // reserved: the kernel the SM is reserved for
    logic [SlotW-1:0]    next;
  } smst_entry_t;

  // Entry widths ($bits of the structs, which yosys 0.23 cannot evaluate; Verilator's WIDTH lint
  // checks every assignment between the two).
  localparam int unsigned KsrtEntryW = TokenW + 2;
  localparam int unsigned SmstEntryW = SmStateW + 2 * SlotW + 2;

  (* mem2reg *) logic [KsrtEntryW-1:0] ksrt_q [NumSlots];
  (* mem2reg *) logic [KsrtEntryW-1:0] ksrt_d [NumSlots];
  (* mem2reg *) logic [SmstEntryW-1:0] smst_q [NumSms];
  (* mem2reg *) logic [SmstEntryW-1:0] smst_d [NumSms];

  // Search registers of the current iteration. scan_idx_q is the scan cycle: the entries of cycle c
  // are c*P .. c*P + P - 1 (at P = 1 it is the entry index of the serial scan).
  logic [CycW-1:0]   scan_idx_q, scan_idx_d;
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
  smst_entry_t       ev_sm_entry;    // the SMST entry of the event's SM
  logic [TokenW-1:0] insert_tokens;
  logic              idle_returns;   // sm_idle gives the SM's token back to a kernel
  logic [SlotW-1:0]  idle_return_slot;
  // Lint waiver (UNUSEDSIGNAL): an entry is read whole and only some of its fields are used.
  /* verilator lint_off UNUSEDSIGNAL */
  ksrt_entry_t       idle_return_entry;
  /* verilator lint_on UNUSEDSIGNAL */

  assign event_valid       = event_kind_i != dss_pkg::EvNone;
  assign ev_slot           = event_index_i[SlotW-1:0];
  assign ev_sm             = event_index_i[SmW-1:0];
  assign ev_sm_entry       = smst_q[ev_sm];

  // A running SM returns its token to its kernel (if still valid), a reserved SM to its next kernel.
  assign idle_returns      = (ev_sm_entry.state == dss_pkg::SmRunning && ev_sm_entry.kernel_valid) ||
                             (ev_sm_entry.state == dss_pkg::SmReserved && ev_sm_entry.next_valid);
  assign idle_return_slot  = (ev_sm_entry.state == dss_pkg::SmRunning) ? ev_sm_entry.kernel
                                                                       : ev_sm_entry.next;
  assign idle_return_entry = ksrt_q[idle_return_slot];

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

  ///////////////////
  // Scan datapath //
  ///////////////////

  // The candidates of a set of entries: a node of the search tree.
  typedef struct packed {
    logic              max_valid;   // ksr_max: a kernel with thread blocks left
    logic [SlotW-1:0]  max_slot;
    logic [TokenW-1:0] max_tokens;
    logic              idle_valid;  // the lowest idle SM
    logic [SmW-1:0]    idle_sm;
    logic              min_valid;   // ksr_min: a kernel holding a running SM, and its lowest one
    logic [SlotW-1:0]  min_slot;
    logic [TokenW-1:0] min_tokens;
    logic [SmW-1:0]    min_sm;
  } cand_t;

  localparam int unsigned CandW = 3 + 2 * SlotW + 2 * TokenW + 2 * SmW;

  // Lanes: lane k reads entry c*P + k in scan cycle c. Its entries are wired into a column of
  // ScanCycles words, read at the scan cycle, so a lane's multiplexer has ceil(N / P) inputs (none
  // at P = N) rather than N. Columns are plain words (yosys 0.23 takes no struct variables in
  // generate loops); an entry past the end of a table reads a copy of another entry, which the lane's
  // has_slot / has_sm bits mask. The lane words are concatenated (lane k at bits [k*W +: W]).
  logic [EntriesPerCycle*KsrtEntryW-1:0] lane_ksrt;
  logic [EntriesPerCycle*SmstEntryW-1:0] lane_smst;

  for (genvar k = 0; k < EntriesPerCycle; k++) begin : g_lane
    (* mem2reg *) logic [KsrtEntryW-1:0] ksrt_col [ScanCycles];
    (* mem2reg *) logic [SmstEntryW-1:0] smst_col [ScanCycles];
    always_comb begin
      for (int unsigned c = 0; c < ScanCycles; c++) begin
        ksrt_col[c] = ksrt_q[(c * EntriesPerCycle + k) % NumSlots];
        smst_col[c] = smst_q[(c * EntriesPerCycle + k) % NumSms];
      end
    end
    assign lane_ksrt[k*KsrtEntryW +: KsrtEntryW] = ksrt_col[scan_idx_q];
    assign lane_smst[k*SmstEntryW +: SmstEntryW] = smst_col[scan_idx_q];
  end

  // The tree (heap order: node n has children 2n+1 and 2n+2; leaf l is node Leaves-1+l, so the
  // leaves run left to right in index order): leaf 0 holds the registered candidates (the entries
  // of the earlier scan cycles of this iteration), leaves 1 .. P the lanes, the rest padding.
  localparam int unsigned Leaves = 1 << $clog2(EntriesPerCycle + 1);
  localparam int unsigned Nodes  = 2 * Leaves - 1;

  (* mem2reg *) logic [CandW-1:0] node [Nodes];

  logic [IdxW:0]     lane_idx;  // the entry lane l looks at
  logic              lane_has_slot, lane_has_sm;
  // Lint waiver (UNUSEDSIGNAL): entries are read whole and only some of their fields are used.
  /* verilator lint_off UNUSEDSIGNAL */
  ksrt_entry_t       lane_slot_entry;
  smst_entry_t       lane_sm_entry;
  ksrt_entry_t       lane_kernel_entry;  // the KSRT entry of the lane's SM's kernel
  /* verilator lint_on UNUSEDSIGNAL */
  cand_t             leaf, left, right, parent;
  logic signed [TokenW-1:0] left_max, right_max, left_min, right_min;

  always_comb begin
    lane_idx          = '0;
    lane_has_slot     = 1'b0;
    lane_has_sm       = 1'b0;
    lane_slot_entry   = '0;
    lane_sm_entry     = '0;
    lane_kernel_entry = '0;
    left              = '0;
    right             = '0;
    parent            = '0;
    left_max          = '0;
    right_max         = '0;
    left_min          = '0;
    right_min         = '0;
    // Leaf 0: the candidates so far. In a one-cycle scan they are always the cleared ones (the
    // scan cycle follows the clear at once), so the constant lets synthesis drop that merge.
    leaf = '0;
    if (ScanCycles > 1) begin
      leaf.max_valid  = max_valid_q;
      leaf.max_slot   = max_slot_q;
      leaf.max_tokens = max_tokens_q;
      leaf.idle_valid = idle_valid_q;
      leaf.idle_sm    = idle_sm_q;
      leaf.min_valid  = min_valid_q;
      leaf.min_slot   = min_slot_q;
      leaf.min_tokens = min_tokens_q;
      leaf.min_sm     = min_sm_q;
    end
    node[Leaves-1] = leaf;
    // Leaves 1 .. P: the lanes, each one entry's candidates (the serial scan's take conditions with
    // no candidate so far).
    for (int unsigned l = 0; l < EntriesPerCycle; l++) begin
      lane_idx          = (IdxW + 1)'(scan_idx_q) * (IdxW + 1)'(EntriesPerCycle) + (IdxW + 1)'(l);
      lane_has_slot     = lane_idx < NumSlotsIdx;
      lane_has_sm       = lane_idx < NumSmsIdx;
      lane_slot_entry   = lane_ksrt[l*KsrtEntryW +: KsrtEntryW];
      lane_sm_entry     = lane_smst[l*SmstEntryW +: SmstEntryW];
      lane_kernel_entry = ksrt_q[lane_sm_entry.kernel];
      leaf            = '0;
      leaf.max_valid  = lane_has_slot && lane_slot_entry.valid && lane_slot_entry.has_tbs;
      leaf.max_slot   = lane_idx[SlotW-1:0];
      leaf.max_tokens = lane_slot_entry.tokens;
      leaf.idle_valid = lane_has_sm && lane_sm_entry.state == dss_pkg::SmIdle;
      leaf.idle_sm    = lane_idx[SmW-1:0];
      leaf.min_valid  = lane_has_sm && lane_sm_entry.state == dss_pkg::SmRunning &&
                        lane_sm_entry.kernel_valid;
      leaf.min_slot   = lane_sm_entry.kernel;
      leaf.min_tokens = lane_kernel_entry.tokens;
      leaf.min_sm     = lane_idx[SmW-1:0];
      node[Leaves+l]  = leaf;
    end
    for (int unsigned l = EntriesPerCycle + 1; l < Leaves; l++) begin
      node[Leaves-1+l] = '0;
    end
    // Bottom up: a node's children are set before it. The right child (higher indices) wins only
    // when strictly better, so ties keep the lower index, as in the serial scan.
    for (int n = Leaves - 2; n >= 0; n--) begin
      left      = node[2*n+1];
      right     = node[2*n+2];
      left_max  = left.max_tokens;
      right_max = right.max_tokens;
      left_min  = left.min_tokens;
      right_min = right.min_tokens;
      parent    = left;
      // ksr_max: strictly more tokens.
      if (right.max_valid && (!left.max_valid || right_max > left_max)) begin
        parent.max_valid  = 1'b1;
        parent.max_slot   = right.max_slot;
        parent.max_tokens = right.max_tokens;
      end
      // Lowest idle SM.
      if (right.idle_valid && !left.idle_valid) begin
        parent.idle_valid = 1'b1;
        parent.idle_sm    = right.idle_sm;
      end
      // ksr_min: fewer tokens, or as many in a lower slot. The first SM of the final ksr_min sets
      // min_sm and no later SM of the same slot displaces it.
      if (right.min_valid &&
          (!left.min_valid || right_min < left_min ||
           (right_min == left_min && right.min_slot < left.min_slot))) begin
        parent.min_valid  = 1'b1;
        parent.min_slot   = right.min_slot;
        parent.min_tokens = right.min_tokens;
        parent.min_sm     = right.min_sm;
      end
      node[n] = parent;
    end
  end

  cand_t scan_result;  // the candidates after this scan cycle
  assign scan_result = node[0];

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

  assign ev_insert      = event_kind_i == dss_pkg::EvKernelInsert;
  assign ev_finish      = event_kind_i == dss_pkg::EvKernelFinish;
  assign ev_idle        = event_kind_i == dss_pkg::EvSmIdle;
  assign ev_preempt     = event_kind_i == dss_pkg::EvPreemptDone;
  assign ev_has_tbs     = event_kind_i == dss_pkg::EvHasTbs;
  // An event cycle does no search work.
  assign scan_cycle     = !event_valid && phase_q == PhaseScan;
  assign decide_cycle   = !event_valid && phase_q == PhaseDecide;
  assign decide_assign  = decide_cycle && rule_assign;
  assign decide_reserve = decide_cycle && rule_reserve;

  // Tanasic's two events start a search (kernel inserted, SM became idle, incl. a preempt_done that
  // leaves the SM idle); every preempt_done does with StartOnPreemptDone.
  assign start_search = ev_insert || ev_idle ||
                        (ev_preempt && (StartOnPreemptDone || !ev_sm_entry.next_valid));
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
      // The tree's root: unchanged where this cycle's entries are not better (leaf 0 wins ties).
      max_valid_d  = scan_result.max_valid;
      max_slot_d   = scan_result.max_slot;
      max_tokens_d = scan_result.max_tokens;
      idle_valid_d = scan_result.idle_valid;
      idle_sm_d    = scan_result.idle_sm;
      min_valid_d  = scan_result.min_valid;
      min_slot_d   = scan_result.min_slot;
      min_tokens_d = scan_result.min_tokens;
      min_sm_d     = scan_result.min_sm;
      scan_idx_d   = scan_idx_q + CycW'(1);
      if (scan_idx_q == LastCycle) begin
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
  assign idle_return_inc = idle_return_entry.tokens + TokenW'(1);
  assign max_tokens_dec  = max_tokens_q - TokenW'(1);
  assign min_tokens_inc  = min_tokens_q + TokenW'(1);

  ksrt_entry_t ksrt_entry;  // entry i, read whole and rewritten (see the header on yosys)

  always_comb begin
    ksrt_entry = '0;
    for (int unsigned i = 0; i < NumSlots; i++) begin
      ksrt_entry = ksrt_q[i];
      if (ev_slot == SlotW'(i)) begin
        if (ev_insert) begin
          ksrt_entry.valid   = 1'b1;
          ksrt_entry.tokens  = insert_tokens;
          ksrt_entry.has_tbs = 1'b1;
        end
        if (ev_finish) begin
          ksrt_entry = '0;
        end
        if (ev_has_tbs) begin
          ksrt_entry.has_tbs = event_flag_i;
        end
      end
      // sm_idle returns the SM's token.
      if (ev_idle && idle_returns && idle_return_slot == SlotW'(i)) begin
        ksrt_entry.tokens = idle_return_inc;
      end
      // Both rules take a token from ksr_max; a reservation gives one back to ksr_min (another
      // entry: its count is lower by more than one).
      if ((decide_assign || decide_reserve) && max_slot_q == SlotW'(i)) begin
        ksrt_entry.tokens = max_tokens_dec;
      end
      if (decide_reserve && min_slot_q == SlotW'(i)) begin
        ksrt_entry.tokens = min_tokens_inc;
      end
      ksrt_d[i] = ksrt_entry;
    end
  end

  ///////////////////////////////
  // SMST: per-entry next state //
  ///////////////////////////////

  smst_entry_t smst_cur, smst_entry;  // entry j as registered, and rewritten

  always_comb begin
    smst_cur   = '0;
    smst_entry = '0;
    for (int unsigned j = 0; j < NumSms; j++) begin
      smst_cur   = smst_q[j];
      smst_entry = smst_cur;
      // kernel_finish: SMs still running (or being preempted from) the kernel keep their state
      // without it until sm_idle; SMs reserved for it lose their next kernel.
      if (ev_finish) begin
        if (smst_cur.kernel_valid && smst_cur.kernel == ev_slot) begin
          smst_entry.kernel_valid = 1'b0;
        end
        if (smst_cur.next_valid && smst_cur.next == ev_slot) begin
          smst_entry.next_valid = 1'b0;
        end
      end
      if (ev_sm == SmW'(j)) begin
        if (ev_idle) begin
          smst_entry       = '0;
          smst_entry.state = dss_pkg::SmIdle;
        end
        // preempt_done: with a next kernel the SM now runs it (its token is already counted
        // there); without one it becomes idle.
        if (ev_preempt) begin
          smst_entry.state        = smst_cur.next_valid ? dss_pkg::SmRunning : dss_pkg::SmIdle;
          smst_entry.kernel_valid = smst_cur.next_valid;
          smst_entry.kernel       = smst_cur.next_valid ? smst_cur.next : '0;
          smst_entry.next_valid   = 1'b0;
          smst_entry.next         = '0;
        end
      end
      if (decide_assign && idle_sm_q == SmW'(j)) begin
        smst_entry.state        = dss_pkg::SmRunning;
        smst_entry.kernel_valid = 1'b1;
        smst_entry.kernel       = max_slot_q;
        smst_entry.next_valid   = 1'b0;
        smst_entry.next         = '0;
      end
      if (decide_reserve && min_sm_q == SmW'(j)) begin
        smst_entry.state      = dss_pkg::SmReserved;
        smst_entry.next_valid = 1'b1;
        smst_entry.next       = max_slot_q;
      end
      smst_d[j] = smst_entry;
    end
  end

  assign busy_o = phase_q != PhaseIdle;

  ///////////////
  // Registers //
  ///////////////

  // The tables, one always_ff per entry (Verilator 5.006 does not unroll non-blocking writes to an
  // array in a for loop of 132 entries).
  for (genvar i = 0; i < NumSlots; i++) begin : g_ksrt_reg
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        ksrt_q[i] <= '0;
      end else begin
        ksrt_q[i] <= ksrt_d[i];
      end
    end
  end

  for (genvar j = 0; j < NumSms; j++) begin : g_smst_reg
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        smst_q[j] <= '0;
      end else begin
        smst_q[j] <= smst_d[j];
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      phase_q           <= PhaseIdle;
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

  // Read ports: one flat bus per field (yosys 0.23 has no multi-dimensional packed ports); the
  // only place the tables are sliced.
  ksrt_entry_t ksrt_port;
  smst_entry_t smst_port;

  always_comb begin
    ksrt_port = '0;
    for (int unsigned i = 0; i < NumSlots; i++) begin
      ksrt_port                         = ksrt_q[i];
      slot_valid_o[i]                   = ksrt_port.valid;
      slot_tokens_o[i*TokenW +: TokenW] = ksrt_port.tokens;
      slot_has_tbs_o[i]                 = ksrt_port.has_tbs;
    end
  end

  always_comb begin
    smst_port = '0;
    for (int unsigned j = 0; j < NumSms; j++) begin
      smst_port                          = smst_q[j];
      sm_state_o[j*SmStateW +: SmStateW] = smst_port.state;
      sm_kernel_valid_o[j]               = smst_port.kernel_valid;
      sm_kernel_o[j*SlotW +: SlotW]      = smst_port.kernel;
      sm_next_valid_o[j]                 = smst_port.next_valid;
      sm_next_o[j*SlotW +: SlotW]        = smst_port.next;
    end
  end

  ////////////////
  // Assertions //
  ////////////////

`ifndef SYNTHESIS
  // Parameters: the debt of a kernel holding every SM must fit in a token counter.
  initial begin
    ParamTokenW_A: assert (TokenW >= 2 && TokenW <= 31 && NumSms <= TokenMaxI && InTokenW >= TokenW)
      else $fatal(1, "dss_token_policy: TokenW=%0d cannot count the debt of %0d SMs", TokenW, NumSms);
    ParamEntriesPerCycle_A: assert (EntriesPerCycle >= 1 && EntriesPerCycle <= ScanLen)
      else $fatal(1, "dss_token_policy: EntriesPerCycle=%0d outside 1..%0d", EntriesPerCycle, ScanLen);
  end

  // Event protocol (the reference model throws std::invalid_argument on these).
  logic        ev_names_slot, ev_needs_kernel, ev_names_sm;
  // Lint waiver (UNUSEDSIGNAL): entries are read whole and only some of their fields are used.
  /* verilator lint_off UNUSEDSIGNAL */
  ksrt_entry_t ev_slot_entry;
  smst_entry_t assign_entry, reserve_entry;
  /* verilator lint_on UNUSEDSIGNAL */
  assign ev_names_slot   = ev_insert || ev_finish || ev_has_tbs;
  assign ev_needs_kernel = ev_finish || ev_has_tbs;
  assign ev_names_sm     = ev_idle || ev_preempt;
  assign ev_slot_entry   = ksrt_q[ev_slot];
  assign assign_entry    = smst_q[assign_sm_o];
  assign reserve_entry   = smst_q[reserve_sm_o];

  EventKind_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      event_kind_i <= dss_pkg::EvHasTbs)
    else $error("dss_token_policy: unknown event kind %0d", event_kind_i);
  SlotIndex_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !ev_names_slot || {1'b0, event_index_i} < NumSlotsIdx)
    else $error("dss_token_policy: no KSRT entry %0d", event_index_i);
  SmIndex_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !ev_names_sm || {1'b0, event_index_i} < NumSmsIdx)
    else $error("dss_token_policy: no SM %0d", event_index_i);
  InsertFreeSlot_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !ev_insert || !ev_slot_entry.valid)
    else $error("dss_token_policy: kernel_insert into busy KSRT entry %0d", ev_slot);
  SlotHoldsKernel_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !ev_needs_kernel || ev_slot_entry.valid)
    else $error("dss_token_policy: event for empty KSRT entry %0d", ev_slot);
  PreemptReserved_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !ev_preempt || ev_sm_entry.state == dss_pkg::SmReserved)
    else $error("dss_token_policy: preempt_done of SM %0d, which is not reserved", ev_sm);

  // A decision only ever writes an SM in the state its rule requires, and one per cycle.
  AssignIdleSm_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !assign_valid_o || assign_entry.state == dss_pkg::SmIdle);
  ReserveRunningSm_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !reserve_valid_o || reserve_entry.state == dss_pkg::SmRunning);
  OneDecision_A: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !(assign_valid_o && reserve_valid_o));
`endif

endmodule
