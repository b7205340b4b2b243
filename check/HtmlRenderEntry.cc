#include "check/HtmlRenderEntry.h"

#include <cstdio>
#include <exception>
#include <string>

#include "check/ReportFile.h"
#include "report/FoomReportHtml.h"
#include "report/LeakReportHtml.h"
#include "report/ReportDocument.h"

namespace {

int Fail(const std::string& why, char* error, size_t error_size) {
  if (error_size != 0) snprintf(error, error_size, "%s", why.c_str());
  return -1;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int heapgraph_internal_render_html(
    const char* json, size_t json_size, const char* json_path, const char* html_path, char* error,
    size_t error_size) {
  using namespace heapgraph::report;
  try {
    ReportDocument document = ParseReportDocument(std::string(json, json_size));
    HtmlOptions options;
    if (json_path != nullptr) options.json_report = json_path;
    std::string page = document.leak ? LeakReportHtml(*document.leak, options)
                                     : FoomReportHtml(*document.foom, options);
    std::string why;
    if (!ReportFile::Write(html_path, page, &why)) return Fail(why, error, error_size);
    return 0;
  } catch (const std::exception& e) {
    return Fail(std::string("cannot write ") + html_path + ": " + e.what(), error, error_size);
  }
}
