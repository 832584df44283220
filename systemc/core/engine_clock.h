#pragma once
// The execution engine's clock when its SMs may run ahead of SystemC's (sm/tb/tb_calendar.h): now()
// is the instant being handled, and sync() brings SystemC's clock to it before the engine reaches
// another module (a kernel finishing, a command buffer freed, the progress line).

#include "core/types.h"

namespace gpumux {

class EngineClock {
 public:
  virtual ~EngineClock() = default;
  [[nodiscard]] virtual TimePs now() const = 0;
  virtual void sync() = 0;
};

}  // namespace gpumux
