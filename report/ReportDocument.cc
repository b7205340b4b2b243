#include "report/ReportDocument.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/FoomReportJson.h"
#include "report/FoomReportJsonReader.h"
#include "report/LeakReportJson.h"
#include "report/LeakReportJsonReader.h"
#include "report/ReportJsonFields.h"

namespace heapgraph::report {

ReportDocument ParseReportDocument(std::string_view text) {
  using Json = nlohmann::ordered_json;
  Json document;
  try {
    document = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte is where parsing stopped: at the end, the text was cut short.
    bool at_end = e.byte >= text.size();
    throw ReportJsonError(at_end ? "not a whole JSON document (truncated?)"
                                 : fmt::format("not JSON (error at byte {})", e.byte));
  } catch (const Json::out_of_range&) {
    // A number the parser cannot hold ("1e99999"): found by report_document_fuzzer.
    throw ReportJsonError("not JSON this reader accepts (a number beyond a double's range)");
  }
  if (!document.is_object() || !document.contains("format") || !document["format"].is_string()) {
    throw ReportJsonError("not a heapgraph report (no \"format\" key)");
  }
  const std::string& format = document["format"].get_ref<const std::string&>();
  ReportDocument out;
  if (format == kLeakReportFormat) {
    out.leak = LeakReportFromJson(document);
  } else if (format == kFoomReportFormat) {
    out.foom = FoomReportFromJson(document);
  } else if (format == kFoomRecordFormat) {
    throw ReportJsonError(
        "a FOOM one-line record (heapgraph foom --record), not a report: use heapgraph foom "
        "--json");
  } else {
    throw ReportJsonError("not a heapgraph report (unknown \"format\")");
  }
  return out;
}

}  // namespace heapgraph::report
