// bench/: leak_workload with the check re-run step by step (leak_workload_phases). It does what
// check/LeakCheck.cc's RunLeakCheck does, in the same order and with the same libraries, with a
// timer around each step, then measures two diagnostics outside the check's total: reading every
// reported stack's frames from the recording, and resolving (reading + symbolizing) them again
// with a fresh Symbolizer. It then includes leak_workload.cc, which calls RunPhasedCheck.
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "check/FreshStack.h"
#include "check/LeakCheck.h"
#include "graph/LeakGraph.h"
#include "heap/plugin/RecorderEntries.h"
#include "reader/RecordingReader.h"
#include "report/LeakReport.h"
#include "report/LeakReportJson.h"
#include "report/LeakReportText.h"
#include "report/StackResolver.h"
#include "report/SymbolWarmup.h"
#include "report/Symbolizer.h"
#include "report/TypedAnalysis.h"
#include "roots/ThreadCapture.h"
#include "scanner/LeakScan.h"

namespace leakbench {

struct PhaseTimes {
  // The check, step by step (their sum is the check's wall time minus a few µs).
  double scan_ms = 0;           // RunLeakScan: request to result
  double warmup_ms = 0;         // inside the scan: SymbolWarmup::Run while the snapshot marks
  uint64_t warmed = 0;          // return addresses it symbolized
  bool warm_complete = false;   // it symbolized every recorded return address
  double typing_ms = 0;         // inside the scan's child: type readers, typed references, paths
  double world_stopped_ms = 0;  // inside the scan: lock to release
  double allocation_pause_ms = 0;
  double graph_ms = 0;   // LeakGraph: SCCs + dominators (Boost)
  double reader_ms = 0;  // RecordingReader of the recording directory
  double report_ms = 0;  // TypedAnalysis + BuildLeakReport: types, retain cycles, grouping,
                         // stacks (read + symbolize), cycles
  double json_ms = 0;    // LeakReportJsonText
  double text_ms = 0;    // FormatLeakReportText
  double write_ms = 0;   // both files
  double free_ms = 0;    // destroying the report (its records and frames)
  // Process CPU time of the same steps (all threads: the text's SideThread included), which a
  // loaded machine inflates far less than wall time.
  double cpu_graph_ms = 0, cpu_report_ms = 0, cpu_files_ms = 0, cpu_free_ms = 0;
  double files_ms = 0;  // the check's own last step again (WriteLeakReportFiles): JSON and text
                        // formatted and written in parallel
  // Diagnostics, after the check.
  double frames_ms = 0;   // RecordingReader::Frames of every reported stack
  double resolve_ms = 0;  // StackResolver::Resolve of every reported stack, fresh Symbolizer
  // The world-stopped part alone, after the check: ThreadCapture::StopAll() (ptrace seize +
  // interrupt + regsets of every thread), a raw clone(SIGCHLD) of the stopped process (the
  // snapshot's fork cost: page tables), ReleaseAll() (detach every thread).
  double capture_ms = 0, clone_ms = 0, release_ms = 0;
  uint64_t captured_threads = 0;
  uint64_t direct = 0, indirect = 0, records = 0, stacks = 0, frames = 0, edges = 0;
  uint64_t live_blocks = 0, reader_blocks = 0, json_bytes = 0, text_bytes = 0;

  std::string Describe() const;
};

namespace {

double Cpu() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

std::string Ms(const char* key, double v) {
  char buffer[64];
  snprintf(buffer, sizeof(buffer), " %s=%.2f", key, v);
  return buffer;
}

std::string Count(const char* key, uint64_t v) {
  return std::string(" ") + key + "=" + std::to_string(v);
}

}  // namespace

std::string PhaseTimes::Describe() const {
  std::string s = "p_scan_ms=" + Ms("", scan_ms).substr(2);
  s += Ms("p_warmup_ms", warmup_ms) + Count("warmed", warmed) +
       Count("warm_complete", warm_complete ? 1 : 0) + Ms("p_typing_ms", typing_ms) +
       Ms("p_stopped_ms", world_stopped_ms) + Ms("p_alloc_pause_ms", allocation_pause_ms) +
       Ms("p_graph_ms", graph_ms) + Ms("p_reader_ms", reader_ms) + Ms("p_report_ms", report_ms) +
       Ms("p_json_ms", json_ms) + Ms("p_text_ms", text_ms) + Ms("p_write_ms", write_ms) +
       Ms("p_files_ms", files_ms) + Ms("p_free_ms", free_ms) + Ms("c_graph_ms", cpu_graph_ms) +
       Ms("c_report_ms", cpu_report_ms) + Ms("c_files_ms", cpu_files_ms) +
       Ms("c_free_ms", cpu_free_ms) + Ms("d_frames_ms", frames_ms) +
       Ms("d_resolve_ms", resolve_ms) + Ms("d_capture_ms", capture_ms) +
       Ms("d_clone_ms", clone_ms) + Ms("d_release_ms", release_ms) +
       Count("d_threads", captured_threads) + Count("report_stacks", stacks) +
       Count("report_frames", frames) + Count("scan_edges", edges) +
       Count("scan_live_blocks", live_blocks) + Count("reader_blocks", reader_blocks) +
       Count("json_bytes", json_bytes) + Count("text_bytes", text_bytes);
  return s;
}

namespace {

// The scan as RunLeakCheck runs it: on a fresh stack, the program's stack scanned from the frame
// of the caller of RunPhasedCheck (whose own frames would otherwise be scanned, with whatever
// stale block addresses their unused slots hold).
struct ScanCall {
  heapgraph::scanner::ScanOptions options;
  heapgraph::scanner::ScanResult result;
};

// As RunLeakCheck: SymbolWarmup while the snapshot marks when report::SymbolizesWhileMarking();
// LEAKBENCH_WARMUP=1 / =0 forces it on / off (the report then symbolizes cold).
heapgraph::scanner::ScanResult ScanOnFreshStack(uint64_t program_stack_pointer, bool types,
                                                heapgraph::report::SymbolWarmup& warmup,
                                                double* warmup_ms) {
  ScanCall call;
  call.options.program_stack_pointer = program_stack_pointer;
  call.options.types = types;
  const char* force = getenv("LEAKBENCH_WARMUP");
  if (force != nullptr ? force[0] == '1' : heapgraph::report::SymbolizesWhileMarking()) {
    call.options.while_marking = [&warmup, warmup_ms](const heapgraph::scanner::ScanResult& so_far,
                                                      const std::function<bool()>& done) {
      double w0 = Now();
      warmup.Run(so_far.recording_dir, done);
      *warmup_ms = Now() - w0;
    };
  }
  auto body = [](void* argument) {
    auto* c = static_cast<ScanCall*>(argument);
    c->result = heapgraph::scanner::RunLeakScan(c->options);
  };
  if (!heapgraph::report::FreshStack::Run(body, &call)) body(&call);
  return std::move(call.result);
}

}  // namespace

__attribute__((noinline)) bool RunPhasedCheck(const std::string& json_path,
                                              const std::string& text_path, PhaseTimes* t,
                                              std::string* error) {
  using namespace heapgraph;
  try {
    report::SymbolWarmup warmup;
    double t0 = Now();
    scanner::ScanResult scan = ScanOnFreshStack(
        reinterpret_cast<uint64_t>(__builtin_frame_address(0)) + 16,
        getenv("LEAKBENCH_NO_TYPES") == nullptr,  // the typing's cost, by difference
        warmup, &t->warmup_ms);
    double t1 = Now();
    t->warmed = warmup.warmed();
    t->warm_complete = warmup.complete();
    if (!scan.ok) {
      *error = scan.error;
      return false;
    }
    t->scan_ms = t1 - t0;
    t->typing_ms = scan.typed.typing_ms;
    t->world_stopped_ms = scan.timings.world_stopped_ms;
    t->allocation_pause_ms = scan.timings.allocation_pause_ms;
    t->live_blocks = scan.stats.live_blocks;
    t->edges = scan.edges.size();
    if (getenv("LEAKBENCH_SCAN_ONLY") != nullptr) {  // debugging: the scan's view, no report
      fprintf(stderr,
              "scan: leaked=%zu edges=%zu live=%" PRIu64 " root_ranges=%" PRIu64
              " root_bytes=%" PRIu64 " heap_words=%" PRIu64 " unreadable_pages=%" PRIu64
              " threads=%" PRIu64 "\n",
              scan.leaked.size(), scan.edges.size(), scan.stats.live_blocks, scan.stats.root_ranges,
              scan.stats.root_bytes, scan.stats.heap_words_scanned, scan.stats.unreadable_pages,
              scan.stats.threads);
      t->direct = scan.leaked.size();
      return true;
    }

    // The steps after the scan run with the calling thread ignored by the recorder, as in
    // RunLeakCheck. LEAKBENCH_RECORD_CHECK_ALLOCS=1 records them instead (the behaviour before
    // RunLeakCheck took the ignore scope, for comparison).
    struct Ignore {
      HeapgraphIgnoreThreadFn fn = nullptr;
      int before = 0;
      Ignore() {
        if (getenv("LEAKBENCH_RECORD_CHECK_ALLOCS") != nullptr) return;
        fn = heapgraph::RecorderEntries::Get().ignore_thread;
        if (fn != nullptr) before = fn(1);
      }
      ~Ignore() {
        if (fn != nullptr) fn(before);
      }
    } ignore;

    double cpu1 = Cpu();
    graph::LeakGraph graph(scan.leaked, scan.edges);  // as RunLeakCheck: the blocks in place
    double t2 = Now();
    t->graph_ms = t2 - t1;
    double cpu2 = Cpu();
    t->cpu_graph_ms = cpu2 - cpu1;

    const RecordingReader& reader = warmup.Reader(scan.recording_dir);
    double t3 = Now();
    t->reader_ms = t3 - t2;
    t->reader_blocks = reader.blocks().size();

    report::Symbolizer& symbolizer = warmup.symbolizer();
    report::TypedAnalysis typed(scan, symbolizer);
    report::LeakReport report = report::BuildLeakReport(
        scan, graph, reader, symbolizer, &typed.leaked_types(), &typed.leaked_self_owners());
    typed.AddTo(report);
    double t4 = Now();
    t->report_ms = t4 - t3;
    t->cpu_report_ms = Cpu() - cpu2;

    std::string json = report::LeakReportJsonText(report) + "\n";
    double t5 = Now();
    t->json_ms = t5 - t4;
    if (getenv("LEAKBENCH_CHECK_JSON") != nullptr &&  // the streamed text against the tree's dump
        json != report::LeakReportToJson(report).dump(2) + "\n") {
      *error = "LeakReportJsonText differs from LeakReportToJson().dump(2)";
      return false;
    }
    t5 = Now();
    std::string text = report::FormatLeakReportText(report);
    double t6 = Now();
    t->text_ms = t6 - t5;
    {
      std::ofstream(json_path, std::ios::trunc) << json;
      std::ofstream(text_path, std::ios::trunc) << text;
    }
    double t7 = Now();
    t->write_ms = t7 - t6;
    {
      report::LeakCheckOptions files;
      files.json_path = json_path;
      files.text_path = text_path;
      double f0 = Now(), c0 = Cpu();
      report::WriteLeakReportFiles(files, report);
      t->files_ms = Now() - f0;
      t->cpu_files_ms = Cpu() - c0;
    }
    t->json_bytes = json.size();
    t->text_bytes = text.size();
    t->direct = report.summary.direct_blocks;
    t->indirect = report.summary.indirect_blocks;
    t->records = report.leaks.size();

    // Diagnostics: the stacks' share of report_ms.
    std::vector<uint32_t> ids;
    for (const report::LeakRecord& r : report.leaks) ids.push_back(r.stack_id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    t->stacks = ids.size();
    {
      double f0 = Now(), c0 = Cpu();
      report::LeakReport gone = std::move(report);  // the check frees its report here too
      gone = {};
      t->free_ms = Now() - f0;
      t->cpu_free_ms = Cpu() - c0;
    }
    double t8 = Now();
    for (uint32_t id : ids) {
      if (id != 0) t->frames += reader.Frames(id).size();
    }
    double t9 = Now();
    t->frames_ms = t9 - t8;
    report::Symbolizer fresh;
    report::StackResolver resolver(reader, fresh);
    for (uint32_t id : ids) resolver.Resolve(id);
    t->resolve_ms = Now() - t9;

    // The stop, the clone and the release, timed one by one (nothing allocated in between).
    roots::ThreadCapture capture;
    double c0 = Now();
    if (capture.StopAll()) {
      double c1 = Now();
      long pid = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
      if (pid == 0) _exit(0);
      double c2 = Now();
      t->captured_threads = capture.threads().size();
      capture.ReleaseAll();
      double c3 = Now();
      if (pid > 0) waitpid(static_cast<pid_t>(pid), nullptr, 0);
      t->capture_ms = c1 - c0;
      t->clone_ms = c2 - c1;
      t->release_ms = c3 - c2;
    }
    return true;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}

}  // namespace leakbench

#define LEAKBENCH_PHASES 1
#include "bench/leak_workload.cc"  // NOLINT(bugprone-suspicious-include)
