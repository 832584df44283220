#include "config/yaml_reader.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace gpumux::config {

namespace {

// yaml-cpp tags quoted scalars "!" and plain ones "?"; a quoted "100" (or !!str 100) is text, not a number.
bool is_quoted(const YAML::Node& node) { return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str"; }

bool is_decimal_integer(const std::string& text) {
  std::size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  if (i >= text.size()) return false;
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// strtod that must consume the whole text; nullopt when the text is not a number.
std::optional<double> parse_real(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front())) != 0) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0U : 1U)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string child_key(const std::string& parent, std::string_view name) {
  return parent.empty() ? std::string(name) : parent + "." + std::string(name);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// YamlNode

YamlNode::YamlNode(const YAML::Node& node, std::string key, std::shared_ptr<const std::string> file,
                   SourceLocation fallback)
    : node_(node), key_(std::move(key)), file_(std::move(file)), fallback_(std::move(fallback)) {}

SourceLocation YamlNode::where() const {
  const YAML::Mark mark = node_.Mark();
  if (mark.is_null() || mark.line < 0) return fallback_;
  // An empty value (`key:` then a newline) is marked at the next token, often the next line; its key's
  // position is the one the user wants to see.
  if (node_.IsNull() && fallback_.line > 0) return fallback_;
  return SourceLocation{*file_, mark.line + 1, mark.column + 1};
}

void YamlNode::fail(const std::string& message) const { throw InputError(where(), key_, message); }

std::string YamlNode::describe() const {
  if (node_.IsMap()) return "a map";
  if (node_.IsSequence()) return "a list";
  if (node_.IsNull()) return "an empty value (null)";
  if (is_quoted(node_)) return "the quoted string \"" + node_.Scalar() + "\"";
  return "'" + node_.Scalar() + "'";
}

std::string YamlNode::as_string() const {
  if (!node_.IsScalar()) fail("expected a string, got " + describe());
  if (node_.Scalar().empty()) fail("must not be empty");
  return node_.Scalar();
}

const std::string& YamlNode::scalar_for_number(const char* expected) const {
  if (!node_.IsScalar()) fail(std::string("expected ") + expected + ", got " + describe());
  if (is_quoted(node_)) {
    fail(std::string("expected ") + expected + ", got " + describe() + " (remove the quotes)");
  }
  return node_.Scalar();
}

std::int64_t YamlNode::as_int() const {
  const std::string& text = scalar_for_number("an integer");
  if (is_decimal_integer(text)) {
    const char* first = text.c_str() + (text[0] == '+' ? 1 : 0);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(first, text.c_str() + text.size(), value);
    if (ec == std::errc() && end == text.c_str() + text.size()) return value;
    fail("integer out of range: " + text);
  }
  if (const auto real = parse_real(text); real && std::isfinite(*real)) {
    fail("expected an integer, got the non-integer number " + text);
  }
  fail("expected an integer, got " + describe());
}

std::uint32_t YamlNode::as_u32(std::uint32_t min) const {
  const std::uint64_t value = as_u64(min);
  if (value > std::numeric_limits<std::uint32_t>::max()) {
    fail("value " + std::to_string(value) + " is too large (at most " +
         std::to_string(std::numeric_limits<std::uint32_t>::max()) + ")");
  }
  return static_cast<std::uint32_t>(value);
}

std::uint64_t YamlNode::as_u64(std::uint64_t min) const {
  const std::int64_t value = as_int();
  if (value < 0 || static_cast<std::uint64_t>(value) < min) {
    if (min == 1) fail("must be a positive integer, got " + std::to_string(value));
    fail("must be an integer >= " + std::to_string(min) + ", got " + std::to_string(value));
  }
  return static_cast<std::uint64_t>(value);
}

int YamlNode::as_i32() const {
  const std::int64_t value = as_int();
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    fail("integer out of range: " + std::to_string(value));
  }
  return static_cast<int>(value);
}

double YamlNode::as_number() const {
  const std::string& text = scalar_for_number("a number");
  const auto value = parse_real(text);
  if (!value) fail("expected a number, got " + describe());
  if (!std::isfinite(*value)) fail("expected a finite number, got " + text);
  return *value;
}

double YamlNode::as_positive_number() const {
  const double value = as_number();
  if (!(value > 0)) fail("must be positive, got " + node_.Scalar());
  return value;
}

double YamlNode::as_nonnegative_number() const {
  const double value = as_number();
  if (value < 0) fail("must not be negative, got " + node_.Scalar());
  return value;
}

std::vector<YamlNode> YamlNode::as_list(bool non_empty) const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe());
  if (non_empty && node_.size() == 0) fail("must be a non-empty list");
  std::vector<YamlNode> items;
  items.reserve(node_.size());
  const SourceLocation here = where();
  for (std::size_t i = 0; i < node_.size(); ++i) {
    items.emplace_back(node_[i], key_ + "[" + std::to_string(i) + "]", file_, here);
  }
  return items;
}

YamlNode YamlNode::child(const YAML::Node& node, const std::string& name) const {
  return YamlNode(node, child_key(key_, name), file_, where());
}

// ---------------------------------------------------------------------------------------------------
// YamlMap

YamlMap::YamlMap(const YamlNode& node) : node_(node) {
  if (!node.is_map()) node.fail("expected a map, got " + node.describe());
  for (auto it = node.node_.begin(); it != node.node_.end(); ++it) {
    const YamlNode key_node = node.child(it->first, it->first.IsScalar() ? it->first.Scalar() : "?");
    if (!it->first.IsScalar() || it->first.Scalar().empty()) key_node.fail("map keys must be plain names");
    const std::string name = it->first.Scalar();
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].first == name) {
        key_node.fail("duplicate key (first given at line " + std::to_string(key_nodes_[i].where().line) +
                      ")");
      }
    }
    key_nodes_.push_back(key_node);
    // The value falls back to its key's position, so an empty value still points at the right line.
    entries_.emplace_back(name, YamlNode(it->second, key_node.key(), node.file_, key_node.where()));
  }
}

YamlMap YamlMap::any_keys(const YamlNode& node) { return YamlMap(node); }

YamlMap::YamlMap(const YamlNode& node, std::initializer_list<std::string_view> allowed) : YamlMap(node) {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const std::string& name = entries_[i].first;
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    std::vector<std::string> choices(allowed.begin(), allowed.end());
    const std::string suggestion = closest_name(name, choices);
    std::string message = "unknown key";
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    message += "; allowed keys here: " + join_choices(choices);
    key_nodes_[i].fail(message);  // at the key itself, not at its value
  }
}

const YamlNode* YamlMap::find(std::string_view key) const {
  for (const auto& entry : entries_) {
    if (entry.first == key) return &entry.second;
  }
  return nullptr;
}

bool YamlMap::has(std::string_view key) const { return find(key) != nullptr; }

YamlNode YamlMap::required(std::string_view key) const {
  if (const YamlNode* value = find(key)) return *value;
  throw InputError(node_.where(), child_key(node_.key(), key), "required key is missing");
}

std::optional<YamlNode> YamlMap::optional(std::string_view key) const {
  if (const YamlNode* value = find(key)) return *value;
  return std::nullopt;
}

std::string YamlMap::required_string(std::string_view key) const { return required(key).as_string(); }

std::string YamlMap::optional_string(std::string_view key, const std::string& fallback) const {
  const auto value = optional(key);
  return value ? value->as_string() : fallback;
}

std::uint32_t YamlMap::required_u32(std::string_view key, std::uint32_t min) const {
  return required(key).as_u32(min);
}

std::uint32_t YamlMap::optional_u32(std::string_view key, std::uint32_t fallback, std::uint32_t min) const {
  const auto value = optional(key);
  return value ? value->as_u32(min) : fallback;
}

double YamlMap::required_positive(std::string_view key) const { return required(key).as_positive_number(); }

double YamlMap::required_nonnegative(std::string_view key) const {
  return required(key).as_nonnegative_number();
}

double YamlMap::optional_nonnegative(std::string_view key, double fallback) const {
  const auto value = optional(key);
  return value ? value->as_nonnegative_number() : fallback;
}

// ---------------------------------------------------------------------------------------------------

YamlNode load_yaml_file(const std::string& path) {
  const SourceLocation file_only{path, 0, 0};
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(file_only, "", "is a directory, expected a YAML file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(file_only, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(file_only, "", std::string("cannot read file: ") + std::strerror(errno));

  auto file = std::make_shared<const std::string>(path);
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::ParserException& e) {
    // yaml-cpp marks are 0-based; a mark at the very end of the text may be null.
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    const int column = e.mark.is_null() ? 0 : e.mark.column + 1;
    throw InputError(SourceLocation{path, line, column}, "", "malformed YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw InputError(file_only, "", std::string("malformed YAML: ") + e.what());
  }
  YamlNode node(root, "", file, SourceLocation{path, 1, 1});
  if (root.IsNull()) node.fail("the file is empty (expected a map of settings)");
  return node;
}

std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best_name;
  std::size_t best = 3;  // at most two edits away: closer guesses are typos, farther ones noise
  for (const std::string& candidate : candidates) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best) {
      best = d;
      best_name = candidate;
    }
  }
  return best_name;
}

std::string join_choices(const std::vector<std::string>& choices, const char* last) {
  std::string text;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) text += (i + 1 == choices.size()) ? last : ", ";
    text += choices[i];
  }
  return text;
}

TimePs to_ps(const YamlNode& value, double ps, bool allow_zero) {
  if (ps >= 1e18) value.fail("time is too long for the model's picosecond clock");
  if (!allow_zero && ps < 0.5) value.fail("duration rounds to 0 ps");
  return static_cast<TimePs>(std::llround(ps));
}

}  // namespace gpumux::config
