// leaky_bucket_props: the window property of rtl/leaky_bucket.sv (Liang 4.1: "any interval of
// successive allocations (after a startup period) will not vary from the desired allocation
// proportion by more than a single SM"), in the subset yosys 0.23 reads with -formal. It observes the
// grants and the asked shares; rtl/formal/leaky_bucket_formal.sv instantiates it beside the design.
//
// With shares s_k (rate s_k, capacity S = sum of the shares, as the simulator policy configures the
// buckets), for every window of the last w grants (w = 1 .. Window) after start-up, the number of
// grants c_k of each kernel satisfies |c_k - w * s_k / S| <= MaxDeviation, checked in integers as
// |c_k * S - w * s_k| <= MaxDeviation * S. Every cycle after start-up with advance_i has a grant.

module leaky_bucket_props #(
  parameter int unsigned NumKernels = 2,
  parameter int unsigned ShareW = 2,
  parameter int unsigned Window = 8,
  parameter int unsigned MaxDeviation = 1,
  localparam int unsigned KernelW = (NumKernels > 1) ? $clog2(NumKernels) : 1,
  localparam int unsigned CountW = 8
) (
  input logic                         clk_i,
  input logic                         rst_ni,
  /// The buckets are configured with `shares_i`; windows count grants from here on.
  input logic                         started_i,
  input logic [NumKernels*ShareW-1:0] shares_i,
  input logic                         advance_i,
  input logic                         grant_valid_o,
  input logic [KernelW-1:0]           grant_kernel_o
);

  // The last Window grants, newest first, and how many of them there are.
  logic [Window*KernelW-1:0] hist_q;
  logic [CountW-1:0]         seen_q;
  logic [CountW-1:0]         cycles_q;  // advance cycles since start

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hist_q   <= '0;
      seen_q   <= '0;
      cycles_q <= '0;
    end else if (started_i) begin
      if (grant_valid_o) begin
        hist_q <= {hist_q[(Window-1)*KernelW-1:0], grant_kernel_o};
        if (32'(seen_q) < Window) seen_q <= seen_q + CountW'(1);
      end
      if (advance_i && cycles_q != '1) cycles_q <= cycles_q + CountW'(1);
    end
  end

  logic [CountW-1:0] sum_shares;
  always_comb begin
    sum_shares = '0;
    for (int unsigned k = 0; k < NumKernels; k++) begin
      sum_shares = sum_shares + CountW'(shares_i[k*ShareW +: ShareW]);
    end
  end

  // within[w-1][k]: the window of the last w grants is within MaxDeviation for kernel k.
  logic [Window*NumKernels-1:0] within;
  for (genvar w = 1; w <= Window; w++) begin : g_window
    for (genvar k = 0; k < NumKernels; k++) begin : g_kernel
      logic [CountW-1:0]  count;
      logic signed [15:0] scaled, expected, bound;
      always_comb begin
        count = '0;
        for (int unsigned i = 0; i < w; i++) begin
          if (hist_q[i*KernelW +: KernelW] == KernelW'(k)) count = count + CountW'(1);
        end
      end
      assign scaled   = 16'(count) * 16'(sum_shares);
      assign expected = 16'(w) * 16'(shares_i[k*ShareW +: ShareW]);
      assign bound    = 16'(MaxDeviation) * 16'(sum_shares);
      assign within[(w-1)*NumKernels + k] = 32'(seen_q) < w ||
          (scaled - expected <= bound && expected - scaled <= bound);
    end
  end

  always @(posedge clk_i) begin
    if (rst_ni && started_i) begin
      WindowShare_A: assert (&within);
      // Supply equals demand (the rates add up to the capacity): after the first S cycles every
      // interleaving cycle hands out a thread block.
      if (advance_i && 32'(cycles_q) >= 32'(sum_shares)) begin
        GrantEveryCycle_A: assert (grant_valid_o);
      end
    end
  end

endmodule
