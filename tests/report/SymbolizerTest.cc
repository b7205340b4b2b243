#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "report/DebugFileSearch.h"
#include "report/Symbolizer.h"

namespace heapgraph::report {
namespace {

constexpr char kFixture[] = HEAPGRAPH_SYMBOLIZER_FIXTURE;
constexpr char kStrippedFixture[] = HEAPGRAPH_SYMBOLIZER_FIXTURE_STRIPPED;
constexpr char kSplitFixture[] = HEAPGRAPH_SYMBOLIZER_FIXTURE_SPLIT;
constexpr char kNoArangesFixture[] = HEAPGRAPH_SYMBOLIZER_FIXTURE_NOARANGES;
constexpr char kFixtureSource[] = "/symbolizer_fixture.cc";

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct BiasSearch {
  uintptr_t addr = 0;
  uintptr_t bias = 0;
  bool found = false;
};

// Stops at the loaded object with a PT_LOAD segment covering search->addr.
int FindBias(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* search = static_cast<BiasSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && search->addr >= start &&
        search->addr < start + segment.p_memsz) {
      search->bias = info->dlpi_addr;
      search->found = true;
      return 1;
    }
  }
  return 0;
}

// ELF virtual address, inside its own file, of a runtime address: runtime address - load bias.
uint64_t ElfVaddrOf(const void* runtime) {
  BiasSearch search{.addr = reinterpret_cast<uintptr_t>(runtime)};
  dl_iterate_phdr(FindBias, &search);
  EXPECT_TRUE(search.found) << "no loaded object covers " << runtime;
  return search.addr - search.bias;
}

class SymbolizerTest : public testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(kFixture, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
  }
  void TearDown() override {
    if (handle_ != nullptr) dlclose(handle_);
  }

  void* Symbol(const char* name) {
    void* address = dlsym(handle_, name);
    EXPECT_NE(address, nullptr) << name << ": " << dlerror();
    return address;
  }
  int Line(const char* global) { return *static_cast<int*>(Symbol(global)); }
  uint64_t EntryVaddr(const char* function) { return ElfVaddrOf(Symbol(function)); }
  // Entry of the function whose address the fixture's `getter` returns.
  uint64_t EntryVaddrFrom(const char* getter) {
    auto* address_of = reinterpret_cast<void* (*)()>(Symbol(getter));
    return ElfVaddrOf(address_of());
  }
  // Calls fixture_outer(), whose inlined helpers call RecordCaller(); returns the ELF vaddr of
  // that call instruction (its return address - 1, as a stack walker would pass).
  uint64_t InlinedCallVaddr() {
    auto* outer = reinterpret_cast<int (*)(int)>(Symbol("fixture_outer"));
    EXPECT_EQ(outer(2), 7);
    void* returned = *static_cast<void**>(Symbol("fixture_recorded_return"));
    return ElfVaddrOf(returned) - 1;
  }
  // The frames of InlinedCallVaddr(): two inlined helpers, then fixture_outer().
  void ExpectInlinedChain(const std::vector<SourceFrame>& frames) {
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].function, "heapgraph_fixture::InnerHelper()");
    EXPECT_EQ(frames[0].line, Line("fixture_inner_call_line"));
    EXPECT_TRUE(frames[0].inlined);
    EXPECT_EQ(frames[1].function, "heapgraph_fixture::InlinedHelper(int)");
    EXPECT_EQ(frames[1].line, Line("fixture_inlined_call_line"));
    EXPECT_TRUE(frames[1].inlined);
    EXPECT_EQ(frames[2].function, "fixture_outer");
    EXPECT_EQ(frames[2].line, Line("fixture_outer_call_line"));
    EXPECT_FALSE(frames[2].inlined);
    for (const SourceFrame& frame : frames) {
      EXPECT_TRUE(EndsWith(frame.file, kFixtureSource)) << frame.file;
    }
  }
  std::string WriteTempFile(const std::string& name, const std::string& bytes) {
    std::string path = testing::TempDir() + "/" + name + "." + std::to_string(getpid());
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  void* handle_ = nullptr;
  Symbolizer symbolizer_;
};

TEST_F(SymbolizerTest, ExternCFunctionAtEntry) {
  std::vector<SourceFrame> frames =
      symbolizer_.Symbolize(kFixture, EntryVaddr("fixture_c_function"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "fixture_c_function");
  EXPECT_TRUE(EndsWith(frames[0].file, kFixtureSource)) << frames[0].file;
  EXPECT_EQ(frames[0].line, Line("fixture_c_function_line"));
  EXPECT_FALSE(frames[0].inlined);
}

TEST_F(SymbolizerTest, NamespacedFunctionIsDemangled) {
  std::vector<SourceFrame> frames =
      symbolizer_.Symbolize(kFixture, EntryVaddrFrom("fixture_namespaced_address"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "heapgraph_fixture::Namespaced(int)");
  EXPECT_TRUE(EndsWith(frames[0].file, kFixtureSource)) << frames[0].file;
  EXPECT_EQ(frames[0].line, Line("fixture_namespaced_line"));
}

TEST_F(SymbolizerTest, InternalLinkageNameIsQualifiedFromScopes) {
  std::vector<SourceFrame> frames =
      symbolizer_.Symbolize(kFixture, EntryVaddrFrom("fixture_hidden_address"));
  ASSERT_EQ(frames.size(), 1u);
  // GCC: no linkage name, so no parameter list; a producer that emits one adds "(int)".
  EXPECT_TRUE(frames[0].function.starts_with("heapgraph_fixture::(anonymous namespace)::Hidden"))
      << frames[0].function;
}

TEST_F(SymbolizerTest, InlinedCalleesComeFirst) {
  ExpectInlinedChain(symbolizer_.Symbolize(kFixture, InlinedCallVaddr()));
}

TEST_F(SymbolizerTest, SeparateDebugInfoIsFoundThroughDebuglink) {
  // The split copy keeps no symbols or DWARF itself: everything comes from its .debug file.
  ExpectInlinedChain(symbolizer_.Symbolize(kSplitFixture, InlinedCallVaddr()));
}

TEST_F(SymbolizerTest, CompileUnitsAreFoundWithoutAranges) {
  // Clang emits no .debug_aranges by default; the copy without them must resolve the same.
  ExpectInlinedChain(symbolizer_.Symbolize(kNoArangesFixture, InlinedCallVaddr()));
  std::vector<SourceFrame> frames =
      symbolizer_.Symbolize(kNoArangesFixture, EntryVaddr("fixture_c_function"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].line, Line("fixture_c_function_line"));
}

TEST_F(SymbolizerTest, RepeatedLookupsAgree) {
  uint64_t vaddr = InlinedCallVaddr();
  size_t computed = symbolizer_.computed();
  std::vector<SourceFrame> first = symbolizer_.Symbolize(kFixture, vaddr);
  std::vector<SourceFrame> second = symbolizer_.Symbolize(kFixture, vaddr);
  EXPECT_EQ(symbolizer_.computed(), computed + 1);  // the second one came from the memo
  symbolizer_.Symbolize("/nonexistent/heapgraph-no-such.so", 0x1000);
  EXPECT_EQ(symbolizer_.computed(), computed + 1);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].function, second[i].function);
    EXPECT_EQ(first[i].file, second[i].file);
    EXPECT_EQ(first[i].line, second[i].line);
    EXPECT_EQ(first[i].inlined, second[i].inlined);
  }
}

TEST_F(SymbolizerTest, SharedResultsNameAnAddressWithoutOpeningItsFile) {
  std::string dir = testing::TempDir() + "symbolizer_shared_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  const std::string build_id = ElfBuildId(kFixture);
  ASSERT_FALSE(build_id.empty());
  uint64_t vaddr = InlinedCallVaddr();
  Symbolizer first;
  first.ShareResults(dir);  // made at the first result kept
  std::vector<SourceFrame> frames = first.Symbolize(kFixture, vaddr, build_id);
  ExpectInlinedChain(frames);
  first.CloseFiles();  // as a check does when it ends: its results are written

  // Another process's Symbolizer: the same build at a path where no file is.
  constexpr char kGone[] = "/nonexistent/libheapgraph_symbolizer_fixture.so";
  Symbolizer second;
  second.ShareResults(dir);
  EXPECT_EQ(second.Symbolize(kGone, vaddr, build_id), frames);
  EXPECT_EQ(second.computed(), 0u);  // from the cache, not from a file
  Symbolizer alone;                  // not sharing: the path names nothing
  EXPECT_TRUE(alone.Symbolize(kGone, vaddr, build_id).empty());
  std::filesystem::remove_all(dir);
}

TEST_F(SymbolizerTest, AFileOfAnotherBuildIsNotShared) {
  std::string dir = testing::TempDir() + "symbolizer_other_build_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  // The recording says another build was loaded from this path: what the file here says now is
  // this process's best guess, never another process's answer.
  const std::string recorded = std::string(40, 'a');
  uint64_t vaddr = EntryVaddr("fixture_c_function");
  Symbolizer first;
  first.ShareResults(dir);
  EXPECT_FALSE(first.Symbolize(kFixture, vaddr, recorded).empty());
  first.CloseFiles();
  Symbolizer second;
  second.ShareResults(dir);
  EXPECT_TRUE(second.Symbolize("/nonexistent/libother.so", vaddr, recorded).empty());
  std::filesystem::remove_all(dir);
}

// elfutils 0.188 would load libdebuginfod (and libcurl behind it) for a module without debug
// information on disk even with no server named; the Symbolizer asks only when one is.
TEST_F(SymbolizerTest, NoServerNamedLoadsNoDebuginfodClient) {
  if (dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_NOLOAD) != nullptr) {
    GTEST_SKIP() << "libdebuginfod is already loaded in this process";
  }
  const char* urls = getenv("DEBUGINFOD_URLS");
  std::string saved = urls != nullptr ? urls : "";
  unsetenv("DEBUGINFOD_URLS");
  Symbolizer symbolizer;  // the stripped copy: no DWARF, no debug link, no build-id debug file
  std::vector<SourceFrame> frames =
      symbolizer.Symbolize(kStrippedFixture, EntryVaddr("fixture_c_function"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "fixture_c_function");
  ExpectInlinedChain(symbolizer.Symbolize(kSplitFixture, InlinedCallVaddr()));  // its debug link
  EXPECT_EQ(dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_NOLOAD), nullptr);
  if (urls != nullptr) setenv("DEBUGINFOD_URLS", saved.c_str(), 1);
}

TEST_F(SymbolizerTest, StrippedCopyIsNamedThroughDynsym) {
  // The stripped copy has the same layout, so vaddrs measured on the loaded original apply.
  std::vector<SourceFrame> c_frames =
      symbolizer_.Symbolize(kStrippedFixture, EntryVaddr("fixture_c_function"));
  ASSERT_EQ(c_frames.size(), 1u);
  EXPECT_EQ(c_frames[0].function, "fixture_c_function");
  EXPECT_EQ(c_frames[0].file, "");
  EXPECT_EQ(c_frames[0].line, 0);

  std::vector<SourceFrame> cxx_frames =
      symbolizer_.Symbolize(kStrippedFixture, EntryVaddrFrom("fixture_namespaced_address"));
  ASSERT_EQ(cxx_frames.size(), 1u);
  EXPECT_EQ(cxx_frames[0].function, "heapgraph_fixture::Namespaced(int)");

  std::vector<SourceFrame> inlined_frames =
      symbolizer_.Symbolize(kStrippedFixture, InlinedCallVaddr());
  ASSERT_EQ(inlined_frames.size(), 1u);
  EXPECT_EQ(inlined_frames[0].function, "fixture_outer");
  EXPECT_FALSE(inlined_frames[0].inlined);
}

TEST_F(SymbolizerTest, AddressOutsideTheFileIsEmpty) {
  EXPECT_TRUE(symbolizer_.Symbolize(kFixture, uint64_t{1} << 40).empty());
  EXPECT_TRUE(symbolizer_.Symbolize(kFixture, ~uint64_t{0}).empty());
}

TEST_F(SymbolizerTest, MissingFileIsEmpty) {
  EXPECT_TRUE(symbolizer_.Symbolize("/nonexistent/libnothing.so", 0x1000).empty());
  EXPECT_TRUE(symbolizer_.Symbolize("", 0x1000).empty());
  EXPECT_TRUE(symbolizer_.Symbolize(testing::TempDir(), 0x1000).empty());  // A directory.
}

TEST_F(SymbolizerTest, GarbageFileIsEmpty) {
  std::string path = WriteTempFile("symbolizer_garbage", std::string(4096, '\x5a') + "not ELF");
  EXPECT_TRUE(symbolizer_.Symbolize(path, 0x1000).empty());
  EXPECT_TRUE(symbolizer_.Symbolize(path, 0x1000).empty());  // Failure is remembered.
  std::filesystem::remove(path);
}

TEST_F(SymbolizerTest, TruncatedElfDoesNotCrash) {
  std::ifstream in(kFixture, std::ios::binary);
  std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(image.size(), 4096u);
  uint64_t vaddr = EntryVaddr("fixture_c_function");

  std::string header_only = WriteTempFile("symbolizer_header", image.substr(0, 64));
  EXPECT_TRUE(symbolizer_.Symbolize(header_only, vaddr).empty());
  std::filesystem::remove(header_only);

  // Cuts at arbitrary points: whatever comes back, it must come back.
  for (size_t cut :
       {size_t{16}, size_t{1000}, image.size() / 3, image.size() / 2, image.size() - 100}) {
    std::string path = WriteTempFile("symbolizer_cut" + std::to_string(cut), image.substr(0, cut));
    Symbolizer fresh;
    for (const SourceFrame& frame : fresh.Symbolize(path, vaddr))
      EXPECT_FALSE(frame.function.empty());
    std::filesystem::remove(path);
  }
}

TEST(FunctionNameMatchesTest, BareQualifiedOrWithParameters) {
  EXPECT_TRUE(FunctionNameMatches("MakeCache", "MakeCache"));
  EXPECT_TRUE(FunctionNameMatches("MakeCache(int)", "MakeCache"));
  EXPECT_TRUE(FunctionNameMatches("app::Cache::Make(int) const", "Make"));
  EXPECT_TRUE(FunctionNameMatches("app::Cache::Make(int) const", "Cache::Make"));
  EXPECT_TRUE(FunctionNameMatches("app::Cache::Make(int) const", "app::Cache::Make(int) const"));
  EXPECT_TRUE(FunctionNameMatches("(anonymous namespace)::Build(unsigned long)", "Build"));
  EXPECT_FALSE(FunctionNameMatches("app::Cache::Remake()", "Make"));
  EXPECT_FALSE(FunctionNameMatches("MakeCache", "Make"));
  EXPECT_FALSE(FunctionNameMatches("MakeCache", ""));
}

TEST_F(SymbolizerTest, FunctionRangesFindAFunctionByItsBareName) {
  uint64_t entry = EntryVaddr("fixture_c_function");
  auto ranges = symbolizer_.FunctionRanges(kFixture, "fixture_c_function");
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].first, entry);
  EXPECT_GT(ranges[0].second, entry);
  auto namespaced = symbolizer_.FunctionRanges(kFixture, "Namespaced");
  ASSERT_EQ(namespaced.size(), 1u);
  EXPECT_EQ(symbolizer_.FunctionRanges(kFixture, "heapgraph_fixture::Namespaced"), namespaced);
  EXPECT_TRUE(symbolizer_.FunctionRanges(kFixture, "no_such_function").empty());
}

TEST_F(SymbolizerTest, SymbolAtNamesAGlobalAndTheOffsetIntoIt) {
  uint64_t line = ElfVaddrOf(Symbol("fixture_c_function_line"));
  auto symbol = symbolizer_.SymbolAt(kFixture, line + 2);
  ASSERT_TRUE(symbol.has_value());
  EXPECT_EQ(symbol->name, "fixture_c_function_line");
  EXPECT_EQ(symbol->offset, 2u);
  EXPECT_FALSE(symbolizer_.SymbolAt("/nonexistent/lib.so", line).has_value());
}

}  // namespace
}  // namespace heapgraph::report
