// libFuzzer target for RecordingReader: every input becomes a recording directory, which is opened,
// every stack resolved and every block grouped; the same bytes are also parsed as a `pressure` file
// (PressureTimeline). The only acceptable failure is RecordingError.
//
// Built by tests/reader/CMakeLists.txt with clang++ -fsanitize=fuzzer,address,undefined into
// <build>/tests/reader/recording_reader_fuzzer; ctest runs a 20000-input smoke test. A longer run:
//   mkdir -p /tmp/rr-corpus && FUZZER=<build>/tests/reader/recording_reader_fuzzer
//   $FUZZER /tmp/rr-corpus -max_len=65536 -max_total_time=3600 -jobs=2 -workers=2
// Reproduce a crash: <build>/tests/reader/recording_reader_fuzzer crash-<hash>
//
// Input format. Byte 0 selects the mode:
//   even: raw files. For each of heap.tree, vm.tree, stacks, modules, session in turn: a 4-byte
//         little-endian length (0xffffffff = file absent; clamped to what is left) and the bytes.
//   odd:  patches to a valid synthetic recording (reaches deep states quickly). A sequence of
//         14-byte operations {file (1), action (1), offset (4, LE), value (8, LE)}; action % 5:
//         0/1/2 write 1/4/8 bytes of value at offset % size, 3 truncates to offset % (size + 1),
//         4 deletes the file.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "reader/PressureTimeline.h"
#include "reader/RecordingReader.h"
#include "tests/reader/SyntheticRecording.h"

namespace {

using heapgraph::synthetic::Files;

constexpr const char* kFileNames[] = {
    heapgraph::format::kHeapTreeFile, heapgraph::format::kVmTreeFile, heapgraph::format::kStackFile,
    heapgraph::format::kModuleFile, heapgraph::format::kSessionFile};
constexpr size_t kFileCount = sizeof(kFileNames) / sizeof(kFileNames[0]);
constexpr size_t kPatchSize = 14;

uint64_t LittleEndian(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// Where each input's files are written: $TMPDIR, else /dev/shm (memory), else /tmp. Removed at
// exit; the path is leaked on purpose so that the exit handler can still use it.
const std::string& ScratchDir() {
  static const std::string* dir = [] {
    const char* tmp = getenv("TMPDIR");
    std::string base = tmp != nullptr && tmp[0] != '\0' ? tmp
                       : access("/dev/shm", W_OK) == 0  ? "/dev/shm"
                                                        : "/tmp";
    auto* path = new std::string(base + "/rr-fuzz-XXXXXX");
    if (mkdtemp(path->data()) == nullptr) abort();
    return path;
  }();
  static const bool cleanup = atexit([] { std::filesystem::remove_all(*dir); }) == 0;
  (void)cleanup;
  return *dir;
}

const Files& Baseline() {
  using heapgraph::TreeKind;
  using heapgraph::format::AllocFunction;
  static const Files files = [] {
    heapgraph::synthetic::SyntheticRecording rec;
    uint32_t a = rec.AddStack({0x7f0000001234, 0x555500001000, 0x555500000100});
    uint32_t b = rec.AddStack({0x7f0000002000, 0x555500001000, 0x555500000100});
    rec.AddModule("/usr/lib/libfoo.so", 0x7f0000000000, 0x7f0000000000, 0x7f0000010000, {1, 2});
    rec.AddModule("/usr/bin/app", 0x555500000000, 0x555500000000, 0x555500010000, {});
    rec.AddBlock(TreeKind::kHeap, 0x1000, 48, AllocFunction::kMalloc, a);
    rec.AddBlock(TreeKind::kHeap, 0x2000, 4096, AllocFunction::kCalloc, b);
    rec.AddBlock(TreeKind::kHeap, 0x3000, 48, AllocFunction::kMalloc, 0);
    rec.AddBlock(TreeKind::kVm, 0x7e0000000000, 1 << 20, AllocFunction::kMmap, a);
    rec.SetSession(1234, "/usr/bin/app");
    return rec.Build();
  }();
  return files;
}

Files RawFiles(const uint8_t* data, size_t size) {
  Files files;
  for (const char* name : kFileNames) {
    if (size < 4) break;
    uint64_t length = LittleEndian(data, 4);
    data += 4;
    size -= 4;
    if (length == 0xffffffff) continue;
    length = std::min<uint64_t>(length, size);
    files[name].assign(reinterpret_cast<const char*>(data), length);
    data += length;
    size -= length;
  }
  return files;
}

void ApplyPatch(Files& files, const uint8_t* op) {
  const char* name = kFileNames[op[0] % kFileCount];
  auto it = files.find(name);
  if (it == files.end()) return;
  std::string& bytes = it->second;
  uint64_t offset = LittleEndian(op + 2, 4), value = LittleEndian(op + 6, 8);
  static constexpr size_t kWidths[] = {1, 4, 8};
  switch (op[1] % 5) {
    case 0:
    case 1:
    case 2: {
      if (bytes.empty()) return;
      size_t width = kWidths[op[1] % 5];
      size_t at = offset % bytes.size();
      memcpy(bytes.data() + at, &value, std::min(width, bytes.size() - at));
      return;
    }
    case 3:
      bytes.resize(offset % (bytes.size() + 1));
      return;
    default:
      files.erase(it);
  }
}

Files PatchedFiles(const uint8_t* data, size_t size) {
  Files files = Baseline();
  for (; size >= kPatchSize; data += kPatchSize, size -= kPatchSize) ApplyPatch(files, data);
  return files;
}

void WriteScratch(const Files& files) {
  const std::string& dir = ScratchDir();
  for (const char* name : kFileNames) {
    if (files.count(name) == 0) std::filesystem::remove(dir + "/" + name);
  }
  heapgraph::synthetic::WriteFiles(dir, files);
}

// Everything a reader client does; each stack is resolved on its own so one corrupt chain does
// not hide the others.
void Exercise(const heapgraph::RecordingReader& reader) {
  for (const heapgraph::LiveBlock& block : reader.blocks()) {
    try {
      for (uint64_t address : reader.Frames(block.stack)) reader.Locate(address);
    } catch (const heapgraph::RecordingError&) {
    }
  }
  for (uint32_t id = 0; id < 8; ++id) {
    try {
      reader.Frames(id);
    } catch (const heapgraph::RecordingError&) {
    }
  }
  for (const heapgraph::StackGroup& g : reader.GroupByStack()) {
    if (g.count == 0 || g.category.empty()) abort();  // GroupByStack invariants
    if (!(g.estimate.count() >= static_cast<double>(g.count)) ||
        !std::isfinite(g.estimate.bytes_error())) {
      abort();  // estimates scale up, never down, and stay finite
    }
  }
}

// The same input as a `pressure` file.
void ExercisePressure(const uint8_t* data, size_t size) {
  try {
    heapgraph::PressureTimeline timeline("/nonexistent");
    timeline.Parse(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const heapgraph::RecordingError& e) {
    if (strchr(e.what(), '\n') != nullptr) abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Files files = (data[0] & 1) ? PatchedFiles(data + 1, size - 1) : RawFiles(data + 1, size - 1);
  WriteScratch(files);
  try {
    heapgraph::RecordingReader reader(ScratchDir());
    Exercise(reader);
  } catch (const heapgraph::RecordingError& e) {
    if (strchr(e.what(), '\n') != nullptr) abort();  // messages are one line
  }
  ExercisePressure(data + 1, size - 1);
  return 0;
}
