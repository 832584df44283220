// Kernelet's inputs and plans (Zhong and He 4.3-4.4, 5.1): the characterisation file round-trips and rejects
// bad input with its line, a thread block's instruction mix is counted exactly from the program, and the
// OPT and MC plans choose as the paper describes.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "common/scratch_file.h"
#include "config/yaml_reader.h"
#include "core/error.h"
#include "kernelet/characterisation.h"
#include "kernelet/co_schedule_plan.h"
#include "kernelet/instruction_mix.h"
#include "program/program_parser.h"

namespace gpumux {
namespace {

kernelet::KernelCharacter character(const std::string& name, double ipc, double pur, double mur) {
  kernelet::KernelCharacter k;
  k.kernel = name;
  k.thread_blocks = 1024;
  k.threads_per_tb = 256;
  k.registers_per_tb = 8192;
  k.shared_memory_per_tb = 0;
  k.warps_per_tb = 8;
  k.tbs_per_sm = 4;
  k.instructions_per_tb = 800;
  k.memory_ratio = 0.125;
  k.uncoalesced_share = 0.5;
  k.ipc = ipc;
  k.pur = pur;
  k.mur = mur;
  k.min_slice_tbs = 28;
  return k;
}

kernelet::Characterisation sample() {
  kernelet::Characterisation c;
  c.gpu = "test-gpu";
  c.sms = 14;
  c.core_clock_mhz = 1147;
  c.sm_model = "warp";
  c.memory_model = "dram";
  c.request_bytes = 128;
  c.model.warp_schedulers = 2;
  c.model.peak_ipc_per_sm = 1;
  c.model.latency_cycles = 400.25;
  c.model.requests_per_cycle = 0.98;
  c.model.latency_slope = 0.1 / 3;
  c.model.latency_offset = -12.5;
  c.model.uncoalesced_requests = 32;
  c.kernels = {character("mm", 0.6, 0.58, 0.016), character("pc", 0.01, 0.0096, 0.14)};
  c.pairs = {{"mm", "pc", 2, 3, 0.5, 0.02}};
  return c;
}

std::string write(const std::string& name, const std::string& text) {
  std::string path = test::scratch_path(name);
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path) {
  try {
    (void)kernelet::load_characterisation(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(KerneletCharacterisation, WrittenFileReadsBackExactly) {
  const std::string path = test::scratch_path("kernelet_roundtrip.yaml");
  const kernelet::Characterisation c = sample();
  kernelet::write_characterisation(path, c);
  const kernelet::Characterisation back = kernelet::load_characterisation(path);
  EXPECT_EQ(back.gpu, c.gpu);
  EXPECT_EQ(back.sms, 14U);
  EXPECT_EQ(back.model.latency_slope, c.model.latency_slope);  // 17 digits: the same double
  EXPECT_EQ(back.model.latency_offset, -12.5);
  ASSERT_EQ(back.kernels.size(), 2U);
  EXPECT_EQ(back.kernels[1].mur, 0.14);
  EXPECT_EQ(back.kernels[0].min_slice_tbs, 28U);
  ASSERT_EQ(back.pairs.size(), 1U);
  EXPECT_EQ(back.pairs[0].second_per_sm, 3U);
  // Either order finds the pair; another ratio does not.
  EXPECT_NE(back.find_pair("pc", 3, "mm", 2), nullptr);
  EXPECT_EQ(back.find_pair("pc", 2, "mm", 3), nullptr);
  // Written again: the same text.
  const std::string again = test::scratch_path("kernelet_roundtrip2.yaml");
  kernelet::write_characterisation(again, back);
  std::ifstream a(path);
  std::ifstream b(again);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}),
            std::string(std::istreambuf_iterator<char>(b), {}));
}

TEST(KerneletCharacterisation, BadInputNamesFileLineAndKey) {
  const std::string path = test::scratch_path("kernelet_good.yaml");
  kernelet::write_characterisation(path, sample());
  std::ifstream in(path);
  const std::string good((std::istreambuf_iterator<char>(in)), {});
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const std::string ratio =
      error_of(write("kernelet_bad_ratio.yaml", replaced("memory_ratio: 0.125", "memory_ratio: 1.5")));
  EXPECT_NE(ratio.find("kernelet_bad_ratio.yaml:"), std::string::npos) << ratio;
  EXPECT_NE(ratio.find("memory_ratio"), std::string::npos) << ratio;
  const std::string unknown =
      error_of(write("kernelet_bad_key.yaml", replaced("  - kernel: pc", "  - kernel: pc\n    color: red")));
  EXPECT_NE(unknown.find("color"), std::string::npos) << unknown;
  const std::string twice =
      error_of(write("kernelet_twice.yaml", replaced("  - kernel: pc", "  - kernel: mm")));
  EXPECT_NE(twice.find("duplicate kernel 'mm'"), std::string::npos) << twice;
  const std::string pair = error_of(write("kernelet_pair.yaml", replaced("second: pc", "second: spmv")));
  EXPECT_NE(pair.find("'spmv' is not among the file's kernels"), std::string::npos) << pair;
  const std::string ipc = error_of(write("kernelet_ipc.yaml", replaced("ipc: 0.01", "ipc: -1")));
  EXPECT_NE(ipc.find("ipc"), std::string::npos) << ipc;
  EXPECT_NE(error_of(write("kernelet_malformed.yaml", "gpu: [unclosed\n")), "");
}

program::Program compiled(const std::string& yaml_list, std::uint32_t warps) {
  const config::YamlNode root(YAML::Load(yaml_list), "program",
                              std::make_shared<const std::string>("inline.yaml"),
                              SourceLocation{"inline.yaml", 1, 1});
  return program::compile_program(root, warps);
}

TEST(KerneletInstructionMix, CountsEveryPassOfEveryWarp) {
  // Warp w runs the outer loop [2, 3][w mod 2] times; the inner loop 4 times per outer pass.
  const program::Program p = compiled(
      "- alu r2 <- r0, r1\n"
      "- loop: [2, 3]\n"
      "  body:\n"
      "    - ldg r3 <- r2 128B coalesced\n"
      "    - loop: 4\n"
      "      body:\n"
      "        - ldg r4 <- r3 128B scattered\n"
      "        - alu r3 <- r4\n"
      "- stg r3, r2 128B coalesced\n",
      2);
  // Warp 0: alu 1 + outer 2 x (ldg 1 + inner 4 x (ldg, alu, loop-back) + outer loop-back 1) + stg 1
  //       = 1 + 2 x (1 + 12 + 1) + 1 = 30; warp 1: 1 + 3 x 14 + 1 = 44.
  const kernelet::InstructionMix mix = kernelet::thread_block_mix(p, 2);
  EXPECT_EQ(mix.instructions, 74U);
  EXPECT_EQ(p.dynamic_instructions, 30U);  // the compiler's count for warp 0 agrees
  // Global: warp 0 2 + 8 + 1 = 11, warp 1 3 + 12 + 1 = 16; scattered 8 + 12 = 20.
  EXPECT_EQ(mix.global_memory, 27U);
  EXPECT_EQ(mix.uncoalesced_memory, 20U);
  EXPECT_DOUBLE_EQ(mix.memory_ratio(), 27.0 / 74.0);
  EXPECT_DOUBLE_EQ(mix.uncoalesced_share(), 20.0 / 27.0);
}

/// Candidates with `tbs_per_sm` each; two fit together while their blocks sum to at most `slots`.
struct Fixture {
  kernelet::Characterisation c = sample();
  std::vector<Occupancy> occupancy;
  kernelet::PlanRequest request;
  Fixture(std::uint32_t slots, const std::vector<std::uint32_t>& per_sm) {
    for (const std::uint32_t n : per_sm) {
      Occupancy o;
      o.tbs_per_sm = n;
      occupancy.push_back(o);
    }
    request.characterisation = &c;
    for (std::size_t i = 0; i < per_sm.size(); ++i) {
      request.candidates.push_back({&c.kernels[i], &occupancy[i]});
    }
    request.fits = [this, slots](std::size_t, std::uint32_t na, std::size_t b) {
      return std::min(occupancy[b].tbs_per_sm, na >= slots ? 0U : slots - na);
    };
  }
};

TEST(KerneletPlans, FittingRatiosAreEveryPairOfCountsThatFitTogether) {
  Fixture f(4, {4, 4});
  const auto ratios = kernelet::fitting_ratios(f.request, 0, 1);
  // (1,1..3), (2,1..2), (3,1): 6 ratios.
  ASSERT_EQ(ratios.size(), 6U);
  EXPECT_EQ(ratios.front(), std::make_pair(1U, 1U));
  EXPECT_EQ(ratios.back(), std::make_pair(3U, 1U));
}

TEST(KerneletPlans, MeasurementPlanTakesTheLargestMeasuredProfit) {
  Fixture f(6, {4, 4});
  f.c.pairs = {
      {"mm", "pc", 2, 3, 0.30, 0.009}, {"pc", "mm", 1, 4, 0.005, 0.55}, {"mm", "pc", 3, 3, 0.1, 0.001}};
  // CPs: (2,3) 1 - 1/(0.5 + 0.9) = 0.286; (mm 4, pc 1) 1 - 1/(0.917 + 0.5) = 0.294; (3,3) negative.
  const auto plan = kernelet::plan_by_measurement(f.request);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->first_per_sm, 4U);
  EXPECT_EQ(plan->second_per_sm, 1U);
  EXPECT_NEAR(plan->profit, 1 - 1 / (0.55 / 0.6 + 0.005 / 0.01), 1e-12);
  f.c.pairs = {{"mm", "pc", 3, 3, 0.1, 0.001}};  // only a losing ratio measured: no co-schedule
  EXPECT_FALSE(kernelet::plan_by_measurement(f.request).has_value());
}

TEST(KerneletPlans, RandomPlanIsUniformOverPairsAndRatiosAndSeeded) {
  Fixture f(4, {4, 4});
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> seen;
  Rng rng(7, 1);
  for (int i = 0; i < 6000; ++i) {
    const auto plan = kernelet::plan_at_random(f.request, rng);
    ASSERT_TRUE(plan.has_value());
    ++seen[{plan->first_per_sm, plan->second_per_sm}];
  }
  ASSERT_EQ(seen.size(), 6U);  // every fitting ratio drawn, about 1000 times each
  for (const auto& [ratio, count] : seen) EXPECT_NEAR(count, 1000, 150);
  Rng a(3, 1);
  Rng b(3, 1);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(kernelet::plan_at_random(f.request, a)->first_per_sm,
              kernelet::plan_at_random(f.request, b)->first_per_sm);
  }
  Fixture none(1, {1, 1});  // nothing fits beside the other kernel
  EXPECT_FALSE(kernelet::plan_at_random(none.request, rng).has_value());
}

}  // namespace
}  // namespace gpumux
