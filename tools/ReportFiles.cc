#include "tools/ReportFiles.h"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "check/ReportFile.h"
#include "reader/InputFile.h"
#include "report/FoomReportHtml.h"
#include "report/LeakReportHtml.h"
#include "report/ReportDocument.h"
#include "report/ReportJsonFields.h"

namespace heapgraph::tools {

std::string ReadReportFile(const std::string& path) {
  std::optional<InputFile> file = InputFile::Open(path, path, InputFile::Links::kFollow);
  if (!file) throw std::runtime_error(fmt::format("{}: no such file", path));
  return file->ReadAll(kMaxReportSize);
}

void WriteReportFile(const std::string& path, const std::string& text) {
  std::string error;
  if (!report::ReportFile::Write(path, text, &error)) throw std::runtime_error(error);
}

void WriteHtmlReport(const std::string& json_path, const std::string& html_path,
                     const report::HtmlOptions& options) {
  try {
    report::ReportDocument document = report::ParseReportDocument(ReadReportFile(json_path));
    WriteReportFile(html_path, document.leak ? report::LeakReportHtml(*document.leak, options)
                                             : report::FoomReportHtml(*document.foom, options));
  } catch (const report::ReportJsonError& e) {
    throw std::runtime_error(fmt::format("{}: {}", json_path, e.what()));
  }
}

}  // namespace heapgraph::tools
