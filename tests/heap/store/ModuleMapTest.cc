// tests/heap: ModuleMap against the loader's own view: modules learned from addresses in them (the
// test executable with the build-id read from its file, load biases as dladdr reports them, every
// object of dl_iterate_phdr), dlopen/dlclose, a library loaded over an unloaded one, learning while
// another thread holds the loader lock, capacity, fork support, and the file as RecordingReader
// reads it.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heap/store/LiveAllocationTree.h"
#include "heap/store/ModuleMap.h"
#include "heap/store/PersistedFormat.h"
#include "heap/store/StackStore.h"
#include "reader/RecordingReader.h"
#include "tests/LoaderLockHolder.h"
#include "tests/TempDir.h"

namespace heapgraph {
namespace {

using format::ModuleRecord;

// A function of this test binary whose address the tests look up.
__attribute__((noinline)) int FunctionInTheTest(int x) {
  return x * 3 + 1;
}

std::string ExecutablePath() {
  return std::filesystem::read_symlink("/proc/self/exe");
}

uint64_t Address(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

// NT_GNU_BUILD_ID of an ELF file, found through its program headers the way `readelf -n` does,
// honouring each PT_NOTE's alignment (4 or 8).
std::vector<uint8_t> BuildIdOfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);  // one read: the file is ≈ 40 MB
  std::string file(in ? static_cast<size_t>(in.tellg()) : 0, '\0');
  in.seekg(0);
  in.read(file.data(), static_cast<std::streamsize>(file.size()));
  Elf64_Ehdr eh;
  if (file.size() < sizeof(eh)) return {};
  memcpy(&eh, file.data(), sizeof(eh));
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return {};
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    memcpy(&ph, file.data() + eh.e_phoff + uint64_t{i} * eh.e_phentsize, sizeof(ph));
    if (ph.p_type != PT_NOTE) continue;
    uint64_t align = ph.p_align == 8 ? 8 : 4;
    auto up = [align](uint64_t n) { return (n + align - 1) & ~(align - 1); };
    for (uint64_t p = ph.p_offset; p + sizeof(Elf64_Nhdr) <= ph.p_offset + ph.p_filesz;) {
      Elf64_Nhdr nh;
      memcpy(&nh, file.data() + p, sizeof(nh));
      uint64_t name = p + sizeof(nh), desc = name + up(nh.n_namesz);
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
          memcmp(file.data() + name, "GNU", 4) == 0) {
        return std::vector<uint8_t>(file.begin() + desc, file.begin() + desc + nh.n_descsz);
      }
      p = desc + up(nh.n_descsz);
    }
  }
  return {};
}

std::vector<uint8_t> BuildIdOf(const ModuleRecord& r) {
  return std::vector<uint8_t>(r.build_id, r.build_id + r.build_id_len);
}

// The loaded record whose path is `path`, or null.
const ModuleRecord* LoadedRecord(const ModuleMap& map, const std::string& path) {
  for (uint32_t i = 0; i < map.count(); ++i) {
    const ModuleRecord& r = map.record(i);
    if (r.state == format::kModuleLoaded && path == r.path) return &r;
  }
  return nullptr;
}

void ReadHeader(int fd, format::ModuleHeader* h) {
  EXPECT_EQ(ssize_t(sizeof(*h)), pread(fd, h, sizeof(*h), 0));
}

uint32_t CountInFile(int fd) {
  format::ModuleHeader h;
  ReadHeader(fd, &h);
  return h.count.load();
}

uint32_t SequenceInFile(int fd) {
  format::ModuleHeader h;
  ReadHeader(fd, &h);
  return h.sequence.load();
}

class ModuleMapTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(map_.Create(dir_.fd(), format::kModuleFile)); }

  TempDir dir_;
  ModuleMap map_;
};

TEST_F(ModuleMapTest, CreateWritesAnEmptyMap) {
  EXPECT_EQ(0u, map_.count());
  int fd = openat(dir_.fd(), format::kModuleFile, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  format::ModuleHeader h;
  ReadHeader(fd, &h);
  close(fd);
  EXPECT_EQ(0, memcmp(h.file.magic, format::kModuleMagic, 8));
  EXPECT_EQ(format::kVersion, h.file.version);
  EXPECT_EQ(sizeof(ModuleRecord), h.record_size);
  EXPECT_EQ(ModuleMap::kDefaultCapacity, h.capacity);
  EXPECT_EQ(0u, h.count.load());
  EXPECT_EQ(0u, h.sequence.load());
  EXPECT_EQ(nullptr, map_.Find(Address(reinterpret_cast<void*>(&FunctionInTheTest))));
}

TEST_F(ModuleMapTest, LearnFindsTheTestExecutableWithTheBuildIdOfItsFile) {
  const uintptr_t function = Address(reinterpret_cast<void*>(&FunctionInTheTest));
  map_.Learn(&function, 1);
  ASSERT_EQ(1u, map_.count());
  const std::string exe = ExecutablePath();
  const ModuleRecord* r = LoadedRecord(map_, exe);
  ASSERT_NE(nullptr, r) << exe;
  std::vector<uint8_t> expected = BuildIdOfFile(exe);
  ASSERT_FALSE(expected.empty()) << "the test binary has no build-id note";
  EXPECT_EQ(expected, BuildIdOf(*r));
  EXPECT_GT(r->segment_count, 0u);
  EXPECT_LT(r->start, r->end);
}

TEST_F(ModuleMapTest, FindReturnsTheModuleOfAFunctionInTheTest) {
  const void* function = reinterpret_cast<void*>(&FunctionInTheTest);
  const uintptr_t address = Address(function);
  map_.Learn(&address, 1);
  const ModuleRecord* r = map_.Find(Address(function));
  ASSERT_NE(nullptr, r);
  EXPECT_EQ(ExecutablePath(), r->path);

  // The load bias is the loader's l_addr, and the module starts where dladdr says it does.
  Dl_info info;
  link_map* lm = nullptr;
  ASSERT_NE(0, dladdr1(function, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP));
  ASSERT_NE(nullptr, lm);
  EXPECT_EQ(uint64_t{lm->l_addr}, r->load_bias);
  EXPECT_EQ(Address(info.dli_fbase), r->start & ~(format::kPageSize - 1));

  // address - load_bias lies in an executable PT_LOAD segment.
  uint64_t vaddr = Address(function) - r->load_bias;
  bool in_text = false;
  for (uint32_t i = 0; i < r->segment_count; ++i) {
    const format::ModuleSegment& s = r->segments[i];
    if (vaddr >= s.vaddr && vaddr < s.vaddr + s.memsz) in_text = (s.flags & PF_X) != 0;
  }
  EXPECT_TRUE(in_text);
}

TEST_F(ModuleMapTest, FindReturnsTheSharedLibraryOfALibcFunction) {
  const void* function = reinterpret_cast<void*>(&getpid);
  const uintptr_t address = Address(function);
  map_.Learn(&address, 1);
  Dl_info info;
  ASSERT_NE(0, dladdr(function, &info));
  const ModuleRecord* r = map_.Find(Address(function));
  ASSERT_NE(nullptr, r);
  EXPECT_STREQ(info.dli_fname, r->path);
  EXPECT_EQ(BuildIdOfFile(info.dli_fname), BuildIdOf(*r));
}

TEST_F(ModuleMapTest, AddressesOutsideEveryModuleAreNeitherLearnedNorFound) {
  auto heap = std::make_unique<int>(1);
  const uintptr_t outside[] = {0, 4096, Address(heap.get()), UINTPTR_MAX};
  map_.Learn(outside, 4);
  EXPECT_EQ(0u, map_.count());
  const uintptr_t function = Address(reinterpret_cast<void*>(&FunctionInTheTest));
  map_.Learn(&function, 1);
  for (uintptr_t address : outside) EXPECT_EQ(nullptr, map_.Find(address)) << address;
}

// One address in each object the loader reports (as a stack's frames would be), in one call.
TEST_F(ModuleMapTest, OneAddressInEachObjectOfTheLoaderGivesItsRecord) {
  struct Object {
    std::string path;
    uint64_t bias;
    uint32_t loads;
    uintptr_t inside;
  };
  std::vector<Object> objects;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        Object o{info->dlpi_name[0] == '\0' ? ExecutablePath() : info->dlpi_name, info->dlpi_addr,
                 0, 0};
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          ++o.loads;
          o.inside = info->dlpi_addr + ph.p_vaddr + ph.p_memsz / 2;
        }
        static_cast<std::vector<Object>*>(data)->push_back(o);
        return 0;
      },
      &objects);
  std::vector<uintptr_t> addresses;
  for (const Object& o : objects) addresses.push_back(o.inside);
  map_.Learn(addresses.data(), static_cast<uint32_t>(addresses.size()));
  EXPECT_EQ(uint32_t(objects.size()), map_.count());
  for (const Object& o : objects) {
    const ModuleRecord* r = LoadedRecord(map_, o.path);
    ASSERT_NE(nullptr, r) << "no record for " << o.path;
    EXPECT_EQ(o.bias, r->load_bias) << o.path;
    EXPECT_EQ(std::min<uint32_t>(o.loads, format::kMaxSegments), r->segment_count) << o.path;
    EXPECT_EQ(r, map_.Find(o.inside)) << o.path;
  }
}

TEST_F(ModuleMapTest, LearningKnownModulesAgainWritesNothing) {
  const uintptr_t addresses[] = {Address(reinterpret_cast<void*>(&FunctionInTheTest)),
                                 Address(reinterpret_cast<void*>(&getpid))};
  map_.Learn(addresses, 2);
  uint32_t count = map_.count();
  EXPECT_EQ(2u, count);
  int fd = openat(dir_.fd(), format::kModuleFile, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  uint32_t sequence = SequenceInFile(fd);
  EXPECT_EQ(0u, sequence % 2) << "even: no writer active";
  EXPECT_NE(0u, sequence);
  map_.Learn(addresses, 2);
  map_.ForgetUnloaded();
  EXPECT_EQ(count, map_.count());
  EXPECT_EQ(sequence, SequenceInFile(fd));
  close(fd);
}

TEST_F(ModuleMapTest, CapacityBoundsTheRecords) {
  TempDir other;
  ModuleMap small;
  ASSERT_TRUE(small.Create(other.fd(), format::kModuleFile, 2));
  const uintptr_t addresses[] = {Address(reinterpret_cast<void*>(&FunctionInTheTest)),
                                 Address(reinterpret_cast<void*>(&getpid)),
                                 Address(reinterpret_cast<void*>(&std::terminate))};
  small.Learn(addresses, 3);  // three objects: the test, libc, libstdc++
  EXPECT_EQ(2u, small.count());
  small.Learn(addresses, 3);
  EXPECT_EQ(2u, small.count());
}

// A shared library this process has not loaded yet, or null (and its name) if none is found.
void* OpenUnloadedLibrary(std::string* name) {
  for (const char* candidate : {"libz.so.1", "libbz2.so.1.0", "libexpat.so.1", "libcap.so.2"}) {
    if (void* loaded = dlopen(candidate, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(loaded);
      continue;
    }
    if (void* handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL)) {
      *name = candidate;
      return handle;
    }
  }
  return nullptr;
}

link_map* LinkMapOf(void* handle) {
  link_map* lm = nullptr;
  return dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 ? lm : nullptr;
}

TEST_F(ModuleMapTest, ALearnedLibraryIsMarkedUnloadedAfterDlclose) {
  const uintptr_t function = Address(reinterpret_cast<void*>(&FunctionInTheTest));
  map_.Learn(&function, 1);
  uint32_t before = map_.count();
  std::string name;
  void* handle = OpenUnloadedLibrary(&name);
  if (handle == nullptr) GTEST_SKIP() << "no unloaded system library to dlopen";
  link_map* lm = LinkMapOf(handle);
  ASSERT_NE(nullptr, lm);
  const std::string path = lm->l_name;
  const uintptr_t in_library = Address(lm->l_ld);
  map_.Learn(&in_library, 1);
  ASSERT_EQ(before + 1, map_.count()) << name;
  const ModuleRecord* r = LoadedRecord(map_, path);
  ASSERT_NE(nullptr, r) << path;
  EXPECT_EQ(BuildIdOfFile(path), BuildIdOf(*r));
  uint32_t index = static_cast<uint32_t>(r - &map_.record(0));
  EXPECT_EQ(uint64_t{lm->l_addr}, r->load_bias);
  const uint64_t inside = r->start;
  EXPECT_EQ(r, map_.Find(inside));

  dlclose(handle);
  if (void* still = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(still);
    GTEST_SKIP() << name << " stayed loaded after dlclose";
  }
  uint32_t count = map_.count();
  map_.ForgetUnloaded();
  EXPECT_EQ(count, map_.count()) << "records are never reused or removed";
  EXPECT_EQ(uint32_t{format::kModuleUnloaded}, map_.record(index).state);
  EXPECT_EQ(path, map_.record(index).path) << "an unloaded record keeps its description";
  EXPECT_EQ(nullptr, LoadedRecord(map_, path));
  EXPECT_EQ(nullptr, map_.Find(inside));
  EXPECT_NE(nullptr, LoadedRecord(map_, ExecutablePath())) << "others stay loaded";

  // Loading it again appends a new record rather than reviving the old one.
  void* again = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(nullptr, again);
  const uintptr_t in_again = Address(LinkMapOf(again)->l_ld);
  map_.Learn(&in_again, 1);
  EXPECT_EQ(count + 1, map_.count());
  EXPECT_EQ(uint32_t{format::kModuleUnloaded}, map_.record(index).state);
  EXPECT_NE(nullptr, LoadedRecord(map_, path));
  dlclose(again);
}

// A library among the candidates not yet loaded, other than `except`, whose mapping overlaps
// [start, end), or null (the kernel usually puts a library into a hole another one left, if it
// fits).
void* OpenLibraryOver(uint64_t start, uint64_t end, const std::string& except, std::string* name) {
  for (const char* candidate : {"libz.so.1", "libbz2.so.1.0", "libexpat.so.1", "libcap.so.2"}) {
    if (candidate == except) continue;
    if (void* loaded = dlopen(candidate, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(loaded);
      continue;
    }
    void* handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
    LoadedObject object;
    if (handle != nullptr && LoadedObject::Find(Address(LinkMapOf(handle)->l_ld), &object) &&
        object.map_start < end && start < object.map_end) {
      *name = candidate;
      return handle;
    }
    if (handle != nullptr) dlclose(handle);
  }
  return nullptr;
}

// Without ForgetUnloaded (glibc unloads some modules itself, without dlclose): a library loaded
// where an unloaded one was replaces its record.
TEST_F(ModuleMapTest, ALibraryLoadedOverAnUnloadedOnesAddressesReplacesItsRecord) {
  std::string first_name, second_name;
  void* first = OpenUnloadedLibrary(&first_name);
  if (first == nullptr) GTEST_SKIP() << "no unloaded system library to dlopen";
  const uintptr_t in_first = Address(LinkMapOf(first)->l_ld);
  map_.Learn(&in_first, 1);
  ASSERT_EQ(1u, map_.count());
  const ModuleRecord old = map_.record(0);
  dlclose(first);
  void* second = OpenLibraryOver(old.start, old.end, first_name, &second_name);
  if (second == nullptr) {
    GTEST_SKIP() << "no other library was loaded where " << first_name << " was";
  }
  const uintptr_t in_second = Address(LinkMapOf(second)->l_ld);
  map_.Learn(&in_second, 1);
  ASSERT_EQ(2u, map_.count());
  EXPECT_EQ(uint32_t{format::kModuleUnloaded}, map_.record(0).state) << first_name;
  EXPECT_EQ(uint32_t{format::kModuleLoaded}, map_.record(1).state) << second_name;
  EXPECT_EQ(&map_.record(1), map_.Find(in_second));
  dlclose(second);
}

// The point of learning through LoadedObject: another thread inside dl_iterate_phdr holds the
// loader's lock, and learning a library loaded just before still returns.
TEST_F(ModuleMapTest, LearnDoesNotWaitForTheLoaderLockOfAnotherThread) {
  std::string name;
  void* handle = OpenUnloadedLibrary(&name);
  if (handle == nullptr) GTEST_SKIP() << "no unloaded system library to dlopen";
  const uintptr_t addresses[] = {Address(LinkMapOf(handle)->l_ld),
                                 Address(reinterpret_cast<void*>(&FunctionInTheTest))};
  bool gave_up;
  {
    LoaderLockHolder holder;
    map_.Learn(addresses, 2);
    map_.ForgetUnloaded();
    holder.Release();
    gave_up = holder.gave_up();
  }
  EXPECT_FALSE(gave_up) << "Learn waited for the loader lock";
  EXPECT_EQ(2u, map_.count());
  dlclose(handle);
}

// Fork support: after CopyTo (under Lock) and Adopt, Learn writes the copy only.
TEST_F(ModuleMapTest, AdoptedCopyReceivesLaterRecords) {
  const uintptr_t function = Address(reinterpret_cast<void*>(&FunctionInTheTest));
  map_.Learn(&function, 1);
  TempDir child;
  map_.Lock();
  ASSERT_TRUE(map_.CopyTo(child.fd(), format::kModuleFile));
  map_.Unlock();
  ASSERT_TRUE(map_.Adopt(child.fd(), format::kModuleFile));
  int parent_fd = openat(dir_.fd(), format::kModuleFile, O_RDONLY | O_CLOEXEC);
  int child_fd = openat(child.fd(), format::kModuleFile, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(parent_fd, 0);
  ASSERT_GE(child_fd, 0);
  uint32_t count = map_.count();
  EXPECT_EQ(count, CountInFile(child_fd));

  const uintptr_t libc = Address(reinterpret_cast<void*>(&getpid));
  map_.Learn(&libc, 1);
  EXPECT_EQ(count + 1, map_.count());
  EXPECT_EQ(count + 1, CountInFile(child_fd));
  EXPECT_EQ(count, CountInFile(parent_fd)) << "the parent's file was written";
  close(parent_fd);
  close(child_fd);
}

TEST_F(ModuleMapTest, RecordingReaderLocatesAddressesInTheRecordedModules) {
  const uintptr_t learned[] = {Address(reinterpret_cast<void*>(&FunctionInTheTest)),
                               Address(reinterpret_cast<void*>(&getpid))};
  map_.Learn(learned, 2);
  auto tree = std::make_unique<LiveAllocationTree>();
  ASSERT_TRUE(tree->Create(dir_.fd(), format::kHeapTreeFile, 1, 10));
  StackStore stacks;
  ASSERT_TRUE(stacks.Create(dir_.fd(), format::kStackFile, 10, 16));

  RecordingReader reader(dir_.path());
  ASSERT_EQ(map_.count(), reader.modules().size());
  for (const std::string& warning : reader.warnings()) {
    EXPECT_EQ(std::string::npos, warning.find("modules")) << warning;
  }
  const uint64_t function = Address(reinterpret_cast<void*>(&FunctionInTheTest));
  std::optional<ModuleLocation> where = reader.Locate(function);
  ASSERT_TRUE(where.has_value());
  const ModuleRecord& m = reader.modules()[where->module];
  EXPECT_EQ(ExecutablePath(), m.path);
  EXPECT_EQ(function - map_.Find(function)->load_bias, where->offset);
  EXPECT_EQ(0, memcmp(&m, map_.Find(function), sizeof(m)));
  stacks.Unmap();
}

}  // namespace
}  // namespace heapgraph
