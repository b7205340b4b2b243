// ReportDocument, LeakReportJsonReader, FoomReportJsonReader, ReportJsonFields: a saved report
// read back renders the same JSON (and text) again; bad documents give one clear line.
#include <gtest/gtest.h>

#include <string>

#include "report/FoomReportJson.h"
#include "report/FoomReportText.h"
#include "report/LeakReportJson.h"
#include "report/LeakReportText.h"
#include "report/ReportDocument.h"
#include "report/ReportJsonFields.h"
#include "tests/report/ReportSamples.h"

namespace heapgraph::report {
namespace {

std::string ErrorOf(const std::string& text) {
  try {
    ParseReportDocument(text);
  } catch (const ReportJsonError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ReportDocumentTest, LeakReportRoundTrips) {
  for (bool hostile : {false, true}) {
    LeakReport original = samples::SampleLeakReport(hostile);
    std::string json = LeakReportJsonText(original);
    ReportDocument document = ParseReportDocument(json);
    ASSERT_TRUE(document.leak.has_value());
    EXPECT_FALSE(document.foom.has_value());
    EXPECT_EQ(LeakReportJsonText(*document.leak), json);
    TextReportOptions options;
    options.categories = true;
    EXPECT_EQ(FormatLeakReportText(*document.leak, options),
              FormatLeakReportText(original, options));
  }
}

// A preview (option leak_preview) is written only when there is one, read back, and refused when
// it is not hex bytes.
TEST(ReportDocumentTest, PreviewRoundTripsAndMustBeHexBytes) {
  LeakReport original = samples::SampleLeakReport();
  EXPECT_EQ(LeakReportJsonText(original).find("\"preview\""), std::string::npos);
  original.leaks[0].preview = "48656c6c6f00";
  std::string json = LeakReportJsonText(original);
  ReportDocument document = ParseReportDocument(json);
  EXPECT_EQ(document.leak->leaks[0].preview, "48656c6c6f00");
  EXPECT_EQ(LeakReportJsonText(*document.leak), json);
  nlohmann::ordered_json doc = LeakReportToJson(original);
  doc["leaks"][0]["preview"] = "<script>";
  EXPECT_EQ(ErrorOf(doc.dump()), "leaks[0].preview: not lower-case hex bytes");
}

TEST(ReportDocumentTest, FoomReportRoundTrips) {
  for (bool hostile : {false, true}) {
    FoomReport original = samples::SampleFoomReport(hostile);
    std::string json = FoomReportJsonText(original);
    ReportDocument document = ParseReportDocument(json);
    ASSERT_TRUE(document.foom.has_value());
    EXPECT_EQ(FoomReportJsonText(*document.foom), json);
    EXPECT_EQ(FoomReportToText(*document.foom), FoomReportToText(original));
  }
}

TEST(ReportDocumentTest, BadDocumentsGiveOneLine) {
  std::string json = LeakReportJsonText(samples::SampleLeakReport());
  EXPECT_EQ(ErrorOf(json.substr(0, json.size() / 2)), "not a whole JSON document (truncated?)");
  EXPECT_EQ(ErrorOf("{\"a\": x, \"b\": 2}"), "not JSON (error at byte 7)");
  EXPECT_EQ(ErrorOf("{\"format\": 8.79e90260}"),
            "not JSON this reader accepts (a number beyond a double's range)");
  EXPECT_EQ(ErrorOf("[1, 2]"), "not a heapgraph report (no \"format\" key)");
  EXPECT_EQ(ErrorOf("{\"format\": \"sarif\"}"), "not a heapgraph report (unknown \"format\")");
  EXPECT_EQ(ErrorOf(R"({"format": "heapgraph-leak-report", "version": 99})"),
            "heapgraph-leak-report version 99 is not supported (this heapgraph reads 1 to 2)");
  EXPECT_EQ(ErrorOf(R"({"format": "heapgraph-foom-record", "version": 1})").substr(0, 22),
            "a FOOM one-line record");
  for (std::string error :
       {ErrorOf("{\"format\": \"heapgraph-leak-report\", \"version\": 2}"), ErrorOf("")}) {
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(ReportDocumentTest, FieldErrorsNameThePath) {
  nlohmann::ordered_json doc = LeakReportToJson(samples::SampleLeakReport());
  doc["leaks"][1]["size"] = 1e30;  // beyond 64 bits
  EXPECT_EQ(ErrorOf(doc.dump()), "leaks[1].size: not an integer (or too large)");
  doc = LeakReportToJson(samples::SampleLeakReport());
  doc["cycles"][0]["members"][1]["leak"] = 5;
  EXPECT_EQ(ErrorOf(doc.dump()), "cycles[0].members[1].leak: index 5 out of range (2 entries)");
  doc = LeakReportToJson(samples::SampleLeakReport());
  doc["leaks"][0]["stack"][0]["address"] = "0xnothex";
  EXPECT_EQ(ErrorOf(doc.dump()), "leaks[0].stack[0].address: not a 64-bit address (\"0x...\")");
  doc = LeakReportToJson(samples::SampleLeakReport());
  doc["cycles"][1]["path"] = {0, 7};
  EXPECT_EQ(ErrorOf(doc.dump()), "cycles[1].path: index 7 out of range (2 entries)");
  doc = LeakReportToJson(samples::SampleLeakReport());
  doc.erase("summary");
  EXPECT_EQ(ErrorOf(doc.dump()), "summary: missing");
  nlohmann::ordered_json foom = FoomReportToJson(samples::SampleFoomReport());
  foom["pressure"]["entries"][0]["categories"] = uint64_t{1} << 40;
  EXPECT_EQ(ErrorOf(foom.dump()), "pressure.entries[0].categories: too many");
  foom = FoomReportToJson(samples::SampleFoomReport());
  foom["exit"]["signal"] = -1;
  EXPECT_EQ(ErrorOf(foom.dump()), "exit.signal: negative");
}

}  // namespace
}  // namespace heapgraph::report
