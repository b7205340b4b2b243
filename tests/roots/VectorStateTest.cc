#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "roots/VectorState.h"
#include "tests/roots/RegisterWord.h"

namespace heapgraph::roots {
namespace {

#if defined(__x86_64__)
void PutWord(std::vector<uint8_t>& raw, size_t offset, uint64_t value) {
  std::memcpy(raw.data() + offset, &value, sizeof(value));
}

TEST(VectorStateTest, LegacyFxsaveImageHasOnlyXmm) {
  std::vector<uint8_t> raw(512);
  PutWord(raw, 160 + 16 * 5, 0xabcdef);
  const VectorState state(raw);
  EXPECT_EQ(state.PresentComponents(), 0b11u);
  EXPECT_EQ(FirstWord(state.Xmm(5)), 0xabcdefu);
  EXPECT_EQ(state.Xmm(5).size(), 16u);
  EXPECT_TRUE(state.Xmm(16).empty());
  EXPECT_TRUE(state.YmmUpper(0).empty());
  EXPECT_TRUE(state.ContainsWord(0xabcdef));
  EXPECT_FALSE(state.ContainsWord(0xabcdee));
  EXPECT_TRUE(VectorState(std::span<const uint8_t>()).Xmm(0).empty());
}

TEST(VectorStateTest, ExtendedComponentsFollowXstateBvAndCpuidLayout) {
  const VectorState::Component avx = VectorState::Layout(VectorState::kAvx);
  if (avx.size == 0) GTEST_SKIP() << "no AVX";
  EXPECT_EQ(avx.offset, 576u);  // architectural for the standard format
  std::vector<uint8_t> raw(VectorState::CaptureSize());
  PutWord(raw, avx.offset + 16 * 3, 0x1111);
  EXPECT_TRUE(VectorState(raw).YmmUpper(3).empty());  // XSTATE_BV bit 2 clear: absent
  PutWord(raw, 512, 0b111);
  EXPECT_EQ(FirstWord(VectorState(raw).YmmUpper(3)), 0x1111u);
  const VectorState::Component zmm = VectorState::Layout(VectorState::kZmmHi256);
  if (zmm.size == 0) GTEST_SKIP() << "no AVX-512";
  PutWord(raw, VectorState::Layout(VectorState::kOpmask).offset + 8 * 2, 0x2222);
  PutWord(raw, zmm.offset + 32 * 4, 0x3333);
  PutWord(raw, VectorState::Layout(VectorState::kHi16Zmm).offset + 64 * 4, 0x4444);
  PutWord(raw, 512, 0b11100111);
  const VectorState state(raw);
  EXPECT_EQ(FirstWord(state.Opmask(2)), 0x2222u);
  EXPECT_EQ(FirstWord(state.ZmmUpper(4)), 0x3333u);
  EXPECT_EQ(FirstWord(state.HighZmm(20)), 0x4444u);
  EXPECT_EQ(state.ZmmUpper(4).size(), 32u);
  EXPECT_EQ(state.HighZmm(20).size(), 64u);
  EXPECT_TRUE(state.HighZmm(15).empty());
}

TEST(VectorStateTest, CaptureSizeHoldsEveryEnabledComponent) {
  const size_t size = VectorState::CaptureSize();
  EXPECT_GE(size, 512u);
  EXPECT_EQ(size % 64, 0u);
  for (int feature = 2; feature < 19; ++feature) {
    const VectorState::Component c = VectorState::Layout(feature);
    if (c.size != 0) {
      EXPECT_LE(c.offset + c.size, size) << "component " << feature;
    }
  }
}

TEST(VectorStateTest, ZeroAbsentComponentsClearsStaleBytesOnly) {
  if (VectorState::Layout(VectorState::kAvx).size == 0) GTEST_SKIP() << "no AVX";
  std::vector<uint8_t> raw(VectorState::CaptureSize(), 0xee);
  PutWord(raw, 512, 0b10);  // only SSE present
  for (size_t i = 520; i < 576; ++i) raw[i] = 0;
  VectorState::ZeroAbsentComponents(raw);
  EXPECT_EQ(raw[160], 0xee);  // xmm kept
  EXPECT_EQ(raw[32], 0);      // st0 cleared: x87 absent
  const VectorState::Component avx = VectorState::Layout(VectorState::kAvx);
  EXPECT_EQ(raw[avx.offset], 0);
  EXPECT_EQ(raw[avx.offset + avx.size - 1], 0);
  EXPECT_EQ(raw[0], 0xee);  // FCW etc. untouched
}

TEST(VectorStateTest, CaptureSizeCoversEveryEnabledComponent) {
  const size_t size = VectorState::CaptureSize();
  EXPECT_EQ(size % 64, 0u);
  EXPECT_GE(size, 512u);
  for (int feature :
       {VectorState::kAvx, VectorState::kOpmask, VectorState::kZmmHi256, VectorState::kHi16Zmm}) {
    const VectorState::Component c = VectorState::Layout(feature);
    if (c.size != 0) {
      EXPECT_LE(c.offset + c.size, size) << feature;
    }
  }
}
#endif

}  // namespace
}  // namespace heapgraph::roots
