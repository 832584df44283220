#pragma once
// A thin, strict layer over yaml-cpp for the config loaders. Every problem with a user's file becomes
// an InputError naming the file, the 1-based line and column, and the dotted key path of the value
// (e.g. "processes[1].streams[0][2].kernel.name"), so a user can jump straight to the mistake.
//
// Strictness is deliberate: unknown keys are errors (a typo must not silently fall back to a default),
// a quoted "100" is not a number, 1.5 and 1e6 are not integers, and explicit nulls are not values.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/types.h"

namespace gpumux::config {

/// One value of a YAML document together with where it is: file, position and key path.
class YamlNode {
 public:
  YamlNode(const YAML::Node& node, std::string key, std::shared_ptr<const std::string> file,
           SourceLocation fallback);

  [[nodiscard]] const std::string& key() const { return key_; }
  [[nodiscard]] const std::string& file() const { return *file_; }
  /// Position of the value; empty values report their key's (or parent's) position.
  [[nodiscard]] SourceLocation where() const;
  [[noreturn]] void fail(const std::string& message) const;

  [[nodiscard]] bool is_map() const { return node_.IsMap(); }
  [[nodiscard]] bool is_list() const { return node_.IsSequence(); }
  [[nodiscard]] bool is_null() const { return node_.IsNull(); }
  /// "a map", "a list", "null", "a string 'x'", "the number 3", ... for messages.
  [[nodiscard]] std::string describe() const;

  /// Non-empty scalar text (a plain 42 is accepted as the string "42"): valid UTF-8 without control
  /// characters other than newline and tab (free text such as descriptions may span lines).
  [[nodiscard]] std::string as_string() const;
  /// A name (of a GPU, kernel, process, ...): as_string, on one line (no newline or tab), at most
  /// kMaxNameBytes long. Names end up in JSON, tables and file names.
  [[nodiscard]] std::string as_name() const;
  /// A switch: `on` (true) or `off` (false); anything else fails with "must be on (`on_means`) or off".
  [[nodiscard]] bool as_on_off(const std::string& on_means) const;
  /// A name that also becomes one component of an output path (`out/<workload name>/`): as_name, and
  /// not ".", "..", nor containing '/' or '\\', so it can never leave its output folder.
  [[nodiscard]] std::string as_path_component() const;
  /// Integer written in decimal; errors on floats, quoted strings, out-of-range values.
  [[nodiscard]] std::int64_t as_int() const;
  /// Integer >= min (min 1: "must be positive"); fits in 32 bits.
  [[nodiscard]] std::uint32_t as_u32(std::uint32_t min = 1) const;
  [[nodiscard]] std::uint64_t as_u64(std::uint64_t min = 1) const;
  [[nodiscard]] int as_i32() const;
  /// Finite real number (integers accepted).
  [[nodiscard]] double as_number() const;
  [[nodiscard]] double as_positive_number() const;     ///< > 0
  [[nodiscard]] double as_nonnegative_number() const;  ///< >= 0
  /// Integer in [min, max] (a key's physical range, docs/config.md); the message names the range
  /// and, when given, its unit ("SMs", "bytes").
  [[nodiscard]] std::uint64_t as_u64_in(std::uint64_t min, std::uint64_t max, const char* unit = "") const;
  [[nodiscard]] std::uint32_t as_u32_in(std::uint32_t min, std::uint32_t max, const char* unit = "") const;
  /// Finite number in [min, max].
  [[nodiscard]] double as_number_in(double min, double max, const char* unit = "") const;

  /// Elements of a list, keyed "key[i]". Errors if this is not a list, or (non_empty) if it is empty.
  [[nodiscard]] std::vector<YamlNode> as_list(bool non_empty = true) const;

  /// Child with a dotted key path and this node's position as fallback.
  [[nodiscard]] YamlNode child(const YAML::Node& node, const std::string& name) const;

 private:
  friend class YamlMap;
  [[nodiscard]] const std::string& scalar_for_number(const char* expected) const;

  YAML::Node node_;
  std::string key_;
  std::shared_ptr<const std::string> file_;
  SourceLocation fallback_;
};

/// A YAML map read against the list of keys it may contain. Unknown and duplicate keys are reported
/// at construction, at the offending key, together with the keys that are allowed.
class YamlMap {
 public:
  YamlMap(const YamlNode& node, const std::vector<std::string_view>& allowed);
  /// A map whose keys are free-form (e.g. `reference:`); only duplicates are rejected.
  static YamlMap any_keys(const YamlNode& node);

  [[nodiscard]] const YamlNode& node() const { return node_; }
  [[nodiscard]] SourceLocation where() const { return node_.where(); }
  [[nodiscard]] bool has(std::string_view key) const;
  /// The value of `key`; "missing required key" at the map's position if absent.
  [[nodiscard]] YamlNode required(std::string_view key) const;
  [[nodiscard]] std::optional<YamlNode> optional(std::string_view key) const;
  /// All entries in file order: (key text, value).
  [[nodiscard]] const std::vector<std::pair<std::string, YamlNode>>& entries() const { return entries_; }

  // Typed shorthands for the common cases.
  [[nodiscard]] std::string required_string(std::string_view key) const;
  [[nodiscard]] std::string optional_string(std::string_view key, const std::string& fallback) const;
  [[nodiscard]] std::uint32_t required_u32(std::string_view key, std::uint32_t min = 1) const;
  [[nodiscard]] std::uint32_t optional_u32(std::string_view key, std::uint32_t fallback,
                                           std::uint32_t min = 1) const;
  [[nodiscard]] double required_positive(std::string_view key) const;
  [[nodiscard]] double required_nonnegative(std::string_view key) const;
  [[nodiscard]] double optional_nonnegative(std::string_view key, double fallback) const;
  [[nodiscard]] std::uint32_t required_u32_in(std::string_view key, std::uint32_t min, std::uint32_t max,
                                              const char* unit = "") const;
  [[nodiscard]] std::uint32_t optional_u32_in(std::string_view key, std::uint32_t fallback, std::uint32_t min,
                                              std::uint32_t max, const char* unit = "") const;

 private:
  explicit YamlMap(const YamlNode& node);
  [[nodiscard]] const YamlNode* find(std::string_view key) const;

  YamlNode node_;
  std::vector<std::pair<std::string, YamlNode>> entries_;
  std::vector<YamlNode> key_nodes_;  ///< parallel to entries_: the key scalars, for error positions
};

/// A time read from `value` (already scaled to picoseconds) as TimePs. Durations beyond the model's
/// time horizon (kTimeHorizonPs, ~11.6 days) would overflow sums of TimePs and are certainly typos;
/// `allow_zero` false rejects values that round to 0 ps.
[[nodiscard]] TimePs to_ps(const YamlNode& value, double ps, bool allow_zero);

/// Config files larger than this are refused before they are read (the largest shipped file is
/// ~15 KB; a mistaken path to a log or a device must not be read without limit).
inline constexpr std::uintmax_t kMaxConfigFileBytes = 8U << 20U;
/// Longest name (GPU, kernel, process, workload, label) in bytes.
inline constexpr std::size_t kMaxNameBytes = 200;

/// Reads and parses `path`. Unreadable files, anything but a regular file (devices, pipes), files over
/// kMaxConfigFileBytes, malformed YAML and files with more than one YAML document become InputErrors
/// (with the parser's line and column where there is one). The root must be a map.
[[nodiscard]] YamlNode load_yaml_file(const std::string& path);

/// Empty when `text` is valid UTF-8 without control characters (newline and tab allowed when
/// `multi_line`); otherwise why not, with the byte offset.
[[nodiscard]] std::string text_problem(std::string_view text, bool multi_line);

/// The candidate closest to `name` if it is at most two edits away (for "did you mean" hints), else "".
[[nodiscard]] std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

/// "a, b or c" for messages listing the accepted choices (`last` joins the final pair: " or ", " and ").
[[nodiscard]] std::string join_choices(const std::vector<std::string>& choices, const char* last = " or ");

}  // namespace gpumux::config
