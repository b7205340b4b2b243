// tests/report: BuildIdHex, the build-ids of the reports: two lower-case digits a byte, and never
// past the record's array whatever length a corrupt recording gives.
#include <gtest/gtest.h>

#include <cstdint>

#include "report/BuildIdHex.h"

namespace heapgraph::report {
namespace {

TEST(BuildIdHexTest, TwoLowerCaseDigitsAByte) {
  uint8_t id[format::kMaxBuildId] = {0x00, 0x0f, 0xa0, 0xff, 0x12};
  EXPECT_EQ("000fa0ff12", BuildIdHex(id, 5));
  EXPECT_EQ("00", BuildIdHex(id, 1));
}

TEST(BuildIdHexTest, NoneIsEmpty) {
  uint8_t id[format::kMaxBuildId] = {0xab};
  EXPECT_EQ("", BuildIdHex(id, 0));
}

TEST(BuildIdHexTest, ACorruptLengthStopsAtTheArray) {
  uint8_t id[format::kMaxBuildId];
  for (uint32_t i = 0; i < format::kMaxBuildId; ++i) id[i] = static_cast<uint8_t>(i);
  std::string whole = BuildIdHex(id, format::kMaxBuildId);
  EXPECT_EQ(2u * format::kMaxBuildId, whole.size());
  EXPECT_EQ("000102", whole.substr(0, 6));
  EXPECT_EQ(whole, BuildIdHex(id, UINT32_MAX));
}

}  // namespace
}  // namespace heapgraph::report
