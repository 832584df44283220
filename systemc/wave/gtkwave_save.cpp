#include "wave/gtkwave_save.h"

#include <fstream>
#include <map>
#include <stdexcept>

namespace gpumux {

namespace {

// GTKWave trace flags (its save files' "@" lines): bit 2 decimal, bit 5 right justified, bit 9 blank
// (a label line), bit 13 translated through a filter file, bit 22 closed, bit 23 group begin, bit 24
// group end.
constexpr unsigned kDecimal = 1U << 2U;
constexpr unsigned kRightJustify = 1U << 5U;
constexpr unsigned kBlank = 1U << 9U;
constexpr unsigned kSigned = 1U << 10U;
constexpr unsigned kFileTranslated = 1U << 13U;
constexpr unsigned kClosed = 1U << 22U;
constexpr unsigned kGroupBegin = 1U << 23U;
constexpr unsigned kGroupEnd = 1U << 24U;

std::ofstream open_or_throw(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  return out;
}

std::string flags(unsigned f) {
  char text[16];
  std::snprintf(text, sizeof text, "@%x", f);
  return text;
}

}  // namespace

void write_gtkw_save(const std::string& save_path, const std::string& dump,
                     const std::vector<GtkwGroup>& groups) {
  std::ofstream out = open_or_throw(save_path);
  out << "[*] GTKWave save file written by gpumux: gtkwave " << dump << ' ' << save_path << '\n'
      << "[dumpfile] \"" << dump << "\"\n"
      << "[timestart] 0\n[size] 1600 900\n[pos] -1 -1\n"
      << "[sst_width] 240\n[signals_width] 320\n[sst_expanded] 1\n[sst_vpaned_height] 300\n";
  std::map<std::string, int> filter_ids;
  for (const GtkwGroup& g : groups) {
    out << flags(kBlank | kGroupBegin | (g.closed ? kClosed : 0U)) << "\n-" << g.name << '\n';
    for (const GtkwTrace& t : g.traces) {
      unsigned f = kDecimal | kRightJustify | (t.is_signed ? kSigned : 0U);
      if (!t.filter.empty()) {
        auto [it, added] = filter_ids.emplace(t.filter, static_cast<int>(filter_ids.size()) + 1);
        out << '^' << it->second << ' ' << t.filter << '\n';
        f |= kFileTranslated;
      }
      out << flags(f) << '\n' << t.path;
      if (t.width > 1) out << '[' << t.width - 1 << ":0]";
      out << '\n';
    }
    out << flags(kBlank | kGroupEnd) << "\n-" << g.name << '\n';
  }
  out << "[pattern_trace] 1\n[pattern_trace] 0\n";
  if (!out) throw std::runtime_error("cannot write '" + save_path + "'");
}

void write_translate_filter(const std::string& path,
                            const std::vector<std::pair<std::uint64_t, std::string>>& entries) {
  std::vector<std::pair<std::string, std::string>> text;
  text.reserve(entries.size());
  for (const auto& [value, meaning] : entries) text.emplace_back(std::to_string(value), meaning);
  write_translate_filter_text(path, text);
}

void write_translate_filter_text(const std::string& path,
                                 const std::vector<std::pair<std::string, std::string>>& entries) {
  std::ofstream out = open_or_throw(path);
  out << "# GTKWave translate filter written by gpumux: a value as GTKWave prints it, then its meaning\n";
  for (const auto& [value, text] : entries) out << value << ' ' << text << '\n';
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace gpumux
