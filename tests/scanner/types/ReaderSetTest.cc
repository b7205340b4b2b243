// tests/scanner/types: ReaderSet drives readers in registration order: the first that identifies
// a block wins, inactive readers are skipped, IdentifyReferenced only types untyped blocks, and
// Describe runs once per identity. The built-in set types this process's objects.
#include <gtest/gtest.h>

#include <memory>

#include "scanner/types/BuiltInReaders.h"
#include "scanner/types/ReaderSet.h"
#include "tests/scanner/types/TypesTestSupport.h"

namespace heapgraph::scanner::types {
namespace {

// Identifies blocks whose first word equals `tag`; types what its second word points to.
class TagReader : public ObjectModelReader {
 public:
  TagReader(uint64_t tag, bool active, int* describes)
      : tag_(tag), active_(active), describes_(describes) {}
  const char* name() const override { return "tag"; }
  bool Prepare(const PrepareContext&) override { return active_; }
  bool Identify(const SnapshotMemory& memory, uint32_t block, TypeIdentity* out) const override {
    uint64_t word = 0;
    if (!memory.ReadWord(memory.block(block).begin, &word) || word != tag_) return false;
    out->model = ObjectModel::kCxxPolymorphic;
    out->key = tag_;
    return true;
  }
  bool wants_referenced() const override { return true; }
  void IdentifyReferenced(const SnapshotMemory& memory, uint32_t block, const TypeIdentity& own,
                          TypeSink& sink) const override {
    uint64_t target = 0;
    if (own.key != tag_ || !memory.ReadWord(memory.block(block).begin + 8, &target)) return;
    uint32_t b = memory.BlockStartingAt(target);
    if (b != BlockIndex::kNotFound) sink.Assign(b, {tag_ + 1, 0, ObjectModel::kStdFunctor});
  }
  TypeDescription Describe(const TypeIdentity& identity, const DescribeContext&) override {
    ++*describes_;
    return {"tag " + std::to_string(identity.key), 0, ClosureKind::kNone, false, {}};
  }

 private:
  uint64_t tag_;
  bool active_;
  int* describes_;
};

TEST(ReaderSetTest, FirstActiveReaderWins) {
  auto* a = new uint64_t[2]{7, 0};
  auto* b = new uint64_t[2]{8, 0};
  auto* c = new uint64_t[2]{9, 0};
  a[1] = reinterpret_cast<uint64_t>(c);  // a types c by reference
  b[1] = reinterpret_cast<uint64_t>(a);  // b would type a, but a is typed already
  test::Blocks blocks({test::Range(a, 16), test::Range(b, 16), test::Range(c, 16)});
  int describes = 0;
  ReaderSet set;
  set.Add(std::make_unique<TagReader>(7, true, &describes));
  set.Add(std::make_unique<TagReader>(8, false, &describes));  // inactive: b stays untyped
  set.Add(std::make_unique<TagReader>(7, true, &describes));   // never reached for a
  set.Prepare(std::move(blocks.modules));
  SnapshotMemory memory(*blocks.index, set.modules());  // the set owns the segments now
  std::vector<TypeIdentity> ids(3);
  set.IdentifyAll(memory, ids);
  EXPECT_EQ(ids[blocks.Of(a)].key, 7u);
  EXPECT_EQ(ids[blocks.Of(a)].reader, 0);
  EXPECT_FALSE(ids[blocks.Of(b)].typed());
  EXPECT_EQ(ids[blocks.Of(c)].model, ObjectModel::kStdFunctor);
  EXPECT_EQ(set.Describe(ids[blocks.Of(a)]).name, "tag 7");
  EXPECT_EQ(set.Describe(ids[blocks.Of(a)]).name, "tag 7");
  EXPECT_EQ(describes, 1);
  EXPECT_EQ(set.Describe(TypeIdentity{}).name, "");  // untyped: empty description
  delete[] a;
  delete[] b;
  delete[] c;
}

// IdentifyRange over two halves (as the snapshot child and its marking helper split it) then
// IdentifyReferenced gives what IdentifyAll gives, including a block typed by reference from the
// other half; a range leaves blocks outside it alone.
TEST(ReaderSetTest, RangesThenReferencedEqualIdentifyAll) {
  std::vector<uint64_t*> objects;
  std::vector<BlockRange> ranges;
  for (int i = 0; i < 6; ++i) objects.push_back(new uint64_t[2]{i % 2 == 0 ? 7u : 5u, 0});
  objects[0][1] = reinterpret_cast<uint64_t>(objects[5]);  // lower half types an upper block
  objects[4][1] = reinterpret_cast<uint64_t>(objects[1]);  // and the other way round
  for (uint64_t* o : objects) ranges.push_back(test::Range(o, 16));
  test::Blocks blocks(ranges);
  int describes = 0;
  ReaderSet set;
  set.Add(std::make_unique<TagReader>(7, true, &describes));
  set.Prepare(std::move(blocks.modules));
  SnapshotMemory memory(*blocks.index, set.modules());
  std::vector<TypeIdentity> all(6), split(6);
  set.IdentifyAll(memory, all);
  TypeIdentity marker{99, 0, ObjectModel::kCxxPolymorphic};
  split.assign(6, marker);
  set.IdentifyRange(memory, split, 3, 6);
  for (uint32_t b = 0; b < 3; ++b) EXPECT_EQ(split[b], marker) << b;  // outside the range
  set.IdentifyRange(memory, split, 0, 3);
  set.IdentifyReferenced(memory, split);
  EXPECT_EQ(split, all);
  EXPECT_EQ(all[blocks.Of(objects[5])].model, ObjectModel::kStdFunctor);
  EXPECT_EQ(all[blocks.Of(objects[1])].model, ObjectModel::kStdFunctor);
  EXPECT_FALSE(all[blocks.Of(objects[3])].typed());
  for (uint64_t* o : objects) delete[] o;
}

struct Virtual {
  virtual ~Virtual() = default;
};

TEST(ReaderSetTest, BuiltInReadersTypeRealObjects) {
  Virtual* v = new Virtual;
  auto shared = std::make_shared<long>(5);
  void* control = reinterpret_cast<void* const*>(&shared)[1];
  test::Blocks blocks({test::Range(v), {reinterpret_cast<uint64_t>(control), 24}});
  ReaderSet set;
  RegisterBuiltInReaders(set);
  set.Prepare(std::move(blocks.modules));
  SnapshotMemory memory(*blocks.index, set.modules());
  EXPECT_EQ(set.Identify(memory, blocks.Of(v)).model, ObjectModel::kCxxPolymorphic);
  TypeIdentity id = set.Identify(memory, blocks.Of(control));
  EXPECT_EQ(id.model, ObjectModel::kSharedPtrControl);
  EXPECT_EQ(set.Describe(id).name, "long");
  delete v;
}

}  // namespace
}  // namespace heapgraph::scanner::types
