// tests/programs: a C++ test binary for StackOracleTest (issue 14, stacks): GoogleTest cases that
// allocate through libstdc++ (strings, containers, std::function, shared_ptr, streams, regex,
// exceptions, threads), built -O2 like a project's own test binaries. Run to completion.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

std::vector<std::string> Words(int count) {
  std::vector<std::string> words;
  for (int i = 0; i < count; ++i) words.push_back("word" + std::to_string(i * 7919 % 1000));
  return words;
}

TEST(CxxWorkload, ContainersOfStrings) {
  std::map<std::string, std::vector<int>> index;
  std::unordered_map<std::string, int> counts;
  std::vector<std::string> words = Words(20000);
  for (size_t i = 0; i < words.size(); ++i) {
    index[words[i]].push_back(static_cast<int>(i));
    ++counts[words[i]];
  }
  std::sort(words.begin(), words.end());
  EXPECT_EQ(index.size(), counts.size());
}

TEST(CxxWorkload, StreamsAndRegex) {
  std::ostringstream out;
  for (int i = 0; i < 3000; ++i) out << "key" << i << "=" << i * 3 << ";";
  std::string text = out.str();
  std::regex pair("key([0-9]+)=([0-9]+)");
  int matches = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), pair), end; it != end; ++it) ++matches;
  EXPECT_EQ(matches, 3000);
}

TEST(CxxWorkload, SharedObjectsAndCallbacks) {
  std::vector<std::function<int(int)>> callbacks;
  std::vector<std::shared_ptr<std::string>> shared;
  for (int i = 0; i < 5000; ++i) {
    auto text = std::make_shared<std::string>(100 + i % 50, 'x');
    shared.push_back(text);
    callbacks.emplace_back([text, i](int x) { return x + static_cast<int>(text->size()) + i; });
  }
  long total = 0;
  for (auto& callback : callbacks) total += callback(1);
  EXPECT_GT(total, 0);
}

TEST(CxxWorkload, Exceptions) {
  int caught = 0;
  for (int i = 0; i < 2000; ++i) {
    try {
      throw std::runtime_error("failure number " + std::to_string(i));
    } catch (const std::exception& e) {
      caught += e.what()[0] == 'f';
    }
  }
  EXPECT_EQ(caught, 2000);
}

TEST(CxxWorkload, Threads) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      std::vector<std::string> words = Words(5000 + t);
      std::map<std::string, int> seen;
      for (const std::string& w : words) seen[w] += t;
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
