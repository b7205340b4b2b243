// tests/scanner/types: DynamicSymbols on this process's modules, among them a clang -fblocks
// library loaded RTLD_LOCAL (block_shapes.cc), checked against dlsym.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "scanner/types/DynamicSymbols.h"

namespace heapgraph::scanner::types {
namespace {

bool Contains(const std::vector<uint64_t>& v, uint64_t x) {
  return std::binary_search(v.begin(), v.end(), x);
}

class DynamicSymbolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string path = std::string(BLOCK_SHAPES_DIR) + "/libblock_shapes_O2.so";
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
  }
  void* handle_ = nullptr;
};

TEST_F(DynamicSymbolsTest, FindsDefinitionsInLocallyLoadedLibraries) {
  for (const char* name : {"_Block_object_dispose", "_NSConcreteStackBlock", "shape_object"}) {
    void* expected = dlsym(handle_, name);
    ASSERT_NE(expected, nullptr) << name;
    EXPECT_EQ(dlsym(RTLD_DEFAULT, name), nullptr) << name << " is not global";
    std::vector<uint64_t> found = DynamicSymbols::FindDefinitions(name);
    EXPECT_TRUE(Contains(found, reinterpret_cast<uint64_t>(expected))) << name;
    EXPECT_TRUE(std::is_sorted(found.begin(), found.end()));
  }
  // A libc function through its GNU hash table.
  std::vector<uint64_t> found = DynamicSymbols::FindDefinitions("qsort");
  EXPECT_TRUE(Contains(found, reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "qsort"))));
}

TEST_F(DynamicSymbolsTest, UndefinedAndUnknownSymbolsAreNotDefinitions) {
  EXPECT_TRUE(DynamicSymbols::FindDefinitions("hg_no_such_symbol_anywhere").empty());
  // The shapes library imports _Block_copy (undefined there): only libBlocksRuntime defines it.
  std::vector<uint64_t> found = DynamicSymbols::FindDefinitions("_Block_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], reinterpret_cast<uint64_t>(dlsym(handle_, "_Block_copy")));
}

TEST_F(DynamicSymbolsTest, ImportSlotsAreTheGotSlotsBoundToTheSymbol) {
  std::vector<uint64_t> slots = DynamicSymbols::FindImportSlots("_Block_object_dispose");
  ASSERT_FALSE(slots.empty());
  // Create and release a block with a dispose helper: lazy binding has resolved the slot since.
  auto make = reinterpret_cast<void* (*)(void*)>(dlsym(handle_, "shape_object"));
  auto release = reinterpret_cast<void (*)(void*)>(dlsym(handle_, "shape_release"));
  ASSERT_NE(make, nullptr);
  ASSERT_NE(release, nullptr);
  int object = 0;
  release(make(&object));
  auto dispose = reinterpret_cast<uint64_t>(dlsym(handle_, "_Block_object_dispose"));
  bool bound = false;
  for (uint64_t slot : slots) bound |= *reinterpret_cast<const uint64_t*>(slot) == dispose;
  EXPECT_TRUE(bound);
  EXPECT_TRUE(DynamicSymbols::FindImportSlots("hg_no_such_symbol_anywhere").empty());
}

}  // namespace
}  // namespace heapgraph::scanner::types
