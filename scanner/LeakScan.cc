#include "scanner/LeakScan.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "heap/plugin/ScanInterface.h"
#include "heap/runtime/AllocationSampler.h"
#include "heap/store/LiveAllocationTree.h"
#include "roots/ProcessMappings.h"
#include "roots/ThreadCapture.h"
#include "roots/VectorState.h"
#include "scanner/BlockIndex.h"
#include "scanner/HeapMarker.h"
#include "scanner/MmapAllocator.h"
#include "scanner/PagePool.h"
#include "scanner/RootRanges.h"
#include "scanner/TypedScan.h"
#include "scanner/types/BuiltInReaders.h"
#include "scanner/types/SnapshotMemory.h"

namespace heapgraph::scanner {
namespace {

constexpr uint64_t kResultMagic = 0x48475343414e3031ull;  // "HGSCAN01"
constexpr size_t kMapsTextBytes = 16u << 20;
constexpr size_t kMaxMappings = 1u << 18;

template <typename T>
using MmapVector = std::vector<T, MmapAllocator<T>>;

// What the snapshot child writes at offset 0 of the result memfd, followed by `leaked_count`
// LeakedBlocks and `edge_count` (from, to) pairs of uint32.
struct ResultHeader {
  uint64_t magic;
  uint64_t leaked_count;
  uint64_t edge_count;
  uint64_t live_blocks;
  uint64_t live_bytes;
  uint64_t root_ranges;
  uint64_t root_bytes;
  uint64_t heap_words;
  uint64_t unreadable_pages;
  char error[224];  // empty on success
};

__attribute__((noinline)) uint64_t CurrentStackPointer() {
  // The caller's frame starts just above this function's: its SP after we return.
  return reinterpret_cast<uint64_t>(__builtin_frame_address(0)) + 16;
}

double NowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

struct ChildContext {
  HeapgraphRecorderView view;
  uint64_t caller_stack_pointer;  // the program's frames of the scanning thread are above it
  uint64_t scan_stack_pointer;    // where the scan itself runs (skipped if on a stack of its own)
  uint64_t static_tls_size;       // glibc's, TCB included; 0 if unknown
  const roots::ThreadCapture* capture;
  roots::ProcessMappings* mappings;
  bool interior_pointers;
  int ready_fd;   // one byte once the blocks are copied: the parent may release the recorder
  int result_fd;  // memfd
  const types::ReaderSet* readers;  // prepared; nullptr: no typing
  int types_fd;                     // memfd for TypedScan
};

// Live heap blocks, copied out of the (locked) tree by a linear scan of every shard's slot table
// (the same walk a reader of the files makes), in slot order.
MmapVector<LeakedBlock> CopyLiveBlocks(LiveAllocationTree& tree) {
  MmapVector<LeakedBlock> blocks;
  blocks.reserve(tree.LiveCount());
  for (uint32_t s = 0; s < tree.shard_count(); ++s) {
    tree.shard(s).ForEach([&](const BlockRecord& r) {
      blocks.push_back({r.address, r.size, r.stack, r.seq, r.function});
    });
  }
  return blocks;
}

// Sorts `items` by begin: an LSD radix sort over 8-bit digits through `scratch`. The digits start
// at the lowest bit in which the keys differ (malloc's 16-byte alignment leaves the low 4 bits
// equal) and a digit in which no key differs is skipped (heap addresses share their top bytes):
// 3 passes over a heap span of up to 256 MiB.
void RadixSortByBegin(MmapVector<BlockRange>& items, MmapVector<BlockRange>& scratch) {
  uint64_t all_or = 0, all_and = ~uint64_t{0};
  for (const BlockRange& r : items) {
    all_or |= r.begin;
    all_and &= r.begin;
  }
  const uint64_t differ = all_or ^ all_and;
  if (differ == 0) return;
  scratch.resize(items.size());
  for (int shift = __builtin_ctzll(differ); shift < 64; shift += 8) {
    if (((differ >> shift) & 0xff) == 0) continue;  // one value in every key
    size_t start[257] = {};
    for (const BlockRange& r : items) ++start[((r.begin >> shift) & 0xff) + 1];
    for (int b = 0; b < 256; ++b) start[b + 1] += start[b];
    for (const BlockRange& r : items) scratch[start[(r.begin >> shift) & 0xff]++] = r;
    items.swap(scratch);
  }
}

// The blocks' ranges in address order into `ranges`; returns order, with order[i] the index in
// `blocks` of ranges[i]. Sorts 16-byte (address, index) pairs, held in `ranges` itself (size
// stands for the index until the sizes are gathered), rather than the 40-byte blocks.
MmapVector<uint32_t> SortByAddress(const MmapVector<LeakedBlock>& blocks,
                                   MmapVector<BlockRange>& ranges) {
  ranges.clear();
  ranges.reserve(blocks.size());
  for (uint32_t i = 0; i < blocks.size(); ++i) ranges.push_back({blocks[i].address, i});
  {
    MmapVector<BlockRange> scratch;
    RadixSortByBegin(ranges, scratch);
  }
  MmapVector<uint32_t> order;
  order.reserve(ranges.size());
  constexpr size_t kAhead = 16;  // the gather is random: prefetch the blocks a few steps ahead
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (i + kAhead < ranges.size()) __builtin_prefetch(&blocks[ranges[i + kAhead].size]);
    auto index = static_cast<uint32_t>(ranges[i].size);
    order.push_back(index);
    ranges[i].size = blocks[index].size;
  }
  return order;
}

// `blocks` rearranged so that blocks[i] is the block order[i] named: a gather into a new array
// (independent random reads, prefetched; several times faster than permuting in place, for a
// transient second copy). Keeps the invariant the rest of the snapshot relies on: blocks sorted
// by address, block i = index entry i.
void ApplyOrder(MmapVector<LeakedBlock>& blocks, const MmapVector<uint32_t>& order) {
  MmapVector<LeakedBlock> sorted;
  sorted.reserve(blocks.size());
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + kAhead < order.size()) __builtin_prefetch(&blocks[order[i + kAhead]]);
    sorted.push_back(blocks[order[i]]);
  }
  blocks.swap(sorted);
}

bool WriteAll(int fd, const void* data, size_t length, off_t offset) {
  auto* p = static_cast<const char*>(data);
  while (length > 0) {
    ssize_t n = pwrite(fd, p, length, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    offset += n;
    length -= static_cast<size_t>(n);
  }
  return true;
}

size_t CountUnmarked(const HeapMarker& marker, uint32_t blocks) {
  size_t count = 0;
  for (uint32_t i = 0; i < blocks; ++i) count += marker.marked(i) ? 0 : 1;
  return count;
}

// Writes the header, the `count` unmarked blocks and the references among them to the result memfd;
// sets leaked_index[i] to block i's index among the leaked ones. Their arrays are sized exactly and
// freed on return, for the typed scan to reuse.
bool WriteLeaks(int fd, const MmapVector<LeakedBlock>& blocks, const HeapMarker& marker,
                size_t count, MmapVector<uint32_t>& leaked_index, ResultHeader& header) {
  MmapVector<LeakedBlock> leaked;
  leaked.reserve(count);
  for (uint32_t i = 0; i < blocks.size(); ++i) {
    if (marker.marked(i)) continue;
    leaked_index[i] = static_cast<uint32_t>(leaked.size());
    leaked.push_back(blocks[i]);
  }
  MmapVector<std::pair<uint32_t, uint32_t>> edges;
  for (uint32_t i = 0; i < blocks.size(); ++i) {
    if (leaked_index[i] == UINT32_MAX) continue;
    marker.ForEachReference(i, [&](uint32_t j) {
      if (leaked_index[j] != UINT32_MAX) edges.push_back({leaked_index[i], leaked_index[j]});
    });
  }
  header.leaked_count = leaked.size();
  header.edge_count = edges.size();
  size_t blocks_bytes = leaked.size() * sizeof(LeakedBlock);
  return WriteAll(fd, &header, sizeof(header), 0) &&
         WriteAll(fd, leaked.data(), blocks_bytes, sizeof(header)) &&
         WriteAll(fd, edges.data(), edges.size() * sizeof(edges[0]),
                  static_cast<off_t>(sizeof(header) + blocks_bytes));
}

// Marking statistics of the helper marking process, passed back in shared memory.
struct SharedMarkState {
  MarkStats helper_stats;
};

// Typing work the marking helper takes on once its marking is done, while this process collects
// and writes the leaks: the own identities (ReaderSet::IdentifyRange) of blocks [half, end) into
// a shared array. Their pass is independent per block.
struct HelperTyping {
  const types::ReaderSet* readers = nullptr;  // nullptr: no typing
  const roots::ProcessMappings* mappings = nullptr;
  std::span<types::TypeIdentity> identities;  // MAP_SHARED, one per block
  uint32_t half = 0;
};

void IdentifyRange(const BlockIndex& index, const HelperTyping& typing, uint32_t begin,
                   uint32_t end) {
  types::SnapshotMemory memory(index, typing.readers->modules(), *typing.mappings);
  typing.readers->IdentifyRange(memory, typing.identities, begin, end);
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
// thread's registers are skipped: it is inside a call, so by the ABI every value of the program's
// that is live across that call sits in the frames above its stack pointer.
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

// Marks with two processes (both cores): a clone of this snapshot process takes half of the
// roots; both set marks in one shared byte array. The helper says on `done` that its marks are
// final, then does `typing`'s share and exits; *helper is its pid (0: none, the clone failed and
// this process marked alone). False if the helper died before its marks were final (its marked
// blocks may not all have been scanned).
bool MarkFromRoots(const BlockIndex& index, const RootRanges& roots,
                   std::span<const roots::ThreadInfo> threads, bool interior, uint8_t* marks,
                   SharedMarkState* shared, const HelperTyping& typing, MarkStats* stats,
                   pid_t* helper) {
  int done[2] = {-1, -1};
  long pid = -1;
  if (syscall(SYS_pipe2, done, 0) == 0) {
    pid = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  }
  if (pid == 0) {
    close(done[0]);
    HeapMarker marker(index, interior, marks);
    MarkShare(marker, roots, threads, 1, 2);
    shared->helper_stats = marker.stats();
    char one = 1;
    (void)!write(done[1], &one, 1);
    close(done[1]);
    if (typing.readers != nullptr) IdentifyRange(index, typing, typing.half, index.size());
    _exit(0);
  }
  *helper = pid > 0 ? static_cast<pid_t>(pid) : 0;
  if (done[1] >= 0) close(done[1]);
  HeapMarker marker(index, interior, marks);
  MarkShare(marker, roots, threads, 0, pid > 0 ? 2 : 1);
  *stats = marker.stats();
  if (pid <= 0) {
    if (done[0] >= 0) close(done[0]);
    return true;
  }
  char byte;
  ssize_t got;
  while ((got = read(done[0], &byte, 1)) < 0 && errno == EINTR) {
  }
  close(done[0]);
  if (got != 1) return false;
  stats->heap_words += shared->helper_stats.heap_words;
  stats->root_words += shared->helper_stats.root_words;
  stats->unreadable_pages += shared->helper_stats.unreadable_pages;
  return true;
}

// Waits for the helper; true if it exited normally (its typing share is done).
bool AwaitHelper(pid_t helper) {
  if (helper == 0) return false;
  int status;
  while (waitpid(helper, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// This process's half of the own identities, then the helper's half too if it did not finish it
// (a reader that crashed there crashes here as well, after the leak result was written).
void IdentifyOwnHalf(const BlockIndex& index, const HelperTyping& typing, pid_t helper) {
  if (typing.readers == nullptr) {
    AwaitHelper(helper);
    return;
  }
  IdentifyRange(index, typing, 0, typing.half);
  if (!AwaitHelper(helper)) IdentifyRange(index, typing, typing.half, index.size());
}

// heapgraph's memory that may sit in mappings shared with the program's: the recorder's rehash
// scratch (up to 96 MiB), the buffers prepared for this scan and the ptrace helper's stack (seen
// holding addresses of leaked blocks: 12 false "reachable" per check). Never roots.
std::array<std::pair<uint64_t, uint64_t>, 10> OwnBuffers(const ChildContext& c) {
  std::array<std::pair<uint64_t, uint64_t>, 10> own = {};
  own[0] = {c.view.heap->scratch().begin(), c.view.heap->scratch().end()};
  auto maps = c.mappings->BufferRanges();
  auto capture = c.capture->BufferRanges();
  std::copy(maps.begin(), maps.end(), own.begin() + 1);
  std::copy(capture.begin(), capture.end(), own.begin() + 1 + maps.size());
  return own;
}

// The shared identity array when typing (typing.readers stays nullptr without it: the typed scan
// then identifies every block itself, or there is no typing).
HelperTyping PrepareTyping(const ChildContext& c, uint32_t blocks) {
  HelperTyping typing;
  if (c.readers == nullptr || blocks == 0) return typing;
  size_t bytes = blocks * sizeof(types::TypeIdentity);
  long mapped =
      syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mapped < 0 && mapped > -4096) return typing;
  typing.readers = c.readers;
  typing.mappings = c.mappings;
  typing.identities = {reinterpret_cast<types::TypeIdentity*>(mapped), blocks};
  typing.half = blocks / 2;
  return typing;
}

// Runs in the snapshot child. Never returns.
[[noreturn]] void SnapshotMain(const ChildContext& c) {
  ResultHeader header = {};
  header.magic = kResultMagic;
  // The map is read before this process maps anything of its own: the scanner's arrays hold the
  // address of every block and must never be a root.
  bool maps_ok = c.mappings->ReadWithoutAllocating();
  // Every array from here on reuses the pages of those freed before it (a fresh page costs the
  // kernel's zeroing). Only this process's own arrays are ever given back: none was a root.
  PagePool pool;
  PagePool::Activate(&pool);
  MmapVector<LeakedBlock> blocks = CopyLiveBlocks(*c.view.heap);
  char one = 1;
  (void)!write(c.ready_fd, &one, 1);  // the copy is ours: the program may allocate again
  close(c.ready_fd);
  MmapVector<BlockRange> ranges;
  {
    MmapVector<uint32_t> order = SortByAddress(blocks, ranges);
    ApplyOrder(blocks, order);  // blocks[i] is ranges[i]'s block from here on
  }
  uint64_t live_bytes = 0;
  for (const BlockRange& r : ranges) live_bytes += r.size;
  BlockIndex index(std::move(ranges));
  if (!maps_ok) {
    snprintf(header.error, sizeof(header.error), "cannot read /proc/self/maps: %s",
             c.mappings->error());
    WriteAll(c.result_fd, &header, sizeof(header), 0);
    _exit(3);
  }
  RootRanges roots;
  const uint64_t own[] = {reinterpret_cast<uint64_t>(c.capture->threads().data()),
                          c.scan_stack_pointer};
  roots.Compute(*c.mappings, c.capture->threads(), index, c.caller_stack_pointer, own,
                c.static_tls_size);
  roots.Exclude(OwnBuffers(c));
  if (c.view.unwinder != nullptr) roots.ExcludeUnwinderMemory(*c.view.unwinder, *c.mappings);
  roots.ExcludeThreadState({c.view.thread_state_offset, c.view.thread_state_size},
                           c.capture->threads(), c.static_tls_size);
  // Marks and the helper's statistics live in one shared mapping (made after the map was read,
  // so it is never a root).
  size_t shared_bytes = sizeof(SharedMarkState) + blocks.size();
  // Raw syscall: the interposed mmap would record into the parent's (shared) VM tree.
  long mapped = syscall(SYS_mmap, nullptr, shared_bytes, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  void* shared = mapped < 0 && mapped > -4096 ? MAP_FAILED : reinterpret_cast<void*>(mapped);
  if (shared == MAP_FAILED) {
    snprintf(header.error, sizeof(header.error), "cannot map the mark array: %s", strerror(errno));
    WriteAll(c.result_fd, &header, sizeof(header), 0);
    _exit(3);
  }
  auto* state = static_cast<SharedMarkState*>(shared);
  uint8_t* marks = static_cast<uint8_t*>(shared) + sizeof(SharedMarkState);
  HelperTyping typing = PrepareTyping(c, index.size());
  MarkStats stats;
  pid_t helper = 0;
  if (!MarkFromRoots(index, roots, c.capture->threads(), c.interior_pointers, marks, state, typing,
                     &stats, &helper)) {
    snprintf(header.error, sizeof(header.error), "the marking helper process died");
    WriteAll(c.result_fd, &header, sizeof(header), 0);
    _exit(3);
  }
  HeapMarker marker(index, c.interior_pointers, marks);  // reads the final marks; edges

  MmapVector<uint32_t> leaked_index(blocks.size(), UINT32_MAX);
  header.live_blocks = blocks.size();
  header.live_bytes = live_bytes;
  header.root_ranges = roots.ranges().size();
  header.root_bytes = roots.total_bytes();
  header.heap_words = stats.heap_words;
  header.unreadable_pages = stats.unreadable_pages;
  size_t count = CountUnmarked(marker, index.size());
  // Kept for what follows: the leaked list, then the typed scan's per-block index and lists.
  pool.Trim(count * sizeof(LeakedBlock) + blocks.size() * sizeof(uint32_t) + (1u << 20));
  bool ok = WriteLeaks(c.result_fd, blocks, marker, count, leaked_index, header);
  if (ok && c.readers != nullptr) {
    IdentifyOwnHalf(index, typing, helper);
    TypedScan::WriteTo(c.types_fd,
                       {index, marker, blocks, leaked_index, *c.readers, *c.mappings, roots,
                        c.capture->threads(), c.static_tls_size, typing.identities});
  } else {
    AwaitHelper(helper);
  }
  _exit(ok ? 0 : 4);
}

int SnapshotEntry(void* context) {
  SnapshotMain(*static_cast<const ChildContext*>(context));
}

// Appends `count` Ts read from `fd` at `offset`: through a small buffer into reserved capacity, so
// the vector's fresh pages are written once (resize would zero them first) and the memfd's pages
// are never mapped here (a mapping would count them in this process's RSS).
template <typename T>
bool ReadArray(int fd, off_t offset, uint64_t count, std::vector<T>* out) {
  constexpr size_t kChunk = (16u << 10) / sizeof(T);
  if (count > (uint64_t{1} << 40) / sizeof(T)) return false;
  out->clear();
  out->reserve(count);
  alignas(T) unsigned char buffer[kChunk * sizeof(T)];
  while (out->size() < count) {
    size_t want = std::min<uint64_t>(kChunk, count - out->size()) * sizeof(T);
    if (pread(fd, buffer, want, offset) != static_cast<ssize_t>(want)) return false;
    auto* first = reinterpret_cast<const T*>(buffer);
    out->insert(out->end(), first, first + want / sizeof(T));
    offset += static_cast<off_t>(want);
  }
  return true;
}

bool ReadResult(int fd, ScanResult* result) {
  ResultHeader header;
  if (pread(fd, &header, sizeof(header), 0) != static_cast<ssize_t>(sizeof(header)) ||
      header.magic != kResultMagic) {
    result->error = "the snapshot process wrote no result";
    return false;
  }
  if (header.error[0] != '\0') {
    result->error = std::string(header.error, strnlen(header.error, sizeof(header.error)));
    return false;
  }
  size_t blocks_bytes = header.leaked_count * sizeof(LeakedBlock);
  if (!ReadArray(fd, sizeof(header), header.leaked_count, &result->leaked) ||
      !ReadArray(fd, static_cast<off_t>(sizeof(header) + blocks_bytes), header.edge_count,
                 &result->edges)) {
    result->error = "the snapshot process wrote a truncated result";
    return false;
  }
  result->stats.live_blocks = header.live_blocks;
  result->stats.live_bytes = header.live_bytes;
  result->stats.root_ranges = header.root_ranges;
  result->stats.root_bytes = header.root_bytes;
  result->stats.heap_words_scanned = header.heap_words;
  result->stats.unreadable_pages = header.unreadable_pages;
  return true;
}

std::string Describe(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

// Everything the scan allocates is allocated here, before the world stops.
struct Preparation {
  roots::ThreadCapture capture;
  roots::ProcessMappings mappings;
  int result_fd = -1;
  int ready[2] = {-1, -1};
  int types_fd = -1;
  std::shared_ptr<types::ReaderSet> readers;  // prepared type readers, when typing

  explicit Preparation(const ScanOptions& o)
      : capture(roots::ThreadCapture::Options{o.allow_signal_fallback
                                                  ? roots::ThreadCapture::Method::kAuto
                                                  : roots::ThreadCapture::Method::kPtrace}) {
    mappings.Reserve(kMapsTextBytes, kMaxMappings);
    result_fd = static_cast<int>(syscall(SYS_memfd_create, "heapgraph-scan", MFD_CLOEXEC));
    if (pipe2(ready, O_CLOEXEC) != 0) ready[0] = ready[1] = -1;
    if (o.types) PrepareTypes(o.add_readers);
  }
  // The readers' constants (vtables, managers, module segments) and the typed result's memfd.
  void PrepareTypes(const std::function<void(types::ReaderSet&)>& add_readers) {
    types_fd = static_cast<int>(syscall(SYS_memfd_create, "heapgraph-types", MFD_CLOEXEC));
    if (types_fd < 0) return;
    readers = std::make_shared<types::ReaderSet>();
    types::RegisterBuiltInReaders(*readers);
    if (add_readers) add_readers(*readers);
    readers->Prepare();
  }
  ~Preparation() {
    for (int fd : {result_fd, ready[0], ready[1], types_fd}) {
      if (fd >= 0) close(fd);
    }
  }
};

// The typed part, when the scan typed blocks. A failure there costs the types, not the scan.
void ReadTypes(const Preparation& prep, ScanResult* result) {
  if (prep.readers == nullptr) return;
  std::string error;
  if (!TypedScan::ReadFrom(prep.types_fd, &result->typed, &error)) {
    result->notice += (result->notice.empty() ? "" : "; ") + error;
    return;
  }
  result->typed.readers = prep.readers;
}

}  // namespace

namespace {

// Zeroes the stack below the caller's frame. The scan's frames are laid down there next, and
// their uninitialized slots would otherwise still hold values from earlier calls (the allocation
// hooks' frames hold block addresses), which the scan would read as the program's.
__attribute__((noinline)) void ScrubStackBelow() {
  char area[64 * 1024];
  explicit_bzero(area, sizeof(area));
  asm volatile("" : : "r"(area) : "memory");
}

ScanResult RunLeakScanOnScrubbedStack(const ScanOptions& options);

}  // namespace

__attribute__((noinline)) ScanResult RunLeakScan(const ScanOptions& options) {
  ScrubStackBelow();
  return RunLeakScanOnScrubbedStack(options);
}

namespace {

// A leak scan needs every live block: an unsampled block would look like a dangling pointer's
// target and the blocks only it keeps alive like leaks.
std::string SampledRecordingError(uint64_t mean) {
  char text[32], line[160];
  AllocationSampler::FormatMean(mean, text, sizeof(text));
  snprintf(line, sizeof(line), HEAPGRAPH_SAMPLED_REFUSAL, text);
  return line;
}

// Runs options.while_marking, if any; true when the snapshot process `pid` was reaped meanwhile
// (its wait status in *status).
bool RunWhileMarking(const ScanOptions& options, const std::string& recording_dir, pid_t pid,
                     int* status) {
  if (!options.while_marking) return false;
  bool reaped = false;
  std::function<bool()> marking_done = [&] {
    // __WALL: also a snapshot cloned without SIGCHLD as its exit signal.
    if (!reaped) reaped = waitpid(pid, status, WNOHANG | __WALL) == pid;
    return reaped;
  };
  try {
    options.while_marking(recording_dir, marking_done);
  } catch (...) {  // best effort by contract (LeakScan.h)
  }
  return reaped;
}

ScanResult RunLeakScanOnScrubbedStack(const ScanOptions& options) {
  ScanResult result;
  double start = NowMs();
  auto begin = reinterpret_cast<HeapgraphBeginSnapshotFn>(
      dlsym(RTLD_DEFAULT, HEAPGRAPH_BEGIN_SNAPSHOT_SYMBOL));
  auto end =
      reinterpret_cast<HeapgraphEndSnapshotFn>(dlsym(RTLD_DEFAULT, HEAPGRAPH_END_SNAPSHOT_SYMBOL));
  if (begin == nullptr || end == nullptr) {
    result.error = "heapgraph is not loaded in this process (LD_PRELOAD or link libheapgraph.so)";
    return result;
  }
  auto ignore = reinterpret_cast<HeapgraphIgnoreThreadFn>(
      dlsym(RTLD_DEFAULT, HEAPGRAPH_IGNORE_THREAD_SYMBOL));
  // The scan's own buffers are not the program's allocations.
  struct IgnoreScope {
    HeapgraphIgnoreThreadFn fn;
    int before;
    explicit IgnoreScope(HeapgraphIgnoreThreadFn f) : fn(f), before(f != nullptr ? f(1) : 0) {}
    ~IgnoreScope() {
      if (fn != nullptr) fn(before);
    }
  } ignore_scope(ignore);
  Preparation prep(options);
  if (prep.result_fd < 0 || prep.ready[0] < 0) {
    result.error = std::string("cannot create the scan's pipe or memfd: ") + strerror(errno);
    return result;
  }
  ChildContext context = {};
  // glibc's (GLIBC_PRIVATE, as LeakSanitizer uses it): the static TLS size, TCB included.
  using StaticTlsInfoFn = void (*)(size_t*, size_t*);
  if (auto info =
          reinterpret_cast<StaticTlsInfoFn>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"))) {
    size_t size = 0, align = 0;
    info(&size, &align);
    context.static_tls_size = size;
  }
  double locked = NowMs();
  if (begin(&context.view) != 0) {
    result.error = "heapgraph is not recording in this process (disabled or failed to start)";
    return result;
  }
  result.recording_dir = context.view.recording_dir;
  if (context.view.sample_mean != 0) {
    end();
    result.error = SampledRecordingError(context.view.sample_mean);
    return result;
  }
  context.capture = &prep.capture;
  context.mappings = &prep.mappings;
  context.interior_pointers = options.interior_pointers;
  context.ready_fd = prep.ready[1];
  context.result_fd = prep.result_fd;
  context.readers = prep.readers.get();
  context.types_fd = prep.types_fd;
  context.scan_stack_pointer = CurrentStackPointer();
  context.caller_stack_pointer = options.program_stack_pointer != 0 ? options.program_stack_pointer
                                                                    : context.scan_stack_pointer;
  // The world is stopped for the capture and the snapshot's clone only (by the ptrace helper
  // when it can); the snapshot process runs SnapshotMain on a copy of the stopped world, without
  // libunwind's caches (never roots: the helper leaves them out of its clone).
  const pid_t pid = prep.capture.CloneStoppedWorld(&SnapshotEntry, &context, context.view.unwinder);
  if (pid == 0) {
    end();
    result.error = "cannot stop the threads: " + prep.capture.error();
    return result;
  }
  const int clone_errno = pid < 0 ? -pid : 0;
  double released = NowMs();
  result.stats.threads = prep.capture.threads().size();
  result.notice = prep.capture.notice();
  result.stats.stop_method =
      prep.capture.method_used() == roots::ThreadCapture::Method::kSignals ? "signals" : "ptrace";
  close(prep.ready[1]);
  prep.ready[1] = -1;
  if (pid > 0) {
    char byte;
    while (read(prep.ready[0], &byte, 1) < 0 && errno == EINTR) {
    }
  }
  end();
  double unlocked = NowMs();
  if (pid < 0) {
    result.error = std::string("cannot create the snapshot process: ") + strerror(clone_errno);
    return result;
  }
  int status = 0;
  if (!RunWhileMarking(options, result.recording_dir, static_cast<pid_t>(pid), &status)) {
    while (waitpid(static_cast<pid_t>(pid), &status, __WALL) < 0 && errno == EINTR) {
    }  // the snapshot sends no SIGCHLD
  }
  bool read_ok = ReadResult(prep.result_fd, &result);
  // The leak result is complete before the typing starts: a snapshot killed after it costs the
  // types, not the check.
  bool typing_died = read_ok && prep.readers != nullptr && WIFSIGNALED(status);
  if (typing_died) {
    result.notice += (result.notice.empty() ? "" : "; ") +
                     std::string("type analysis failed in the snapshot process (") +
                     Describe(status) + "): no types or retain cycles";
  } else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && read_ok) {
    result.error = "the snapshot process failed: " + Describe(status);
    read_ok = false;
  } else if (!read_ok && !WIFEXITED(status)) {
    result.error += " (" + Describe(status) + ")";
  }
  if (read_ok && !typing_died) ReadTypes(prep, &result);
  result.timings.world_stopped_ms = released - locked;
  result.timings.allocation_pause_ms = unlocked - locked;
  result.timings.total_ms = NowMs() - start;
  result.ok = read_ok;
  return result;
}

}  // namespace
}  // namespace heapgraph::scanner
