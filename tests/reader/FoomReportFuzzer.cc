// libFuzzer target for what `heapgraph foom` reads besides the trees (RecordingReaderFuzzer covers
// those): the `exit` file, the rules file, and a recording whose version 2 session, `types` file,
// `pressure` time line or sampled (version 3) heap.tree is corrupt, carried through
// classification, report building (estimates, time line) and all three output forms. The only
// acceptable failures are RecordingError (bad dump) and std::runtime_error (bad rules).
//
// Built by tests/reader/CMakeLists.txt with clang++ -fsanitize=fuzzer,address,undefined into
// <build>/tests/reader/foom_report_fuzzer; ctest runs a 20000-input smoke test. A longer run
// (docs/foom-report.md):
//   mkdir -p /tmp/foom-corpus && FUZZER=<build>/tests/reader/foom_report_fuzzer
//   $FUZZER /tmp/foom-corpus -max_len=8192 -max_total_time=300
//
// Input: byte 0 % 6 selects 0: the bytes are an `exit` file; 1: a rules file; 2: a recording:
// 2 bytes (LE) give the length of an `exit` file that follows, the rest are 10-byte patches
// {offset (2, LE), value (8, LE)} to a valid version 2 session; 3: a recording whose `types`
// file is a valid one patched the same way (10-byte patches); 4: the same for a valid `pressure`
// file of three entries with categories; 5: a sampled recording (heap.tree version 3, the
// sample mean from the first 4 bytes, LE) whose heap.tree is patched the same way. In 3-5 an
// input whose length is not a multiple of 10 also cuts that many bytes off the end of the file.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "heap/store/PersistedFormat.h"
#include "reader/RecordingReader.h"
#include "report/ExitRecord.h"
#include "report/FoomReport.h"
#include "report/FoomReportJson.h"
#include "report/FoomReportText.h"
#include "report/SuspectRules.h"
#include "tests/reader/SyntheticRecording.h"
#include "tests/reader/TypesFileBuilder.h"

namespace {

using heapgraph::synthetic::Files;
namespace format = heapgraph::format;
namespace report = heapgraph::report;

const std::string& ScratchDir() {
  static const std::string* dir = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    auto* path = new std::string(base + "/foom-fuzz-XXXXXX");
    if (mkdtemp(path->data()) == nullptr) abort();
    return path;
  }();
  static const bool cleanup = atexit([] { std::filesystem::remove_all(*dir); }) == 0;
  (void)cleanup;
  return *dir;
}

std::string ValidSession() {
  std::string bytes(sizeof(format::SessionHeader), '\0');
  auto* h = reinterpret_cast<format::SessionHeader*>(bytes.data());
  memcpy(h->file.magic, format::kSessionMagic, 8);
  h->file.version = format::kSessionVersion;
  h->file.header_size = sizeof(format::SessionHeader);
  h->pid = 1;
  h->boot_time_ticks = 1;  // never pid 1's real start time: not "running"
  snprintf(h->executable, sizeof(h->executable), "/nonexistent/app");
  h->record.heartbeat_interval_ms = 1000;
  h->record.hang_threshold_ms = 5000;
  h->record.oom_kills_at_start = format::kUnknownCounter;
  h->record.oom_kills_at_heartbeat = format::kUnknownCounter;
  return bytes;
}

const Files& Baseline() {
  using heapgraph::TreeKind;
  using heapgraph::format::AllocFunction;
  static const Files files = [] {
    heapgraph::synthetic::SyntheticRecording rec;
    uint32_t a = rec.AddStack({0x7f0000001234, 0x555500001000, 0x555500000100});
    rec.AddModule("/usr/bin/app", 0x555500000000, 0x555500000000, 0x555500010000, {});
    rec.AddBlock(TreeKind::kHeap, 0x1000, 48, AllocFunction::kMalloc, a);
    rec.AddBlock(TreeKind::kHeap, 0x2000, 4096, AllocFunction::kCalloc, a);
    rec.AddBlock(TreeKind::kVm, 0x7e0000000000, 1 << 20, AllocFunction::kMmap, a);
    Files built = rec.Build();
    built[format::kSessionFile] = ValidSession();
    return built;
  }();
  return files;
}

void Report(const Files& files) {
  std::filesystem::remove_all(ScratchDir() + "/d");
  std::filesystem::create_directory(ScratchDir() + "/d");
  heapgraph::synthetic::WriteFiles(ScratchDir() + "/d", files);
  try {
    heapgraph::RecordingReader reader(ScratchDir() + "/d");
    report::ExitRecord exit = report::ExitRecord::For(reader);
    report::FoomReport r = report::BuildFoomReport(reader, exit, nullptr, {});
    (void)report::FoomReportJsonText(r);
    (void)report::FoomReportRecordLine(r);
    (void)report::FoomReportToText(r);
  } catch (const heapgraph::RecordingError&) {
  }
}

void ApplyPatches(std::string& file, const uint8_t* data, size_t size) {
  for (size_t at = 0; at + 10 <= size; at += 10) {
    size_t offset = (data[at] | (size_t{data[at + 1]} << 8)) % file.size();
    size_t n = std::min<size_t>(8, file.size() - offset);
    memcpy(file.data() + offset, data + at + 2, n);
  }
}

void ExerciseTypes(const uint8_t* data, size_t size) {
  Files files = Baseline();
  std::string types = heapgraph::synthetic::BuildTypesFile(
      {"Widget", "std::string"}, {{0x1000, 0, 0}, {0x2000, 0, 1}, {0x2000, 5, 0}});
  ApplyPatches(types, data, size);
  if (size % 10 != 0) types.resize(types.size() - size % 10);  // truncations too
  files[format::kTypesFile] = types;
  Report(files);
}

// A pressure file with entries at 50, 75 and 90 %, each with two category totals.
std::string ValidPressure() {
  format::PressureHeader h = {};
  memcpy(h.file.magic, format::kPressureMagic, 8);
  h.file.version = 1;
  h.file.header_size = sizeof(h);
  h.record_size = sizeof(format::PressureRecord);
  h.category_size = sizeof(format::CategoryTotal);
  h.configured_limit = 64 << 20;
  h.sources = format::kSourceRss | format::kSourceCgroup;
  h.watermark_count = 3;
  h.watermarks[0] = 50;
  h.watermarks[1] = 75;
  h.watermarks[2] = 90;
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof(h));
  for (uint32_t mark : {50u, 75u, 90u}) {
    format::PressureRecord r = {};
    r.tag = format::kPressureRecordTag;
    r.watermark = mark;
    r.percent = mark;
    r.trigger = format::kTriggerPoll;
    r.limit = 64 << 20;
    r.rss = (64ull << 20) * mark / 100;
    r.category_count = 2;
    bytes.append(reinterpret_cast<const char*>(&r), sizeof(r));
    format::CategoryTotal totals[2] = {{48, 1, 0, 10, 480}, {0, 2, 0, 1, 1 << 20}};
    bytes.append(reinterpret_cast<const char*>(totals), sizeof(totals));
  }
  return bytes;
}

void PatchAndCut(std::string& file, const uint8_t* data, size_t size) {
  ApplyPatches(file, data, size);
  size_t cut = std::min(size % 10, file.size());
  file.resize(file.size() - cut);
}

void ExercisePressure(const uint8_t* data, size_t size) {
  Files files = Baseline();
  std::string pressure = ValidPressure();
  PatchAndCut(pressure, data, size);
  files[format::kPressureFile] = pressure;
  Report(files);
}

void ExerciseSampled(const uint8_t* data, size_t size) {
  if (size < 4) return;
  Files files = Baseline();
  uint32_t mean = 0;
  memcpy(&mean, data, 4);
  std::string& tree = files[format::kHeapTreeFile];
  uint32_t version = format::kSampledTreeVersion;
  memcpy(tree.data() + offsetof(format::FileHeader, version), &version, sizeof(version));
  memcpy(tree.data() + offsetof(format::TreeHeader, sample_mean), &mean, sizeof(mean));
  PatchAndCut(tree, data + 4, size - 4);
  Report(files);
}

void ExerciseRecording(const uint8_t* data, size_t size) {
  Files files = Baseline();
  size_t exit_length = size >= 2 ? (data[0] | (size_t{data[1]} << 8)) : 0;
  size_t at = size >= 2 ? 2 : size;
  exit_length = std::min(exit_length, size - at);
  if (exit_length > 0) {
    files[format::kExitFile] = std::string(reinterpret_cast<const char*>(data + at), exit_length);
  }
  at += exit_length;
  ApplyPatches(files[format::kSessionFile], data + at, size - at);
  Report(files);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 6) {
    case 0:
      try {
        (void)report::ExitRecord::Parse(text);
      } catch (const heapgraph::RecordingError&) {
      }
      break;
    case 1:
      try {
        report::SuspectRules rules = report::SuspectRules::Parse(text);
        (void)rules.Evaluate("Malloc 48 B", 10, 480, 1000);
        (void)rules.Evaluate("VM: anonymous", 0, 0, 0);
      } catch (const std::runtime_error&) {
      }
      break;
    case 2:
      ExerciseRecording(data + 1, size - 1);
      break;
    case 3:
      ExerciseTypes(data + 1, size - 1);
      break;
    case 4:
      ExercisePressure(data + 1, size - 1);
      break;
    default:
      ExerciseSampled(data + 1, size - 1);
  }
  return 0;
}
