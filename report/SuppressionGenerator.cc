#include "report/SuppressionGenerator.h"

#include <fmt/format.h>

#include <set>

#include "report/CallerSelector.h"
#include "report/ReportFrame.h"

namespace heapgraph::report {
namespace {

std::string StringOrEmpty(const nlohmann::ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The function of the record's first application frame, or "".
std::string ApplicationFunction(const nlohmann::ordered_json& stack) {
  for (const auto& f : stack) {
    ReportFrame frame;
    frame.function = StringOrEmpty(f, "function");
    frame.module = StringOrEmpty(f, "module");
    frame.module_path = StringOrEmpty(f, "module_path");
    if (!frame.function.empty() && !CallerSelector::IsAllocationPlumbing(frame)) {
      return frame.function;
    }
  }
  return "";
}

}  // namespace

std::string GenerateSuppressions(const nlohmann::ordered_json& report) {
  std::string text = "# heapgraph suppressions (LeakSanitizer syntax), one rule per leak record\n";
  std::set<std::string> written;
  for (const auto& record : report.at("leaks")) {
    if (!StringOrEmpty(record, "suppressed").empty()) continue;
    std::string function = ApplicationFunction(record.at("stack"));
    if (function.empty()) {
      text += fmt::format("# {} leak of {} byte(s): no symbolized application frame\n",
                          record.at("kind").get<std::string>(), record.at("size").get<uint64_t>());
    } else if (written.insert(function).second) {
      text += "leak:" + function + "\n";
    }
  }
  return text;
}

}  // namespace heapgraph::report
