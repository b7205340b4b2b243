// tests/heap: SharedLibrary: a library opened by SONAME on demand, its functions bound by name;
// a library or function that is not there binds nothing.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>

#include "heap/platform/SharedLibrary.h"

namespace heapgraph {
namespace {

TEST(SharedLibraryTest, BindsTheFunctionsOfALibrary) {
  const SharedLibrary library("libm.so.6");
  ASSERT_TRUE(library.loaded());
  double (*cosine)(double) = nullptr;
  ASSERT_TRUE(library.Bind("cos", &cosine));
  EXPECT_EQ(cosine(0.0), 1.0);
  // The same function the program calls: one copy of libm in the process.
  EXPECT_EQ(reinterpret_cast<void*>(cosine), dlsym(RTLD_DEFAULT, "cos"));
}

TEST(SharedLibraryTest, AFunctionThatIsNotThereBindsNull) {
  const SharedLibrary library("libm.so.6");
  double (*missing)(double) = &std::sin;
  EXPECT_FALSE(library.Bind("heapgraph_no_such_function", &missing));
  EXPECT_EQ(missing, nullptr);
}

TEST(SharedLibraryTest, ALibraryThatIsNotThereLoadsNothingAndBindsNull) {
  const SharedLibrary library("libheapgraph-no-such-library.so.0");
  EXPECT_FALSE(library.loaded());
  double (*cosine)(double) = &std::sin;
  EXPECT_FALSE(library.Bind("cos", &cosine));
  EXPECT_EQ(cosine, nullptr);
}

// The program's module generation ignores what SharedLibrary loads, dependencies included, and
// follows what the program loads itself.
TEST(SharedLibraryTest, TheProgramsModuleGenerationIgnoresItsOwnLoads) {
  void* present = dlopen("libdw.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (present != nullptr) {
    dlclose(present);
    GTEST_SKIP() << "libdw is loaded already";
  }
  const uint64_t before = SharedLibrary::ProgramModuleGeneration();
  const SharedLibrary library("libdw.so.1");  // brings libelf, libz, libbz2, ...
  ASSERT_TRUE(library.loaded());
  EXPECT_EQ(SharedLibrary::ProgramModuleGeneration(), before);
  void* program_library = dlopen("libcapstone.so.4", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(program_library, nullptr) << dlerror();
  EXPECT_NE(SharedLibrary::ProgramModuleGeneration(), before);
  dlclose(program_library);
}

}  // namespace
}  // namespace heapgraph
