#include "report/SuspectRules.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "heap/config/Config.h"

namespace heapgraph::report {
namespace {

[[noreturn]] void Fail(size_t line, const std::string& problem) {
  throw std::runtime_error(fmt::format("rules:{}: {}", line, problem));
}

// A byte count in heap/Config's syntax: digits with an optional K/M/G (binary) suffix.
double ParseSize(const std::string& text, size_t line) {
  if (text.empty()) Fail(line, "missing threshold");
  uint64_t bytes = 0;
  if (!ParseByteSize(text.data(), text.size(), &bytes)) {
    Fail(line, "bad threshold '" + text + "' (expected a whole number, K/M/G allowed)");
  }
  return static_cast<double>(bytes);
}

double ParseShare(const std::string& text, size_t line) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(v) || v <= 0 || v > 1) {
    Fail(line, "bad share '" + text + "' (expected a fraction in (0, 1])");
  }
  return v;
}

}  // namespace

SuspectRules SuspectRules::Defaults() {
  return Parse("share * 0.3\nbytes * 256M\ncount * 1000000\n");
}

SuspectRules SuspectRules::Parse(const std::string& text) {
  SuspectRules rules;
  std::istringstream in(text);
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string metric, pattern, threshold, extra;
    if (!(words >> metric)) continue;
    if (!(words >> pattern >> threshold)) Fail(number, "expected: METRIC PATTERN THRESHOLD");
    if (words >> extra) Fail(number, "unexpected '" + extra + "'");
    Rule rule;
    rule.pattern = pattern;
    rule.text = metric + " " + pattern + " " + threshold;
    if (metric == "count") {
      rule.metric = Metric::kCount;
      rule.threshold = ParseSize(threshold, number);
    } else if (metric == "bytes") {
      rule.metric = Metric::kBytes;
      rule.threshold = ParseSize(threshold, number);
    } else if (metric == "share") {
      rule.metric = Metric::kShare;
      rule.threshold = ParseShare(threshold, number);
    } else {
      Fail(number, "unknown metric '" + metric + "' (count, bytes or share)");
    }
    rules.rules_.push_back(std::move(rule));
  }
  return rules;
}

SuspectRules SuspectRules::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the rules file");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return Parse(text.str());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::vector<std::string> SuspectRules::Evaluate(const std::string& category, uint64_t count,
                                                uint64_t bytes, uint64_t total_bytes) const {
  std::vector<std::string> reasons;
  for (const Rule& rule : rules_) {
    if (fnmatch(rule.pattern.c_str(), category.c_str(), 0) != 0) continue;
    switch (rule.metric) {
      case Metric::kCount:
        if (static_cast<double>(count) >= rule.threshold) {
          reasons.push_back(fmt::format("abnormal count: {} blocks (rule: {})", count, rule.text));
        }
        break;
      case Metric::kBytes:
        if (static_cast<double>(bytes) >= rule.threshold) {
          reasons.push_back(fmt::format("abnormal bytes: {} (rule: {})", bytes, rule.text));
        }
        break;
      case Metric::kShare: {
        double share = total_bytes == 0 ? 0 : static_cast<double>(bytes) / total_bytes;
        if (total_bytes != 0 && share >= rule.threshold) {
          reasons.push_back(
              fmt::format("holds {:.0f}% of live bytes (rule: {})", share * 100, rule.text));
        }
        break;
      }
    }
  }
  return reasons;
}

}  // namespace heapgraph::report
