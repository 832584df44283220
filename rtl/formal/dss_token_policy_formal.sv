// Formal harness: rtl/dss_token_policy.sv with its properties (dss_token_policy_props) attached.
// yosys 0.23 does not implement `bind`, so this wrapper instantiates both; the design's inputs are
// the harness's free inputs, and reset is asserted in the first cycle only.

module dss_token_policy_formal #(
  parameter int unsigned NumSms = 3,
  parameter int unsigned NumSlots = 2,
  parameter int unsigned TokenW = 4,
  parameter bit StartOnPreemptDone = 1'b1,
  /// Entries the search compares per cycle (the design's EntriesPerCycle).
  parameter int unsigned EntriesPerCycle = 1,
  /// Insert token width: a few bits wider than TokenW covers clamping at both ends.
  parameter int unsigned InTokenW = 6,
  localparam int unsigned ScanLen = (NumSms > NumSlots) ? NumSms : NumSlots,
  localparam int unsigned IdxW = (ScanLen > 1) ? $clog2(ScanLen) : 1
) (
  input logic               clk_i,
  input logic [dss_pkg::EventKindW-1:0] event_kind_i,
  input logic [IdxW-1:0]    event_index_i,
  input logic signed [InTokenW-1:0] event_tokens_i,
  input logic               event_flag_i
);
  localparam int unsigned SmW = (NumSms > 1) ? $clog2(NumSms) : 1;
  localparam int unsigned SlotW = (NumSlots > 1) ? $clog2(NumSlots) : 1;

  // Reset in cycle 0, released from cycle 1 on.
  logic reset_done_q = 1'b0;
  always_ff @(posedge clk_i) reset_done_q <= 1'b1;
  logic rst_n;
  assign rst_n = reset_done_q;

  logic                       assign_valid, reserve_valid, busy;
  logic [SmW-1:0]             assign_sm, reserve_sm;
  logic [SlotW-1:0]           assign_slot, reserve_next;
  logic [NumSlots-1:0]        slot_valid, slot_has_tbs;
  logic [NumSlots*TokenW-1:0] slot_tokens;
  logic [NumSms*dss_pkg::SmStateW-1:0] sm_state;
  logic [NumSms-1:0]          sm_kernel_valid, sm_next_valid;
  logic [NumSms*SlotW-1:0]    sm_kernel, sm_next;

  dss_token_policy #(
    .NumSms(NumSms), .NumSlots(NumSlots), .TokenW(TokenW), .InTokenW(InTokenW),
    .StartOnPreemptDone(StartOnPreemptDone), .EntriesPerCycle(EntriesPerCycle)
  ) u_dut (
    .clk_i, .rst_ni(rst_n), .event_kind_i, .event_index_i, .event_tokens_i, .event_flag_i,
    .assign_valid_o(assign_valid), .assign_sm_o(assign_sm), .assign_slot_o(assign_slot),
    .reserve_valid_o(reserve_valid), .reserve_sm_o(reserve_sm), .reserve_next_o(reserve_next),
    .busy_o(busy), .slot_valid_o(slot_valid), .slot_tokens_o(slot_tokens),
    .slot_has_tbs_o(slot_has_tbs), .sm_state_o(sm_state), .sm_kernel_valid_o(sm_kernel_valid),
    .sm_kernel_o(sm_kernel), .sm_next_valid_o(sm_next_valid), .sm_next_o(sm_next)
  );

  dss_token_policy_props #(
    .NumSms(NumSms), .NumSlots(NumSlots), .TokenW(TokenW), .InTokenW(InTokenW),
    .EntriesPerCycle(EntriesPerCycle)
  ) u_props (
    .clk_i, .rst_ni(rst_n), .event_kind_i, .event_index_i, .event_tokens_i,
    .assign_valid_o(assign_valid), .assign_sm_o(assign_sm), .assign_slot_o(assign_slot),
    .reserve_valid_o(reserve_valid), .reserve_sm_o(reserve_sm), .reserve_next_o(reserve_next),
    .busy_o(busy), .slot_valid_o(slot_valid), .slot_tokens_o(slot_tokens),
    .slot_has_tbs_o(slot_has_tbs), .sm_state_o(sm_state), .sm_kernel_valid_o(sm_kernel_valid),
    .sm_kernel_o(sm_kernel), .sm_next_valid_o(sm_next_valid), .sm_next_o(sm_next)
  );
endmodule
