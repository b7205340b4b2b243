// tests/scanner/types: GnuObjcReader on real GNUstep Base objects (GCC's runtime) made in this
// process by objc_fixtures.m: the class catalog, identification with and without GNUstep's
// object header, and the strong/weak ivars of the descriptions.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "scanner/types/GnuObjcReader.h"
#include "scanner/types/ReaderSet.h"
#include "tests/scanner/types/SymbolBinding.h"

// GCC's libobjc and GNUstep Base keep their runtime tables (and the fixtures' objects, made by
// NSAllocateObject) until exit; LeakSanitizer's reports of those are not about heapgraph.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libobjc.so\nleak:libgnustep-base.so\n";
}

namespace heapgraph::scanner::types {
namespace {

struct Fixtures {
  void* (*owner)() = nullptr;
  void* (*plain_owner)() = nullptr;
  void* (*animation)() = nullptr;
  void* (*timer)(void*, void*) = nullptr;
  void (*set)(void*, void*, void*, void*, void*, void*, void*) = nullptr;
  void (*set_delegate)(void*, void*) = nullptr;
  void* (*class_of)(void*) = nullptr;
  void (*release)(void*) = nullptr;
};

class GnuObjcReaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // GNUstep Base wants a writable home for its defaults database.
    static char home[] = "/tmp/hg_gnustep_home_XXXXXX";
    if (mkdtemp(home) != nullptr) setenv("GNUSTEP_USER_ROOT", home, 1), setenv("HOME", home, 1);
    handle_ = dlopen(OBJC_FIXTURES, RTLD_NOW | RTLD_GLOBAL);
  }
  void SetUp() override {
    ASSERT_NE(handle_, nullptr) << dlerror();
    Bind(handle_, "hg_fixture_owner", &f_.owner);
    Bind(handle_, "hg_fixture_plain_owner", &f_.plain_owner);
    Bind(handle_, "hg_fixture_animation", &f_.animation);
    Bind(handle_, "hg_fixture_timer", &f_.timer);
    Bind(handle_, "hg_fixture_set", &f_.set);
    Bind(handle_, "hg_fixture_set_delegate", &f_.set_delegate);
    Bind(handle_, "hg_fixture_class", &f_.class_of);
    Bind(handle_, "hg_fixture_release", &f_.release);
    ObjcIvarRules rules;
    ASSERT_TRUE(rules.AddLine("HGOwner _helper weak"));
    auto reader = std::make_unique<GnuObjcReader>(std::move(rules));
    reader_ = reader.get();
    set_.Add(std::move(reader));
  }
  void TearDown() override {
    for (void* p : buffers_) std::free(p);
  }

  void Prepare() {
    set_.Prepare();
    ASSERT_TRUE(set_.active(0));
  }
  // The heap block of an object: GNUstep's header precedes objects made by +new.
  static BlockRange BlockOf(void* object, uint64_t header) {
    void* begin = static_cast<char*>(object) - header;
    return {uint64_t(begin), malloc_usable_size(begin)};
  }
  void Index(std::vector<BlockRange> ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const BlockRange& a, const BlockRange& b) { return a.begin < b.begin; });
    index_ = std::make_unique<BlockIndex>(
        std::vector<BlockRange, MmapAllocator<BlockRange>>(ranges.begin(), ranges.end()));
    memory_ = std::make_unique<SnapshotMemory>(*index_, set_.modules());
  }
  TypeIdentity IdentityOf(const BlockRange& b) {
    uint32_t i = index_->FindStart(b.begin);
    EXPECT_NE(i, BlockIndex::kNotFound);
    return set_.Identify(*memory_, i);
  }
  // The field of `d` at the offset in block `b` whose word equals `value`.
  static const FieldDescription* FieldHolding(const TypeDescription& d, const BlockRange& b,
                                              const void* value) {
    for (const FieldDescription& f : d.fields) {
      uint64_t w;
      std::memcpy(&w, reinterpret_cast<const char*>(b.begin) + f.offset, 8);
      if (w == uint64_t(value)) return &f;
    }
    return nullptr;
  }

  static void* handle_;
  Fixtures f_;
  ReaderSet set_;
  GnuObjcReader* reader_ = nullptr;
  std::vector<void*> buffers_;
  std::unique_ptr<BlockIndex> index_;
  std::unique_ptr<SnapshotMemory> memory_;
};
void* GnuObjcReaderTest::handle_ = nullptr;

TEST_F(GnuObjcReaderTest, CatalogHasTheRuntimesClassesWithInheritedIvars) {
  void* owner = f_.owner();
  Prepare();
  const ObjcClass* c = reader_->catalog().Find(uint64_t(f_.class_of(owner)));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "HGOwner");
  EXPECT_GT(reader_->catalog().size(), 100u);  // GNUstep Base registers hundreds
  ASSERT_FALSE(c->ivars.empty());
  EXPECT_EQ(c->ivars.front().declaring_class, "NSObject");  // isa comes first
  EXPECT_EQ(reader_->catalog().Find(uint64_t(&c)), nullptr);
  f_.release(owner);
}

TEST_F(GnuObjcReaderTest, IdentifiesObjectsWithAndWithoutGnustepHeader) {
  void* owner = f_.owner();
  void* plain = f_.plain_owner();
  void* not_object = std::calloc(1, 128);
  buffers_.push_back(not_object);
  Prepare();
  BlockRange with_header = BlockOf(owner, GnuObjcReader::kGnustepHeaderBytes);
  BlockRange without = BlockOf(plain, 0);
  BlockRange other{uint64_t(not_object), 128};
  // A block too small for the class's instance size is not one of its objects.
  void* truncated = std::malloc(24);
  buffers_.push_back(truncated);
  std::memcpy(truncated, plain, 8);
  BlockRange small{uint64_t(truncated), 24};
  Index({with_header, without, other, small});
  TypeIdentity a = IdentityOf(with_header);
  ASSERT_EQ(a.model, ObjectModel::kObjCGnu);
  EXPECT_EQ(a.key, uint64_t(f_.class_of(owner)));
  EXPECT_EQ(a.flags, GnuObjcReader::kGnustepHeader);
  TypeIdentity b = IdentityOf(without);
  ASSERT_EQ(b.model, ObjectModel::kObjCGnu);
  EXPECT_EQ(b.key, a.key);
  EXPECT_EQ(b.flags, 0);
  EXPECT_FALSE(IdentityOf(other).typed());
  EXPECT_FALSE(IdentityOf(small).typed());
  f_.release(owner);
}

TEST_F(GnuObjcReaderTest, OwnerIvarsFollowTheConventionAndUserRules) {
  void* owner = f_.owner();
  void* animation = f_.animation();
  void* delegate = f_.animation();
  void* source = f_.animation();
  void* helper = f_.animation();
  void* timer = f_.timer(owner, nullptr);
  void* on_message = f_.animation();
  f_.set(owner, animation, delegate, source, helper, timer, on_message);
  Prepare();
  BlockRange b = BlockOf(owner, GnuObjcReader::kGnustepHeaderBytes);
  Index({b});
  const TypeDescription& d = set_.Describe(IdentityOf(b));
  EXPECT_EQ(d.name, "HGOwner");
  EXPECT_FALSE(d.exhaustive);
  struct Expect {
    void* value;
    const char* name;
    FieldStrength strength;
  } expects[] = {{animation, "_animation", FieldStrength::kStrong},
                 {delegate, "_delegate", FieldStrength::kWeak},
                 {source, "_dataSource", FieldStrength::kWeak},
                 {helper, "_helper", FieldStrength::kWeak},  // the user rule
                 {timer, "_timer", FieldStrength::kStrong},
                 {on_message, "_onMessage", FieldStrength::kStrong}};
  for (const Expect& e : expects) {
    const FieldDescription* f = FieldHolding(d, b, e.value);
    ASSERT_NE(f, nullptr) << e.name;
    EXPECT_EQ(f->name, e.name);
    EXPECT_EQ(f->strength, e.strength) << e.name;
  }
  EXPECT_EQ(FieldHolding(d, b, owner), nullptr) << "_buffer is a C pointer: not a field";
}

TEST_F(GnuObjcReaderTest, TimerTargetAndAnimationDelegateAreStrongExceptions) {
  void* owner = f_.owner();
  void* info = f_.animation();
  void* timer = f_.timer(owner, info);
  void* animation = f_.animation();
  f_.set_delegate(animation, owner);
  Prepare();
  BlockRange t = BlockOf(timer, GnuObjcReader::kGnustepHeaderBytes);
  BlockRange a = BlockOf(animation, GnuObjcReader::kGnustepHeaderBytes);
  Index({t, a});
  TypeIdentity ti = IdentityOf(t);
  ASSERT_EQ(ti.model, ObjectModel::kObjCGnu);
  const TypeDescription& td = set_.Describe(ti);
  EXPECT_EQ(td.name, "NSTimer");
  const FieldDescription* target = FieldHolding(td, t, owner);
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->name, "_target");
  EXPECT_EQ(target->strength, FieldStrength::kStrong);
  EXPECT_EQ(target->label, EdgeLabel::kTimerTarget);
  const FieldDescription* user_info = FieldHolding(td, t, info);
  ASSERT_NE(user_info, nullptr);
  EXPECT_EQ(user_info->name, "_info");
  EXPECT_EQ(user_info->label, EdgeLabel::kTimerTarget);
  const TypeDescription& ad = set_.Describe(IdentityOf(a));
  EXPECT_EQ(ad.name, "CAAnimation");
  const FieldDescription* del = FieldHolding(ad, a, owner);
  ASSERT_NE(del, nullptr);
  EXPECT_EQ(del->name, "delegate");
  EXPECT_EQ(del->strength, FieldStrength::kStrong);
  EXPECT_EQ(del->label, EdgeLabel::kDelegate);
}

}  // namespace
}  // namespace heapgraph::scanner::types
