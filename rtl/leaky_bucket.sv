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
//
// Tables: the buckets are an array of entries (bucket_entry_t: active, capacity, rate, level), the
// per-bucket fill of the cycle an array of fill_t and the grant's tournament tree an array of node_t;
// each entry is read and written whole through its packed struct, no field is sliced out of a bus by
// hand except at the read ports. Written for what yosys 0.23 (synthesis and formal) reads correctly,
// as rtl/dss_token_policy.sv: it silently drops the outer dimension of an array of structs and
// misreads `table[i].field`, so a table is an unpacked array of entry-wide words (mem2reg) and an
// entry is copied into a struct variable before its fields are used; it takes no struct variables in
// generate loops, so the per-entry logic is in always_comb loops (every index a constant after
// unrolling: no run-time multiplexers); it has no multi-dimensional packed ports, so the read ports
// stay one flat bus per field (entry k at bits [k*LevelW +: LevelW]).

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

  ////////////
  // Tables //
  ////////////

  // Bucket entry: the state of one kernel's bucket.
  typedef struct packed {
    logic              active;    // takes part in the interleaving
    logic [LevelW-1:0] capacity;  // emptied by this much on a grant
    logic [LevelW-1:0] rate;      // fill per cycle
    logic [LevelW-1:0] level;
  } bucket_entry_t;

  // Fill entry: what one bucket does in this cycle.
  typedef struct packed {
    logic              fills;   // active, advance_i, not configured in this cycle
    logic              full;    // fills and reached its capacity: competes for the grant
    logic [LevelW-1:0] filled;  // level + rate, saturating
    logic [LevelW-1:0] excess;  // filled - capacity: the level after a grant
  } fill_t;

  // Node of the grant's tournament tree.
  typedef struct packed {
    logic               valid;   // a full bucket below
    logic [KernelW-1:0] kernel;  // the winner below
    logic [LevelW-1:0]  excess;  // its excess
  } node_t;

  // Entry widths ($bits of the structs, which yosys 0.23 cannot evaluate; Verilator's WIDTH lint
  // checks every assignment between the two).
  localparam int unsigned BucketEntryW = 3 * LevelW + 1;
  localparam int unsigned FillW        = 2 * LevelW + 2;
  localparam int unsigned NodeW        = KernelW + LevelW + 1;

  (* mem2reg *) logic [BucketEntryW-1:0] bucket_q [NumKernels];
  (* mem2reg *) logic [BucketEntryW-1:0] bucket_d [NumKernels];

  ///////////////////////////
  // Fill and full buckets //
  ///////////////////////////

  logic [NumKernels-1:0] cfg_here;  // configured in this cycle: no fill, no grant
  logic [NumKernels-1:0] full;      // fill_t.full of every bucket (the assertion reads it)
  (* mem2reg *) logic [FillW-1:0] fill [NumKernels];

  bucket_entry_t   fill_bucket;
  fill_t           fill_entry;
  logic [LevelW:0] fill_sum;

  always_comb begin
    fill_bucket = '0;
    fill_entry  = '0;
    fill_sum    = '0;
    for (int unsigned k = 0; k < NumKernels; k++) begin
      fill_bucket       = bucket_q[k];
      cfg_here[k]       = cfg_valid_i && cfg_kernel_i == KernelW'(k);
      fill_sum          = {1'b0, fill_bucket.level} + {1'b0, fill_bucket.rate};
      fill_entry.fills  = advance_i && fill_bucket.active && !cfg_here[k];
      // Saturating fill.
      fill_entry.filled = fill_sum[LevelW] ? LevelMax : fill_sum[LevelW-1:0];
      fill_entry.full   = fill_entry.fills && fill_entry.filled >= fill_bucket.capacity;
      fill_entry.excess = fill_entry.filled - fill_bucket.capacity;
      full[k]           = fill_entry.full;
      fill[k]           = fill_entry;
    end
  end

  ///////////
  // Grant //
  ///////////

  // The full bucket with the largest excess, by a tournament tree (heap order: node i has children
  // 2i+1 and 2i+2, the leaves are the buckets padded to a power of two). The right child wins only
  // with a strictly larger excess, so ties keep the lower index all the way up.
  localparam int unsigned Leaves = 1 << KernelW;
  localparam int unsigned Nodes  = 2 * Leaves - 1;

  (* mem2reg *) logic [NodeW-1:0] node [Nodes];

  // Lint waiver (UNUSEDSIGNAL): a fill entry is read whole and only some of its fields are used.
  /* verilator lint_off UNUSEDSIGNAL */
  fill_t leaf_fill;
  /* verilator lint_on UNUSEDSIGNAL */
  node_t leaf, left, right, parent;
  logic  take_right;

  always_comb begin
    leaf_fill  = '0;
    leaf       = '0;
    left       = '0;
    right      = '0;
    parent     = '0;
    take_right = 1'b0;
    for (int unsigned l = 0; l < NumKernels; l++) begin
      leaf_fill          = fill[l];
      leaf.valid         = leaf_fill.full;
      leaf.kernel        = KernelW'(l);
      leaf.excess        = leaf_fill.excess;
      node[Leaves-1+l] = leaf;
    end
    for (int unsigned l = NumKernels; l < Leaves; l++) begin
      leaf             = '0;
      leaf.kernel      = KernelW'(l);
      node[Leaves-1+l] = leaf;
    end
    // Bottom up: a node's children are set before it.
    for (int n = Leaves - 2; n >= 0; n--) begin
      left         = node[2*n+1];
      right        = node[2*n+2];
      take_right   = right.valid && (!left.valid || right.excess > left.excess);
      parent       = take_right ? right : left;
      parent.valid = left.valid || right.valid;
      node[n]      = parent;
    end
  end

  // The winner's excess is recomputed per bucket for the next state; the root's copy is not needed.
  // Lint waiver (UNUSEDSIGNAL): the root is read whole and only its valid bit and kernel are used.
  /* verilator lint_off UNUSEDSIGNAL */
  node_t root;
  /* verilator lint_on UNUSEDSIGNAL */
  assign root = node[0];

  assign grant_valid_o  = root.valid;
  assign grant_kernel_o = root.kernel;

  ////////////////
  // Next state //
  ////////////////

  bucket_entry_t next_bucket;
  // Lint waiver (UNUSEDSIGNAL): a fill entry is read whole and only some of its fields are used.
  /* verilator lint_off UNUSEDSIGNAL */
  fill_t         next_fill;
  /* verilator lint_on UNUSEDSIGNAL */

  always_comb begin
    next_bucket = '0;
    next_fill   = '0;
    for (int unsigned k = 0; k < NumKernels; k++) begin
      next_bucket = bucket_q[k];
      next_fill   = fill[k];
      if (next_fill.fills) begin
        next_bucket.level = next_fill.filled;
      end
      // The granted bucket is emptied by one capacity; the excess carries over.
      if (root.valid && root.kernel == KernelW'(k)) begin
        next_bucket.level = next_fill.excess;
      end
      if (cfg_here[k]) begin
        next_bucket.active   = cfg_active_i;
        next_bucket.capacity = cfg_capacity_i;
        next_bucket.rate     = cfg_rate_i;
        if (cfg_clear_i || !cfg_active_i) begin
          next_bucket.level = '0;
        end
      end
      bucket_d[k] = next_bucket;
    end
  end

  ///////////////
  // Registers //
  ///////////////

  // One always_ff per entry (Verilator 5.006 does not unroll non-blocking writes to an array in a
  // for loop, see rtl/dss_token_policy.sv).
  for (genvar k = 0; k < NumKernels; k++) begin : g_bucket_reg
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        bucket_q[k] <= '0;
      end else begin
        bucket_q[k] <= bucket_d[k];
      end
    end
  end

  // Read ports: one flat bus per field (yosys 0.23 has no multi-dimensional packed ports); the only
  // place the table is sliced.
  // Lint waiver (UNUSEDSIGNAL): capacity and rate are not read out.
  /* verilator lint_off UNUSEDSIGNAL */
  bucket_entry_t port_bucket;
  /* verilator lint_on UNUSEDSIGNAL */

  always_comb begin
    port_bucket = '0;
    for (int unsigned k = 0; k < NumKernels; k++) begin
      port_bucket                  = bucket_q[k];
      active_o[k]                  = port_bucket.active;
      level_o[k*LevelW +: LevelW]  = port_bucket.level;
    end
  end

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
