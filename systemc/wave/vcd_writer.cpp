#include "wave/vcd_writer.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace gpumux {

namespace {

/// VCD identifier codes: printable ASCII from '!' to '~', base 94.
std::string identifier(std::uint32_t n) {
  std::string id;
  do {
    id += static_cast<char>('!' + n % 94);
    n /= 94;
  } while (n > 0);
  return id;
}

std::string binary(std::uint64_t value, unsigned width) {
  if (width == 1) return std::to_string(value & 1U);
  std::string bits = "b";
  bool leading = true;
  for (int b = static_cast<int>(width) - 1; b >= 0; --b) {
    const bool one = ((value >> b) & 1U) != 0;
    if (one) leading = false;
    if (!leading || b == 0) bits += one ? '1' : '0';
  }
  return bits;
}

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', from)) {
    parts.push_back(path.substr(from, dot - from));
    from = dot + 1;
  }
  parts.push_back(path.substr(from));
  return parts;
}

}  // namespace

VcdWriter::Signal VcdWriter::add(const std::string& path, unsigned width) {
  if (width == 0 || width > 64) {
    throw std::logic_error("VCD signal '" + path + "': width must be 1 to 64 bits");
  }
  if (std::find(paths_.begin(), paths_.end(), path) != paths_.end()) {
    throw std::logic_error("VCD signal '" + path + "' declared twice");
  }
  paths_.push_back(path);
  widths_.push_back(width);
  return static_cast<Signal>(paths_.size() - 1);
}

void VcdWriter::change(Signal signal, TimePs time_ps, std::uint64_t value) {
  changes_.push_back({time_ps, changes_.size(), signal, value});
}

void VcdWriter::write(std::ostream& out, const std::string& version) const {
  out << "$version " << version << " $end\n$timescale 1ps $end\n";
  // Declarations, scope by scope in path order.
  std::vector<Signal> by_path(paths_.size());
  for (Signal s = 0; s < by_path.size(); ++s) by_path[s] = s;
  std::sort(by_path.begin(), by_path.end(),
            [&](Signal a, Signal b) { return split(paths_[a]) < split(paths_[b]); });
  std::vector<std::string> open;
  for (const Signal s : by_path) {
    std::vector<std::string> parts = split(paths_[s]);
    const std::string name = parts.back();
    parts.pop_back();
    std::size_t common = 0;
    while (common < open.size() && common < parts.size() && open[common] == parts[common]) ++common;
    for (std::size_t i = open.size(); i > common; --i) out << "$upscope $end\n";
    open.resize(common);
    for (std::size_t i = common; i < parts.size(); ++i) {
      out << "$scope module " << parts[i] << " $end\n";
      open.push_back(parts[i]);
    }
    out << "$var wire " << widths_[s] << ' ' << identifier(s) << ' ' << name;
    if (widths_[s] > 1) out << " [" << widths_[s] - 1 << ":0]";
    out << " $end\n";
  }
  for (std::size_t i = open.size(); i > 0; --i) out << "$upscope $end\n";
  out << "$enddefinitions $end\n";

  std::vector<Change> changes = changes_;
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.time_ps != b.time_ps ? a.time_ps < b.time_ps : a.order < b.order;
  });
  std::vector<std::uint64_t> value(paths_.size(), 0);
  std::size_t i = 0;
  // Time 0: the values every signal starts with.
  for (; i < changes.size() && changes[i].time_ps == 0; ++i) value[changes[i].signal] = changes[i].value;
  out << "#0\n$dumpvars\n";
  for (Signal s = 0; s < paths_.size(); ++s) {
    out << binary(value[s], widths_[s]) << (widths_[s] > 1 ? " " : "") << identifier(s) << '\n';
  }
  out << "$end\n";
  while (i < changes.size()) {
    const TimePs t = changes[i].time_ps;
    std::map<Signal, std::uint64_t> last;  // the instant's final value per signal, in signal order
    for (; i < changes.size() && changes[i].time_ps == t; ++i) last[changes[i].signal] = changes[i].value;
    bool stamped = false;
    for (const auto& [s, v] : last) {
      if (v == value[s]) continue;
      if (!stamped) out << '#' << t << '\n';
      stamped = true;
      value[s] = v;
      out << binary(v, widths_[s]) << (widths_[s] > 1 ? " " : "") << identifier(s) << '\n';
    }
  }
}

}  // namespace gpumux
