// gtest/: heapgraph::gtest's installation and heapgraph_gtest_main (include/heapgraph/gtest.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gtest/LeakCheckListener.h"
#include "heapgraph/gtest.h"

namespace heapgraph::gtest {
namespace {

std::string Environment(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

bool RunTwice() {
  return Environment("HEAPGRAPH_GTEST_RUN_TWICE", "0") == "1";
}

}  // namespace

bool InstallLeakCheck() {
  static LeakCheckApi* api = new LeakCheckApi;  // lives as long as the listener
  if (!api->ok()) {
    std::fprintf(stderr, "heapgraph: no per-test leak checks: %s\n", api->error().c_str());
    return false;
  }
  auto* listener =
      new LeakCheckListener(*api, Environment("HEAPGRAPH_GTEST_DIR", "heapgraph-gtest"),
                            Environment("HEAPGRAPH_GTEST_SKIP", ""), RunTwice() ? 1 : 0);
  testing::UnitTest::GetInstance()->listeners().Append(listener);  // owned by GoogleTest
  return true;
}

void SkipLeakCheck() {
  LeakCheckListener::SkipCurrent();
}

void ExpectLeaks(unsigned long long blocks) {
  LeakCheckListener::ExpectCurrent(blocks);
}

}  // namespace heapgraph::gtest

int heapgraph_gtest_main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (heapgraph::gtest::RunTwice()) GTEST_FLAG_SET(repeat, 2);
  // HEAPGRAPH_GTEST_CHECK=0: the same program without the listener (the benchmark's baseline).
  if (heapgraph::gtest::Environment("HEAPGRAPH_GTEST_CHECK", "1") != "0") {
    heapgraph::gtest::InstallLeakCheck();
  }
  return RUN_ALL_TESTS();
}
