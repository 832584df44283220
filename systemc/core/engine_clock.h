#pragma once
// The execution engine's clock when its SMs may run ahead of SystemC's (sm/tb/tb_calendar.h): now()
// is the instant being handled, and sync() brings SystemC's clock to it before the engine reaches
// another module (a kernel finishing, a command buffer freed, the progress line).

#include "core/types.h"

namespace gpumux {

class EngineClock {
 public:
  virtual ~EngineClock() = default;
  /// The instant being handled while the engine runs ahead of SystemC's clock, else SystemC's time. Not
  /// virtual: the engine reads it several times per thread block (docs/performance.md).
  [[nodiscard]] TimePs now() const { return ahead_ ? ahead_ps_ : systemc_now(); }
  virtual void sync() = 0;

 protected:
  EngineClock() = default;
  EngineClock(const EngineClock&) = default;
  EngineClock& operator=(const EngineClock&) = default;
  EngineClock(EngineClock&&) = default;
  EngineClock& operator=(EngineClock&&) = default;

  /// SystemC's time (sc_time_stamp()), read by now() when not ahead.
  [[nodiscard]] virtual TimePs systemc_now() const = 0;
  bool ahead_ = false;   ///< handling an instant ahead of SystemC's clock
  TimePs ahead_ps_ = 0;  ///< the instant being handled (ahead or not)
};

}  // namespace gpumux
