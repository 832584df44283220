#include "config/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

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

/// "4294967295", "0.5", "1e-300": a bound or value as a user would write it.
std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string range_text(const std::string& min, const std::string& max, const char* unit) {
  std::string text = "between " + min + " and " + max;
  if (unit != nullptr && *unit != '\0') text += std::string(" ") + unit;
  return text;
}

std::string child_key(const std::string& parent, std::string_view name) {
  return parent.empty() ? std::string(name) : parent + "." + std::string(name);
}

/// Where each document of a YAML stream starts; parses without building nodes (load_yaml_file).
struct DocumentStarts : YAML::EventHandler {
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnAlias(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& /*value*/) override {}
  void OnSequenceStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {}
  void OnMapEnd() override {}
};

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
  if (const std::string problem = text_problem(node_.Scalar(), true); !problem.empty()) fail(problem);
  return node_.Scalar();
}

std::string YamlNode::as_name() const {
  std::string name = as_string();
  if (const std::string problem = text_problem(name, false); !problem.empty()) fail("a name " + problem);
  if (name.size() > kMaxNameBytes) {
    fail("a name may be at most " + std::to_string(kMaxNameBytes) + " bytes long, this one has " +
         std::to_string(name.size()));
  }
  return name;
}

bool YamlNode::as_on_off(const std::string& on_means) const {
  const std::string value = as_string();
  if (value != "on" && value != "off") fail("must be on (" + on_means + ") or off, not '" + value + "'");
  return value == "on";
}

std::string YamlNode::as_path_component() const {
  std::string name = as_name();
  if (name == "." || name == ".." || name.find_first_of("/\\") != std::string::npos) {
    fail("'" + name + "' names an output folder: it must not be '.' or '..' nor contain '/' or '\\'");
  }
  return name;
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

std::uint64_t YamlNode::as_u64_in(std::uint64_t min, std::uint64_t max, const char* unit) const {
  const std::int64_t value = as_int();
  if (value < 0 || static_cast<std::uint64_t>(value) < min || static_cast<std::uint64_t>(value) > max) {
    fail("must be " + range_text(std::to_string(min), std::to_string(max), unit) + ", got " +
         std::to_string(value));
  }
  return static_cast<std::uint64_t>(value);
}

std::uint32_t YamlNode::as_u32_in(std::uint32_t min, std::uint32_t max, const char* unit) const {
  return static_cast<std::uint32_t>(as_u64_in(min, max, unit));
}

double YamlNode::as_number_in(double min, double max, const char* unit) const {
  const double value = as_number();
  if (value < min || value > max) {
    fail("must be " + range_text(number_text(min), number_text(max), unit) + ", got " + node_.Scalar());
  }
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
    if (const std::string problem = text_problem(name, false); !problem.empty()) {
      key_node.fail("a key " + problem);
    }
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

YamlMap::YamlMap(const YamlNode& node, const std::vector<std::string_view>& allowed) : YamlMap(node) {
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

std::uint32_t YamlMap::required_u32_in(std::string_view key, std::uint32_t min, std::uint32_t max,
                                       const char* unit) const {
  return required(key).as_u32_in(min, max, unit);
}

std::uint32_t YamlMap::optional_u32_in(std::string_view key, std::uint32_t fallback, std::uint32_t min,
                                       std::uint32_t max, const char* unit) const {
  const auto value = optional(key);
  return value ? value->as_u32_in(min, max, unit) : fallback;
}

// ---------------------------------------------------------------------------------------------------

YamlNode load_yaml_file(const std::string& path) {
  const SourceLocation file_only{path, 0, 0};
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    throw InputError(file_only, "", "is a directory, expected a YAML file");
  }
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // /dev/zero, a FIFO, a socket: reading could block or never end.
    throw InputError(file_only, "", "is not a regular file (a device, pipe or socket), expected a YAML file");
  }
  if (std::filesystem::is_regular_file(status)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxConfigFileBytes) {
      throw InputError(file_only, "",
                       "is " + std::to_string(size) + " bytes, larger than a config file may be (" +
                           std::to_string(kMaxConfigFileBytes) + " bytes); is this the right file?");
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(file_only, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(file_only, "", std::string("cannot read file: ") + std::strerror(errno));

  auto file = std::make_shared<const std::string>(path);
  YAML::Node root;
  try {
    // Load silently ignores every document after the first, so count them first. Not with LoadAll:
    // yaml-cpp 0.7's LoadAll never returns on a flow indicator outside a flow collection (a stray
    // ',', jbeder/yaml-cpp#1040; found by tb/fuzz): the parser reports an empty document at the same
    // position forever without consuming the token, and LoadAll keeps every one of them.
    std::istringstream stream(text.str());
    YAML::Parser parser(stream);
    DocumentStarts starts;
    while (parser.HandleNextDocument(starts)) {
      const std::size_t n = starts.marks.size();
      if (n >= 2 && starts.marks[n - 1].pos == starts.marks[n - 2].pos) {
        const YAML::Mark& mark = starts.marks.back();
        const std::string all = text.str();
        const auto pos = static_cast<std::size_t>(mark.pos);
        const std::string token = pos < all.size() ? "'" + all.substr(pos, 1) + "'" : "end of file";
        throw InputError(SourceLocation{path, mark.line + 1, mark.column + 1}, "",
                         "malformed YAML: unexpected " + token);
      }
    }
    if (starts.marks.size() > 1) {
      const YAML::Mark& mark = starts.marks[1];
      throw InputError(SourceLocation{path, mark.line + 1, mark.column + 1}, "",
                       "the file holds " + std::to_string(starts.marks.size()) +
                           " YAML documents (separated by '---'); a config file is exactly one");
    }
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

std::string text_problem(std::string_view text, bool multi_line) {
  // UTF-8 by its definition (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::string at = " at byte " + std::to_string(i);
    if (byte < 0x80) {
      const bool allowed_control = multi_line && (byte == '\n' || byte == '\t' || byte == '\r');
      if ((byte < 0x20 || byte == 0x7F) && !allowed_control) {
        return "contains the control character 0x" + std::string(1, "0123456789abcdef"[byte >> 4U]) +
               std::string(1, "0123456789abcdef"[byte & 0xFU]) + at + " (names must be printable)";
      }
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code = 0;
    if ((byte & 0xE0U) == 0xC0U) {
      length = 2;
      code = byte & 0x1FU;
    } else if ((byte & 0xF0U) == 0xE0U) {
      length = 3;
      code = byte & 0x0FU;
    } else if ((byte & 0xF8U) == 0xF0U) {
      length = 4;
      code = byte & 0x07U;
    } else {
      return "is not valid UTF-8" + at;
    }
    if (i + length > text.size()) return "is not valid UTF-8 (truncated character" + at + ")";
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0U) != 0x80U) return "is not valid UTF-8" + at;
      code = (code << 6U) | (next & 0x3FU);
    }
    const std::uint32_t smallest = length == 2 ? 0x80U : length == 3 ? 0x800U : 0x10000U;
    if (code < smallest || code > 0x10FFFFU || (code >= 0xD800U && code <= 0xDFFFU)) {
      return "is not valid UTF-8" + at;
    }
    if (code >= 0x80U && code <= 0x9FU) {
      return "contains a C1 control character" + at + " (names must be printable)";
    }
    i += length;
  }
  return {};
}

TimePs to_ps(const YamlNode& value, double ps, bool allow_zero) {
  if (!(ps < static_cast<double>(kTimeHorizonPs))) {
    value.fail("time is beyond the model's horizon of 1e18 ps (about 11.6 days)");
  }
  if (!allow_zero && ps < 0.5) value.fail("duration rounds to 0 ps");
  return static_cast<TimePs>(std::llround(ps));
}

}  // namespace gpumux::config
