// Where a warp memory instruction's requests go (sm/warp/memory_requests.h): a scattered access spreads
// its threads' segments over 32 GB of its array, or over the table `scattered within MB` names.
#include "sm/warp/memory_requests.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "program/program_parser.h"

namespace gpumux {
namespace {

constexpr std::uint32_t kWarpSize = 32;
constexpr std::uint32_t kSegment = 128;

program::Instruction parse(const std::string& text) {
  const program::ParsedInstruction parsed = program::parse_instruction(text);
  EXPECT_EQ(parsed.error, "") << text;
  return parsed.instruction;
}

std::vector<AccessPiece> pieces_of(const program::Instruction& in, std::uint64_t elements) {
  std::vector<AccessPiece> out;
  for (std::uint64_t e = 0; e < elements; ++e) {
    warp_access(in, KernelId{0}, 3, e, kWarpSize, kSegment, false, out);
  }
  return out;
}

TEST(MemoryRequests, ScatteredWithinStaysInItsTableAndCoversIt) {
  // SPMV's x (configs/kernels/kernelet.yaml): 81200 floats = 324800 B = 2537 whole 128-byte segments.
  const program::Instruction in = parse("ldg r2 <- r0 64B scattered within 324800B");
  ASSERT_EQ(in.scatter_bytes, 324800U);
  const std::uint64_t base = array_base(KernelId{0}, 3);
  const std::vector<AccessPiece> pieces = pieces_of(in, 2000);
  ASSERT_EQ(pieces.size(), 2000U * kWarpSize);  // one request per thread
  std::set<std::uint64_t> segments;
  for (const AccessPiece& p : pieces) {
    ASSERT_GE(p.address, base);
    ASSERT_LT(p.address + p.bytes, base + 324800 + 1);
    EXPECT_EQ(p.bytes, kSegment);
    EXPECT_EQ((p.address - base) % kSegment, 0U);
    segments.insert(p.address);
  }
  // 64000 uniform draws over 2537 segments leave almost none untouched (expected 2537 e^-25.2 < 1).
  EXPECT_EQ(segments.size(), 324800U / kSegment);
}

TEST(MemoryRequests, ScatteredWithoutTableSpreadsOver32GB) {
  const program::Instruction in = parse("ldg r2 <- r0 64B scattered");
  ASSERT_EQ(in.scatter_bytes, 0U);
  const std::uint64_t base = array_base(KernelId{0}, 3);
  std::uint64_t highest = 0;
  std::set<std::uint64_t> segments;
  for (const AccessPiece& p : pieces_of(in, 200)) {
    ASSERT_GE(p.address, base);
    ASSERT_LT(p.address, base + program::kMaxScatterBytes);
    highest = std::max(highest, p.address - base);
    segments.insert(p.address);
  }
  EXPECT_GT(highest, program::kMaxScatterBytes / 2);  // not confined to a small table
  EXPECT_GT(segments.size(), 6390U);                  // 6400 draws from 2^28 segments: few repeats
}

TEST(MemoryRequests, ATableSmallerThanASegmentIsOneSegment) {
  const program::Instruction in = parse("stg r0 4B scattered within 16B");
  const std::uint64_t base = array_base(KernelId{0}, 3);
  for (const AccessPiece& p : pieces_of(in, 10)) EXPECT_EQ(p.address, base);
}

TEST(MemoryRequests, WithinIsCheckedAndPrintedCanonically) {
  EXPECT_EQ(program::to_text(parse("ldg r2 <- r0 64B  scattered   within 324800B")),
            "ldg r2 <- r0 64B scattered within 324800B");
  EXPECT_NE(program::parse_instruction("ldg r2 <- r0 64B scattered within")
                .error.find("'scattered within' needs the bytes of the table"),
            std::string::npos);
  EXPECT_NE(program::parse_instruction("ldg r2 <- r0 64B scattered within 12KB").error.find("got '12KB'"),
            std::string::npos);
  EXPECT_NE(program::parse_instruction("ldg r2 <- r0 64B scattered within 0B").error.find("between 1 and"),
            std::string::npos);
  EXPECT_NE(program::parse_instruction("ldg r2 <- r0 64B scattered within 34359738369B")
                .error.find("between 1 and 34359738368"),
            std::string::npos);
  EXPECT_NE(
      program::parse_instruction("ldg r2 <- r0 64B coalesced within 64B").error.find("unexpected 'within'"),
      std::string::npos);
}

}  // namespace
}  // namespace gpumux
