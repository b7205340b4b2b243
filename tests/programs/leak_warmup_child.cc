// Child program of tests/report/SymbolWarmupTest (linked with libheapgraph.so and the leak check's
// static libraries). It leaks blocks from several stacks (malloc in two functions, libc's strdup,
// libstdc++'s operator new), then, with its allocations no longer recorded, runs the leak check
// five ways on that same heap, each on a FreshStack with the program's stack scanned from main's
// frame (as RunLeakCheck does):
//   cold    RunLeakScan without while_marking, a fresh Symbolizer (the check before the warm-up);
//   warm    SymbolWarmup::Run as while_marking, told the marking is never done: every recorded
//           return address is symbolized before the report;
//   wait    while_marking polls marking_done until it is true (the scan uses the reaped status);
//   thrown  while_marking throws: the scan ignores it;
//   check   RunLeakCheck itself, writing the JSON and the text file.
// Between steps only the reports' JSON text is kept (no block addresses in binary form).
// Prints one line:
//   records R warmed W complete C same_warm S1 same_wait S2 same_check S3 files F hook H polled P
//   cold_computed N warm_computed M same_thrown S4   (M: symbols the warm report computed itself)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "check/FreshStack.h"
#include "check/LeakCheck.h"
#include "graph/LeakGraph.h"
#include "heap/plugin/RecorderEntries.h"
#include "reader/RecordingReader.h"
#include "report/LeakReport.h"
#include "report/LeakReportJson.h"
#include "report/LeakReportText.h"
#include "report/SymbolWarmup.h"
#include "report/Symbolizer.h"
#include "report/TypedAnalysis.h"
#include "scanner/LeakScan.h"

namespace {

using namespace heapgraph;

void* volatile g_sink;

__attribute__((noinline)) void LeakWithMalloc(int count) {
  for (int i = 0; i < count; ++i) g_sink = malloc(48);
  g_sink = nullptr;
}

__attribute__((noinline)) void LeakWithMallocElsewhere(int count) {
  for (int i = 0; i < count; ++i) g_sink = malloc(96);
  g_sink = nullptr;
}

__attribute__((noinline)) void LeakWithStrdup(int count) {
  for (int i = 0; i < count; ++i) g_sink = strdup("a string that leaks");
  g_sink = nullptr;
}

__attribute__((noinline)) void LeakWithNew(int count) {
  for (int i = 0; i < count; ++i) g_sink = new long[5];
  g_sink = nullptr;
}

enum class Mode { kCold, kWarm, kWait, kThrow };

struct Step {
  Mode mode = Mode::kCold;
  uint64_t program_stack_pointer = 0;
  std::string leaks_json;  // the report's "leaks" and "cycles", dumped
  size_t records = 0;
  size_t warmed = 0;
  bool complete = false;
  size_t report_computed = 0;  // symbols the report computed itself (memo misses)
  int hook_calls = 0;
  bool polled_done = false;
  std::string error;
};

std::string LeaksJson(const report::LeakReport& report) {
  nlohmann::ordered_json json = report::LeakReportToJson(report);
  return json["leaks"].dump(1) + json["cycles"].dump(1);
}

report::LeakReport Report(const scanner::ScanResult& scan, const RecordingReader& reader,
                          report::Symbolizer& symbolizer) {
  graph::LeakGraph graph(scan.leaked, scan.edges);
  report::TypedAnalysis typed(scan, symbolizer);
  report::LeakReport report =
      report::BuildLeakReport(scan, graph, reader, symbolizer, &typed.leaked_types());
  typed.AddTo(report);
  return report;
}

void RunStep(Step& step) {
  scanner::ScanOptions options;
  options.program_stack_pointer = step.program_stack_pointer;
  report::SymbolWarmup warmup;
  std::string hook_dir;
  if (step.mode != Mode::kCold) {
    options.while_marking = [&](const scanner::ScanResult& so_far,
                                const std::function<bool()>& done) {
      const std::string& dir = so_far.recording_dir;
      ++step.hook_calls;
      hook_dir = dir;
      if (step.mode == Mode::kWarm) {
        warmup.Run(dir, [] { return false; });
        return;
      }
      if (step.mode == Mode::kThrow) throw std::runtime_error("hook failed");
      for (int i = 0; i < 60000 && !step.polled_done; ++i) {
        step.polled_done = done();
        if (!step.polled_done) usleep(1000);
      }
    };
  }
  scanner::ScanResult scan = scanner::RunLeakScan(options);
  if (!scan.ok) {
    step.error = scan.error;
    return;
  }
  if (step.mode != Mode::kCold && hook_dir != scan.recording_dir) step.error = "hook dir differs";
  report::Symbolizer cold;
  report::Symbolizer& used = step.mode == Mode::kWarm ? warmup.symbolizer() : cold;
  size_t computed_before = used.computed();
  report::LeakReport report =
      step.mode == Mode::kWarm
          ? Report(scan, warmup.Reader(scan.recording_dir), warmup.symbolizer())
          : Report(scan,
                   RecordingReader(scan.recording_dir, RecordingReader::Content::kStacksAndModules),
                   cold);
  step.report_computed = used.computed() - computed_before;
  step.leaks_json = LeaksJson(report);
  step.records = report.leaks.size();
  step.warmed = warmup.warmed();
  step.complete = warmup.complete();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct CheckStep {
  uint64_t program_stack_pointer = 0;
  std::string dir;
  std::string leaks_json;
  bool files_match = false;
};

void RunCheck(CheckStep& step) {
  report::LeakCheckOptions options;
  options.json_path = step.dir + "/leaks.json";
  options.text_path = step.dir + "/leaks.txt";
  report::LeakReport report = report::RunLeakCheckFrom(options, step.program_stack_pointer);
  step.leaks_json = LeaksJson(report);
  step.files_match =
      report.ok && ReadFile(options.json_path) == report::LeakReportJsonText(report) + "\n" &&
      ReadFile(options.text_path) ==
          report::FormatLeakReportText(report, report::LeakCheckTextOptions(options, true));
}

void StepBody(void* step) {
  RunStep(*static_cast<Step*>(step));
}

void CheckBody(void* step) {
  RunCheck(*static_cast<CheckStep*>(step));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  LeakWithMalloc(5);
  LeakWithMallocElsewhere(3);
  LeakWithStrdup(4);
  LeakWithNew(2);
  auto ignore = heapgraph::RecorderEntries::Get().ignore_thread;
  if (ignore == nullptr) return 3;
  ignore(1);  // from here on the program allocates only for the checks
  uint64_t sp = reinterpret_cast<uint64_t>(__builtin_frame_address(0));
  Step cold, warm, wait, thrown;
  cold.mode = Mode::kCold;
  warm.mode = Mode::kWarm;
  wait.mode = Mode::kWait;
  thrown.mode = Mode::kThrow;
  for (Step* step : {&cold, &warm, &wait, &thrown}) step->program_stack_pointer = sp;
  CheckStep check;
  check.program_stack_pointer = sp;
  check.dir = argv[1];
  for (Step* step : {&cold, &warm, &wait, &thrown}) {
    if (!report::FreshStack::Run(&StepBody, step)) RunStep(*step);
  }
  if (!report::FreshStack::Run(&CheckBody, &check)) RunCheck(check);
  for (const Step* s : {&cold, &warm, &wait, &thrown}) {
    if (!s->error.empty()) {
      std::printf("error %s\n", s->error.c_str());
      return 1;
    }
  }
  std::printf(
      "records %zu warmed %zu complete %d same_warm %d same_wait %d same_check %d files %d hook %d "
      "polled %d cold_computed %zu warm_computed %zu same_thrown %d\n",
      cold.records, warm.warmed, warm.complete ? 1 : 0, warm.leaks_json == cold.leaks_json,
      wait.leaks_json == cold.leaks_json, check.leaks_json == cold.leaks_json,
      check.files_match ? 1 : 0, warm.hook_calls + wait.hook_calls + thrown.hook_calls,
      wait.polled_done ? 1 : 0, cold.report_computed, warm.report_computed,
      thrown.leaks_json == cold.leaks_json);
  if (std::getenv("LEAK_WARMUP_CHILD_DUMP") != nullptr)
    std::printf("%s\n", cold.leaks_json.c_str());
  return 0;
}
