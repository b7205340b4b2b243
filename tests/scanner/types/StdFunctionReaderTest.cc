// tests/scanner/types: StdFunctionReader on real std::function objects of this process: the
// managers come from this test binary's symbol table and from a stripped library's dynamic symbols
// (std_function_lib.cc), a heap functor is typed from its holder, its captures are read from
// DWARF, and manager names become readable type names.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "scanner/types/StdFunctionReader.h"
#include "tests/scanner/types/TypesTestSupport.h"

namespace heapgraph::scanner::types {
namespace {

struct Holder {
  uint64_t before = 0;
  std::function<int()> callback;
};

std::function<int()> MakeCallback(std::shared_ptr<int> shared) {
  return [shared, extra = uint64_t{42}] { return *shared + static_cast<int>(extra); };
}

// The functor a std::function stores on the heap: the first word of its _Any_data.
void* FunctorOf(const std::function<int()>& f) {
  return *reinterpret_cast<void* const*>(&f);
}

TEST(StdFunctionReaderTest, TypesTheHeapFunctorFromItsHolder) {
  auto* holder = new Holder;
  holder->callback = MakeCallback(std::make_shared<int>(1));
  void* functor = FunctorOf(holder->callback);
  // The lambda holds a shared_ptr (16 bytes) and a uint64_t.
  test::Blocks blocks({test::Range(holder), {reinterpret_cast<uint64_t>(functor), 24}});
  DebugLayouts layouts;
  StdFunctionReader reader(&layouts);
  ASSERT_TRUE(reader.Prepare(PrepareContext{blocks.modules}));
  EXPECT_GT(reader.manager_count(), 0u);
  test::RecordingSink sink;
  reader.IdentifyReferenced(*blocks.memory, blocks.Of(holder), TypeIdentity{}, sink);
  ASSERT_EQ(sink.assigned.size(), 1u);
  EXPECT_EQ(sink.assigned[0].first, blocks.Of(functor));
  const TypeIdentity& id = sink.assigned[0].second;
  EXPECT_EQ(id.model, ObjectModel::kStdFunctor);
  TypeDescription d = reader.Describe(id, DescribeContext{blocks.modules});
  EXPECT_EQ(d.name,
            "std::function<lambda in heapgraph::scanner::types::(anonymous "
            "namespace)::MakeCallback(std::shared_ptr<int>)>");
  EXPECT_EQ(d.closure, ClosureKind::kFunction);
  // DWARF of the lambda: `shared` (element +0, control block +8 owning), `extra` not a pointer.
  ASSERT_EQ(d.fields.size(), 2u);
  EXPECT_EQ(d.fields[1].offset, 8u);
  EXPECT_EQ(d.fields[1].name, "shared");
  EXPECT_EQ(d.fields[1].strength, FieldStrength::kStrong);
  EXPECT_EQ(d.fields[1].label, EdgeLabel::kCapture);
  // The functor block itself holds no manager word: nothing more is typed from it.
  test::RecordingSink none;
  reader.IdentifyReferenced(*blocks.memory, blocks.Of(functor), TypeIdentity{}, none);
  EXPECT_TRUE(none.assigned.empty());
  delete holder;
}

TEST(StdFunctionReaderTest, ReadableNamesFromManagers) {
  EXPECT_EQ(StdFunctionReader::FunctionName(
                "std::_Function_handler<void (), ChatSession::start()::{lambda()#1}>::_M_manager("
                "std::_Any_data&, std::_Any_data const&, std::_Manager_operation)"),
            "std::function<lambda in ChatSession::start()>");
  EXPECT_EQ(StdFunctionReader::FunctionName(
                "std::_Function_handler<int (int), Adder>::_M_manager(std::_Any_data&, "
                "std::_Any_data const&, std::_Manager_operation)"),
            "std::function<Adder>");
  EXPECT_EQ(StdFunctionReader::FunctionName("garbage"), "std::function");
}

TEST(StdFunctionReaderTest, AManagerWordNotPrecededByABlockStartTypesNothing) {
  auto* words = new uint64_t[4]{0, 0, 0, 0};
  StdFunctionReader reader;
  reader.AddManager(
      0x1234560,
      "_ZNSt17_Function_handlerIFvvE3FooE10_M_managerERSt9_Any_dataRKS3_St18_Manager_operation");
  words[2] = 0x1234560;
  words[0] = 0x10;  // not a block
  test::Blocks blocks({test::Range(words, 32)});
  test::RecordingSink sink;
  reader.IdentifyReferenced(*blocks.memory, 0, TypeIdentity{}, sink);
  EXPECT_TRUE(sink.assigned.empty());
  words[0] = reinterpret_cast<uint64_t>(words);  // points at its own block: not a functor
  reader.IdentifyReferenced(*blocks.memory, 0, TypeIdentity{}, sink);
  EXPECT_TRUE(sink.assigned.empty());
  delete[] words;
}

// A stripped library's manager is found in its .dynsym, read in memory (no .symtab to open).
TEST(StdFunctionReaderTest, TypesAFunctorOfAStrippedLibraryFromItsDynamicSymbols) {
  void* library = dlopen(STD_FUNCTION_LIB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  using Adder = std::function<int(int)>;
  auto make = reinterpret_cast<Adder* (*)(int)>(dlsym(library, "hg_make_adder"));
  auto release = reinterpret_cast<void (*)(Adder*)>(dlsym(library, "hg_free_adder"));
  ASSERT_NE(make, nullptr);
  ASSERT_NE(release, nullptr);
  Adder* adder = make(2);
  ASSERT_EQ((*adder)(3), 5);
  void* functor = *reinterpret_cast<void* const*>(adder);
  test::Blocks blocks({test::Range(adder), {reinterpret_cast<uint64_t>(functor), 32}});
  StdFunctionReader reader;
  ASSERT_TRUE(reader.Prepare(PrepareContext{blocks.modules}));
  test::RecordingSink sink;
  reader.IdentifyReferenced(*blocks.memory, blocks.Of(adder), TypeIdentity{}, sink);
  ASSERT_EQ(sink.assigned.size(), 1u);
  EXPECT_EQ(sink.assigned[0].first, blocks.Of(functor));
  EXPECT_EQ(reader.Describe(sink.assigned[0].second, DescribeContext{blocks.modules}).name,
            "std::function<hgtest::Adder>");
  release(adder);
}

}  // namespace
}  // namespace heapgraph::scanner::types
