# Scheduling hints for `ctest -j` (CI time): the tests that take longest start first, so that the two
# cores finish together instead of one running a long test alone at the end. CTest learns these costs
# itself (build/*/Testing/Temporary/CTestCostData.txt), but CI starts from a clean clone with none.
# Seconds on the 2-core machine, release build; refresh from that file when the order changes much.
#
# This file holds the gtest cases: ctest includes it after gtest_discover_tests has defined them
# (TEST_INCLUDE_FILES, tb/CMakeLists.txt). The tests of add_test() carry their COST where they are added.
set_tests_properties(Property.RunningAheadOfSystemCChangesNoResult PROPERTIES COST 48)
set_tests_properties(Property.NothingIsLostUnderAnyPolicyAndMechanism PROPERTIES COST 39)
set_tests_properties(Fidelity.TanasicPriorityTrendsHold PROPERTIES COST 33)
set_tests_properties(Fidelity.TanasicDssTrendsHold PROPERTIES COST 15)
set_tests_properties(Property.NothingIsLostAtWarpLevelUnderAnySchedulerPolicyAndMechanism PROPERTIES COST 14)
set_tests_properties(Property.ActiveCoreDetectionUnderFcfsAndFifo PROPERTIES COST 8)
