// wave/vcd_writer.h: scopes from dotted paths, the last value of an instant wins, unchanged values are
// not written, no date in the header, and errors for a bad width or a repeated path.

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "wave/vcd_writer.h"

namespace gpumux {
namespace {

std::string dump(const VcdWriter& vcd) {
  std::ostringstream out;
  vcd.write(out, "test");
  return out.str();
}

TEST(VcdWriter, ScopesNestByPathAndSortSoZeroPaddedNamesKeepTheirOrder) {
  VcdWriter vcd;
  vcd.add("gpu.sm_10.state", 3);
  vcd.add("gpu.sm_02.state", 3);
  vcd.add("gpu.mem.bytes", 48);
  const std::string text = dump(vcd);
  EXPECT_EQ(text.find("$date"), std::string::npos);
  EXPECT_NE(text.find("$timescale 1ps $end"), std::string::npos);
  const auto mem = text.find("$scope module mem $end");
  const auto sm02 = text.find("$scope module sm_02 $end");
  const auto sm10 = text.find("$scope module sm_10 $end");
  ASSERT_NE(mem, std::string::npos);
  ASSERT_NE(sm02, std::string::npos);
  ASSERT_NE(sm10, std::string::npos);
  EXPECT_LT(mem, sm02);
  EXPECT_LT(sm02, sm10);
  // One gpu scope holding the three, closed once.
  EXPECT_EQ(text.find("$scope module gpu $end"), text.rfind("$scope module gpu $end"));
  EXPECT_NE(text.find("$var wire 48 "), std::string::npos);
}

TEST(VcdWriter, TheLastValueOfAnInstantWinsAndUnchangedValuesAreNotWritten) {
  VcdWriter vcd;
  const auto s = vcd.add("top.count", 8);
  vcd.change(s, 1000, 5);
  vcd.change(s, 1000, 7);  // same instant, given later: wins
  vcd.change(s, 2000, 7);  // no change: no time stamp
  vcd.change(s, 500, 1);   // out of time order: sorted
  const std::string text = dump(vcd);
  EXPECT_NE(text.find("#500\nb1 !\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#1000\nb111 !\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("b101 !"), std::string::npos) << text;
  EXPECT_EQ(text.find("#2000"), std::string::npos) << text;
}

TEST(VcdWriter, OneBitSignalsAndManyIdentifiers) {
  VcdWriter vcd;
  VcdWriter::Signal last = 0;
  for (int i = 0; i < 200; ++i) last = vcd.add("s.x" + std::to_string(i), 1);
  vcd.change(last, 10, 1);
  const std::string text = dump(vcd);
  // Signal 199 has a two-character code (base 94 from '!'): 199 = 11 + 2 x 94.
  EXPECT_NE(text.find("#10\n1,#\n"), std::string::npos) << text.substr(text.size() - 40);
}

TEST(VcdWriter, BadWidthOrRepeatedPathIsAProgrammingError) {
  VcdWriter vcd;
  EXPECT_THROW(vcd.add("a.b", 0), std::logic_error);
  EXPECT_THROW(vcd.add("a.b", 65), std::logic_error);
  vcd.add("a.b", 1);
  EXPECT_THROW(vcd.add("a.b", 1), std::logic_error);
}

}  // namespace
}  // namespace gpumux
