// libFuzzer target for `heapgraph report`'s reading side: any bytes as a saved JSON report
// (report/ReportDocument: leak or FOOM, every field checked), and what it reads rendered in every
// form the command writes. The only acceptable failure is ReportJsonError (one line).
//
// Built by tests/report/CMakeLists.txt with clang++ -fsanitize=fuzzer,address,undefined into
// <build>/tests/report/report_document_fuzzer; ctest runs a short smoke test. A longer run, seeded
// with real reports:
//   mkdir -p /tmp/report-corpus && cp leaks.json foom.json /tmp/report-corpus/ &&
//   <build>/tests/report/report_document_fuzzer /tmp/report-corpus -max_total_time=300
#include <cstdint>
#include <string_view>

#include "report/FoomReportJson.h"
#include "report/FoomReportText.h"
#include "report/LeakReportJson.h"
#include "report/LeakReportText.h"
#include "report/ReportDocument.h"
#include "report/ReportJsonFields.h"

namespace report = heapgraph::report;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    report::ReportDocument document =
        report::ParseReportDocument(std::string_view(reinterpret_cast<const char*>(data), size));
    if (document.leak) {
      report::TextReportOptions options;
      options.categories = true;
      (void)report::FormatLeakReportText(*document.leak, options);
      (void)report::LeakReportJsonText(*document.leak);
    }
    if (document.foom) {
      (void)report::FoomReportToText(*document.foom);
      (void)report::FoomReportJsonText(*document.foom);
    }
  } catch (const report::ReportJsonError&) {
  }
  return 0;
}
