// tests/report: BaseName, the module and file names of the reports.
#include <gtest/gtest.h>

#include <string>

#include "report/BaseName.h"

namespace heapgraph::report {
namespace {

TEST(BaseNameTest, WhatFollowsTheLastSlash) {
  EXPECT_EQ("libc.so.6", BaseName("/usr/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_EQ("a.cc", BaseName("src/a.cc"));
  EXPECT_EQ("a.cc", BaseName(std::string("/a.cc")));
}

TEST(BaseNameTest, APathWithoutSlashIsItsOwnName) {
  EXPECT_EQ("heapgraph", BaseName("heapgraph"));
  EXPECT_EQ("", BaseName(""));
}

TEST(BaseNameTest, ATrailingSlashLeavesNothing) {
  EXPECT_EQ("", BaseName("/usr/lib/"));
  EXPECT_EQ("", BaseName("/"));
}

}  // namespace
}  // namespace heapgraph::report
