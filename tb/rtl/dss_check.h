#pragma once
// The DSS cross-check: seeded random event sequences that respect the protocol of DssReference, and
// the cycle-by-cycle comparison of the RTL's outputs and tables with the reference model's.

#include <cstdint>
#include <string>

#include "core/rng.h"
#include "dss_rtl.h"
#include "policy/dss_reference.h"

namespace gpumux::rtl {

/// One random scenario's event source. The profile (event density, settling, token ranges) is drawn
/// from the seed, so scenarios range from one event per cycle (searches restarted over and over) to
/// sparse events that let every search run to its stop.
class DssStimulus {
 public:
  explicit DssStimulus(std::uint64_t seed);

  /// Cycles of the scenario (events are issued in these; the test then lets the search stop).
  [[nodiscard]] std::uint32_t cycles() const { return cycles_; }
  /// The event for the next cycle, valid for the state of `ref`.
  DssReference::Inputs next(const DssReference& ref);

 private:
  std::int32_t draw_tokens(const DssReference& ref);

  Rng rng_;
  std::uint32_t cycles_ = 0;
  double event_rate_ = 0.0;   ///< probability of an event in a cycle
  double settle_rate_ = 0.0;  ///< probability of waiting for the search to stop after an event
  bool settling_ = false;
  std::uint32_t weights_[6] = {};  ///< per event kind (index = EventKind)
};

/// Empty when the RTL agrees with the reference in this cycle (outputs, then KSRT and SMST after
/// the edge); otherwise what differs.
std::string compare(const DssReference& ref, const DssReference::Outputs& ref_out, const DssSnapshot& rtl);

std::string describe(const DssReference::Inputs& in);
std::string describe(const DssReference::Outputs& out);
std::string describe_config(const DssReference::Config& config);

}  // namespace gpumux::rtl
