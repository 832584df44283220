// The DSS encodings are declared once, in rtl/dss_pkg.sv; systemc/policy/dss_encoding.h is generated
// from it by scripts/rtl-gen-encodings. This file compares the generated header with the enums the
// Verilated model exports from the package (public enums of Vdss_k20c_dss_pkg), at compile time: a
// stale header fails the build of the cross-checks (scripts/rtl-lint also runs the generator's
// --check). Nothing to run: the file only has to compile.

#include <type_traits>

#include "Vdss_k20c.h"
#include "Vdss_k20c_dss_pkg.h"
#include "policy/dss_encoding.h"
#include "policy/dss_reference.h"

namespace gpumux::rtl {
namespace {

using Pkg = Vdss_k20c_dss_pkg;
namespace enc = dss_encoding;

constexpr bool same(enc::EventKind cpp, Pkg::event_kind_e sv) {
  return static_cast<unsigned>(cpp) == static_cast<unsigned>(sv);
}
constexpr bool same(enc::SmState cpp, Pkg::sm_state_e sv) {
  return static_cast<unsigned>(cpp) == static_cast<unsigned>(sv);
}

static_assert(same(enc::EventKind::kNone, Pkg::EvNone));
static_assert(same(enc::EventKind::kKernelInsert, Pkg::EvKernelInsert));
static_assert(same(enc::EventKind::kKernelFinish, Pkg::EvKernelFinish));
static_assert(same(enc::EventKind::kSmIdle, Pkg::EvSmIdle));
static_assert(same(enc::EventKind::kPreemptDone, Pkg::EvPreemptDone));
static_assert(same(enc::EventKind::kHasTbs, Pkg::EvHasTbs));
static_assert(same(enc::SmState::kIdle, Pkg::SmIdle));
static_assert(same(enc::SmState::kRunning, Pkg::SmRunning));
static_assert(same(enc::SmState::kReserved, Pkg::SmReserved));

// The reference model uses the generated enums themselves.
static_assert(std::is_same_v<DssReference::EventKind, enc::EventKind>);
static_assert(std::is_same_v<DssReference::SmState, enc::SmState>);

}  // namespace
}  // namespace gpumux::rtl
