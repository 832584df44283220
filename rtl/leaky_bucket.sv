// leaky_bucket: leaky-bucket thread-block interleaving (Liang et al., 4.1, Figs. 4-5) as synthesizable
// hardware. One bucket per concurrent kernel fills by its rate in every interleaving cycle; when a
// bucket reaches its capacity, the kernel gets the next thread-block slot of the interleave order and
// the bucket is emptied by one capacity. The thread blocks are then dispatched in that order by
// dynamic round robin onto the SMs that free up.
//
// It is cycle-equivalent to the C++ reference model gpumux::LeakyBucketReference
// (systemc/policy/leaky_bucket_reference.h), which is the full contract: tb/rtl checks that in
// simulation, and rtl/formal/leaky_bucket_props.sv states the window property.
//
// In short, per cycle:
//  - advance_i: every active bucket not configured in this cycle fills by its rate (saturating). Of
//    the buckets whose level reached their capacity, the one with the largest excess (level - capacity)
//    is granted (grant_valid_o / grant_kernel_o in this cycle, Mealy) and loses one capacity; ties go
//    to the lowest kernel index. The excess carries over: fractional capacities lose no rate.
//  - cfg_valid_i: kernel cfg_kernel_i gets active / capacity / rate (fixed point by convention, 8
//    fractional bits: rate 256 = one token per cycle). Its level is cleared with cfg_clear_i or when
//    deactivated, else kept: a rate change (compensation for unequal thread-block durations, Liang:
//    "compensate the leaky-bucket filling rate") does not lose the bucket's fill.
//  - Shares: rate_k = share_k and capacity = sum of shares gives kernel k exactly share_k / sum of all
//    grants, one grant per cycle after start-up, in integer arithmetic.

module leaky_bucket #(
  /// Buckets: kernels interleaved at once. Area grows linearly with it; the grant's logic depth
  /// logarithmically (a tournament tree of excess comparators).
  parameter int unsigned NumKernels = 4,
  /// Width of level, capacity and rate. 24 bits: shares up to 255 with 8 fractional bits of rate
  /// compensation for up to 256 kernels without saturation.
  parameter int unsigned LevelW = 24,
  localparam int unsigned KernelW = (NumKernels > 1) ? $clog2(NumKernels) : 1
) (
  input  logic                         clk_i,
  // Lint waiver (SYNCASYNCNET): the assertions' `disable iff (!rst_ni)` reads the reset outside a
  // flop, which Verilator counts as a synchronous use; every register resets asynchronously.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                         rst_ni,
  /* verilator lint_on SYNCASYNCNET */

  /// One interleaving cycle: fill the buckets and grant a full one.
  input  logic                         advance_i,

  /// Configure kernel cfg_kernel_i's bucket.
  input  logic                         cfg_valid_i,
  input  logic [KernelW-1:0]           cfg_kernel_i,
  /// The kernel takes part in the interleaving (has thread blocks to issue).
  input  logic                         cfg_active_i,
  /// Empty the bucket (a new kernel); otherwise keep its level (a rate change).
  input  logic                         cfg_clear_i,
  /// Capacity: larger means less frequent grants.
  input  logic [LevelW-1:0]            cfg_capacity_i,
  /// Fill per cycle (fixed point, 8 fractional bits by convention).
  input  logic [LevelW-1:0]            cfg_rate_i,

  /// The next thread block of the interleave order comes from kernel grant_kernel_o.
  output logic                         grant_valid_o,
  output logic [KernelW-1:0]           grant_kernel_o,

  /// Read ports (registered state; entry k at bits [k*LevelW +: LevelW]).
  output logic [NumKernels-1:0]        active_o,
  output logic [NumKernels*LevelW-1:0] level_o
);

  localparam logic [LevelW-1:0] LevelMax = '1;

  logic [NumKernels-1:0]        active_q, active_d;
  logic [NumKernels*LevelW-1:0] capacity_q, capacity_d;
  logic [NumKernels*LevelW-1:0] rate_q, rate_d;
  logic [NumKernels*LevelW-1:0] level_q, level_d;

  ///////////////////////////
  // Fill and full buckets //
  ///////////////////////////

  logic [NumKernels-1:0]        cfg_here;  // configured in this cycle: no fill, no grant
  logic [NumKernels-1:0]        fills;
  logic [NumKernels-1:0]        full;
  logic [NumKernels*LevelW-1:0] filled;
  logic [NumKernels*LevelW-1:0] excess;

  for (genvar k = 0; k < NumKernels; k++) begin : g_bucket
    logic [LevelW:0] sum;
    assign cfg_here[k] = cfg_valid_i && cfg_kernel_i == KernelW'(k);
    assign fills[k]    = advance_i && active_q[k] && !cfg_here[k];
    assign sum         = {1'b0, level_q[k*LevelW +: LevelW]} + {1'b0, rate_q[k*LevelW +: LevelW]};
    // Saturating fill.
    assign filled[k*LevelW +: LevelW] = sum[LevelW] ? LevelMax : sum[LevelW-1:0];
    assign full[k]   = fills[k] && filled[k*LevelW +: LevelW] >= capacity_q[k*LevelW +: LevelW];
    assign excess[k*LevelW +: LevelW] = filled[k*LevelW +: LevelW] - capacity_q[k*LevelW +: LevelW];
  end

  ///////////
  // Grant //
  ///////////

  // The full bucket with the largest excess, by a tournament tree (heap order: node i has children
  // 2i+1 and 2i+2, the leaves are the buckets padded to a power of two). The right child wins only
  // with a strictly larger excess, so ties keep the lower index all the way up.
  localparam int unsigned Leaves = 1 << KernelW;
  localparam int unsigned Nodes  = 2 * Leaves - 1;

  // split_var: each node is its own variable for Verilator (the vectors only look circular).
  logic [Nodes-1:0]         node_valid /* verilator split_var */;
  logic [Nodes*KernelW-1:0] node_kernel /* verilator split_var */;
  logic [Nodes*LevelW-1:0]  node_excess /* verilator split_var */;

  for (genvar l = 0; l < Leaves; l++) begin : g_leaf
    localparam int unsigned N = Leaves - 1 + l;
    if (l < NumKernels) begin : g_bucket_leaf
      assign node_valid[N]                       = full[l];
      assign node_excess[N*LevelW +: LevelW]     = excess[l*LevelW +: LevelW];
    end else begin : g_pad_leaf
      assign node_valid[N]                       = 1'b0;
      assign node_excess[N*LevelW +: LevelW]     = '0;
    end
    assign node_kernel[N*KernelW +: KernelW] = KernelW'(l);
  end

  for (genvar n = 0; n < Leaves - 1; n++) begin : g_node
    localparam int unsigned L = 2 * n + 1;
    localparam int unsigned R = 2 * n + 2;
    logic take_right;
    assign take_right = node_valid[R] &&
        (!node_valid[L] || node_excess[R*LevelW +: LevelW] > node_excess[L*LevelW +: LevelW]);
    assign node_valid[n]                   = node_valid[L] || node_valid[R];
    assign node_kernel[n*KernelW +: KernelW] = take_right ? node_kernel[R*KernelW +: KernelW]
                                                          : node_kernel[L*KernelW +: KernelW];
    assign node_excess[n*LevelW +: LevelW] = take_right ? node_excess[R*LevelW +: LevelW]
                                                        : node_excess[L*LevelW +: LevelW];
  end

  logic               best_valid;
  logic [KernelW-1:0] best_kernel;
  assign best_valid  = node_valid[0];
  assign best_kernel = node_kernel[0 +: KernelW];

  // The winner's excess is recomputed per bucket for the next state; the root's copy is not needed.
  logic unused_root_excess;
  assign unused_root_excess = ^node_excess[0 +: LevelW];

  assign grant_valid_o  = best_valid;
  assign grant_kernel_o = best_kernel;

  ////////////////
  // Next state //
  ////////////////

  always_comb begin
    active_d   = active_q;
    capacity_d = capacity_q;
    rate_d     = rate_q;
    level_d    = level_q;
    for (int unsigned k = 0; k < NumKernels; k++) begin
      if (fills[k]) begin
        level_d[k*LevelW +: LevelW] = filled[k*LevelW +: LevelW];
      end
      // The granted bucket is emptied by one capacity; the excess carries over.
      if (best_valid && best_kernel == KernelW'(k)) begin
        level_d[k*LevelW +: LevelW] = excess[k*LevelW +: LevelW];
      end
      if (cfg_here[k]) begin
        active_d[k]                    = cfg_active_i;
        capacity_d[k*LevelW +: LevelW] = cfg_capacity_i;
        rate_d[k*LevelW +: LevelW]     = cfg_rate_i;
        if (cfg_clear_i || !cfg_active_i) begin
          level_d[k*LevelW +: LevelW] = '0;
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q   <= '0;
      capacity_q <= '0;
      rate_q     <= '0;
      level_q    <= '0;
    end else begin
      active_q   <= active_d;
      capacity_q <= capacity_d;
      rate_q     <= rate_d;
      level_q    <= level_d;
    end
  end

  assign active_o = active_q;
  assign level_o  = level_q;

  ////////////////
  // Assertions //
  ////////////////

`ifndef SYNTHESIS
  logic cfg_kernel_exists;
  assign cfg_kernel_exists = 32'(cfg_kernel_i) < NumKernels;
  // Protocol: only existing buckets are configured (the reference model throws otherwise).
  CfgKernel_A: assert property (@(posedge clk_i) disable iff (!rst_ni) !cfg_valid_i || cfg_kernel_exists)
    else $error("leaky_bucket: configure of kernel %0d", cfg_kernel_i);
  // A grant names a bucket that filled in this cycle.
  GrantFull_A: assert property (@(posedge clk_i) disable iff (!rst_ni) !grant_valid_o || full[grant_kernel_o]);
`endif

endmodule
