// tools/: the report files of the commands that render reports (`report`, `run --html`,
// `foom --html`): a saved JSON report read whole (a regular file, bounded, never blocking:
// reader/InputFile), and a rendered report written 0600 and renamed into place
// (check/ReportFile). Errors are std::runtime_error / RecordingError with one line.
#pragma once

#include <string>

#include "report/HtmlPage.h"

namespace heapgraph::tools {

// A report of 2M leaks over 4,000 stacks is tens of MB; beyond this a file is refused.
inline constexpr uint64_t kMaxReportSize = uint64_t{1} << 30;

std::string ReadReportFile(const std::string& path);
void WriteReportFile(const std::string& path, const std::string& text);

// Reads the JSON report at `json_path` (leak or FOOM), renders its HTML page and writes it to
// `html_path`. Throws std::runtime_error "<json_path>: <why>" on a bad report.
void WriteHtmlReport(const std::string& json_path, const std::string& html_path,
                     const report::HtmlOptions& options);

}  // namespace heapgraph::tools
