// The co-simulation's Verilated implementations (tb/rtl/dss_cosim.cpp), one per built parameter set of
// the shipped GPU configurations and search parallelism (EntriesPerCycle), driven through the
// DssImplementation interface the dss policy uses: each decides in lockstep with a DssReference of the
// same configuration on seeded random event sequences (its tables are checked after every edge by the
// implementation itself, which throws on a difference). tb/rtl/cosim_test.sh runs whole simulations
// with gpumux-cosim-rtl.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "dss_check.h"
#include "dss_cosim.h"
#include "rtl_options.h"

namespace gpumux::rtl {
namespace {

using Ref = DssReference;

Ref::Config config(std::uint32_t sms, std::uint32_t slots, std::uint32_t per_cycle) {
  Ref::Config c;
  c.num_sms = sms;
  c.num_slots = slots;
  c.token_bits = 8;
  c.start_on_preempt_done = true;
  c.entries_per_cycle = per_cycle;
  return c;
}

TEST(DssCosim, EveryBuiltSearchWidthDecidesInLockstepWithTheReference) {
  const std::vector<Ref::Config> configs = {config(13, 13, 1),  config(13, 13, 2), config(13, 13, 5),
                                            config(13, 13, 13), config(15, 8, 1),  config(15, 8, 4),
                                            config(15, 8, 15)};
  for (const Ref::Config& c : configs) {
    SCOPED_TRACE(describe_config(c));
    std::uint64_t decisions = 0;
    for (std::uint64_t k = 0; k < 4; ++k) {
      // A fresh implementation per scenario: the policy builds one per simulation, from reset.
      const std::unique_ptr<DssImplementation> rtl = make_dss_rtl_implementation(c);
      ASSERT_NE(rtl, nullptr);
      Ref ref(c);
      DssStimulus stim(scenario_seed(options().seed, "dss_cosim_" + describe_config(c), k));
      bool ok = true;
      for (std::uint32_t cycle = 0; ok && (cycle < stim.cycles() || ref.busy()); ++cycle) {
        const Ref::Inputs in = cycle < stim.cycles() ? stim.next(ref) : Ref::Inputs::none();
        const Ref::Outputs want = ref.step(in);
        Ref::Outputs got;
        try {
          got = rtl->step(in, ref);
        } catch (const std::logic_error& e) {
          ADD_FAILURE() << "scenario " << k << " cycle " << cycle << ": " << e.what();
          ok = false;
          break;
        }
        const std::string diff = compare(ref, want, DssSnapshot{got, ref.slots(), ref.sms()});
        if (!diff.empty()) {
          ADD_FAILURE() << "scenario " << k << " cycle " << cycle << ": " << diff
                        << "\n  reference: " << describe(want) << "\n  RTL:       " << describe(got);
          ok = false;
        }
        decisions += (got.assign.valid || got.reserve.valid) ? 1 : 0;
      }
    }
    EXPECT_GT(decisions, 0U);
  }
}

TEST(DssCosim, AnUnbuiltSearchWidthIsAnInputErrorNamingTheBuiltOnes) {
  try {
    (void)make_dss_rtl_implementation(config(13, 13, 3));
    FAIL() << "no model is built for EntriesPerCycle 3";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("EntriesPerCycle=3"), std::string::npos) << what;
    EXPECT_NE(what.find("EntriesPerCycle 1, 2, 5 or 13"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace gpumux::rtl
