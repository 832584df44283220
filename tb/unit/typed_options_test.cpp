// The typed option layer (core/typed_options.h) and the policy declarations built on it: every type
// parses, every range edge is accepted or rejected, unknown names and defaults, generated help, and
// the effective values written to stats.json.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "common/scratch_file.h"
#include "core/error.h"
#include "core/typed_options.h"
#include "kernelet/characterisation.h"
#include "policy/registry.h"
#include "stm/kernel_profile.h"

namespace gpumux {
namespace {

/// The InputError message of parsing {name: text} against `specs`; "" when it parses.
std::string error_of(const OptionSpecs& specs, const std::string& name, const std::string& text) {
  try {
    (void)parse_options("policy p", specs, {{name, text}});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool accepts(const OptionSpecs& specs, const std::string& name, const std::string& text) {
  return error_of(specs, name, text).empty();
}

const OptionSpecs& all_types() {
  static const OptionSpecs specs = {
      OptionSpec::integer("count", 1, 1024, 3, "how many"),
      OptionSpec::integer("offset", -5, 5, 0, "signed"),
      OptionSpec::integer_or_auto("bits", 2, 31, "from the GPU", "counter width"),
      OptionSpec::real("ratio", 0, 1e6, 0.5, "a finite ratio"),
      OptionSpec::real("limit", 1, std::numeric_limits<double>::infinity(), 2, "may be unbounded"),
      OptionSpec::on_off("flag", true, "a switch"),
      OptionSpec::choice("mode", {"a", "b", "c"}, "b", "a mode"),
      OptionSpec::integer_list("shares", 1, 255, ':', "all equal", "per process"),
  };
  return specs;
}

TEST(TypedOptions, DefaultsFillEveryDeclaredOption) {
  const OptionValues v = parse_options("policy p", all_types(), {});
  EXPECT_EQ(v.integer("count"), 3);
  EXPECT_EQ(v.integer("offset"), 0);
  EXPECT_EQ(v.integer_or_auto("bits"), std::nullopt);
  EXPECT_DOUBLE_EQ(v.real("ratio"), 0.5);
  EXPECT_DOUBLE_EQ(v.real("limit"), 2);
  EXPECT_TRUE(v.on("flag"));
  EXPECT_EQ(v.choice("mode"), "b");
  EXPECT_TRUE(v.integer_list("shares").empty());
  EXPECT_EQ(v.to_json(), nlohmann::json::parse(R"({"count": 3, "offset": 0, "bits": "auto", "ratio": 0.5,
                                                 "limit": 2.0, "flag": "on", "mode": "b", "shares": []})"));
}

TEST(TypedOptions, GivenValuesAreTyped) {
  const OptionValues v = parse_options("policy p", all_types(),
                                       {{"count", "1024"},
                                        {"offset", "-5"},
                                        {"bits", "16"},
                                        {"ratio", "0.25"},
                                        {"limit", "inf"},
                                        {"flag", "off"},
                                        {"mode", "c"},
                                        {"shares", "3:1:255"}});
  EXPECT_EQ(v.integer("count"), 1024);
  EXPECT_EQ(v.integer("offset"), -5);
  EXPECT_EQ(v.integer_or_auto("bits"), 16);
  EXPECT_DOUBLE_EQ(v.real("ratio"), 0.25);
  EXPECT_TRUE(std::isinf(v.real("limit")));
  EXPECT_FALSE(v.on("flag"));
  EXPECT_EQ(v.choice("mode"), "c");
  EXPECT_EQ(v.integer_list("shares"), (std::vector<std::int64_t>{3, 1, 255}));
  EXPECT_EQ(v.to_json()["shares"], nlohmann::json::parse("[3, 1, 255]"));
  EXPECT_EQ(v.to_json()["flag"], "off");
  EXPECT_EQ(v.to_json()["bits"], 16);
}

TEST(TypedOptions, IntegerRangeEdges) {
  const OptionSpecs& s = all_types();
  EXPECT_TRUE(accepts(s, "count", "1"));
  EXPECT_TRUE(accepts(s, "count", "1024"));
  EXPECT_EQ(error_of(s, "count", "0"), "policy p: option count must be an integer from 1 to 1024, not '0'");
  EXPECT_FALSE(accepts(s, "count", "1025"));
  // Only plain digits: no sign, spaces, fractions, hex or overflow wrapping into range.
  for (const char* bad : {"", "-5", "+2", " 2", "2 ", "2.0", "0x10", "1e2", "x", "18446744073709551617"}) {
    EXPECT_FALSE(accepts(s, "count", bad)) << bad;
  }
  EXPECT_TRUE(accepts(s, "offset", "-5"));
  EXPECT_TRUE(accepts(s, "offset", "5"));
  EXPECT_FALSE(accepts(s, "offset", "-6"));
  EXPECT_FALSE(accepts(s, "offset", "6"));
  EXPECT_TRUE(accepts(s, "bits", "2"));
  EXPECT_TRUE(accepts(s, "bits", "31"));
  EXPECT_TRUE(accepts(s, "bits", "auto"));
  EXPECT_EQ(error_of(s, "bits", "1"),
            "policy p: option bits must be an integer from 2 to 31, or auto, not '1'");
  EXPECT_FALSE(accepts(s, "bits", "32"));
  EXPECT_FALSE(accepts(s, "count", "auto"));  // auto only where declared
}

TEST(TypedOptions, RealRangeEdges) {
  const OptionSpecs& s = all_types();
  EXPECT_TRUE(accepts(s, "ratio", "0"));
  EXPECT_TRUE(accepts(s, "ratio", "1e6"));
  EXPECT_TRUE(accepts(s, "ratio", "1000000"));
  EXPECT_TRUE(accepts(s, "ratio", "-0"));
  EXPECT_EQ(parse_options("policy p", s, {{"ratio", "-0"}}).to_json()["ratio"].dump(), "0.0");
  EXPECT_EQ(error_of(s, "ratio", "inf"),
            "policy p: option ratio must be a finite number from 0 to 1000000, not 'inf'");
  for (const char* bad :
       {"-0.001", "1000000.1", "1e300", "1e400", "nan", "-inf", "", " 1", "+1", "0.5x", "0x1p-1"}) {
    EXPECT_FALSE(accepts(s, "ratio", bad)) << bad;
  }
  // An unbounded range takes inf, and still never nan.
  EXPECT_TRUE(accepts(s, "limit", "inf"));
  EXPECT_TRUE(accepts(s, "limit", "1"));
  EXPECT_FALSE(accepts(s, "limit", "0.999"));
  EXPECT_EQ(error_of(s, "limit", "nan"), "policy p: option limit must be a number from 1 to inf, not 'nan'");
}

TEST(TypedOptions, SwitchesAndChoicesTakeExactNames) {
  const OptionSpecs& s = all_types();
  EXPECT_TRUE(accepts(s, "flag", "on"));
  EXPECT_TRUE(accepts(s, "flag", "off"));
  EXPECT_EQ(error_of(s, "flag", "maybe"), "policy p: option flag must be on or off, not 'maybe'");
  for (const char* bad : {"ON", "true", "1", ""}) EXPECT_FALSE(accepts(s, "flag", bad)) << bad;
  for (const char* good : {"a", "b", "c"}) EXPECT_TRUE(accepts(s, "mode", good)) << good;
  EXPECT_EQ(error_of(s, "mode", "d"), "policy p: option mode must be a, b or c, not 'd'");
  EXPECT_FALSE(accepts(s, "mode", "A"));
}

TEST(TypedOptions, ListsNeedEveryElementInRange) {
  const OptionSpecs& s = all_types();
  EXPECT_TRUE(accepts(s, "shares", "1"));
  EXPECT_TRUE(accepts(s, "shares", "255:1"));
  EXPECT_EQ(error_of(s, "shares", "1:0"),
            "policy p: option shares must be integers from 1 to 255 separated by ':', not '1:0'");
  for (const char* bad : {"", ":", "1:", ":1", "1::2", "256", "a", "1:-1", "1,2"}) {
    EXPECT_FALSE(accepts(s, "shares", bad)) << bad;
  }
}

TEST(TypedOptions, UnknownNamesListTheKnownOnes) {
  const OptionSpecs two = {OptionSpec::on_off("x", true, "x"), OptionSpec::on_off("y", false, "y")};
  EXPECT_EQ(error_of(two, "z", "on"), "policy p: unknown option 'z' (known: x, y)");
  EXPECT_EQ(error_of({}, "z", "on"), "policy p takes no options (got 'z')");
}

TEST(TypedOptions, ReadingUndeclaredOrMistypedIsAProgrammingError) {
  const OptionValues v = parse_options("policy p", all_types(), {});
  EXPECT_THROW((void)v.integer("nope"), std::logic_error);
  EXPECT_THROW((void)v.integer("flag"), std::logic_error);
  EXPECT_THROW((void)v.real("count"), std::logic_error);
  EXPECT_THROW((void)v.on("mode"), std::logic_error);
  EXPECT_THROW((void)v.choice("shares"), std::logic_error);
  EXPECT_THROW((void)v.integer_list("count"), std::logic_error);
  EXPECT_THROW((void)v.integer("bits"), std::logic_error);  // auto: read with integer_or_auto
}

TEST(TypedOptions, DeclarationsWithDefaultsOutsideTheirRangeAreRejected) {
  EXPECT_THROW((void)OptionSpec::integer("n", 1, 10, 0, ""), std::logic_error);
  EXPECT_THROW((void)OptionSpec::real("r", 0, 1, 2, ""), std::logic_error);
  EXPECT_THROW((void)OptionSpec::real("r", 0, 1, std::numeric_limits<double>::quiet_NaN(), ""),
               std::logic_error);
  EXPECT_THROW((void)OptionSpec::choice("c", {"a", "b"}, "z", ""), std::logic_error);
}

TEST(TypedOptions, HelpTextComesFromTheDeclarations) {
  const std::string help = describe_options(all_types(), "  ");
  for (const char* expected : {"  count   an integer from 1 to 1024; default 3\n", "          how many\n",
                               "  bits    an integer from 2 to 31, or auto; default auto\n",
                               "          counter width (auto: from the GPU)\n",
                               "  ratio   a finite number from 0 to 1000000; default 0.5\n",
                               "  limit   a number from 1 to inf; default 2\n",
                               "  flag    on or off; default on\n", "  mode    a, b or c; default b\n",
                               "  shares  integers from 1 to 255 separated by ':'; default none\n",
                               "          per process (none: all equal)\n"}) {
    EXPECT_NE(help.find(expected), std::string::npos) << expected << "\nin\n" << help;
  }
  EXPECT_EQ(describe_options({}, "  "), "");
}

// --- the policies' declarations --------------------------------------------------------------------

TEST(PolicyOptionDeclarations, EffectiveValuesFillDefaults) {
  EXPECT_EQ(
      effective_policy_options("dss", {}),
      nlohmann::json::parse(
          R"({"token_bits": "auto", "preempt_done_starts": "on", "tokens": "process", "latency": "instant", "search_width": 1})"));
  EXPECT_EQ(
      effective_policy_options("dss", {{"token_bits", "16"}, {"latency", "hardware"}}),
      nlohmann::json::parse(
          R"({"token_bits": 16, "preempt_done_starts": "on", "tokens": "process", "latency": "hardware", "search_width": 1})"));
  EXPECT_EQ(effective_policy_options("leaky-bucket", {{"shares", "3:1"}}),
            nlohmann::json::parse(
                R"({"shares": [3, 1], "compensate": "on", "latency": "instant", "gather_ns": 0})"));
  EXPECT_EQ(effective_policy_options("ppq", {}), nlohmann::json::parse(R"({"access": "shared"})"));
  EXPECT_EQ(effective_policy_options("srtf", {}),
            nlohmann::json::parse(R"({"sample": "first-to-end", "decide": "per-sm"})"));
  EXPECT_EQ(effective_policy_options("srtf-adaptive", {}),
            nlohmann::json::parse(
                R"({"sample": "first-to-end", "decide": "per-sm", "threshold": 0.5, "shared_limit": 3})"));
  EXPECT_EQ(effective_policy_options("fcfs", {}), nlohmann::json::object());
  EXPECT_THROW((void)effective_policy_options("nope", {}), InputError);
  EXPECT_THROW((void)effective_policy_options("fcfs", {{"access", "shared"}}), InputError);
}

TEST(PolicyOptionDeclarations, EveryDefaultWrittenOutIsAcceptedAndSummariesLeaveOptionsToThem) {
  // Options a policy cannot run without (stm's profile file), given in every call below.
  stm::ProfileSet profiles;
  profiles.gpu = "test";
  profiles.sms = 2;
  profiles.peak_bandwidth_gb_per_s = 100;
  profiles.sm_model = "tb";
  profiles.memory_model = "simple";
  profiles.kernels.push_back({"k", 4, 0, 10, {20, 10}, {1, 2}});
  const std::string profile_file = test::scratch_path("typed_options_profiles.yaml");
  stm::write_profile_file(profile_file, profiles);
  // kernelet's characterisation file.
  kernelet::Characterisation c;
  c.gpu = "test";
  c.sms = 2;
  c.core_clock_mhz = 1000;
  c.sm_model = "warp";
  c.memory_model = "simple";
  c.model.requests_per_cycle = 1;
  kernelet::KernelCharacter k;
  k.kernel = "k";
  k.thread_blocks = k.threads_per_tb = k.warps_per_tb = k.tbs_per_sm = 1;
  k.instructions_per_tb = 1;
  c.kernels.push_back(k);
  const std::string characterisation_file = test::scratch_path("typed_options_kernelet.yaml");
  kernelet::write_characterisation(characterisation_file, c);
  const std::map<std::string, PolicyOptions> required = {{"stm", {{"profiles", profile_file}}},
                                                         {"kernelet", {{"profiles", characterisation_file}}}};
  for (const PolicyInfo& info : policy_registry()) {
    EXPECT_EQ(info.summary.find("option"), std::string::npos) << info.name;
    const PolicyOptions base = required.count(info.name) != 0 ? required.at(info.name) : PolicyOptions{};
    for (const OptionSpec& spec : info.options) {
      EXPECT_FALSE(spec.help.empty()) << info.name << " " << spec.name;
      const std::string text = option_value_text(spec, spec.default_value);
      if (text.empty()) continue;  // the empty list or text: written by leaving the option out
      PolicyOptions given = base;
      given[spec.name] = text;
      EXPECT_NO_THROW((void)create_policy(info.name, given)) << info.name << " " << spec.name;
      EXPECT_EQ(effective_policy_options(info.name, given), effective_policy_options(info.name, base))
          << info.name << " " << spec.name;
    }
  }
}

TEST(PolicyOptionDeclarations, MessagesNameThePolicyTheOptionAndTheRange) {
  const auto message = [](const std::string& policy, const PolicyOptions& options) -> std::string {
    try {
      (void)create_policy(policy, options);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message("dss", {{"token_bits", "1"}}),
            "policy dss: option token_bits must be an integer from 2 to 31, or auto, not '1'");
  EXPECT_EQ(message("leaky-bucket", {{"shares", "1:"}}),
            "policy leaky-bucket: option shares must be integers from 1 to 255 separated by ':', not '1:'");
  EXPECT_EQ(message("ppq", {{"access", "sometimes"}}),
            "policy ppq: option access must be shared or exclusive, not 'sometimes'");
  EXPECT_EQ(message("srtf-adaptive", {{"threshold", "inf"}}),
            "policy srtf-adaptive: option threshold must be a finite number from 0 to 1000000, not 'inf'");
  EXPECT_EQ(message("srtf", {{"threshold", "0.5"}}),
            "policy srtf: unknown option 'threshold' (known: sample, decide)");
  EXPECT_EQ(message("sjf", {{"sample", "first-to-end"}}), "policy sjf takes no options (got 'sample')");
  EXPECT_EQ(message("fcfs", {{"access", "shared"}}), "policy fcfs takes no options (got 'access')");
}

}  // namespace
}  // namespace gpumux
