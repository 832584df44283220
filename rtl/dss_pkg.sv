// dss_pkg: the encodings of the DSS token policy, declared once. rtl/dss_token_policy.sv, its formal
// properties (rtl/formal/dss_token_policy_props.sv) and the C++ reference model
// (systemc/policy/dss_reference.h, through the generated systemc/policy/dss_encoding.h) all take the
// event kinds and SM states from here.
//
// scripts/rtl-gen-encodings writes dss_encoding.h from this file (item name EvKernelInsert becomes
// kKernelInsert, and so on); `scripts/rtl-gen-encodings --check` (run by scripts/rtl-lint) fails when
// the checked-in header is stale, and tb/rtl/dss_encoding_test.cpp compares the header at compile time
// with the enums the Verilated model exports from this package (the enums are public to Verilator),
// so the build of the cross-checks fails too. Keep the generator's subset: one `typedef enum logic [W-1:0] { Name = W'dN, ... } name_e`
// per encoding, values written out, a localparam for each width.
//
// yosys 0.23 (the synthesis and formal flows) reads the constants of a package but not its types, so
// the blocks declare their fields as `logic [SmStateW-1:0]` and compare with dss_pkg::SmIdle etc.

package dss_pkg;

  /// Width of the event kind input (event_kind_i).
  localparam int unsigned EventKindW = 3;

  /// The scheduling framework's event of one cycle (DssReference::EventKind).
  typedef enum logic [EventKindW-1:0] {
    EvNone         = 3'd0,
    EvKernelInsert = 3'd1,
    EvKernelFinish = 3'd2,
    EvSmIdle       = 3'd3,
    EvPreemptDone  = 3'd4,
    EvHasTbs       = 3'd5
  } event_kind_e /* verilator public */;

  /// Width of an SMST state field (sm_state_o entries).
  localparam int unsigned SmStateW = 2;

  /// SMST: the state of an SM as the policy sees it (DssReference::SmState).
  typedef enum logic [SmStateW-1:0] {
    SmIdle     = 2'd0,
    SmRunning  = 2'd1,
    SmReserved = 2'd2
  } sm_state_e /* verilator public */;

endpackage
