// dss_token_policy_tb: the top Verilator builds for the cross-checks and the co-simulation
// (testbench only, not synthesized). It is rtl/dss_token_policy.sv (instance `dut`) with the same
// ports and parameters, plus inputs that only carry testbench values into the waveform, beside the
// RTL's own signals:
//  - exp_*: what the C++ reference model (gpumux::DssReference) computed in the same cycle. The
//    decision outputs are set with the event (they line up with the RTL's Mealy outputs), the tables
//    with the rising edge (they line up with the RTL's registers after it).
//  - mismatch: 1 in a cycle where the RTL's outputs or tables differ from the reference's (set at the
//    cycle's rising edge; the cross-check and the co-simulation stop at the first one).
//  - model_time: co-simulation only, the SystemC model's time (ps) of the policy hook whose events
//    the RTL works on; the RTL's cycles sit on the model's time axis, so the time of a decision minus
//    model_time is the RTL's decision latency, which the model does not spend. 0 in the cross-checks.
// tb/rtl/dss_rtl.h drives them (DssRtl), tb/rtl/CMakeLists.txt builds one model per parameter set.

module dss_token_policy_tb #(
  parameter int unsigned NumSms = 13,
  parameter int unsigned NumSlots = 13,
  parameter int unsigned TokenW = 8,
  parameter int unsigned InTokenW = 32,
  parameter bit StartOnPreemptDone = 1'b1,
  parameter int unsigned EntriesPerCycle = 1,
  localparam int unsigned SmW = (NumSms > 1) ? $clog2(NumSms) : 1,
  localparam int unsigned SlotW = (NumSlots > 1) ? $clog2(NumSlots) : 1,
  localparam int unsigned ScanLen = (NumSms > NumSlots) ? NumSms : NumSlots,
  localparam int unsigned IdxW = (ScanLen > 1) ? $clog2(ScanLen) : 1
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  input  logic [dss_pkg::EventKindW-1:0] event_kind_i,
  input  logic [IdxW-1:0]            event_index_i,
  input  logic signed [InTokenW-1:0] event_tokens_i,
  input  logic                       event_flag_i,
  output logic                       assign_valid_o,
  output logic [SmW-1:0]             assign_sm_o,
  output logic [SlotW-1:0]           assign_slot_o,
  output logic                       reserve_valid_o,
  output logic [SmW-1:0]             reserve_sm_o,
  output logic [SlotW-1:0]           reserve_next_o,
  output logic                       busy_o,
  output logic [NumSlots-1:0]        slot_valid_o,
  output logic [NumSlots*TokenW-1:0] slot_tokens_o,
  output logic [NumSlots-1:0]        slot_has_tbs_o,
  output logic [NumSms*dss_pkg::SmStateW-1:0] sm_state_o,
  output logic [NumSms-1:0]          sm_kernel_valid_o,
  output logic [NumSms*SlotW-1:0]    sm_kernel_o,
  output logic [NumSms-1:0]          sm_next_valid_o,
  output logic [NumSms*SlotW-1:0]    sm_next_o,

  // Testbench values for the waveform; nothing reads them (lint waiver UNUSEDSIGNAL).
  /* verilator lint_off UNUSEDSIGNAL */
  /// The reference model's outputs in this cycle.
  input  logic                       exp_assign_valid,
  input  logic [SmW-1:0]             exp_assign_sm,
  input  logic [SlotW-1:0]           exp_assign_slot,
  input  logic                       exp_reserve_valid,
  input  logic [SmW-1:0]             exp_reserve_sm,
  input  logic [SlotW-1:0]           exp_reserve_next,
  input  logic                       exp_busy,
  /// The reference model's tables after the edge, laid out as the RTL's read ports.
  input  logic [NumSlots-1:0]        exp_slot_valid,
  input  logic [NumSlots*TokenW-1:0] exp_slot_tokens,
  input  logic [NumSlots-1:0]        exp_slot_has_tbs,
  input  logic [NumSms*dss_pkg::SmStateW-1:0] exp_sm_state,
  input  logic [NumSms-1:0]          exp_sm_kernel_valid,
  input  logic [NumSms*SlotW-1:0]    exp_sm_kernel,
  input  logic [NumSms-1:0]          exp_sm_next_valid,
  input  logic [NumSms*SlotW-1:0]    exp_sm_next,
  /// The RTL differs from the reference model in this cycle.
  input  logic                       mismatch,
  /// Co-simulation: the model's simulated time (ps) of the events this cycle works on.
  input  logic [63:0]                model_time
  /* verilator lint_on UNUSEDSIGNAL */
);

  dss_token_policy #(
    .NumSms            (NumSms),
    .NumSlots          (NumSlots),
    .TokenW            (TokenW),
    .InTokenW          (InTokenW),
    .StartOnPreemptDone(StartOnPreemptDone),
    .EntriesPerCycle   (EntriesPerCycle)
  ) dut (
    .clk_i,
    .rst_ni,
    .event_kind_i,
    .event_index_i,
    .event_tokens_i,
    .event_flag_i,
    .assign_valid_o,
    .assign_sm_o,
    .assign_slot_o,
    .reserve_valid_o,
    .reserve_sm_o,
    .reserve_next_o,
    .busy_o,
    .slot_valid_o,
    .slot_tokens_o,
    .slot_has_tbs_o,
    .sm_state_o,
    .sm_kernel_valid_o,
    .sm_kernel_o,
    .sm_next_valid_o,
    .sm_next_o
  );

  // The tables cut into one signal per entry, for the waveform only: the RTL's read ports and the
  // reference model's expected state and tokens beside them (the GTKWave save file written beside the
  // VCD, tb/rtl/rtl_gtkwave.h, shows them per SM and per KSRT entry; GTKWave cannot slice a vector).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [dss_pkg::SmStateW-1:0] smst_state        [NumSms];
  logic [dss_pkg::SmStateW-1:0] smst_exp_state    [NumSms];
  logic                         smst_kernel_valid [NumSms];
  logic [SlotW-1:0]             smst_kernel       [NumSms];
  logic                         smst_next_valid   [NumSms];
  logic [SlotW-1:0]             smst_next         [NumSms];
  logic                         ksrt_valid        [NumSlots];
  logic [TokenW-1:0]            ksrt_tokens       [NumSlots];
  logic [TokenW-1:0]            ksrt_exp_tokens   [NumSlots];
  logic                         ksrt_has_tbs      [NumSlots];
  /* verilator lint_on UNUSEDSIGNAL */

  always_comb begin
    for (int unsigned i = 0; i < NumSms; i++) begin
      smst_state[i]        = sm_state_o[i*dss_pkg::SmStateW +: dss_pkg::SmStateW];
      smst_exp_state[i]    = exp_sm_state[i*dss_pkg::SmStateW +: dss_pkg::SmStateW];
      smst_kernel_valid[i] = sm_kernel_valid_o[i];
      smst_kernel[i]       = sm_kernel_o[i*SlotW +: SlotW];
      smst_next_valid[i]   = sm_next_valid_o[i];
      smst_next[i]         = sm_next_o[i*SlotW +: SlotW];
    end
    for (int unsigned i = 0; i < NumSlots; i++) begin
      ksrt_valid[i]      = slot_valid_o[i];
      ksrt_tokens[i]     = slot_tokens_o[i*TokenW +: TokenW];
      ksrt_exp_tokens[i] = exp_slot_tokens[i*TokenW +: TokenW];
      ksrt_has_tbs[i]    = slot_has_tbs_o[i];
    end
  end

endmodule
