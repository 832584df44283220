#pragma once
// A Value Change Dump (IEEE 1364 section 18) of integer signals in a scope hierarchy. Plain C++:
// the waveform is built from the run's records once it has ended (wave/waveform.h), not sampled by
// SystemC's tracing, so the hierarchy, the names, the header and same-instant changes are ours to
// choose: scopes nest by the dots of a signal's path, the header carries no date (identical runs give
// identical files), and a signal changes at most once per instant (the last value given wins).

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/types.h"

namespace gpumux {

class VcdWriter {
 public:
  using Signal = std::uint32_t;

  /// Declares `path` ("gpu.sm_03.state": scopes gpu and sm_03, signal state) of `width` bits (1 to
  /// 64), 0 until changed. Throws std::logic_error on a repeated path or a bad width.
  Signal add(const std::string& path, unsigned width);

  /// `signal` takes `value` at `time_ps`. Changes may be given in any time order; for one signal and
  /// one instant the last given wins.
  void change(Signal signal, TimePs time_ps, std::uint64_t value);

  /// Writes the dump: header (timescale 1 ps, `version`), declarations sorted by path, initial values
  /// and every change that alters a value, in time order.
  void write(std::ostream& out, const std::string& version) const;

  [[nodiscard]] std::size_t signals() const { return paths_.size(); }

 private:
  struct Change {
    TimePs time_ps;
    std::uint64_t order;  ///< the order given: the later of two same-instant changes wins
    Signal signal;
    std::uint64_t value;
  };
  std::vector<std::string> paths_;
  std::vector<unsigned> widths_;
  std::vector<Change> changes_;
};

}  // namespace gpumux
