// Two planted leaks for the yaml-cpp reproduction (bench/yaml_cpp/run.sh copies
// this file into yaml-cpp's test/ folder). Issue 11: a forgotten YAML::Node and
// a std::shared_ptr cycle Session <-> Listener. LSan and Valgrind report
// 4,036 B in 50 blocks for the whole suite with these two tests added.
#include <memory>

#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace {

struct Listener;

struct Session {
  std::shared_ptr<Listener> listener;
  char name[32] = "session";
};

struct Listener {
  std::shared_ptr<Session> session;
  int events = 0;
};

}  // namespace

TEST(PlantedLeak, ForgottenNode) {
  auto* n = new YAML::Node(YAML::Load("{a: [1, 2, 3], b: {c: hello}}"));
  EXPECT_EQ((*n)["a"].size(), 3u);
}

TEST(PlantedLeak, SharedPtrCycle) {
  auto session = std::make_shared<Session>();
  auto listener = std::make_shared<Listener>();
  session->listener = listener;
  listener->session = session;
  EXPECT_EQ(listener->session->listener, listener);
}
