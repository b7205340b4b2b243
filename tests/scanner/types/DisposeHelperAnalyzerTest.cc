// tests/scanner/types: DisposeHelperAnalyzer on real dispose helpers compiled by clang -fblocks at
// -O0 and -O2 (block_shapes.cc). The expected offset of each capture is found independently, by
// looking for the captured value among the block's words.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "roots/ProcessMappings.h"
#include "scanner/types/BlocksAbi.h"
#include "scanner/types/DisposeHelperAnalyzer.h"
#include "scanner/types/DynamicSymbols.h"
#include "tests/scanner/types/BlockCopyProbe.h"
#include "tests/scanner/types/SymbolBinding.h"

namespace heapgraph::scanner::types {
namespace {

using Callback = void*;

struct Shapes {
  void* handle = nullptr;
  void* (*object)(void*) = nullptr;
  void* (*block)(void*, int) = nullptr;
  void* (*byref)(int**) = nullptr;
  void* (*byref_object)(void*, void***) = nullptr;
  void* (*shared_ptr)(const std::shared_ptr<int>*) = nullptr;
  void* (*mixed)(void*, void*, const std::shared_ptr<int>*, void*, int**) = nullptr;
  void* (*trivial)(void*) = nullptr;
  void (*release)(void*) = nullptr;
};

class DisposeHelperAnalyzerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string path = std::string(BLOCK_SHAPES_DIR) + "/libblock_shapes_" + GetParam() + ".so";
    s_.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(s_.handle, nullptr) << dlerror();
    Bind(s_.handle, "shape_object", &s_.object);
    Bind(s_.handle, "shape_block", &s_.block);
    Bind(s_.handle, "shape_byref", &s_.byref);
    Bind(s_.handle, "shape_byref_object", &s_.byref_object);
    Bind(s_.handle, "shape_shared_ptr", &s_.shared_ptr);
    Bind(s_.handle, "shape_mixed", &s_.mixed);
    Bind(s_.handle, "shape_trivial", &s_.trivial);
    Bind(s_.handle, "shape_release", &s_.release);
    if (BlockCopyLeavesStackBlocks(s_.trivial, s_.release, nullptr))
      GTEST_SKIP() << kStackBlocksSkip;
    dispose_ = {reinterpret_cast<uint64_t>(dlsym(s_.handle, "_Block_object_dispose"))};
    ASSERT_NE(dispose_[0], 0u);
    slots_ = DynamicSymbols::FindImportSlots("_Block_object_dispose");
    ASSERT_FALSE(slots_.empty());
    roots::ProcessMappings maps;
    ASSERT_TRUE(maps.Read());
    for (const auto& m : maps.mappings()) {
      if (m.readable && m.executable) code_.push_back({m.start, m.end});
    }
    analyzer_ = std::make_unique<DisposeHelperAnalyzer>(DisposeHelperAnalyzer::Arch::kX86_64,
                                                        dispose_, slots_, code_);
    ASSERT_TRUE(analyzer_->ok());
  }
  void TearDown() override {
    for (void* b : blocks_) s_.release(b);
    analyzer_.reset();
    // The library stays loaded: the Blocks runtime keeps no reference to it, but dlclose of a
    // library with C++ inline functions is not worth the trouble here.
  }

  void* Keep(void* block) {
    blocks_.push_back(block);
    return block;
  }
  static const blocks::Layout& LayoutOf(const void* block) {
    return *static_cast<const blocks::Layout*>(block);
  }
  static const blocks::Descriptor& DescriptorOf(const void* block) {
    return *reinterpret_cast<const blocks::Descriptor*>(LayoutOf(block).descriptor);
  }
  DisposeAnalysis AnalyzeBlock(const void* block) {
    EXPECT_TRUE(LayoutOf(block).flags & blocks::kHasCopyDispose);
    DisposeAnalysis a = analyzer_->Analyze(DescriptorOf(block).dispose);
    EXPECT_TRUE(a.complete);
    return a;
  }
  // The offset of the word of `block` that equals `value` (first capture from 32 on), or -1.
  static int OffsetOf(const void* block, uint64_t value, uint64_t below = 1) {
    auto* words = static_cast<const uint64_t*>(block);
    for (uint32_t w = blocks::kFirstCapture / 8; w < DescriptorOf(block).size / 8; ++w) {
      if (words[w] <= value && value < words[w] + below) return int(w * 8);
    }
    return -1;
  }
  static void ExpectSlot(const DisposeAnalysis& a, int offset, CapturedSlotKind kind,
                         uint32_t flags) {
    ASSERT_GE(offset, 32);
    const CapturedSlot* s = a.Find(uint32_t(offset));
    ASSERT_NE(s, nullptr) << "no slot at +" << offset;
    EXPECT_EQ(s->kind, kind) << "kind " << static_cast<int>(s->kind) << " at +" << offset;
    EXPECT_EQ(s->flags, flags);
  }
  // A captured shared_ptr at +offset (two words): destroyed in place at -O0, its control block
  // released inline at -O2.
  static void ExpectSharedPtr(const DisposeAnalysis& a, int offset) {
    ASSERT_GE(offset, 32);
    const CapturedSlot* in_place = a.Find(uint32_t(offset));
    const CapturedSlot* control = a.Find(uint32_t(offset + 8));
    bool ok = (in_place && in_place->kind == CapturedSlotKind::kDestroyed) ||
              (control && control->kind == CapturedSlotKind::kReleased);
    EXPECT_TRUE(ok) << "shared_ptr at +" << offset << " not found";
  }

  Shapes s_;
  std::vector<uint64_t> dispose_;
  std::vector<uint64_t> slots_;
  std::vector<CodeRange> code_;
  std::unique_ptr<DisposeHelperAnalyzer> analyzer_;
  std::vector<void*> blocks_;
};

int g_target;
void* Target() {
  return &g_target;
}

TEST_P(DisposeHelperAnalyzerTest, ObjectCapture) {
  void* b = Keep(s_.object(Target()));
  DisposeAnalysis a = AnalyzeBlock(b);
  ASSERT_EQ(a.count, 1u);
  ExpectSlot(a, OffsetOf(b, uint64_t(Target())), CapturedSlotKind::kObject, kBlockFieldIsObject);
}

TEST_P(DisposeHelperAnalyzerTest, BlockCaptureSkipsTrivialInt) {
  void* inner = Keep(s_.trivial(Target()));
  void* b = Keep(s_.block(inner, 12345));
  DisposeAnalysis a = AnalyzeBlock(b);
  ASSERT_EQ(a.count, 1u);
  ExpectSlot(a, OffsetOf(b, uint64_t(inner)), CapturedSlotKind::kBlock, kBlockFieldIsBlock);
}

TEST_P(DisposeHelperAnalyzerTest, ByrefCapture) {
  int* variable = nullptr;
  void* b = Keep(s_.byref(&variable));
  DisposeAnalysis a = AnalyzeBlock(b);
  ASSERT_EQ(a.count, 1u);
  // The slot holds the heap byref, whose variable follows its header.
  int offset = OffsetOf(b, uint64_t(variable), blocks::kByrefVariableWithHelpers + 1);
  ExpectSlot(a, offset, CapturedSlotKind::kByref, kBlockFieldIsByref);
  auto* byref = reinterpret_cast<const blocks::Byref*>(
      *reinterpret_cast<const uint64_t*>(static_cast<char*>(b) + offset));
  EXPECT_EQ(byref->forwarding, uint64_t(byref));
  EXPECT_FALSE(byref->flags & blocks::kByrefHasCopyDispose);  // an int needs no helpers
}

TEST_P(DisposeHelperAnalyzerTest, ByrefObjectHasItsOwnHelper) {
  void** variable = nullptr;
  void* b = Keep(s_.byref_object(Target(), &variable));
  DisposeAnalysis a = AnalyzeBlock(b);
  ASSERT_EQ(a.count, 1u);
  int offset = OffsetOf(b, uint64_t(variable), blocks::kByrefVariableWithHelpers + 1);
  ExpectSlot(a, offset, CapturedSlotKind::kByref, kBlockFieldIsByref);
  auto* byref = reinterpret_cast<const blocks::Byref*>(
      *reinterpret_cast<const uint64_t*>(static_cast<char*>(b) + offset));
  ASSERT_TRUE(byref->flags & blocks::kByrefHasCopyDispose);
  DisposeAnalysis inner = analyzer_->Analyze(byref->destroy);
  EXPECT_TRUE(inner.complete);
  ASSERT_EQ(inner.count, 1u);
  int var_offset = int(uint64_t(variable) - uint64_t(byref));
  EXPECT_EQ(var_offset, int(blocks::kByrefVariableWithHelpers));
  // Under manual retain/release the runtime neither retains nor releases a __block object.
  ExpectSlot(inner, var_offset, CapturedSlotKind::kWeak, kBlockByrefCaller | kBlockFieldIsObject);
  EXPECT_EQ(*variable, Target());
}

TEST_P(DisposeHelperAnalyzerTest, SharedPtrCopy) {
  auto owner = std::make_shared<int>(7);
  void* b = Keep(s_.shared_ptr(&owner));
  EXPECT_EQ(owner.use_count(), 2);
  DisposeAnalysis a = AnalyzeBlock(b);
  ExpectSharedPtr(a, OffsetOf(b, uint64_t(owner.get())));
  for (const CapturedSlot& s : a.captured()) EXPECT_TRUE(IsStrong(s.kind));
}

TEST_P(DisposeHelperAnalyzerTest, MixedCaptures) {
  auto owner = std::make_shared<int>(9);
  int plain = 0;
  int* variable = nullptr;
  void* inner = Keep(s_.trivial(Target()));
  void* b = Keep(s_.mixed(Target(), inner, &owner, &plain, &variable));
  DisposeAnalysis a = AnalyzeBlock(b);
  ExpectSlot(a, OffsetOf(b, uint64_t(Target())), CapturedSlotKind::kObject, kBlockFieldIsObject);
  ExpectSlot(a, OffsetOf(b, uint64_t(inner)), CapturedSlotKind::kBlock, kBlockFieldIsBlock);
  ExpectSlot(a, OffsetOf(b, uint64_t(variable), blocks::kByrefVariableWithHelpers + 1),
             CapturedSlotKind::kByref, kBlockFieldIsByref);
  ExpectSharedPtr(a, OffsetOf(b, uint64_t(owner.get())));
  int plain_offset = OffsetOf(b, uint64_t(&plain));
  ASSERT_GE(plain_offset, 32);
  EXPECT_EQ(a.Find(uint32_t(plain_offset)), nullptr) << "a trivial capture is not owned";
  EXPECT_EQ(a.count, 4u);
}

TEST_P(DisposeHelperAnalyzerTest, TrivialBlockHasNoHelper) {
  void* b = Keep(s_.trivial(Target()));
  EXPECT_FALSE(LayoutOf(b).flags & blocks::kHasCopyDispose);
}

TEST_P(DisposeHelperAnalyzerTest, AddressOutsideCodeIsIncomplete) {
  DisposeAnalysis a = analyzer_->Analyze(reinterpret_cast<uint64_t>(&g_target));
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.count, 0u);
}

TEST_P(DisposeHelperAnalyzerTest, UnknownDisposeMeansNoDisposeSlots) {
  // Without the address or slots of _Block_object_dispose, its calls are ordinary calls: the
  // words passed to it are then "released" words, never typed captures.
  DisposeHelperAnalyzer blind(DisposeHelperAnalyzer::Arch::kX86_64, {}, {}, code_);
  void* b = Keep(s_.object(Target()));
  DisposeAnalysis a = blind.Analyze(DescriptorOf(b).dispose);
  ASSERT_EQ(a.count, 1u);
  EXPECT_EQ(a.slots[0].kind, CapturedSlotKind::kReleased);
}

INSTANTIATE_TEST_SUITE_P(OptimizationLevels, DisposeHelperAnalyzerTest,
                         ::testing::Values("O0", "O2"));

// Hand-assembled x86-64 helpers in a byte array (decoded, never run): the edges of the walk.
class SyntheticHelperTest : public ::testing::Test {
 protected:
  uint64_t At(size_t offset) const { return reinterpret_cast<uint64_t>(code_) + offset; }
  DisposeAnalysis Analyze(size_t length, std::vector<uint64_t> dispose,
                          std::vector<uint64_t> slots = {}) {
    dispose_ = std::move(dispose);
    slots_ = std::move(slots);
    ranges_ = {{At(0), At(length)}};
    DisposeHelperAnalyzer a(DisposeHelperAnalyzer::Arch::kX86_64, dispose_, slots_, ranges_);
    return a.Analyze(At(0));
  }
  void Put(size_t offset, std::initializer_list<uint8_t> bytes) {
    for (uint8_t b : bytes) code_[offset++] = b;
  }
  alignas(16) uint8_t code_[64] = {};
  std::vector<uint64_t> dispose_, slots_;
  std::vector<CodeRange> ranges_;
};

TEST_F(SyntheticHelperTest, PltStubResolvedThroughItsGotSlotWithoutReadingIt) {
  // helper: mov 0x28(%rdi),%rdi; mov $8,%esi; jmp stub          stub (at 32): jmp *slot(%rip)
  Put(0, {0x48, 0x8b, 0x7f, 0x28, 0xbe, 0x08, 0x00, 0x00, 0x00, 0xe9, 0x12, 0x00, 0x00, 0x00});
  Put(32, {0xff, 0x25, 0x00, 0x10, 0x00, 0x00});
  uint64_t slot = At(38) + 0x1000;  // past the array: a GOT slot is never dereferenced
  DisposeAnalysis a = Analyze(64, {}, {slot});
  EXPECT_TRUE(a.complete);
  ASSERT_EQ(a.count, 1u);
  EXPECT_EQ(a.slots[0].offset, 0x28u);
  EXPECT_EQ(a.slots[0].kind, CapturedSlotKind::kByref);
  EXPECT_EQ(Analyze(64, {}, {slot + 8}).slots[0].kind, CapturedSlotKind::kReleased);  // other slot
}

TEST_F(SyntheticHelperTest, IndirectJumpInsideAFrameIsIncomplete) {
  // push %rbx; mov 0x20(%rdi),%rdi; mov $3,%esi; call dispose; jmp *%rax
  Put(0, {0x53, 0x48, 0x8b, 0x7f, 0x20, 0xbe, 0x03, 0x00, 0x00, 0x00, 0xe8, 0x20, 0x00, 0x00, 0x00,
          0xff, 0xe0});
  DisposeAnalysis a = Analyze(64, {At(15) + 0x20});
  EXPECT_FALSE(a.complete);
  ASSERT_EQ(a.count, 1u);  // what was found before stays
  EXPECT_EQ(a.slots[0].kind, CapturedSlotKind::kObject);
}

TEST_F(SyntheticHelperTest, LoopsEndAndTruncatedCodeIsIncomplete) {
  // top: mov 0x20(%rdi),%rax; mov 0x8(%rax),%rcx; jmp top
  Put(0, {0x48, 0x8b, 0x47, 0x20, 0x48, 0x8b, 0x48, 0x08, 0xeb, 0xf6});
  DisposeAnalysis loop = Analyze(64, {});
  EXPECT_TRUE(loop.complete);
  ASSERT_EQ(loop.count, 1u);
  EXPECT_EQ(loop.slots[0].kind, CapturedSlotKind::kReleased);  // dereferenced
  EXPECT_EQ(loop.instructions, 3u);
  // The readable range ends inside the second instruction.
  DisposeAnalysis cut = Analyze(6, {});
  EXPECT_FALSE(cut.complete);
  EXPECT_EQ(cut.instructions, 1u);
}

TEST(DisposeHelperAnalyzerArchTest, Aarch64IsNotDecodedYet) {
  std::vector<CodeRange> none;
  DisposeHelperAnalyzer a(DisposeHelperAnalyzer::Arch::kAarch64, {}, {}, none);
  DisposeAnalysis r = a.Analyze(0x1000);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.count, 0u);
}

}  // namespace
}  // namespace heapgraph::scanner::types
