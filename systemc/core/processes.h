#pragma once
// Registering SystemC processes from plain constructors without SC_HAS_PROCESS (obsolete in
// IEEE 1666-2023, yet required by SC_METHOD in SystemC 2.3 outside SC_CTOR): sc_spawn works the same
// in both standards.
//
// Every process body is guarded: the first exception a model process throws (an invariant
// violation, or bad input only detectable in the built model) is kept with its type, the
// simulation stops, and simulate_in_this_process() rethrows it, instead of SystemC turning it into
// an anonymous "uncaught exception" report.

#include <exception>
#include <string>
#include <utility>

#include <systemc>

namespace gpumux {

/// The first exception thrown by a guarded process in this simulation (empty if none).
std::exception_ptr& process_failure();

/// Wraps a process body so its exceptions stop the simulation and are kept in process_failure().
template <typename Fn>
auto guarded(Fn body) {
  return [body = std::move(body)]() mutable {
    try {
      body();
    } catch (const sc_core::sc_unwind_exception&) {
      throw;  // SystemC's own kill/reset unwinding must pass through
    } catch (...) {
      if (!process_failure()) process_failure() = std::current_exception();
      sc_core::sc_stop();
    }
  };
}

/// A method process sensitive to `event`, not run at time zero.
template <typename Fn>
void spawn_method(const char* name, const sc_core::sc_event& event, Fn&& body) {
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.set_sensitivity(&event);
  options.dont_initialize();
  sc_core::sc_spawn(guarded(std::forward<Fn>(body)), name, &options);
}

/// A method process sensitive to either of two events, not run at time zero.
template <typename Fn>
void spawn_method(const char* name, const sc_core::sc_event& first, const sc_core::sc_event& second,
                  Fn&& body) {
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.set_sensitivity(&first);
  options.set_sensitivity(&second);
  options.dont_initialize();
  sc_core::sc_spawn(guarded(std::forward<Fn>(body)), name, &options);
}

/// A thread process started at time zero (name: nullptr for a generated one).
template <typename Fn>
sc_core::sc_process_handle spawn_thread(const char* name, Fn&& body) {
  return sc_core::sc_spawn(guarded(std::forward<Fn>(body)), name);
}

}  // namespace gpumux
