#pragma once
// Typed options of pluggable blocks (policies now; warp schedulers and memory schedulers as they
// land). Each block declares its options once, as a list of OptionSpec (name, type, range, default,
// help); everything else is derived from that list:
//   - parse_options: the user's KEY=VALUE text (--policy-opt, an experiment's `options:` map) into
//     typed values, defaults filled in; InputError naming the block, the option, the bad value and the
//     allowed range or choices; unknown names list the known ones;
//   - describe_options: the help text of `gpumux list ...`;
//   - OptionValues::to_json: the effective values written to stats.json.
// Plain C++: no SystemC types.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumux {

/// Options as the user wrote them: name -> value text.
using OptionText = std::map<std::string, std::string>;

/// One typed value. std::monostate is `auto` (an integer option whose default depends on the
/// configuration the block meets, e.g. DSS token bits on the GPU's SM count).
using OptionValue =
    std::variant<std::monostate, bool, std::int64_t, double, std::string, std::vector<std::int64_t>>;

/// The declaration of one option. Build it with the named constructors below.
struct OptionSpec {
  enum class Type : std::uint8_t {
    kInteger,      ///< whole number in [min_integer, max_integer]; digits only (a '-' when min < 0)
    kReal,         ///< number in [min_real, max_real]; "inf" only when max_real is infinite; never nan
    kSwitch,       ///< on | off
    kChoice,       ///< one of `choices`
    kIntegerList,  ///< one or more integers in [min_integer, max_integer] separated by `separator`
    kText,         ///< any text on one line (a file path); the default is empty, meaning `empty_meaning`
  };

  std::string name;
  Type type = Type::kInteger;
  std::string help;  ///< one sentence: what the option does (the range and default are added)
  std::int64_t min_integer = 0;
  std::int64_t max_integer = 0;
  double min_real = 0;
  double max_real = 0;
  std::vector<std::string> choices;
  char separator = ':';
  /// kInteger only: when not empty, the word `auto` is accepted and is the default; this says what
  /// auto means (shown in help).
  std::string auto_meaning;
  /// kIntegerList and kText: what an absent value means (shown in help); the default is empty.
  std::string empty_meaning;
  OptionValue default_value;
  /// kText only: the text names a file; an experiment file's run resolves it relative to itself.
  bool is_path = false;

  [[nodiscard]] static OptionSpec integer(std::string name, std::int64_t min, std::int64_t max,
                                          std::int64_t fallback, std::string help);
  /// An integer whose default is `auto`, meaning `auto_meaning`.
  [[nodiscard]] static OptionSpec integer_or_auto(std::string name, std::int64_t min, std::int64_t max,
                                                  std::string auto_meaning, std::string help);
  /// max = infinity accepts "inf".
  [[nodiscard]] static OptionSpec real(std::string name, double min, double max, double fallback,
                                       std::string help);
  [[nodiscard]] static OptionSpec on_off(std::string name, bool fallback, std::string help);
  [[nodiscard]] static OptionSpec choice(std::string name, std::vector<std::string> choices,
                                         std::string fallback, std::string help);
  /// Default: the empty list, meaning `empty_meaning`.
  [[nodiscard]] static OptionSpec integer_list(std::string name, std::int64_t min, std::int64_t max,
                                               char separator, std::string empty_meaning, std::string help);
  /// Free text on one line, e.g. a file path. Default: empty, meaning `empty_meaning`.
  [[nodiscard]] static OptionSpec text(std::string name, std::string empty_meaning, std::string help);
  /// A file path: text whose relative value an experiment file resolves against its own folder.
  [[nodiscard]] static OptionSpec path(std::string name, std::string empty_meaning, std::string help);
};

using OptionSpecs = std::vector<OptionSpec>;

/// "integer 2..31 or auto", "number 0..1000000", "on|off", "a|b", "integers 1..255 separated by ':'".
[[nodiscard]] std::string option_range_text(const OptionSpec& spec);
/// A value as the user would write it ("auto", "0.5", "on", "3:1"; "" for the empty list).
[[nodiscard]] std::string option_value_text(const OptionSpec& spec, const OptionValue& value);

/// Every declared option with its value (the given one, else the default).
class OptionValues {
 public:
  OptionValues() = default;
  OptionValues(std::string owner, const OptionSpecs& specs, std::map<std::string, OptionValue> values)
      : owner_(std::move(owner)), specs_(specs), values_(std::move(values)) {}

  /// Typed reads. Asking for an undeclared name or the wrong type is a programming error
  /// (std::logic_error), never an input error.
  [[nodiscard]] std::int64_t integer(const std::string& name) const;
  /// kInteger declared with integer_or_auto: nullopt for auto.
  [[nodiscard]] std::optional<std::int64_t> integer_or_auto(const std::string& name) const;
  [[nodiscard]] double real(const std::string& name) const;
  [[nodiscard]] bool on(const std::string& name) const;
  [[nodiscard]] const std::string& choice(const std::string& name) const;
  [[nodiscard]] const std::vector<std::int64_t>& integer_list(const std::string& name) const;
  /// kText: the text, empty when not given.
  [[nodiscard]] const std::string& text(const std::string& name) const;
  /// {name: value} for every declared option: integers and reals as numbers, auto as "auto",
  /// switches as "on"/"off", choices as their name, lists as arrays of integers.
  [[nodiscard]] nlohmann::json to_json() const;

 private:
  [[nodiscard]] const OptionValue& at(const std::string& name) const;

  std::string owner_;
  OptionSpecs specs_;
  std::map<std::string, OptionValue> values_;
};

/// Parses `given` against `specs`. `owner` names the block in messages ("policy dss"). Throws
/// InputError: "<owner>: option NAME must be RANGE, not 'VALUE'", "<owner>: unknown option 'NAME'
/// (known: a, b)", "<owner> takes no options (got 'NAME')".
[[nodiscard]] OptionValues parse_options(const std::string& owner, const OptionSpecs& specs,
                                         const OptionText& given);

/// The text form of `values`, an object as OptionValues::to_json writes it (stats.json
/// "policy_options"), that parse_options reads back to the same values: how `gpumux run --replay`
/// repeats a run's options. Throws InputError naming `owner` and the option when a value has a type
/// to_json never writes for its declaration.
[[nodiscard]] OptionText option_text_from_json(const std::string& owner, const OptionSpecs& specs,
                                               const nlohmann::json& values);

/// Help text, one block per option: "NAME  RANGE, default DEFAULT" and then the help (and what auto
/// or an empty list means) on the next line, each line starting with `indent`. "" without options.
[[nodiscard]] std::string describe_options(const OptionSpecs& specs, const std::string& indent);

}  // namespace gpumux
