#include "tools/LeakReportFile.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "report/LeakReportJson.h"

namespace heapgraph::tools {

nlohmann::ordered_json ReadLeakReportJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json report = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (report.is_discarded() || !report.is_object() ||
      report.value("format", "") != report::kLeakReportFormat) {
    throw std::runtime_error(fmt::format("{}: not a heapgraph leak report", path));
  }
  return report;
}

}  // namespace heapgraph::tools
