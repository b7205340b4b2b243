#include "scanner/LeakScan.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <optional>

#include "heap/platform/StackScrub.h"
#include "heap/plugin/RecorderEntries.h"
#include "heap/plugin/RecordingIgnored.h"
#include "heap/plugin/ScanInterface.h"
#include "heap/runtime/AllocationSampler.h"
#include "heap/store/LiveAllocationTree.h"
#include "heap/store/LockWait.h"
#include "reader/InputFile.h"
#include "roots/ProcessMappings.h"
#include "roots/ThreadCapture.h"
#include "scanner/BlockCopy.h"
#include "scanner/ExplainScan.h"
#include "scanner/PagePool.h"
#include "scanner/ResultChannel.h"
#include "scanner/SnapshotProcess.h"
#include "scanner/TypedScan.h"
#include "scanner/types/BuiltInReaders.h"

namespace heapgraph::scanner {
namespace {

constexpr size_t kMapsTextBytes = 16u << 20;
constexpr size_t kMaxMappings = 1u << 18;

__attribute__((noinline)) uint64_t CurrentStackPointer() {
  // The caller's frame starts just above this function's: its SP after we return.
  return reinterpret_cast<uint64_t>(__builtin_frame_address(0)) + 16;
}

double NowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// glibc's sizeof(struct pthread) (libthread_db's _thread_db_sizeof_pthread, GLIBC_PRIVATE): the
// part of the static TLS size above the thread pointer on x86-64; 0 if unknown.
uint64_t ThreadControlBlockSize() {
  const auto* size = static_cast<const uint32_t*>(dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread"));
  return size != nullptr ? *size : 0;
}

std::string Describe(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

// The live blocks' copy of the repeated checks (scans in place), kept from one to the next: its
// pages stay written and, while the heap fits it, no glance at the recorder sizes it. It holds
// the previous check's block addresses: every scan leaves its range out of the roots (the
// snapshot's kept_copy_range). One scan in place at a time (the check lock), as the page pool.
constinit BlockCopy g_kept_copy;

// Everything the scan allocates is allocated here, before the world stops.
struct Preparation {
  roots::ThreadCapture capture;
  roots::ProcessMappings mappings;
  roots::ProcessMappings mappings_after_fault;  // reserved for a scan in place only
  bool in_place = false;
  bool in_place_asked = false;  // ScanOptions::in_stopped_world: its fallback is worth a notice
  int result_fd = -1;
  int ready[2] = {-1, -1};
  int types_fd = -1;
  int explain_fd = -1;  // only with explain targets
  const ExplainRequest* explain = nullptr;
  std::shared_ptr<types::ReaderSet> readers;  // prepared type readers, when typing
  bool types_only_if_leaked = false;
  BlockCopy own_copy;
  BlockCopy* copy;  // the live blocks, copied under the recorder's locks: own_copy or the kept one

  Preparation(const ScanOptions& o, bool scan_in_place)
      : capture(roots::ThreadCapture::Options{o.allow_signal_fallback
                                                  ? roots::ThreadCapture::Method::kAuto
                                                  : roots::ThreadCapture::Method::kPtrace}) {
    mappings.Reserve(kMapsTextBytes, kMaxMappings);
    in_place = scan_in_place;
    in_place_asked = o.in_stopped_world;
    copy = in_place ? &g_kept_copy : &own_copy;
    if (in_place) mappings_after_fault.Reserve(kMapsTextBytes, kMaxMappings);
    result_fd = static_cast<int>(syscall(SYS_memfd_create, "heapgraph-scan", MFD_CLOEXEC));
    if (pipe2(ready, O_CLOEXEC) != 0) ready[0] = ready[1] = -1;
    if (o.types) PrepareTypes(o.add_readers, o.prepared_readers);
    types_only_if_leaked = o.types_only_if_leaked;
    if (!o.explain.empty()) {
      explain_fd = static_cast<int>(syscall(SYS_memfd_create, "heapgraph-explain", MFD_CLOEXEC));
      if (explain_fd >= 0) explain = &o.explain;
    }
  }
  // The readers' constants (vtables, managers, module segments) and the typed result's memfd.
  void PrepareTypes(const std::function<void(types::ReaderSet&)>& add_readers,
                    std::shared_ptr<types::ReaderSet> prepared) {
    types_fd = static_cast<int>(syscall(SYS_memfd_create, "heapgraph-types", MFD_CLOEXEC));
    if (types_fd < 0) return;
    if (prepared != nullptr) {
      readers = std::move(prepared);
      return;
    }
    readers = std::make_shared<types::ReaderSet>();
    types::RegisterBuiltInReaders(*readers);
    if (add_readers) add_readers(*readers);
    readers->Prepare();
  }
  // What the snapshot process uses of it.
  void ShareWith(SnapshotProcess::Context* context) {
    context->capture = &capture;
    context->mappings = &mappings;
    context->mappings_after_fault = in_place ? &mappings_after_fault : nullptr;
    context->ready_fd = ready[1];
    context->result_fd = result_fd;
    context->readers = readers.get();
    context->types_fd = types_fd;
    context->explain = explain;
    context->explain_fd = explain_fd;
  }
  ~Preparation() {
    for (int fd : {result_fd, ready[0], ready[1], types_fd, explain_fd}) {
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

// The explained chains, when the scan had explain targets. A failure costs the explanation only.
void ReadExplained(const Preparation& prep, ScanResult* result) {
  if (prep.explain == nullptr) return;
  std::string error;
  if (!ExplainScan::ReadFrom(prep.explain_fd, prep.explain->targets(), &result->explained,
                             &error)) {
    result->notice += (result->notice.empty() ? "" : "; ") + error;
  }
}

ScanResult RunLeakScanOnScrubbedStack(const ScanOptions& options);

}  // namespace

__attribute__((noinline)) ScanResult RunLeakScan(const ScanOptions& options) {
  ScrubStackBelow();
  return RunLeakScanOnScrubbedStack(options);
}

void TakeReportOptions(const HeapgraphRecorderView& view, ScanResult* result) {
  result->recording_dir = view.recording_dir;
  result->suppressions = view.suppressions != nullptr ? view.suppressions : "";
  result->symbol_cache = view.symbol_cache != nullptr ? view.symbol_cache : "";
  result->max_leaks = view.max_leaks;
  result->categories = view.categories != 0;
  result->preview_bytes = view.preview_bytes;
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

// Duplicates of the recorder's descriptors of the files a report reads (close-on-exec).
void KeepRecordingFiles(const HeapgraphRecorderView& view, RecordingReader::OpenFiles* files) {
  const std::pair<const char*, int> held[] = {{format::kHeapTreeFile, view.heap_tree_fd},
                                              {format::kStackFile, view.stacks_fd},
                                              {format::kModuleFile, view.modules_fd},
                                              {format::kSessionFile, view.session_fd}};
  for (auto [name, fd] : held) {
    int copy = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
    if (copy < 0) continue;  // the report opens that one by name
    (*files)[name] = InputFile::Own(copy);
  }
}

// Holds the recorder's locks (heapgraph_internal_begin_snapshot) and fills `view`; false with
// result->error, and nothing held, if it is not recording every block.
bool LockRecorder(const RecorderEntries& recorder, HeapgraphRecorderView* view,
                  ScanResult* result) {
  view->heap_tree_fd = view->stacks_fd = view->modules_fd = view->session_fd = -1;
  if (recorder.begin_snapshot(view) != 0) {
    result->error = "heapgraph is not recording in this process (disabled or failed to start)";
    return false;
  }
  TakeReportOptions(*view, result);
  KeepRecordingFiles(*view, &result->recording_files);
  if (view->sample_mean != 0) {
    recorder.end_snapshot();
    result->error = SampledRecordingError(view->sample_mean);
    return false;
  }
  return true;
}

void NoteCapture(const roots::ThreadCapture& capture, ScanResult* result) {
  result->stats.threads = capture.threads().size();
  result->notice = capture.notice();
  result->stats.stop_method =
      capture.method_used() == roots::ThreadCapture::Method::kSignals ? "signals" : "ptrace";
}

// Waits until the snapshot process `pid` has copied the blocks (its byte on the ready pipe), so
// that the recorder can be released; at once if there is no snapshot process, or if it has the
// blocks this process copied and does not hold allocations while it marks (it sends no byte then).
void AwaitCopy(Preparation& prep, const SnapshotProcess::Context& context, pid_t pid) {
  close(prep.ready[1]);
  prep.ready[1] = -1;
  if (pid > 0 && (!context.blocks_copied || context.hold_allocations_while_marking)) {
    char byte;
    while (read(prep.ready[0], &byte, 1) < 0 && errno == EINTR) {
    }
  }
}

// Runs options.while_marking, if any and the heap had `live_bytes` >= its minimum; true when the
// snapshot process `pid` was reaped meanwhile (its wait status in *status).
bool RunWhileMarking(const ScanOptions& options, const ScanResult& so_far, pid_t pid,
                     uint64_t live_bytes, int* status) {
  if (!options.while_marking || live_bytes < options.while_marking_min_live_bytes) return false;
  bool reaped = false;
  std::function<bool()> marking_done = [&] {
    // __WALL: also a snapshot cloned without SIGCHLD as its exit signal. No pid: done in place.
    if (!reaped) reaped = pid <= 0 || waitpid(pid, status, WNOHANG | __WALL) == pid;
    return reaped;
  };
  try {
    options.while_marking(so_far, marking_done);
  } catch (...) {  // best effort by contract (LeakScan.h)
  }
  return reaped;
}

// Runs options.while_marking, then reaps the snapshot process `pid`; returns its wait status.
int AwaitSnapshot(const ScanOptions& options, const ScanResult& so_far, pid_t pid,
                  uint64_t live_bytes) {
  int status = 0;
  if (!RunWhileMarking(options, so_far, pid, live_bytes, &status)) {
    while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR) {
    }  // the snapshot sends no SIGCHLD
  }
  return status;
}

// Reads the snapshot's result, then its types, judged by its wait `status`. False with
// result->error if there is no leak result.
bool CollectResult(const Preparation& prep, int status, ScanResult* result) {
  bool read_ok = ResultChannel::Read(prep.result_fd, result);
  // The leak result is complete before the typing starts: a snapshot killed after it costs the
  // types, not the check.
  bool typing_died = read_ok && prep.readers != nullptr && WIFSIGNALED(status);
  if (typing_died) {
    result->notice += (result->notice.empty() ? "" : "; ") +
                      std::string("type analysis failed in the snapshot process (") +
                      Describe(status) + "): no types or retain cycles";
  } else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && read_ok) {
    result->error = "the snapshot process failed: " + Describe(status);
    read_ok = false;
  } else if (!read_ok && !WIFEXITED(status)) {
    result->error += " (" + Describe(status) + ")";
  }
  if (read_ok) ReadExplained(prep, result);  // written before the typing
  // A clean scan that types only on leaks wrote no typed result.
  bool untyped = prep.types_only_if_leaked && result->leaked.empty();
  if (read_ok && !typing_died && !untyped) ReadTypes(prep, result);
  return read_ok;
}

// Set once a scan in place of this process met a page that faults (or its helper task ended):
// from then on every scan makes a snapshot process, which can make such pages readable in its own
// copy.
std::atomic<bool> g_in_place_faulted{false};

// Stops the world and makes the snapshot: in place when asked (and possible), else, or if the
// scan in place was abandoned, with a snapshot process. Returns its pid; 0 with in_place->ran when
// the scan was done in place; 0 without if the world could not be stopped.
pid_t StopAndSnapshot(Preparation& prep, SnapshotProcess::Context* context,
                      roots::ThreadCapture::InPlace* in_place, std::string* notice,
                      roots::ThreadCapture::Overlap* overlap) {
  context->in_place = context->in_place && !g_in_place_faulted.load();
  context->in_place_faulted = false;
  in_place->body = context->in_place ? &SnapshotProcess::InPlace : nullptr;
  pid_t pid = prep.capture.CloneStoppedWorld(&SnapshotProcess::Entry, context,
                                             context->view.unwinder, in_place, overlap);
  if (context->in_place_faulted) {  // the helper made the snapshot process from the same stop
    g_in_place_faulted = true;
    if (prep.in_place_asked) {
      *notice =
          "a page faulted while scanning in place: scanned with a snapshot process, as every "
          "later check of this process";
    }
  } else if (context->in_place && pid == 0 && !in_place->ran) {
    // The helper task ended during the scan in place (or the world could not be stopped). Its
    // page pool is no longer active.
    PagePool::Activate(nullptr);
    g_in_place_faulted = true;
    if (prep.in_place_asked) {
      *notice = "the scan in place ended (" + prep.capture.error() +
                "): scanned with a snapshot process, as every later check of this process";
    }
    context->in_place = false;
    in_place->body = nullptr;
    pid = prep.capture.CloneStoppedWorld(&SnapshotProcess::Entry, context, context->view.unwinder);
  }
  return pid;
}

// The recorder's totals at a glance (its locks held only while they are read); nullopt when it is
// not recording.
std::optional<HeapTotals> GlanceAtHeap(const RecorderEntries& recorder) {
  HeapgraphRecorderView glance{};
  if (recorder.begin_snapshot(&glance) != 0) return std::nullopt;
  const HeapTotals totals = {glance.heap->LiveCount(), glance.heap->LiveBytes()};
  recorder.end_snapshot();
  return totals;
}

// Room for the live blocks' copy (BlockCopy), sized from a glance at the recorder (`glance`, or a
// new one when the scan took none) and written before the check takes the locks for good; a kept
// copy that fit the last time is taken as it is (the copy under the locks checks it). A copy of
// this scan's own is shared memory: it is made beside the stop (CopyBlocks).
void ReserveBlockCopy(const RecorderEntries& recorder, std::optional<HeapTotals> glance,
                      Preparation& prep) {
  if (prep.copy->ReuseIfItFit()) return;
  if (!glance) glance = GlanceAtHeap(recorder);
  if (glance) prep.copy->Reserve(glance->blocks, /*shared=*/prep.copy == &prep.own_copy);
}

// The live blocks copied under the recorder's locks, and published for the snapshot.
struct CopyWork {
  BlockCopy* copy;
  SnapshotProcess::Context* context;
};

void CopyBlocks(void* argument) {
  auto* work = static_cast<CopyWork*>(argument);
  work->context->blocks_copied = work->copy->CopyFrom(*work->context->view.heap);
  work->context->copied_blocks = work->copy->blocks();
  work->copy->Publish();
}

// Locks the recorder, stops the world for the capture and the snapshot's clone only (by the
// ptrace helper when it can), and releases the recorder once the snapshot process has copied the
// blocks. The snapshot process runs on a copy of the stopped world, without the unwinder's
// registered memory (never roots: the helper leaves it out of its clone). Returns its pid; <= 0
// with result->error if there is none; 0 with in_place->ran after a scan in place (the world
// stopped until its end). *live_bytes: the recorder's live heap bytes, read under the lock.
// `glance`: the totals the scan glanced at before, if it did.
pid_t SnapshotUnderLock(const RecorderEntries& recorder, std::optional<HeapTotals> glance,
                        Preparation& prep, SnapshotProcess::Context* context, ScanResult* result,
                        roots::ThreadCapture::InPlace* in_place, uint64_t* live_bytes) {
  ReserveBlockCopy(recorder, glance, prep);
  double locked = NowMs();
  if (!LockRecorder(recorder, &context->view, result)) return 0;
  *live_bytes = context->view.heap->LiveBytes();
  prep.ShareWith(context);
  context->copy_range = prep.copy->Range();
  context->kept_copy_range = g_kept_copy.Range();
  // A shared copy is made while the helper stops the world and clones the snapshot, which waits
  // for it; any other before the stop (a snapshot cloned meanwhile would miss what follows).
  CopyWork work{prep.copy, context};
  roots::ThreadCapture::Overlap overlap{&CopyBlocks, &work};
  const bool beside_the_stop = prep.copy->shared();
  context->published_copy = beside_the_stop ? prep.copy : nullptr;
  if (!beside_the_stop) CopyBlocks(&work);
  double stopping = NowMs();
  const pid_t pid = StopAndSnapshot(prep, context, in_place, &result->notice,
                                    beside_the_stop ? &overlap : nullptr);
  if (pid == 0 && !in_place->ran) {
    recorder.end_snapshot();
    result->error = "cannot stop the threads: " + prep.capture.error();
    return 0;
  }
  double released = NowMs();
  std::string in_place_notice = std::move(result->notice);
  NoteCapture(prep.capture, result);
  if (!in_place_notice.empty()) {
    result->notice = in_place_notice + (result->notice.empty() ? "" : "; " + result->notice);
  }
  AwaitCopy(prep, *context, pid);
  recorder.end_snapshot();
  // Waits begun from here on are the program's own contention, not this check's.
  if (context->view.lock_waits != nullptr) LockWait::Close(*context->view.lock_waits);
  double unlocked = NowMs();
  if (pid > 0) prep.copy->Unmap();  // the snapshot process has its own
  if (pid < 0) {
    result->error = std::string("cannot create the snapshot process: ") + strerror(-pid);
    return pid;
  }
  // With the copy beside the stop the caller's clock holds the copy too: the ptrace helper's says
  // how long the threads were stopped (its first seize to its last detach).
  const double helper_stopped_ms = prep.capture.stats().threads_stopped_ms;
  result->timings.world_stopped_ms =
      beside_the_stop && helper_stopped_ms > 0 ? helper_stopped_ms : released - stopping;
  result->timings.allocation_pause_ms = unlocked - locked;
  return pid;
}

// The longest time a program thread waited for a recorder lock since `view`'s begin_snapshot,
// read once the world and every lock are released (a waiter woken by the unlock gets up to
// kSettleMs to run and note its wait; a wait begun after the unlock is not waited for). A
// repeated check (`settle` false) reads it at once: with threads churning on every core, the woken
// waiters took 10-35 ms to be run, a quarter of such a check's wall time; its figure counts the
// waits ended by then, a lower bound.
double LongestAllocationWait(const HeapgraphRecorderView& view, bool settle) {
  constexpr unsigned kSettleMs = 50;
  return view.lock_waits != nullptr ? LockWait::Longest(*view.lock_waits, settle ? kSettleMs : 0)
                                    : 0;
}

ScanResult RunLeakScanOnScrubbedStack(const ScanOptions& options) {
  ScanResult result;
  double start = NowMs();
  const RecorderEntries& recorder = RecorderEntries::Get();
  if (!recorder.loaded()) {
    result.error = "heapgraph is not loaded in this process (LD_PRELOAD or link libheapgraph.so)";
    return result;
  }
  RecordingIgnored ignored(recorder.ignore_thread);  // the scan's buffers are not the program's
  // A one-shot scan glances at the heap's size to choose; the copy's room is sized from the same.
  const bool may_scan_in_place = !options.in_stopped_world &&
                                 options.in_place_max_live_blocks != 0 &&
                                 options.in_place_max_live_bytes != 0;
  const std::optional<HeapTotals> glance =
      options.heap_totals ? options.heap_totals
                          : (may_scan_in_place ? GlanceAtHeap(recorder) : std::nullopt);
  const bool scan_in_place =
      options.in_stopped_world ||
      (may_scan_in_place && glance && glance->blocks <= options.in_place_max_live_blocks &&
       glance->bytes <= options.in_place_max_live_bytes);
  // Owned (destroyed at the return) unless the process ends after the scan: then left to the
  // exit (ScanOptions::process_exits).
  auto* preparation = new Preparation(options, scan_in_place);
  const std::unique_ptr<Preparation> owned(options.process_exits ? nullptr : preparation);
  Preparation& prep = *preparation;
  if (prep.result_fd < 0 || prep.ready[0] < 0) {
    result.error = std::string("cannot create the scan's pipe or memfd: ") + strerror(errno);
    return result;
  }
  SnapshotProcess::Context context = {};
  context.static_tls_size = RootRanges::StaticTlsSize();
  context.tcb_size = ThreadControlBlockSize();
  context.interior_pointers = options.interior_pointers;
  context.types_only_if_leaked = options.types_only_if_leaked;
  context.hold_allocations_while_marking = options.hold_allocations_while_marking;
  // This frame and the ones above it are the program's, or the scan's on a stack of its own.
  context.scan_stack_pointer = CurrentStackPointer();
  context.caller_stack_pointer = options.program_stack_pointer != 0 ? options.program_stack_pointer
                                                                    : context.scan_stack_pointer;
  context.in_place = scan_in_place;
  roots::ThreadCapture::InPlace in_place;
  uint64_t live_bytes = 0;
  const pid_t pid =
      SnapshotUnderLock(recorder, glance, prep, &context, &result, &in_place, &live_bytes);
  if (in_place.ran) {
    result.stats.in_stopped_world = true;
    result.ok = CollectResult(prep, W_EXITCODE(in_place.status, 0), &result);
    result.timings.longest_allocation_wait_ms = LongestAllocationWait(context.view, false);
    result.timings.total_ms = NowMs() - start;
    return result;
  }
  if (pid <= 0) return result;
  result.ok = CollectResult(prep, AwaitSnapshot(options, result, pid, live_bytes), &result);
  result.timings.longest_allocation_wait_ms = LongestAllocationWait(context.view, true);
  result.timings.total_ms = NowMs() - start;
  return result;
}

}  // namespace
}  // namespace heapgraph::scanner
