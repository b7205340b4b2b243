#include "report/LeakDiff.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "report/LeakSignature.h"

namespace heapgraph::report {
namespace {

using json = nlohmann::ordered_json;

std::string StringOr(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The record's signature: as written, else computed from its frames.
std::string SignatureOf(const json& record) {
  std::string written = StringOr(record, "signature");
  if (!written.empty()) return written;
  std::vector<std::string> names;  // owns the views below
  const json& stack = record.at("stack");
  names.reserve(2 * stack.size());
  std::vector<SignatureFrame> frames;
  for (const json& f : stack) {
    names.push_back(StringOr(f, "function"));
    names.push_back(StringOr(f, "module"));
  }
  for (size_t i = 0; i < names.size(); i += 2) frames.push_back({names[i], names[i + 1]});
  return LeakSignature(StringOr(record, "kind"), frames);
}

std::vector<std::string> Where(const json& stack) {
  std::vector<std::string> where;
  for (const json& f : stack) {
    std::string function = StringOr(f, "function");
    if (function.empty()) continue;
    std::string file = StringOr(f, "file");
    auto line = f.find("line");
    if (!file.empty() && line != f.end() && line->is_number_integer()) {
      function += fmt::format(" ({}:{})", file.substr(file.rfind('/') + 1), line->get<int>());
    }
    where.push_back(std::move(function));
    if (where.size() == 3) break;
  }
  return where;
}

template <typename T, typename Bytes>
void LargestFirst(std::vector<T>& list, Bytes bytes) {
  std::stable_sort(list.begin(), list.end(),
                   [&](const T& a, const T& b) { return bytes(a) > bytes(b); });
}

}  // namespace

void LeakSignatures::Add(const json& report, const std::string& name) {
  auto leaks = report.find("leaks");
  if (leaks == report.end() || !leaks->is_array()) {
    throw std::runtime_error(fmt::format("{}: no \"leaks\" array", name));
  }
  for (const json& record : *leaks) {
    try {
      if (!StringOr(record, "suppressed").empty()) continue;
      std::string signature = SignatureOf(record);
      SignatureTotals& t = totals_[signature];
      if (t.signature.empty()) {
        t.signature = signature;
        t.kind = StringOr(record, "kind");
        t.where = Where(record.at("stack"));
      }
      t.count += record.at("count").get<uint64_t>();
      t.bytes += record.at("size").get<uint64_t>();
    } catch (const json::exception& e) {
      throw std::runtime_error(fmt::format("{}: a malformed leak record ({})", name, e.what()));
    }
  }
}

LeakDiff LeakDiff::Compare(const LeakSignatures& before, const LeakSignatures& after) {
  LeakDiff diff;
  for (const auto& [signature, now] : after.totals()) {
    auto old = before.totals().find(signature);
    if (old == before.totals().end()) {
      diff.added.push_back(now);
    } else if (now.count > old->second.count || now.bytes > old->second.bytes) {
      diff.grew.push_back({old->second, now});
    } else {
      ++diff.unchanged;
    }
  }
  for (const auto& [signature, old] : before.totals()) {
    if (after.totals().count(signature) == 0) diff.removed.push_back(old);
  }
  auto bytes = [](const SignatureTotals& t) { return t.bytes; };
  LargestFirst(diff.added, bytes);
  LargestFirst(diff.removed, bytes);
  LargestFirst(diff.grew, [](const Growth& g) {
    return g.after.bytes > g.before.bytes ? g.after.bytes - g.before.bytes : 0;
  });
  return diff;
}

}  // namespace heapgraph::report
