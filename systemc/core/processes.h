#pragma once
// Registering SystemC processes from plain constructors without SC_HAS_PROCESS (obsolete in
// IEEE 1666-2023, yet required by SC_METHOD in SystemC 2.3 outside SC_CTOR): sc_spawn works the same
// in both standards.

#include <string>
#include <utility>

#include <systemc>

namespace gpumux {

/// A method process sensitive to `event`, not run at time zero.
template <typename Fn>
void spawn_method(const char* name, const sc_core::sc_event& event, Fn&& body) {
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.set_sensitivity(&event);
  options.dont_initialize();
  sc_core::sc_spawn(std::forward<Fn>(body), name, &options);
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
  sc_core::sc_spawn(std::forward<Fn>(body), name, &options);
}

/// A thread process started at time zero.
template <typename Fn>
void spawn_thread(const char* name, Fn&& body) {
  sc_core::sc_spawn(std::forward<Fn>(body), name);
}

}  // namespace gpumux
