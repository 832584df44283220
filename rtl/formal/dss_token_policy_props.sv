// dss_token_policy_props: the formal properties of rtl/dss_token_policy.sv, kept apart from the
// design and written in the subset yosys 0.23 reads with -formal (immediate assert / assume in
// always blocks, no $past: the module keeps its own registered copies). It observes only the
// block's ports: events, decisions and the KSRT / SMST read ports. rtl/formal/dss_token_policy_formal.sv
// instantiates it beside the design (yosys 0.23 does not implement `bind`); scripts/rtl-formal proves
// or bounded-model-checks it with yosys-smtbmc.
//
// Encodings: the event kinds and SM states of rtl/dss_pkg.sv (the package the design and the C++
// reference share); the tables are observed at the design's read ports, one flat bus per field.
//
// Assumptions: the event protocol of DssReference (valid indices, insert into a free KSRT entry,
// finish / has_tbs of a valid one, preempt_done of a reserved SM). Insert tokens are unconstrained.
//
// Properties:
//  - NoDoubleAssign: a decision assigns only an idle SM and reserves only a running SM (so an SM is
//    never assigned or reserved twice), at most one decision per cycle, and it names a kernel that
//    holds a KSRT entry and has thread blocks.
//  - TokensConserved: for every valid KSRT entry, tokens + SMs held (running it, or reserved with it
//    as next) == tokens given at insert (after clamping); a reservation leaves the sum of all token
//    counts unchanged and an assignment lowers it by exactly one; counts stay in range.
//  - TablesConsistent: an SM's kernel / next field names a KSRT entry holding a kernel; an idle SM
//    has neither, a running SM no next (DssReference::check_invariants).
//  - SearchBounded: a decision comes exactly ScanCycles = ceil(ScanLen / EntriesPerCycle) cycles
//    after its iteration started (a full scan, P entries per cycle), and an iteration ends (decision
//    or stop) within ScanCycles + 1 cycles.

module dss_token_policy_props #(
  parameter int unsigned NumSms = 3,
  parameter int unsigned NumSlots = 2,
  parameter int unsigned TokenW = 4,
  parameter int unsigned InTokenW = 32,
  /// The design's EntriesPerCycle (P): a scan takes ceil(ScanLen / P) cycles.
  parameter int unsigned EntriesPerCycle = 1,
  localparam int unsigned ScanLen = (NumSms > NumSlots) ? NumSms : NumSlots,
  localparam int unsigned ScanCycles = (ScanLen + EntriesPerCycle - 1) / EntriesPerCycle,
  localparam int unsigned SmW = (NumSms > 1) ? $clog2(NumSms) : 1,
  localparam int unsigned SlotW = (NumSlots > 1) ? $clog2(NumSlots) : 1,
  localparam int unsigned IdxW = (ScanLen > 1) ? $clog2(ScanLen) : 1,
  localparam int unsigned SumW = TokenW + 8,
  localparam int unsigned SmStateW = dss_pkg::SmStateW
) (
  input logic                       clk_i,
  input logic                       rst_ni,
  input logic [dss_pkg::EventKindW-1:0] event_kind_i,
  input logic [IdxW-1:0]            event_index_i,
  input logic signed [InTokenW-1:0] event_tokens_i,
  input logic                       assign_valid_o,
  input logic [SmW-1:0]             assign_sm_o,
  input logic [SlotW-1:0]           assign_slot_o,
  input logic                       reserve_valid_o,
  input logic [SmW-1:0]             reserve_sm_o,
  input logic [SlotW-1:0]           reserve_next_o,
  input logic                       busy_o,
  input logic [NumSlots-1:0]        slot_valid_o,
  input logic [NumSlots*TokenW-1:0] slot_tokens_o,
  input logic [NumSlots-1:0]        slot_has_tbs_o,
  input logic [NumSms*SmStateW-1:0] sm_state_o,
  input logic [NumSms-1:0]          sm_kernel_valid_o,
  input logic [NumSms*SlotW-1:0]    sm_kernel_o,
  input logic [NumSms-1:0]          sm_next_valid_o,
  input logic [NumSms*SlotW-1:0]    sm_next_o
);

  localparam int TokenMaxI  = (1 << (TokenW - 1)) - 1;
  localparam int InsertMinI = -TokenMaxI - 1 + NumSms;

  /////////////////
  // Observation //
  /////////////////

  logic [SlotW-1:0] ev_slot;
  logic [SmW-1:0]   ev_sm;
  assign ev_slot = event_index_i[SlotW-1:0];
  assign ev_sm   = event_index_i[SmW-1:0];

  // Tokens given at insert, clamped as the design does; sums over the tables.
  logic signed [TokenW-1:0] insert_tokens;
  logic [NumSlots*SumW-1:0] held;  // SMs held per KSRT entry
  logic signed [SumW-1:0]   token_sum;
  logic [SmStateW-1:0]      assign_target_state, reserve_target_state;

  always_comb begin
    if (event_tokens_i < InTokenW'(InsertMinI)) begin
      insert_tokens = TokenW'(InsertMinI);
    end else if (event_tokens_i > InTokenW'(TokenMaxI)) begin
      insert_tokens = TokenW'(TokenMaxI);
    end else begin
      insert_tokens = event_tokens_i[TokenW-1:0];
    end
  end

  always_comb begin
    token_sum = '0;
    held = '0;
    for (int unsigned k = 0; k < NumSlots; k++) begin
      for (int unsigned j = 0; j < NumSms; j++) begin
        if ((sm_state_o[j*SmStateW +: SmStateW] == dss_pkg::SmRunning && sm_kernel_valid_o[j] &&
             sm_kernel_o[j*SlotW +: SlotW] == SlotW'(k)) ||
            (sm_state_o[j*SmStateW +: SmStateW] == dss_pkg::SmReserved && sm_next_valid_o[j] &&
             sm_next_o[j*SlotW +: SlotW] == SlotW'(k))) begin
          held[k*SumW +: SumW] = held[k*SumW +: SumW] + SumW'(1);
        end
      end
      if (slot_valid_o[k]) begin
        token_sum = token_sum + SumW'($signed(slot_tokens_o[k*TokenW +: TokenW]));
      end
    end
    assign_target_state  = sm_state_o[assign_sm_o*SmStateW +: SmStateW];
    reserve_target_state = sm_state_o[reserve_sm_o*SmStateW +: SmStateW];
  end

  /////////////////
  // Assumptions //
  /////////////////

  always_comb begin
    if (rst_ni) begin
      EventKind_M: assume (event_kind_i <= dss_pkg::EvHasTbs);
      if (event_kind_i == dss_pkg::EvKernelInsert || event_kind_i == dss_pkg::EvKernelFinish || event_kind_i == dss_pkg::EvHasTbs) begin
        SlotIndex_M: assume (32'(event_index_i) < NumSlots);
      end
      if (event_kind_i == dss_pkg::EvSmIdle || event_kind_i == dss_pkg::EvPreemptDone) begin
        SmIndex_M: assume (32'(event_index_i) < NumSms);
      end
      if (event_kind_i == dss_pkg::EvKernelInsert) begin
        InsertFree_M: assume (!slot_valid_o[ev_slot]);
      end
      if (event_kind_i == dss_pkg::EvKernelFinish || event_kind_i == dss_pkg::EvHasTbs) begin
        SlotHolds_M: assume (slot_valid_o[ev_slot]);
      end
      if (event_kind_i == dss_pkg::EvPreemptDone) begin
        Reserved_M: assume (sm_state_o[ev_sm*SmStateW +: SmStateW] == dss_pkg::SmReserved);
      end
    end
  end

  ////////////////////////////
  // Shadow state (no $past) //
  ////////////////////////////

  logic [NumSlots*TokenW-1:0] granted_q;  // tokens given at insert, per KSRT entry
  logic                     past_valid_q;    // one cycle out of reset has passed
  logic                     past_assign_q, past_reserve_q;
  logic signed [SumW-1:0]   past_sum_q;
  logic [7:0]               iter_q;          // busy cycles of the current iteration before this one
  logic                     past_decide_stop_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      granted_q          <= '0;
      past_valid_q       <= 1'b0;
      past_assign_q      <= 1'b0;
      past_reserve_q     <= 1'b0;
      past_sum_q         <= '0;
      iter_q             <= '0;
      past_decide_stop_q <= 1'b0;
    end else begin
      if (event_kind_i == dss_pkg::EvKernelInsert) granted_q[ev_slot*TokenW +: TokenW] <= insert_tokens;
      past_valid_q   <= 1'b1;
      past_assign_q  <= assign_valid_o;
      past_reserve_q <= reserve_valid_o;
      past_sum_q     <= token_sum;
      // An event or a decision ends the iteration; the next busy cycle is scan index 0.
      if (event_kind_i != dss_pkg::EvNone || assign_valid_o || reserve_valid_o || !busy_o) begin
        iter_q <= '0;
      end else begin
        iter_q <= iter_q + 8'd1;
      end
      // A busy cycle after a full scan without an event or decision: the decision cycle that stops.
      past_decide_stop_q <= busy_o && event_kind_i == dss_pkg::EvNone && !assign_valid_o && !reserve_valid_o &&
                            32'(iter_q) == ScanCycles;
    end
  end

  ////////////////
  // Properties //
  ////////////////

  always @(posedge clk_i) begin
    if (rst_ni) begin
      // NoDoubleAssign
      OneDecision_A: assert (!(assign_valid_o && reserve_valid_o));
      if (assign_valid_o) begin
        AssignIdleSm_A: assert (32'(assign_sm_o) < NumSms && assign_target_state == dss_pkg::SmIdle);
        AssignKernel_A: assert (32'(assign_slot_o) < NumSlots && slot_valid_o[assign_slot_o] &&
                                slot_has_tbs_o[assign_slot_o]);
        AssignNoEvent_A: assert (event_kind_i == dss_pkg::EvNone);
      end
      if (reserve_valid_o) begin
        ReserveRunningSm_A: assert (32'(reserve_sm_o) < NumSms && reserve_target_state == dss_pkg::SmRunning);
        ReserveKernel_A: assert (32'(reserve_next_o) < NumSlots && slot_valid_o[reserve_next_o] &&
                                 slot_has_tbs_o[reserve_next_o]);
        ReserveNoEvent_A: assert (event_kind_i == dss_pkg::EvNone);
      end

      // TablesConsistent
      Consistent_A: assert (&consistent);

      // TokensConserved
      Conserved_A: assert (&conserved);
      if (past_valid_q && past_reserve_q) begin
        ReserveKeepsSum_A: assert (token_sum == past_sum_q);
      end
      if (past_valid_q && past_assign_q) begin
        AssignTakesOne_A: assert (token_sum == past_sum_q - SumW'(1));
      end

      // SearchBounded
      if (busy_o) begin
        IterationBounded_A: assert (32'(iter_q) <= ScanCycles);
      end
      if (assign_valid_o || reserve_valid_o) begin
        DecisionAfterFullScan_A: assert (32'(iter_q) == ScanCycles);
      end
      if (past_valid_q && past_decide_stop_q) begin
        StopsAfterDecideCycle_A: assert (!busy_o);
      end
    end
  end

  // Per SM: its kernel and next fields refer to valid KSRT entries; idle SMs have neither.
  logic [NumSms-1:0] consistent;
  for (genvar j = 0; j < NumSms; j++) begin : g_sm
    logic [SmStateW-1:0] state;
    logic [SlotW-1:0] kernel, next;
    assign state  = sm_state_o[j*SmStateW +: SmStateW];
    assign kernel = sm_kernel_o[j*SlotW +: SlotW];
    assign next   = sm_next_o[j*SlotW +: SlotW];
    assign consistent[j] = (state == dss_pkg::SmIdle || state == dss_pkg::SmRunning ||
                            state == dss_pkg::SmReserved) &&
        (!sm_kernel_valid_o[j] || (32'(kernel) < NumSlots && slot_valid_o[kernel])) &&
        (!sm_next_valid_o[j] || (32'(next) < NumSlots && slot_valid_o[next])) &&
        (state != dss_pkg::SmIdle || (!sm_kernel_valid_o[j] && !sm_next_valid_o[j])) &&
        (state != dss_pkg::SmRunning || !sm_next_valid_o[j]);
  end

  // Per KSRT entry: tokens + SMs held == tokens given at insert (entries without a kernel: vacuous).
  logic [NumSlots-1:0] conserved;
  for (genvar k = 0; k < NumSlots; k++) begin : g_slot
    logic signed [SumW-1:0] tokens_plus_held, granted;
    assign tokens_plus_held = SumW'($signed(slot_tokens_o[k*TokenW +: TokenW])) +
                              $signed(held[k*SumW +: SumW]);
    assign granted = SumW'($signed(granted_q[k*TokenW +: TokenW]));
    // ...and what was given lies in the clamped insert range, so no counter can overflow.
    assign conserved[k] = !slot_valid_o[k] ||
        (tokens_plus_held == granted && granted >= SumW'(InsertMinI) && granted <= SumW'(TokenMaxI));
  end

endmodule
