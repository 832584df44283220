// Formal harness: rtl/leaky_bucket.sv with its window property (leaky_bucket_props). Shares is a
// parameter (share of kernel k in bits [4k +: 4]; scripts/rtl-formal checks several); after reset the
// harness configures bucket k with rate s_k and capacity S = sum of the shares (the `leaky-bucket`
// policy's encoding), one bucket per cycle; from then on advance_i is a free input.

module leaky_bucket_formal #(
  parameter int unsigned NumKernels = 2,
  /// Share of kernel k in bits [4k +: 4] (0x31: kernel 0 gets 1, kernel 1 gets 3).
  parameter int unsigned Shares = 32'h31,
  parameter int unsigned Window = 8,
  parameter int unsigned MaxDeviation = 1,
  parameter int unsigned LevelW = 6,
  localparam int unsigned KernelW = (NumKernels > 1) ? $clog2(NumKernels) : 1
) (
  input logic clk_i,
  input logic advance_i
);
  localparam int unsigned ShareW = 4;
  logic [NumKernels*ShareW-1:0] shares;
  assign shares = Shares[NumKernels*ShareW-1:0];

  logic [7:0] step_q = 8'd0;  // 0: reset; 1 .. NumKernels: configure; then run
  always_ff @(posedge clk_i) begin
    if (step_q != 8'hff) step_q <= step_q + 8'd1;
  end
  logic rst_n, configuring, started;
  assign rst_n       = step_q != 8'd0;
  assign configuring = rst_n && 32'(step_q) <= NumKernels;
  assign started     = 32'(step_q) > NumKernels;

  logic [LevelW-1:0] capacity;
  logic [KernelW-1:0] cfg_kernel;
  always_comb begin
    capacity = '0;
    for (int unsigned k = 0; k < NumKernels; k++) begin
      capacity = capacity + LevelW'(shares[k*ShareW +: ShareW]);
    end
    cfg_kernel = KernelW'(step_q - 8'd1);
  end

  logic                         grant_valid;
  logic [KernelW-1:0]           grant_kernel;
  logic [NumKernels-1:0]        active;
  logic [NumKernels*LevelW-1:0] level;

  leaky_bucket #(.NumKernels(NumKernels), .LevelW(LevelW)) u_dut (
    .clk_i, .rst_ni(rst_n),
    .advance_i(started && advance_i),
    .cfg_valid_i(configuring), .cfg_kernel_i(cfg_kernel), .cfg_active_i(1'b1), .cfg_clear_i(1'b1),
    .cfg_capacity_i(capacity),
    .cfg_rate_i(LevelW'(shares[cfg_kernel*ShareW +: ShareW])),
    .grant_valid_o(grant_valid), .grant_kernel_o(grant_kernel), .active_o(active), .level_o(level)
  );

  leaky_bucket_props #(
    .NumKernels(NumKernels), .ShareW(ShareW), .Window(Window), .MaxDeviation(MaxDeviation)
  ) u_props (
    .clk_i, .rst_ni(rst_n), .started_i(started), .shares_i(shares), .advance_i(started && advance_i),
    .grant_valid_o(grant_valid), .grant_kernel_o(grant_kernel)
  );
endmodule
