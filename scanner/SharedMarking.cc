#include "scanner/SharedMarking.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "roots/VectorState.h"
#include "scanner/types/SnapshotMemory.h"

namespace heapgraph::scanner {

struct SharedMarking::Shared {
  MarkStats helper_stats;
};

namespace {

// Raw syscall: the interposed mmap would record into the scanning process's (shared) VM tree.
void* MapShared(size_t bytes) {
  long mapped =
      syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return mapped < 0 && mapped > -4096 ? nullptr : reinterpret_cast<void*>(mapped);
}

// The vector registers a program's pointer may be in: xmm/ymm/zmm 0-15 (v0-31 on aarch64), not
// the rest of the XSAVE image. zmm16-31 are left out: code built for the x86-64 baseline never
// uses them, while glibc's EVEX memcpy/strlen family keeps copies of the memory it moved there
// (and a new thread inherits them): they kept ~12 leaked blocks per check "reachable".
// LeakSanitizer scans no vector register at all.
void ScanVectorRegisters(HeapMarker& marker, std::span<const uint8_t> raw) {
  roots::VectorState state(raw);
  uint64_t words[32 * 8];
  size_t n = 0;
  auto add = [&](std::span<const uint8_t> bytes) {
    for (size_t i = 0; i + sizeof(uint64_t) <= bytes.size(); i += sizeof(uint64_t)) {
      std::memcpy(&words[n++], bytes.data() + i, sizeof(uint64_t));
    }
  };
  for (int r = 0; r < 32; ++r) {
    add(state.Xmm(r));
    add(state.YmmUpper(r));
    add(state.ZmmUpper(r));
  }
  marker.ScanWords(words, n);
}

// Marks from every `workers`-th root, starting at `worker`, then propagates. The scanning
// thread's registers are skipped (see the header).
void MarkShare(HeapMarker& marker, const RootRanges& roots,
               std::span<const roots::ThreadInfo> threads, unsigned worker, unsigned workers) {
  unsigned n = 0;
  for (const roots::ThreadInfo& t : threads) {
    if (t.is_caller || n++ % workers != worker) continue;
    marker.ScanWords(t.regs.data(), t.regs.size());
    ScanVectorRegisters(marker, t.vector_bytes);
  }
  // Split the root bytes evenly: ranges are cut into 1 MiB pieces dealt round-robin.
  constexpr uint64_t kPiece = 1u << 20;
  n = 0;
  for (const RootRange& r : roots.ranges()) {
    for (uint64_t begin = r.begin; begin < r.end; begin += kPiece) {
      if (n++ % workers != worker) continue;
      uint64_t end = std::min(r.end, begin + kPiece);
      r.direct ? marker.ScanReadableRoot(begin, end) : marker.ScanRoot(begin, end);
    }
  }
  marker.Propagate();
}

}  // namespace

bool SharedMarking::Map() {
  void* shared = MapShared(sizeof(Shared) + index_.size());
  if (shared == nullptr) return false;
  shared_ = static_cast<Shared*>(shared);
  marks_ = static_cast<uint8_t*>(shared) + sizeof(Shared);
  return true;
}

void SharedMarking::ShareTyping(const types::ReaderSet& readers,
                                const roots::ProcessMappings& mappings) {
  const uint32_t blocks = index_.size();
  if (blocks == 0) return;
  void* array = MapShared(blocks * sizeof(types::TypeIdentity));
  if (array == nullptr) return;
  readers_ = &readers;
  mappings_ = &mappings;
  identities_ = {static_cast<types::TypeIdentity*>(array), blocks};
  half_ = blocks / 2;
}

SharedMarking::~SharedMarking() {
  AwaitHelper();
  if (shared_ != nullptr) syscall(SYS_munmap, shared_, sizeof(Shared) + index_.size());
  if (!identities_.empty()) {
    syscall(SYS_munmap, identities_.data(), identities_.size() * sizeof(types::TypeIdentity));
  }
}

bool SharedMarking::Mark(const RootRanges& roots, std::span<const roots::ThreadInfo> threads) {
  int done[2] = {-1, -1};
  long pid = -1;
  if (!alone_ && syscall(SYS_pipe2, done, 0) == 0) {
    pid = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  }
  if (pid == 0) {
    close(done[0]);
    RunHelper(roots, threads, done[1]);
  }
  helper_ = pid > 0 ? static_cast<pid_t>(pid) : 0;
  if (done[1] >= 0) close(done[1]);
  HeapMarker marker(index_, interior_, marks_, pages_);
  MarkShare(marker, roots, threads, 0, pid > 0 ? 2 : 1);
  stats_ = marker.stats();
  if (pid <= 0) {
    if (done[0] >= 0) close(done[0]);
    return true;
  }
  return JoinHelperMarks(done[0]);
}

void SharedMarking::RunHelper(const RootRanges& roots, std::span<const roots::ThreadInfo> threads,
                              int done_fd) {
  HeapMarker marker(index_, interior_, marks_, pages_);
  MarkShare(marker, roots, threads, 1, 2);
  shared_->helper_stats = marker.stats();
  char one = 1;
  (void)!write(done_fd, &one, 1);
  close(done_fd);
  if (readers_ != nullptr) IdentifyRange(half_, index_.size());
  _exit(0);
}

bool SharedMarking::JoinHelperMarks(int done_fd) {
  char byte;
  ssize_t got;
  while ((got = read(done_fd, &byte, 1)) < 0 && errno == EINTR) {
  }
  close(done_fd);
  if (got != 1) return false;
  stats_.heap_words += shared_->helper_stats.heap_words;
  stats_.root_words += shared_->helper_stats.root_words;
  stats_.unreadable_pages += shared_->helper_stats.unreadable_pages;
  stats_.absent_pages += shared_->helper_stats.absent_pages;
  return true;
}

void SharedMarking::IdentifyRange(uint32_t begin, uint32_t end) const {
  types::SnapshotMemory memory(index_, readers_->modules(), *mappings_);
  readers_->IdentifyRange(memory, identities_, begin, end);
}

bool SharedMarking::AwaitHelper() {
  if (helper_ == 0) return false;
  int status = 0;
  pid_t got;
  while ((got = waitpid(helper_, &status, 0)) < 0 && errno == EINTR) {
  }
  helper_ = 0;
  return got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void SharedMarking::FinishTyping() {
  if (readers_ == nullptr) {
    AwaitHelper();
    return;
  }
  IdentifyRange(0, half_);
  if (!AwaitHelper()) IdentifyRange(half_, index_.size());
}

}  // namespace heapgraph::scanner
