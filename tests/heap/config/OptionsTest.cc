// tests/heap: the option table (heap/config/Options.inc) against docs/configuration.md: the doc's
// table of keys lists exactly the table's keys, and each documented default is the table's
// default, so that neither can change without the other. Also the table's own invariants.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <type_traits>

#include "heap/config/Config.h"

namespace heapgraph {
namespace {

struct TableEntry {
  const char* key;
  const char* expected;
  const char* description;
};

constexpr TableEntry kTable[] = {
#define HEAPGRAPH_OPTION(Type, field, key, syntax, expected, description, ...) \
  {key, expected, description},
#include "heap/config/Options.inc"
};

// Defaults the doc states in words, not as a value of the option; the table has "" for both.
const std::set<std::string> kDefaultsInWords = {"dir",          "leak_json",     "leak_html",
                                                "leak_explain", "suppressions",  "symbol_cache",
                                                "large_log",    "leak_check_exe"};

// key -> the default column of each row of the doc's option table ("| key | default | meaning |").
std::map<std::string, std::string> DocumentedDefaults() {
  std::ifstream doc(HEAPGRAPH_CONFIGURATION_DOC);
  EXPECT_TRUE(doc.good()) << HEAPGRAPH_CONFIGURATION_DOC;
  std::map<std::string, std::string> defaults;
  const std::regex row(R"(^\| `([^`]+)` \| ([^|]*) \|.*\|$)");
  bool in_table = false;
  for (std::string line; std::getline(doc, line);) {
    if (line == "| key | default | meaning |") {
      in_table = true;
    } else if (in_table && line.rfind("|", 0) != 0) {
      break;
    } else if (std::smatch m; in_table && std::regex_match(line, m, row)) {
      EXPECT_TRUE(defaults.emplace(m[1], m[2]).second) << "documented twice: " << m[1];
    }
  }
  return defaults;
}

// The first word of a default cell, without backticks: "`8M`" -> "8M", "39 (`SIGRTMIN+5`)" -> "39".
std::string FirstWord(const std::string& cell) {
  std::string word = cell.substr(0, cell.find(' '));
  word.erase(std::remove(word.begin(), word.end(), '`'), word.end());
  return word;
}

template <typename T>
bool Same(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Config::Path>) {
    return strcmp(a, b) == 0;
  } else if constexpr (std::is_array_v<T>) {
    return memcmp(a, b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

// The fields that differ between two Configs, by field name.
std::string Differences(const Config& a, const Config& b) {
  std::string names;
#define HEAPGRAPH_OPTION(Type, field, key, syntax, expected, description, ...) \
  if (!Same(a.field, b.field)) names += " " #field;
#include "heap/config/Options.inc"
  if (a.watermark_count != b.watermark_count) names += " watermark_count";
  return names;
}

template <typename T>
bool IsEmptyPath(const T& value) {
  if constexpr (std::is_same_v<T, Config::Path>) {
    return value[0] == '\0';
  } else {
    return false;
  }
}

bool DefaultIsEmptyPath(const std::string& key) {
#define HEAPGRAPH_OPTION(Type, field, name, ...) \
  if (key == name) return IsEmptyPath(Config().field);
#include "heap/config/Options.inc"
  return false;
}

TEST(OptionsTest, KeysAreUniqueAndEntriesComplete) {
  std::set<std::string> keys;
  for (const TableEntry& e : kTable) {
    EXPECT_TRUE(keys.insert(e.key).second) << "twice: " << e.key;
    EXPECT_NE('\0', e.expected[0]) << e.key;
    EXPECT_NE('\0', e.description[0]) << e.key;
    EXPECT_EQ(nullptr, strchr(e.description, '\n')) << e.key;
  }
}

TEST(OptionsTest, TheDocumentationListsExactlyTheTablesKeys) {
  std::map<std::string, std::string> documented = DocumentedDefaults();
  ASSERT_FALSE(documented.empty()) << "no option table found in " << HEAPGRAPH_CONFIGURATION_DOC;
  std::set<std::string> keys;
  for (const TableEntry& e : kTable) {
    keys.insert(e.key);
    EXPECT_TRUE(documented.count(e.key))
        << "option '" << e.key << "' is missing from " << HEAPGRAPH_CONFIGURATION_DOC;
  }
  for (const auto& [key, cell] : documented) {
    EXPECT_TRUE(keys.count(key)) << HEAPGRAPH_CONFIGURATION_DOC << " documents '" << key
                                 << "', which heap/config/Options.inc does not have";
  }
}

TEST(OptionsTest, TheDocumentedDefaultsAreTheTablesDefaults) {
  for (const auto& [key, cell] : DocumentedDefaults()) {
    SCOPED_TRACE(key + " documented with default " + cell);
    Config config;
    if (kDefaultsInWords.count(key)) {
      EXPECT_TRUE(DefaultIsEmptyPath(key));
      continue;
    }
    std::string value = FirstWord(cell);
    if (!config.ApplyEntry(key.data(), key.size(), value.data(), value.size())) {
      ADD_FAILURE() << "the documented default is not a value of the option";
      continue;
    }
    EXPECT_EQ("", Differences(Config(), config)) << "the documented default is not the table's";
  }
}

}  // namespace
}  // namespace heapgraph
