// leaky_bucket_tb: the top Verilator builds for the leaky-bucket cross-check (testbench only, not
// synthesized). It is rtl/leaky_bucket.sv (instance `dut`) with the same ports and parameters, plus
// inputs that only carry testbench values into the waveform, beside the RTL's own signals:
//  - exp_*: what the C++ reference model (gpumux::LeakyBucketReference) computed in the same cycle:
//    the grant (set with the inputs, in line with the RTL's Mealy grant) and the buckets' active bits
//    and levels (set with the rising edge, in line with the RTL's registers after it).
//  - mismatch: 1 in a cycle where the RTL differs from the reference (set at the cycle's rising edge;
//    the cross-check stops at the first one).
// tb/rtl/leaky_bucket_rtl.h drives them (LeakyBucketRtl).

module leaky_bucket_tb #(
  parameter int unsigned NumKernels = 4,
  parameter int unsigned LevelW = 24,
  localparam int unsigned KernelW = (NumKernels > 1) ? $clog2(NumKernels) : 1
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  input  logic                         advance_i,
  input  logic                         cfg_valid_i,
  input  logic [KernelW-1:0]           cfg_kernel_i,
  input  logic                         cfg_active_i,
  input  logic                         cfg_clear_i,
  input  logic [LevelW-1:0]            cfg_capacity_i,
  input  logic [LevelW-1:0]            cfg_rate_i,
  output logic                         grant_valid_o,
  output logic [KernelW-1:0]           grant_kernel_o,
  output logic [NumKernels-1:0]        active_o,
  output logic [NumKernels*LevelW-1:0] level_o,

  // Testbench values for the waveform; nothing reads them (lint waiver UNUSEDSIGNAL).
  /* verilator lint_off UNUSEDSIGNAL */
  /// The reference model's grant in this cycle.
  input  logic                         exp_grant_valid,
  input  logic [KernelW-1:0]           exp_grant_kernel,
  /// The reference model's buckets after the edge, laid out as the RTL's read ports.
  input  logic [NumKernels-1:0]        exp_active,
  input  logic [NumKernels*LevelW-1:0] exp_level,
  /// The RTL differs from the reference model in this cycle.
  input  logic                         mismatch
  /* verilator lint_on UNUSEDSIGNAL */
);

  leaky_bucket #(
    .NumKernels(NumKernels),
    .LevelW    (LevelW)
  ) dut (
    .clk_i,
    .rst_ni,
    .advance_i,
    .cfg_valid_i,
    .cfg_kernel_i,
    .cfg_active_i,
    .cfg_clear_i,
    .cfg_capacity_i,
    .cfg_rate_i,
    .grant_valid_o,
    .grant_kernel_o,
    .active_o,
    .level_o
  );

endmodule
