// The test runners' entry point. Defined here (not taken from gtest_main) because libsystemc.so also
// defines main(); an object file of ours always wins over both libraries.

#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
