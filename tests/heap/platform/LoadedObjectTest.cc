// tests/heap: LoadedObject against the loader's own view (dl_iterate_phdr): every loaded object is
// found with its bias, name and program headers; addresses outside every object are not; a
// dlclosed library is gone; and a lookup never waits for the loader lock another thread holds.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "heap/platform/LoadedObject.h"
#include "tests/LoaderLockHolder.h"

namespace heapgraph {
namespace {

__attribute__((noinline)) int FunctionInTheTest(int x) {
  return x * 5 + 2;
}

uintptr_t Address(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

struct LoaderObject {
  std::string name;
  uintptr_t bias;
  std::vector<ElfW(Phdr)> phdr;
};

std::vector<LoaderObject> LoaderObjects() {
  std::vector<LoaderObject> objects;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        static_cast<std::vector<LoaderObject>*>(data)->push_back(
            {info->dlpi_name, info->dlpi_addr,
             std::vector<ElfW(Phdr)>(info->dlpi_phdr, info->dlpi_phdr + info->dlpi_phnum)});
        return 0;
      },
      &objects);
  return objects;
}

TEST(LoadedObjectTest, EveryObjectOfTheLoaderIsFoundAtEachOfItsSegments) {
  std::vector<LoaderObject> objects = LoaderObjects();
  ASSERT_GE(objects.size(), 3u);  // at least the test, libc and ld.so
  for (const LoaderObject& expected : objects) {
    for (const ElfW(Phdr) & ph : expected.phdr) {
      if (ph.p_type != PT_LOAD) continue;
      uintptr_t begin = expected.bias + ph.p_vaddr;
      for (uintptr_t address : {begin, begin + ph.p_memsz - 1}) {
        LoadedObject object;
        ASSERT_TRUE(LoadedObject::Find(address, &object)) << expected.name;
        EXPECT_EQ(expected.name, object.name);
        EXPECT_EQ(expected.bias, object.bias) << expected.name;
        EXPECT_LE(object.map_start, address) << expected.name;
        EXPECT_LT(address, object.map_end) << expected.name;
        ASSERT_EQ(expected.phdr.size(), object.phnum) << expected.name;
        EXPECT_EQ(0, memcmp(expected.phdr.data(), object.phdr, object.phnum * sizeof(ElfW(Phdr))))
            << expected.name;
        EXPECT_NE(nullptr, object.link_map) << expected.name;
      }
    }
  }
}

// The fallback for a loader that describes the main program by its text segment alone: the
// auxiliary vector gives the same program headers and the whole mapping.
TEST(LoadedObjectTest, TheMainProgramFromTheAuxiliaryVectorHasItsHeadersAndFunctions) {
  LoadedObject found;
  uintptr_t function = Address(reinterpret_cast<void*>(&FunctionInTheTest));
  ASSERT_TRUE(LoadedObject::Find(function, &found));
  LoadedObject object;
  object.bias = found.bias;
  ASSERT_TRUE(LoadedObject::MainProgramFromAuxv(found.bias, &object));
  EXPECT_EQ(object.phdr, reinterpret_cast<const ElfW(Phdr)*>(getauxval(AT_PHDR)));
  EXPECT_EQ(object.phnum, getauxval(AT_PHNUM));
  EXPECT_EQ(0, memcmp(reinterpret_cast<const void*>(object.map_start), ELFMAG, SELFMAG));
  EXPECT_LE(object.map_start, function);
  EXPECT_LT(function, object.map_end);
  uintptr_t begin = 0, end = 0;
  EXPECT_TRUE(object.ExecutableSegment(function, &begin, &end));
  LoadedObject libc;
  ASSERT_TRUE(LoadedObject::Find(Address(reinterpret_cast<void*>(&getauxval)), &libc));
  EXPECT_FALSE(LoadedObject::MainProgramFromAuxv(libc.bias, &libc)) << "not the main program";
}

TEST(LoadedObjectTest, TheMainProgramHasAnEmptyNameAndItsOwnFunctions) {
  LoadedObject object;
  uintptr_t function = Address(reinterpret_cast<void*>(&FunctionInTheTest));
  ASSERT_TRUE(LoadedObject::Find(function, &object));
  EXPECT_STREQ("", object.name);
  uintptr_t begin = 0, end = 0;
  ASSERT_TRUE(object.ExecutableSegment(function, &begin, &end));
  EXPECT_LE(begin, function);
  EXPECT_LT(function, end);
  EXPECT_FALSE(object.ExecutableSegment(object.map_start - 1, &begin, &end));
}

TEST(LoadedObjectTest, ALibcFunctionIsInTheObjectDladdrNames) {
  Dl_info info;
  ASSERT_NE(0, dladdr(reinterpret_cast<void*>(&getpid), &info));
  LoadedObject object;
  ASSERT_TRUE(LoadedObject::Find(Address(reinterpret_cast<void*>(&getpid)), &object));
  EXPECT_STREQ(info.dli_fname, object.name);
  EXPECT_EQ(Address(info.dli_fbase), object.map_start);
}

TEST(LoadedObjectTest, AddressesOutsideEveryObjectAreNotFound) {
  auto heap = std::make_unique<int>(1);
  int on_stack = 0;
  LoadedObject object;
  EXPECT_FALSE(LoadedObject::Find(0, &object));
  EXPECT_FALSE(LoadedObject::Find(4096, &object));
  EXPECT_FALSE(LoadedObject::Find(Address(heap.get()), &object));
  EXPECT_FALSE(LoadedObject::Find(Address(&on_stack), &object));
  EXPECT_FALSE(LoadedObject::Find(UINTPTR_MAX, &object));
}

// A shared library this process has not loaded yet, or null if none is installed.
void* OpenUnloadedLibrary() {
  for (const char* candidate : {"libz.so.1", "libbz2.so.1.0", "libexpat.so.1", "libcap.so.2"}) {
    if (void* loaded = dlopen(candidate, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(loaded);
      continue;
    }
    if (void* handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  return nullptr;
}

TEST(LoadedObjectTest, ADlopenedLibraryIsFoundUntilItIsClosed) {
  void* handle = OpenUnloadedLibrary();
  if (handle == nullptr) GTEST_SKIP() << "no unloaded system library to dlopen";
  link_map* lm = nullptr;
  ASSERT_EQ(0, dlinfo(handle, RTLD_DI_LINKMAP, &lm));
  LoadedObject object;
  ASSERT_TRUE(LoadedObject::Find(Address(lm->l_ld), &object));
  EXPECT_EQ(lm, object.link_map);
  EXPECT_STREQ(lm->l_name, object.name);
  uintptr_t inside = object.map_start;
  dlclose(handle);
  EXPECT_FALSE(LoadedObject::Find(inside, &object));
}

// The point of LoadedObject: another thread inside dl_iterate_phdr holds the loader's lock, and a
// lookup (of a library loaded just before, as the recorder meets new modules) still returns.
TEST(LoadedObjectTest, FindDoesNotWaitForTheLoaderLockOfAnotherThread) {
  void* handle = OpenUnloadedLibrary();
  uintptr_t fresh = 0;
  if (handle != nullptr) {
    link_map* lm = nullptr;
    ASSERT_EQ(0, dlinfo(handle, RTLD_DI_LINKMAP, &lm));
    fresh = Address(lm->l_ld);
  }
  LoadedObject object;
  bool found_libc, found_fresh = true;
  bool gave_up;
  {
    LoaderLockHolder holder;
    found_libc = LoadedObject::Find(Address(reinterpret_cast<void*>(&getpid)), &object);
    if (fresh != 0) found_fresh = LoadedObject::Find(fresh, &object);
    holder.Release();
    gave_up = holder.gave_up();
  }
  EXPECT_FALSE(gave_up) << "the lookup waited for the loader lock";
  EXPECT_TRUE(found_libc);
  EXPECT_TRUE(found_fresh);
  if (handle != nullptr) dlclose(handle);
}

}  // namespace
}  // namespace heapgraph
