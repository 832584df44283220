// libsystemc's own main() calls sc_main(). gpumux has its own main() (the command line and the
// test runners), which fork one child per simulation and elaborate there; sc_main is never entered.
// It is defined only because the shared library refers to it.

#include <cstdio>

extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) {
  std::fputs("gpumux: sc_main is not an entry point; run the gpumux command line\n", stderr);
  return 1;
}
