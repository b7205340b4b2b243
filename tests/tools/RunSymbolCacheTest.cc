// tests/tools: RunSymbolCache, where a run's checks share symbolized addresses: the user's cache
// as the environment names it, made private and kept; the run's own in its root, removed, when
// debuginfod servers are named or the user's directory is open to others.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "tools/RunSymbolCache.h"

namespace heapgraph::tools {
namespace {

class RunSymbolCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::TempDir() + "run_symbol_cache_" + std::to_string(getpid());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ + "/rec");
    setenv("XDG_CACHE_HOME", (root_ + "/xdg").c_str(), 1);
    unsetenv("DEBUGINFOD_URLS");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // Whether `dir` holds a run's own cache (.symbols.*).
  static bool HoldsOwnCache(const std::string& dir) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().filename().string().rfind(".symbols.", 0) == 0) return true;
    }
    return false;
  }

  std::string root_;
};

TEST_F(RunSymbolCacheTest, TheUsersCacheIsNamedByXdgCacheHomeElseHome) {
  EXPECT_EQ(RunSymbolCache::UserDirectory(), root_ + "/xdg/heapgraph/symbols");
  setenv("XDG_CACHE_HOME", "relative", 1);
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(RunSymbolCache::UserDirectory(), "/home/someone/.cache/heapgraph/symbols");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "", 1);
  EXPECT_EQ(RunSymbolCache::UserDirectory(), "");
}

TEST_F(RunSymbolCacheTest, TheUsersCacheIsMadePrivateAndKept) {
  const std::string user = root_ + "/xdg/heapgraph/symbols";
  {
    RunSymbolCache cache(root_ + "/rec");
    EXPECT_TRUE(cache.kept());
    EXPECT_EQ(cache.option(), user);
  }
  EXPECT_TRUE(std::filesystem::is_directory(user));
  for (const std::string& dir : {user, root_ + "/xdg/heapgraph"}) {
    EXPECT_EQ(std::filesystem::status(dir).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all)
        << dir;
  }
  EXPECT_FALSE(HoldsOwnCache(root_ + "/rec"));
}

TEST_F(RunSymbolCacheTest, WithDebuginfodServersTheRunKeepsItsOwn) {
  setenv("DEBUGINFOD_URLS", "https://debuginfod.example.org", 1);
  {
    RunSymbolCache cache(root_ + "/rec");
    EXPECT_FALSE(cache.kept());
    EXPECT_EQ(cache.option().rfind(root_ + "/rec/.symbols.", 0), 0u) << cache.option();
    EXPECT_TRUE(HoldsOwnCache(root_ + "/rec"));
  }
  EXPECT_FALSE(HoldsOwnCache(root_ + "/rec")) << "removed when the run ends";
  EXPECT_FALSE(std::filesystem::exists(root_ + "/xdg"));
  unsetenv("DEBUGINFOD_URLS");
}

TEST_F(RunSymbolCacheTest, ADirectoryOthersMayWriteOrALinkIsNotUsed) {
  const std::string user = root_ + "/xdg/heapgraph/symbols";
  std::filesystem::create_directories(user);
  std::filesystem::permissions(root_ + "/xdg/heapgraph", std::filesystem::perms::owner_all);
  std::filesystem::permissions(
      user, std::filesystem::perms::owner_all | std::filesystem::perms::others_write);
  EXPECT_FALSE(RunSymbolCache(root_ + "/rec").kept());
  std::filesystem::remove(user);
  std::filesystem::create_directory(root_ + "/elsewhere");
  std::filesystem::permissions(root_ + "/elsewhere", std::filesystem::perms::owner_all);
  std::filesystem::create_directory_symlink(root_ + "/elsewhere", user);
  EXPECT_FALSE(RunSymbolCache(root_ + "/rec").kept());
}

}  // namespace
}  // namespace heapgraph::tools
