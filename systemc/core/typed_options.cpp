#include "core/typed_options.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "core/error.h"

namespace gpumux {

namespace {

constexpr const char* kAuto = "auto";

/// 1000000 rather than 1e+06 for whole numbers; the shortest round-trip text otherwise; "inf".
std::string real_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::array<char, 64> buffer{};
  const bool whole = v == std::floor(v) && std::fabs(v) < 1e15;
  const auto result =
      whole ? std::to_chars(buffer.data(), buffer.data() + buffer.size(), v, std::chars_format::fixed)
            : std::to_chars(buffer.data(), buffer.data() + buffer.size(), v);
  return {buffer.data(), result.ptr};
}

/// "a or b", "a, b or c".
std::string or_list(const std::vector<std::string>& words) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) text += i + 1 == words.size() ? " or " : ", ";
    text += words[i];
  }
  return text;
}

std::optional<std::int64_t> parse_integer(const std::string& text, std::int64_t min, std::int64_t max) {
  // from_chars takes no '+' and no spaces; a '-' only where negative values are allowed at all.
  if (text.empty() || (text.front() == '-' && min >= 0)) return std::nullopt;
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || v < min || v > max) return std::nullopt;
  return v;
}

std::optional<double> parse_real(const std::string& text, double min, double max) {
  if (text.empty()) return std::nullopt;
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, std::chars_format::general);
  // nan is never a setting; inf only where the range reaches it; out-of-range text (1e400) fails.
  if (ec != std::errc() || ptr != end || std::isnan(v) || v < min || v > max) return std::nullopt;
  if (std::isinf(v) && !std::isinf(max)) return std::nullopt;
  return v == 0 ? 0.0 : v;  // -0 reads as 0
}

std::optional<OptionValue> parse_value(const OptionSpec& spec, const std::string& text) {
  switch (spec.type) {
    case OptionSpec::Type::kInteger:
      if (!spec.auto_meaning.empty() && text == kAuto) return OptionValue{std::monostate{}};
      if (const auto v = parse_integer(text, spec.min_integer, spec.max_integer)) return OptionValue{*v};
      return std::nullopt;
    case OptionSpec::Type::kReal:
      if (const auto v = parse_real(text, spec.min_real, spec.max_real)) return OptionValue{*v};
      return std::nullopt;
    case OptionSpec::Type::kSwitch:
      if (text == "on" || text == "off") return OptionValue{text == "on"};
      return std::nullopt;
    case OptionSpec::Type::kChoice:
      if (std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end()) {
        return std::nullopt;
      }
      return OptionValue{text};
    case OptionSpec::Type::kIntegerList: {
      std::vector<std::int64_t> list;
      std::size_t start = 0;
      while (true) {  // every element, the empty ones of "", "1::2" and "1:" included, must parse
        const std::size_t stop = text.find(spec.separator, start);
        const auto v = parse_integer(text.substr(start, stop - start), spec.min_integer, spec.max_integer);
        if (!v) return std::nullopt;
        list.push_back(*v);
        if (stop == std::string::npos) break;
        start = stop + 1;
      }
      return OptionValue{std::move(list)};
    }
    case OptionSpec::Type::kText:
      // One line of printable text: it is echoed in messages and stats.json.
      if (text.empty() || std::any_of(text.begin(), text.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
          })) {
        return std::nullopt;
      }
      return OptionValue{text};
  }
  return std::nullopt;
}

OptionSpec make(std::string name, OptionSpec::Type type, std::string help) {
  OptionSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.help = std::move(help);
  return spec;
}

/// A declaration whose default its own range rejects is a programming error.
void check_default(const OptionSpec& spec) {
  if (std::holds_alternative<std::monostate>(spec.default_value) && spec.auto_meaning.empty()) {
    throw std::logic_error("option " + spec.name + ": no default");
  }
  const bool empty_list =
      (spec.type == OptionSpec::Type::kIntegerList &&
       std::get<std::vector<std::int64_t>>(spec.default_value).empty()) ||
      (spec.type == OptionSpec::Type::kText && std::get<std::string>(spec.default_value).empty());
  if (empty_list || std::holds_alternative<std::monostate>(spec.default_value)) return;
  if (!parse_value(spec, option_value_text(spec, spec.default_value))) {
    throw std::logic_error("option " + spec.name + ": default outside its range");
  }
}

std::string default_text(const OptionSpec& spec) {
  const auto* list = std::get_if<std::vector<std::int64_t>>(&spec.default_value);
  if (list != nullptr && list->empty()) return "none";
  if (spec.type == OptionSpec::Type::kText && std::get<std::string>(spec.default_value).empty()) {
    return "none";
  }
  return option_value_text(spec, spec.default_value);
}

}  // namespace

OptionSpec OptionSpec::integer(std::string name, std::int64_t min, std::int64_t max, std::int64_t fallback,
                               std::string help) {
  OptionSpec spec = make(std::move(name), Type::kInteger, std::move(help));
  spec.min_integer = min;
  spec.max_integer = max;
  spec.default_value = fallback;
  check_default(spec);
  return spec;
}

OptionSpec OptionSpec::integer_or_auto(std::string name, std::int64_t min, std::int64_t max,
                                       std::string auto_meaning, std::string help) {
  OptionSpec spec = make(std::move(name), Type::kInteger, std::move(help));
  spec.min_integer = min;
  spec.max_integer = max;
  spec.auto_meaning = std::move(auto_meaning);
  check_default(spec);
  return spec;
}

OptionSpec OptionSpec::real(std::string name, double min, double max, double fallback, std::string help) {
  OptionSpec spec = make(std::move(name), Type::kReal, std::move(help));
  spec.min_real = min;
  spec.max_real = max;
  spec.default_value = fallback;
  check_default(spec);
  return spec;
}

OptionSpec OptionSpec::on_off(std::string name, bool fallback, std::string help) {
  OptionSpec spec = make(std::move(name), Type::kSwitch, std::move(help));
  spec.default_value = fallback;
  check_default(spec);
  return spec;
}

OptionSpec OptionSpec::choice(std::string name, std::vector<std::string> choices, std::string fallback,
                              std::string help) {
  OptionSpec spec = make(std::move(name), Type::kChoice, std::move(help));
  spec.choices = std::move(choices);
  spec.default_value = std::move(fallback);
  check_default(spec);
  return spec;
}

OptionSpec OptionSpec::integer_list(std::string name, std::int64_t min, std::int64_t max, char separator,
                                    std::string empty_meaning, std::string help) {
  OptionSpec spec = make(std::move(name), Type::kIntegerList, std::move(help));
  spec.min_integer = min;
  spec.max_integer = max;
  spec.separator = separator;
  spec.empty_meaning = std::move(empty_meaning);
  spec.default_value = std::vector<std::int64_t>{};
  check_default(spec);
  return spec;
}

OptionSpec OptionSpec::text(std::string name, std::string empty_meaning, std::string help) {
  OptionSpec spec = make(std::move(name), Type::kText, std::move(help));
  spec.empty_meaning = std::move(empty_meaning);
  spec.default_value = std::string();
  check_default(spec);
  return spec;
}

OptionSpec OptionSpec::path(std::string name, std::string empty_meaning, std::string help) {
  OptionSpec spec = text(std::move(name), std::move(empty_meaning), std::move(help));
  spec.is_path = true;
  return spec;
}

std::string option_range_text(const OptionSpec& spec) {
  switch (spec.type) {
    case OptionSpec::Type::kInteger:
      return "an integer from " + std::to_string(spec.min_integer) + " to " +
             std::to_string(spec.max_integer) + (spec.auto_meaning.empty() ? "" : ", or auto");
    case OptionSpec::Type::kReal:
      return std::string(std::isinf(spec.max_real) ? "a number" : "a finite number") + " from " +
             real_text(spec.min_real) + " to " + real_text(spec.max_real);
    case OptionSpec::Type::kSwitch:
      return "on or off";
    case OptionSpec::Type::kChoice:
      return or_list(spec.choices);
    case OptionSpec::Type::kIntegerList:
      return "integers from " + std::to_string(spec.min_integer) + " to " + std::to_string(spec.max_integer) +
             " separated by '" + std::string(1, spec.separator) + "'";
    case OptionSpec::Type::kText:
      return "text on one line";
  }
  return "";
}

std::string option_value_text(const OptionSpec& spec, const OptionValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return kAuto;
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "on" : "off";
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* r = std::get_if<double>(&value)) return real_text(*r);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  std::string text;
  for (const std::int64_t v : std::get<std::vector<std::int64_t>>(value)) {
    text += (text.empty() ? "" : std::string(1, spec.separator)) + std::to_string(v);
  }
  return text;
}

const OptionValue& OptionValues::at(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error(owner_ + ": option " + name + " is not declared");
  return it->second;
}

std::int64_t OptionValues::integer(const std::string& name) const {
  const auto* v = std::get_if<std::int64_t>(&at(name));
  if (v == nullptr) throw std::logic_error(owner_ + ": option " + name + " is not an integer");
  return *v;
}

std::optional<std::int64_t> OptionValues::integer_or_auto(const std::string& name) const {
  if (std::holds_alternative<std::monostate>(at(name))) return std::nullopt;
  return integer(name);
}

double OptionValues::real(const std::string& name) const {
  const auto* v = std::get_if<double>(&at(name));
  if (v == nullptr) throw std::logic_error(owner_ + ": option " + name + " is not a number");
  return *v;
}

bool OptionValues::on(const std::string& name) const {
  const auto* v = std::get_if<bool>(&at(name));
  if (v == nullptr) throw std::logic_error(owner_ + ": option " + name + " is not on/off");
  return *v;
}

const std::string& OptionValues::choice(const std::string& name) const {
  const auto* v = std::get_if<std::string>(&at(name));
  if (v == nullptr) throw std::logic_error(owner_ + ": option " + name + " is not a choice");
  return *v;
}

const std::string& OptionValues::text(const std::string& name) const {
  const auto* v = std::get_if<std::string>(&at(name));
  if (v == nullptr) throw std::logic_error(owner_ + ": option " + name + " is not text");
  return *v;
}

const std::vector<std::int64_t>& OptionValues::integer_list(const std::string& name) const {
  const auto* v = std::get_if<std::vector<std::int64_t>>(&at(name));
  if (v == nullptr) throw std::logic_error(owner_ + ": option " + name + " is not a list");
  return *v;
}

nlohmann::json OptionValues::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const OptionSpec& spec : specs_) {
    const OptionValue& value = at(spec.name);
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      j[spec.name] = *i;
    } else if (const auto* r = std::get_if<double>(&value)) {
      j[spec.name] = *r;
    } else if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) {
      j[spec.name] = *list;
    } else {
      j[spec.name] = option_value_text(spec, value);
    }
  }
  return j;
}

OptionValues parse_options(const std::string& owner, const OptionSpecs& specs, const OptionText& given) {
  std::map<std::string, OptionValue> values;
  for (const OptionSpec& spec : specs) values[spec.name] = spec.default_value;
  for (const auto& entry : given) {
    const std::string& key = entry.first;
    const std::string& text = entry.second;
    const auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.name == key; });
    if (spec == specs.end()) {
      if (specs.empty()) throw InputError(owner + " takes no options (got '" + key + "')");
      std::string known;
      for (const OptionSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
      throw InputError(owner + ": unknown option '" + key + "' (known: " + known + ")");
    }
    auto value = parse_value(*spec, text);
    if (!value) {
      throw InputError(owner + ": option " + key + " must be " + option_range_text(*spec) + ", not '" + text +
                       "'");
    }
    values[key] = std::move(*value);
  }
  return {owner, specs, std::move(values)};
}

OptionText option_text_from_json(const std::string& owner, const OptionSpecs& specs,
                                 const nlohmann::json& values) {
  if (!values.is_object()) throw InputError(owner + ": options must be an object of NAME: VALUE");
  OptionText text;
  for (const auto& entry : values.items()) {
    const std::string& key = entry.key();
    const nlohmann::json& value = entry.value();
    const auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.name == key; });
    // An unknown name is left to parse_options, which words the error with the known names.
    // The empty text is the default, written by leaving the option out.
    if (spec != specs.end() && spec->type == OptionSpec::Type::kText && value == "") continue;
    if (spec == specs.end() || value.is_string()) {
      text[key] = value.is_string() ? value.get<std::string>() : value.dump();
    } else if (value.is_number_integer()) {
      text[key] = value.dump();
    } else if (value.is_number_float()) {
      text[key] = real_text(value.get<double>());
    } else if (value.is_array() && spec->type == OptionSpec::Type::kIntegerList) {
      std::string list;
      for (const auto& item : value) {
        if (!item.is_number_integer()) throw InputError(owner + ": option " + key + " must list integers");
        list += (list.empty() ? "" : std::string(1, spec->separator)) + item.dump();
      }
      if (!list.empty()) text[key] = list;  // the empty list is the default, and has no text
    } else {
      throw InputError(owner + ": option " + key + " has a value of the wrong type (" + value.dump() + ")");
    }
  }
  return text;
}

std::string describe_options(const OptionSpecs& specs, const std::string& indent) {
  std::size_t width = 0;
  for (const OptionSpec& spec : specs) width = std::max(width, spec.name.size());
  width += 2;
  std::string text;
  for (const OptionSpec& spec : specs) {
    text += indent + spec.name + std::string(width - spec.name.size(), ' ') + option_range_text(spec) +
            "; default " + default_text(spec) + "\n";
    std::string help = spec.help;
    if (!spec.auto_meaning.empty()) help += " (auto: " + spec.auto_meaning + ")";
    if (!spec.empty_meaning.empty()) help += " (none: " + spec.empty_meaning + ")";
    text += indent + std::string(width, ' ') + help + "\n";
  }
  return text;
}

}  // namespace gpumux
