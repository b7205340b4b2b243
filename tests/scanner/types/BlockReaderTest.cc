// tests/scanner/types: BlockReader on real heap Blocks and __block variables made by clang
// -fblocks code (block_shapes.cc at -O0 and -O2) in this process: identification through
// validated reads, and descriptions (strong captured slots) from the dispose helpers.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "scanner/types/BlockReader.h"
#include "scanner/types/BlocksAbi.h"
#include "scanner/types/ReaderSet.h"
#include "tests/scanner/types/BlockCopyProbe.h"
#include "tests/scanner/types/SymbolBinding.h"

namespace heapgraph::scanner::types {
namespace {

struct Shapes {
  void* handle = nullptr;
  void* (*object)(void*) = nullptr;
  void* (*byref)(int**) = nullptr;
  void* (*byref_object)(void*, void***) = nullptr;
  void* (*mixed)(void*, void*, const std::shared_ptr<int>*, void*, int**) = nullptr;
  void* (*trivial)(void*) = nullptr;
  void (*release)(void*) = nullptr;
};

int g_target;
void* Target() {
  return &g_target;
}

uint64_t Word(const void* object, uint32_t offset) {
  uint64_t w;
  std::memcpy(&w, static_cast<const char*>(object) + offset, 8);
  return w;
}

class BlockReaderTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string path = std::string(BLOCK_SHAPES_DIR) + "/libblock_shapes_" + GetParam() + ".so";
    // RTLD_LOCAL: the reader must find the Blocks runtime without dlsym(RTLD_DEFAULT).
    s_.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(s_.handle, nullptr) << dlerror();
    Bind(s_.handle, "shape_object", &s_.object);
    Bind(s_.handle, "shape_byref", &s_.byref);
    Bind(s_.handle, "shape_byref_object", &s_.byref_object);
    Bind(s_.handle, "shape_mixed", &s_.mixed);
    Bind(s_.handle, "shape_trivial", &s_.trivial);
    Bind(s_.handle, "shape_release", &s_.release);
    if (BlockCopyLeavesStackBlocks(s_.trivial, s_.release, Target()))
      GTEST_SKIP() << kStackBlocksSkip;
    set_.Add(std::make_unique<BlockReader>());
    set_.Prepare();
    ASSERT_TRUE(set_.active(0));
  }
  void TearDown() override {
    for (void* b : blocks_) s_.release(b);
    for (void* p : buffers_) std::free(p);
  }

  void* Keep(void* block) {
    blocks_.push_back(block);
    return block;
  }
  static uint64_t SizeOfBlock(const void* block) {
    auto* layout = static_cast<const blocks::Layout*>(block);
    return reinterpret_cast<const blocks::Descriptor*>(layout->descriptor)->size;
  }
  // Indexes the given objects (address, size) as the live heap blocks.
  void Index(std::vector<BlockRange> ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const BlockRange& a, const BlockRange& b) { return a.begin < b.begin; });
    std::vector<BlockRange, MmapAllocator<BlockRange>> v(ranges.begin(), ranges.end());
    ranges_ = ranges;
    index_ = std::make_unique<BlockIndex>(std::move(v));
    memory_ = std::make_unique<SnapshotMemory>(*index_, set_.modules());
  }
  TypeIdentity IdentityOf(const void* object) {
    uint32_t b = index_->FindStart(reinterpret_cast<uint64_t>(object));
    EXPECT_NE(b, BlockIndex::kNotFound);
    return set_.Identify(*memory_, b);
  }
  static const FieldDescription* FieldAt(const TypeDescription& d, uint32_t offset) {
    for (const FieldDescription& f : d.fields) {
      if (f.offset == offset) return &f;
    }
    return nullptr;
  }
  // The offset of the word of `object` equal to `value` (or in [word, word + below)).
  static uint32_t OffsetOf(const void* object, uint64_t size, uint64_t value, uint64_t below = 1) {
    for (uint32_t at = blocks::kFirstCapture; at + 8 <= size; at += 8) {
      uint64_t w = Word(object, at);
      if (w <= value && value < w + below) return at;
    }
    ADD_FAILURE() << "value not captured";
    return 0;
  }

  Shapes s_;
  ReaderSet set_;
  std::vector<void*> blocks_;
  std::vector<void*> buffers_;
  std::vector<BlockRange> ranges_;
  std::unique_ptr<BlockIndex> index_;
  std::unique_ptr<SnapshotMemory> memory_;
};

TEST_P(BlockReaderTest, ObjectCaptureIsStrongSlotZero) {
  void* b = Keep(s_.object(Target()));
  Index({{uint64_t(b), SizeOfBlock(b)}});
  TypeIdentity id = IdentityOf(b);
  ASSERT_EQ(id.model, ObjectModel::kClangBlock);
  auto* layout = static_cast<const blocks::Layout*>(b);
  EXPECT_EQ(id.key, layout->descriptor);
  EXPECT_EQ(id.aux, layout->invoke);
  const TypeDescription& d = set_.Describe(id);
  EXPECT_EQ(d.name, "Block ({})");
  EXPECT_EQ(d.name_symbol, layout->invoke);
  EXPECT_EQ(d.closure, ClosureKind::kBlock);
  EXPECT_TRUE(d.exhaustive);
  ASSERT_EQ(d.fields.size(), 1u);
  EXPECT_EQ(d.fields[0].offset, OffsetOf(b, SizeOfBlock(b), uint64_t(Target())));
  EXPECT_EQ(d.fields[0].strength, FieldStrength::kStrong);
  EXPECT_EQ(d.fields[0].label, EdgeLabel::kCapture);
  EXPECT_EQ(d.fields[0].name, "captured slot 0");
}

TEST_P(BlockReaderTest, MixedCapturesOwnAllButThePlainPointer) {
  auto owner = std::make_shared<int>(5);
  int plain = 0;
  int* variable = nullptr;
  void* inner = Keep(s_.trivial(Target()));
  void* b = Keep(s_.mixed(Target(), inner, &owner, &plain, &variable));
  uint64_t size = SizeOfBlock(b);
  Index({{uint64_t(b), size}, {uint64_t(inner), SizeOfBlock(inner)}});
  TypeIdentity id = IdentityOf(b);
  ASSERT_EQ(id.model, ObjectModel::kClangBlock);
  const TypeDescription& d = set_.Describe(id);
  EXPECT_TRUE(d.exhaustive);
  for (uint64_t value : {uint64_t(Target()), uint64_t(inner)}) {
    const FieldDescription* f = FieldAt(d, OffsetOf(b, size, value));
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->strength, FieldStrength::kStrong);
  }
  const FieldDescription* byref =
      FieldAt(d, OffsetOf(b, size, uint64_t(variable), blocks::kByrefVariableWithHelpers + 1));
  ASSERT_NE(byref, nullptr);
  EXPECT_EQ(byref->strength, FieldStrength::kStrong);
  // The shared_ptr's control-block word (the second of its two) is a captured C++ object's word
  // at -O0 and -O2: named, left for the shared_ptr rules to judge.
  uint32_t sp = OffsetOf(b, size, uint64_t(owner.get()));
  const FieldDescription* control = FieldAt(d, sp + 8);
  ASSERT_NE(control, nullptr);
  EXPECT_EQ(control->strength, FieldStrength::kConservative);
  EXPECT_EQ(control->name.rfind("captured slot ", 0), 0u) << control->name;
  EXPECT_EQ(FieldAt(d, OffsetOf(b, size, uint64_t(&plain))), nullptr);
  // The trivial inner block is a Block too, owning nothing.
  const TypeDescription& di = set_.Describe(IdentityOf(inner));
  EXPECT_TRUE(di.fields.empty());
  EXPECT_TRUE(di.exhaustive);
}

TEST_P(BlockReaderTest, ByrefOfIntOwnsNothing) {
  int* variable = nullptr;
  void* b = Keep(s_.byref(&variable));
  uint32_t slot =
      OffsetOf(b, SizeOfBlock(b), uint64_t(variable), blocks::kByrefVariableWithHelpers + 1);
  auto* byref = reinterpret_cast<const blocks::Byref*>(Word(b, slot));
  Index({{uint64_t(b), SizeOfBlock(b)}, {uint64_t(byref), byref->size}});
  TypeIdentity id = IdentityOf(byref);
  ASSERT_EQ(id.model, ObjectModel::kBlockByref);
  EXPECT_EQ(id.key, 0u);
  EXPECT_EQ(id.aux, byref->size);
  const TypeDescription& d = set_.Describe(id);
  EXPECT_TRUE(d.fields.empty());
  EXPECT_TRUE(d.exhaustive);
  EXPECT_EQ(d.closure, ClosureKind::kNone);
}

TEST_P(BlockReaderTest, ByrefObjectUnderManualRetainReleaseIsWeak) {
  void** variable = nullptr;
  void* b = Keep(s_.byref_object(Target(), &variable));
  uint32_t slot =
      OffsetOf(b, SizeOfBlock(b), uint64_t(variable), blocks::kByrefVariableWithHelpers + 1);
  auto* byref = reinterpret_cast<const blocks::Byref*>(Word(b, slot));
  Index({{uint64_t(b), SizeOfBlock(b)}, {uint64_t(byref), byref->size}});
  TypeIdentity id = IdentityOf(byref);
  ASSERT_EQ(id.model, ObjectModel::kBlockByref);
  EXPECT_EQ(id.key, byref->destroy);
  const TypeDescription& d = set_.Describe(id);
  ASSERT_EQ(d.fields.size(), 1u);
  EXPECT_EQ(d.fields[0].offset, blocks::kByrefVariableWithHelpers);
  EXPECT_EQ(d.fields[0].strength, FieldStrength::kWeak);
}

TEST_P(BlockReaderTest, RejectsLookalikes) {
  void* b = Keep(s_.object(Target()));
  uint64_t size = SizeOfBlock(b);
  // A copy whose descriptor points into the heap, one whose invoke is not code, one that is too
  // small for its descriptor's size, one without BLOCK_NEEDS_FREE (the bytes of a stack block),
  // and a self-forwarding word with no byref flags.
  auto* bad_descriptor = static_cast<blocks::Layout*>(std::malloc(size));
  auto* bad_invoke = static_cast<blocks::Layout*>(std::malloc(size));
  auto* too_small = static_cast<blocks::Layout*>(std::malloc(size));
  auto* on_stack = static_cast<blocks::Layout*>(std::malloc(size));  // a stack block's bytes
  auto* self = static_cast<uint64_t*>(std::calloc(8, 8));
  for (void* p :
       {(void*)bad_descriptor, (void*)bad_invoke, (void*)too_small, (void*)on_stack, (void*)self}) {
    buffers_.push_back(p);
  }
  std::memcpy(on_stack, b, size);
  on_stack->flags &= ~(blocks::kNeedsFree | blocks::kRefcountMask);
  std::memcpy(bad_descriptor, b, size);
  std::memcpy(bad_invoke, b, size);
  std::memcpy(too_small, b, size);
  auto* fake = static_cast<blocks::Descriptor*>(std::malloc(sizeof(blocks::Descriptor)));
  buffers_.push_back(fake);
  std::memcpy(fake, reinterpret_cast<void*>(bad_descriptor->descriptor), sizeof(*fake));
  bad_descriptor->descriptor = uint64_t(fake);
  bad_invoke->invoke = uint64_t(&g_target);
  self[1] = uint64_t(self);
  self[2] = uint64_t(64) << 32;  // a size, but no BLOCK_NEEDS_FREE and no refcount
  Index({{uint64_t(b), size},
         {uint64_t(bad_descriptor), size},
         {uint64_t(bad_invoke), size},
         {uint64_t(too_small), size - 8},
         {uint64_t(on_stack), size},
         {uint64_t(fake), sizeof(*fake)},
         {uint64_t(self), 64}});
  EXPECT_EQ(IdentityOf(b).model, ObjectModel::kClangBlock);
  for (const void* p :
       {(void*)bad_descriptor, (void*)bad_invoke, (void*)too_small, (void*)on_stack, (void*)self}) {
    EXPECT_FALSE(IdentityOf(p).typed()) << p;
  }
}

INSTANTIATE_TEST_SUITE_P(OptimizationLevels, BlockReaderTest, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace heapgraph::scanner::types
