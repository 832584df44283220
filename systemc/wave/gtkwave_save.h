#pragma once
// GTKWave's side files: a save file (.gtkw) that opens a dump with its signals grouped and formatted,
// and translate filter files that show an integer signal's values as names. Formats: GTKWave's
// documentation ("Translate Filter File"); trace flags as in its save files (decimal, right
// justified, translated through a filter file, group begin and end).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpumux {

struct GtkwTrace {
  std::string path;        ///< dotted signal path in the dump
  unsigned width = 1;      ///< bits
  std::string filter;      ///< translate filter file (absolute path), or empty: plain decimal
  bool is_signed = false;  ///< shown as a signed (two's complement) decimal
};

struct GtkwGroup {
  std::string name;
  std::vector<GtkwTrace> traces;
  bool closed = false;  ///< shown collapsed
};

/// Writes the save file for `dump` (absolute path). Throws std::runtime_error on a write failure.
void write_gtkw_save(const std::string& save_path, const std::string& dump,
                     const std::vector<GtkwGroup>& groups);

/// Writes a translate filter file: one line per (decimal value, text).
void write_translate_filter(const std::string& path,
                            const std::vector<std::pair<std::uint64_t, std::string>>& entries);
/// The same with the values as GTKWave prints them (e.g. "-32768" for a signed trace).
void write_translate_filter_text(const std::string& path,
                                 const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace gpumux
