#include "heap/runtime/Recorder.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "heap/config/Config.h"
#include "heap/config/LsanOptions.h"
#include "heap/lag/LagWatchdog.h"
#include "heap/lag/MonitoredThreads.h"
#include "heap/platform/LoadedObject.h"
#include "heap/platform/ProcessBarrier.h"
#include "heap/platform/ScratchRegisters.h"
#include "heap/platform/StaticTlsArea.h"
#include "heap/platform/WarningLine.h"
#include "heap/plugin/OwnLibraryData.h"
#include "heap/plugin/ScanInterface.h"
#include "heap/plugin/ScanPlugin.h"
#include "heap/pressure/PressureWatcher.h"
#include "heap/runtime/AllocationSampler.h"
#include "heap/runtime/BlockTag.h"
#include "heap/runtime/CheckEntrants.h"
#include "heap/runtime/CheckLock.h"
#include "heap/runtime/Checkpoints.h"
#include "heap/runtime/DeferredFrees.h"
#include "heap/runtime/ForkChildHints.h"
#include "heap/runtime/ForkSnapshot.h"
#include "heap/runtime/FreshBytes.h"
#include "heap/runtime/LargeAllocationMonitor.h"
#include "heap/runtime/LeakCheckTrigger.h"
#include "heap/runtime/LsanHooks.h"
#include "heap/runtime/RootRegions.h"
#include "heap/runtime/StackCachePool.h"
#include "heap/runtime/StackCapture.h"
#include "heap/runtime/UnwinderMappings.h"
#include "heap/runtime/WalkMemo.h"
#include "heap/session/FatalSignalHandler.h"
#include "heap/session/SessionFile.h"
#include "heap/session/SessionMonitor.h"
#include "heap/store/LiveAllocationTree.h"
#include "heap/store/LockWait.h"
#include "heap/store/ModuleMap.h"
#include "heap/store/RecordingDirectory.h"
#include "heap/store/StackStore.h"
#include "heap/store/VmRegionTree.h"
#include "heapgraph/heapgraph.h"

namespace heapgraph::recorder {
namespace {

using format::AllocFunction;

// Process-wide recorder state machine. Only kActive records allocations; kActive and kPaused
// apply frees.
enum Mode : uint32_t {
  kUninitialized = 0,
  kInitializing,
  kActive,
  kPaused,
  kDisabled,
  kForkDeferred,  // forked child: recording into its memory copies, no directory yet (ForkSnapshot)
};

constexpr uint32_t kVmShards = 1;  // one shard: Floor() must see every region
constexpr uint32_t kVmCapacityLog2 = 18;
constexpr uint32_t kNoQueue = UINT32_MAX;  // ThreadState::deferred_slot

using StackCacheEntry = StackCachePool::Entry;

struct State {
  std::atomic<uint32_t> mode{kUninitialized};
  std::atomic<uint32_t> depth{32};
  Config config;
  RecordingDirectory directory;
  LiveAllocationTree heap;
  VmRegionTree vm;
  StackStore stacks;
  ModuleMap modules;
  SessionFile session;
  LargeAllocationMonitor large;
  // Fork: the child's copies, taken by the parent while every lock is held.
  ForkSnapshot fork_snapshot;
  bool fork_locked = false;       // ForkPrepare took every lock (parent and child release them)
  bool fork_snapshot_ok = false;  // and the copies were taken
  uint32_t mode_before_fork = kUninitialized;  // the mode a deferred child records in
  int32_t deferred_pid = 0;  // the deferred child (a vfork child sharing its memory is not)
  bool guard_before_snapshot = false;  // the snapshot taker's own guard, restored at its end
};

constinit State g;
// Read by leak scans through HeapgraphRecorderView::unwinder; never reset (a forked child keeps
// the parent's mappings, and with them the entries).
constinit UnwinderMappings g_unwinder;
// What forked children had to look up (unwind rules, stacks), for the next fork to hand down.
constinit ForkChildHints g_fork_hints;
// The threads' stack caches (ThreadState::stack_cache), published to g_unwinder.
constinit StackCachePool g_stack_caches;
// heapgraph_checkpoint()'s names.
constinit Checkpoints g_checkpoints;
// Its destructor applies a thread's deferred frees and gives its own tree shard back when the
// thread exits (ThreadExit); valid when g_shard_key_made.
pthread_key_t g_shard_key;
bool g_shard_key_made = false;

// Everything the recorder keeps per thread, in one static-TLS object so that a leak scan can
// leave it out of every thread's roots (HeapgraphRecorderView::thread_state: it holds stack
// hashes, sequence numbers and the sampler's state, never a pointer of the program's).
// Zero-initialized in every thread, which touches every page of it: the stack cache lies outside
// (StackCachePool). The fallback entry is last: tests/programs/recorder_tls_roots plants a word
// there.
struct ThreadState {
  bool guard;
  // A tool thread, or a thread inside a leak check: its allocations are not the program's and
  // are not recorded, but its frees are still applied (a freed block must never stay in the tree).
  bool ignored;
  // __lsan_disable depth: while > 0 the thread's heap blocks are recorded ignored (never reported,
  // scanned as roots), as LeakSanitizer treats allocations made while a thread is disabled.
  uint32_t lsan_disabled;
  uint64_t seq_next;
  uint64_t seq_end;
  // 1 + the live-allocation tree shard this thread inserts into (0: not chosen yet).
  uint32_t shard_plus_one;
  // This thread owns that shard (LiveAllocationTree::Claim) until it exits.
  bool owns_shard;
  // The frees this thread has not applied yet (DeferredFrees), and its registry slot: 1 + the
  // slot, 0 not registered yet, kNoQueue never (no slot, no key, or the thread is exiting).
  uint32_t deferred_slot;
  HeapgraphDeferredFrees deferred;
  // Sampling mode (config.sample_mean != 0): this thread's countdown to its next sampled block.
  AllocationSampler sampler;
  // The last stack walk (StackCapture, option unwind_memo): stack addresses and return
  // addresses, kept out of the leak scan's roots with the rest of this state.
  WalkMemo walk_memo;
  // This thread's stack cache (StackCachePool::kEntries entries), taken when it first interns a
  // stack and given back at its exit; after that, or when the pool had none, the one fallback
  // entry serves as its cache.
  StackCacheEntry* stack_cache;
  bool stack_cache_closed;
  StackCacheEntry fallback_entry;
};

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// Sets the re-entrancy guard for the lifetime of a hook; no-op (and `entered` false) if it was set.
class GuardScope {
 public:
  GuardScope() : entered_(!t_state.guard) { t_state.guard = true; }
  ~GuardScope() {
    if (entered_) t_state.guard = false;
  }

 private:
  bool entered_;
};

void Complain(const char* what, const char* detail) {
  WarningLine::Print(what, detail, "; recording disabled, the program continues");
}

// Frames in libheapgraph.so's own code are left out of every stack.
void FindOwnCode() {
  auto self = reinterpret_cast<uintptr_t>(&RecordAlloc);
  uintptr_t begin = 0, end = 0;
  LoadedObject object;
  if (LoadedObject::Find(self, &object)) object.ExecutableSegment(self, &begin, &end);
  StackCapture::SetOwnCode(begin, end);
}

// The executable's build-id in the session, from its module record (learned by Initialize).
void SetExecutableBuildId() {
  const format::ModuleRecord* program = g.modules.Find(getauxval(AT_ENTRY));
  if (program != nullptr) g.session.SetExecutableBuildId(program->build_id, program->build_id_len);
}

// Creates every file of a recording directory; false after one line on stderr.
bool CreateFiles() {
  char error[256];
  const Config& c = g.config;
  if (!g.directory.Create(c.dir, error, sizeof(error))) {
    Complain("cannot create the recording directory", error);
    return false;
  }
  int fd = g.directory.fd();
  if (!g.session.Create(fd, c.depth, 0, c.heartbeat_ms, c.hang_ms) ||
      !g.heap.Create(fd, format::kHeapTreeFile, c.shards, c.shard_capacity_log2) ||
      !g.vm.Create(fd, format::kVmTreeFile, kVmShards, kVmCapacityLog2) ||
      !g.stacks.Create(fd, format::kStackFile, c.stack_slots_log2, format::kMaxStackDepth) ||
      !g.modules.Create(fd, format::kModuleFile)) {
    Complain("cannot create the recording files in", g.directory.path());
    return false;
  }
  g.session.SetRunTag(c.run_tag);
  return true;
}

bool Recording(uint32_t mode) {
  return mode == kActive || mode == kPaused;
}

ForkSnapshot::Stores Stores() {
  return {&g.heap, &g.vm, &g.modules, &g.stacks};
}

// The mode a process records in: a forked child without its directory yet records as its parent.
uint32_t EffectiveMode(uint32_t mode) {
  return mode == kForkDeferred ? g.mode_before_fork : mode;
}

uint32_t OwnShard();
uint64_t HashFrames(const uintptr_t* frames, uint32_t depth);
StackCacheEntry& CachedStack(uint64_t hash);
void ThreadExit(void*);
void ApplyOtherThreadsQueues(LiveAllocationTree* tree);

// The rules and stacks that earlier children had to look up (ForkChildHints), looked up here from
// this process's own modules and stack table: rules into the unwinder's cache, stacks into this
// thread's stack cache (the child's one thread is a copy of this one), for the next child to
// inherit. The first fork maps the page its children report to.
void LearnFromForkedChildren() {
  if (!g_fork_hints.Initialize()) return;
  uintptr_t frames[format::kMaxStackDepth];
  g_fork_hints.Drain([&frames](ForkChildHints::Kind kind, uint64_t value) {
    if (kind == ForkChildHints::kRule) {
      (void)StackCapture::LearnRule(value);
      return;
    }
    if (value > UINT32_MAX) return;
    const uint32_t id = static_cast<uint32_t>(value);
    const uint32_t depth = g.stacks.Frames(id, frames, format::kMaxStackDepth);
    if (depth == 0) return;
    const uint64_t hash = HashFrames(frames, depth);
    StackCacheEntry& entry = CachedStack(hash);
    entry.hash = hash;
    entry.id = id;
  });
}

// Fork, parent side, before the fork: with every recorder lock held (no thread is inside a tree
// or module update), copy the trees and the module map into memory files for the child
// (ForkSnapshot). The copy is exactly the child's heap at the fork. A child that has no directory
// yet forks the same way (its copies are copied again).
void ForkPrepare() {
  ScanPlugin::BeforeFork();  // a thread loading the plugin finishes its dlopen first
  CheckLock::BeforeFork();   // then a check running now finishes before the fork
  g.fork_locked = Recording(EffectiveMode(g.mode.load(std::memory_order_acquire)));
  if (!g.fork_locked) return;
  const bool in_hook = t_state.guard;
  t_state.guard = true;
  // Before any lock; not from a signal handler that interrupted a hook of this thread (a stack
  // cache entry may be half written there).
  if (!in_hook) LearnFromForkedChildren();
  g.modules.Lock();
  g.heap.LockAll();
  g.vm.LockAll();
  g.fork_snapshot_ok = g.fork_snapshot.Take(Stores());
}

void ForkParent() {
  CheckLock::AfterForkParent();
  ScanPlugin::AfterFork();
  if (!g.fork_locked) return;
  g.fork_locked = false;
  g.fork_snapshot.Release();  // the child holds its own descriptors
  g.vm.UnlockAll();
  g.heap.UnlockAll();
  g.modules.Unlock();
  t_state.guard = false;
}

// Fork, child side (single-threaded, async-signal-safe calls only): map the memory copies over
// the parent's files before touching any lock word, since the parent's lock words live in files
// the parent keeps using. No directory yet (kForkDeferred): WriteChildDirectory makes it once
// the child lives; a child that calls exec first leaves nothing on disk.
void ForkChild() {
  CheckLock::AfterForkChild();
  ScanPlugin::AfterFork();
  MonitoredThreads::AfterForkChild();  // this thread's tid changed
  // The parent's other threads, some maybe inside a timed lock wait, do not exist here. (Stores
  // here write only what differs: a write copies a page the child shares with its parent.)
  std::atomic<uint32_t>& waiting = LockWait::Window().waiting;
  if (waiting.load(std::memory_order_relaxed) != 0) waiting.store(0, std::memory_order_relaxed);
  // And owned tree shards; only this thread's keeps its owner (the child inherits the process
  // barrier's registration: ProcessBarrier).
  g.heap.DisownAllBut(OwnShard());
  if (!g.fork_locked) {
    ApplyOtherThreadsQueues(nullptr);
    return;
  }
  g.fork_locked = false;
  uint32_t mode = EffectiveMode(g.mode.load(std::memory_order_acquire));
  bool ok = g.fork_snapshot_ok && g.fork_snapshot.AdoptInChild(Stores());
  g.modules.Unlock();  // process-local lock word
  if (!ok) {
    // Still mapping some of the parent's files: never write them again.
    g.mode.store(kDisabled, std::memory_order_release);
    ApplyOtherThreadsQueues(nullptr);
    Complain("cannot set up the recording of a forked child", "(memory copy of the trees)");
    return;
  }
  g.heap.ReleaseCopiedLocks();
  g.vm.ReleaseCopiedLocks();
  ApplyOtherThreadsQueues(&g.heap);
  // Until it writes its directory (a shell's child calls exec first), what it looks up is reported.
  g_fork_hints.StartReporting();
  t_state.seq_next = t_state.seq_end = 0;
  g.mode_before_fork = mode;
  g.deferred_pid = static_cast<int32_t>(syscall(SYS_getpid));
  g.mode.store(kForkDeferred, std::memory_order_release);
  t_state.guard = false;
}

// A forked child that lives (ForkSnapshot): its own directory <pid>-<ticks>, its trees and module
// map written there from the memory copies, the stack table linked, a session of its own. On
// failure the recording stops (one line), the memory copies stay mapped.
void WriteChildDirectory() {
  if (static_cast<int32_t>(syscall(SYS_getpid)) != g.deferred_pid) return;
  uint32_t expected = kForkDeferred;
  if (!g.mode.compare_exchange_strong(expected, kInitializing)) return;
  RecordingDirectory own;
  // The parent's sequence counter, shared until the child's session exists: numbers stay unique.
  uint64_t sequence = g.session.header()->sequence.load(std::memory_order_relaxed);
  bool ok = g.directory.CreateForForkedChild(&own) &&
            ForkSnapshot::WriteDirectory(Stores(), own.fd(), g.directory.fd()) &&
            g.session.Create(own.fd(), g.config.depth, sequence);
  g.directory.CloseDirectory();  // the parent's
  g.directory = own;
  g_fork_hints.StopReporting();  // it lives: its paths are its own
  if (!ok) {
    g.mode.store(kDisabled, std::memory_order_release);
    Complain("cannot write the recording of a forked child",
             own.path()[0] != '\0' ? own.path() : strerror(errno));
    return;
  }
  g.session.SetRunTag(g.config.run_tag);
  SetExecutableBuildId();
  t_state.seq_next = t_state.seq_end = 0;
  g.mode.store(g.mode_before_fork, std::memory_order_release);
}

// Sampling is fixed for the life of the recording: the tree file says which blocks it holds.
void ConfigureSampling() {
  uint64_t mean = g.config.sample_mean;
  if (mean == 0) return;
  g.heap.MarkSampled(static_cast<uint32_t>(mean));
  uint64_t seed = g.config.sample_seed;
  if (seed == 0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    seed = static_cast<uint64_t>(now.tv_nsec) ^ (static_cast<uint64_t>(now.tv_sec) << 30) ^
           (static_cast<uint64_t>(getpid()) << 48);
  }
  AllocationSampler::SetProcessSeed(seed);
}

void Initialize() {
  uint32_t expected = kUninitialized;
  if (!g.mode.compare_exchange_strong(expected, kInitializing)) return;
  // LeakSanitizer's options first, so that HEAPGRAPH_OPTIONS wins where both set a key.
  LsanOptions::Apply(LsanHooks::DefaultOptions(), "__lsan_default_options", &g.config);
  LsanOptions::Apply(getenv("LSAN_OPTIONS"), "LSAN_OPTIONS", &g.config);
  g.config.Parse(getenv("HEAPGRAPH_OPTIONS"));
  if (!g.config.enabled) {
    g.mode.store(kDisabled, std::memory_order_release);
    return;
  }
  g.depth.store(g.config.depth, std::memory_order_relaxed);
  // Threads own tree shards only with the barrier that lets a check or a fork freeze them, and
  // a key whose destructor gives them back.
  g_shard_key_made =
      ProcessBarrier::Register() && pthread_key_create(&g_shard_key, &ThreadExit) == 0;
  StackCapture::Initialize(g.config.unwind_rules, g.config.unwind_memo);
  uintptr_t table_begin, table_end;
  if (StackCapture::RuleTable(&table_begin, &table_end)) g_unwinder.Add(table_begin, table_end);
  // Its page is mapped by the first fork (LearnFromForkedChildren); it reports in forked children.
  StackCapture::ReportMissesTo(&g_fork_hints);
  g_stack_caches.PublishTo(&g_unwinder);
  FindOwnCode();
  if (!CreateFiles()) {
    g.mode.store(kDisabled, std::memory_order_release);
    return;
  }
  g.large.Configure(g.config.large_threshold, g.config.large_log, g.directory.fd());
  ConfigureSampling();
  uintptr_t program = getauxval(AT_ENTRY);
  g.modules.Learn(&program, 1);
  SetExecutableBuildId();
  pthread_atfork(ForkPrepare, ForkParent, ForkChild);
  g.mode.store(g.config.start_paused ? kPaused : kActive, std::memory_order_release);
}

// Slow path of every API call: brings the recorder up on first use, and makes a forked child
// write its directory (anything that asks may read or name the recording).
uint32_t SettleMode() {
  uint32_t mode = g.mode.load(std::memory_order_acquire);
  if (mode == kUninitialized) Initialize();
  if (mode == kForkDeferred) WriteChildDirectory();
  return g.mode.load(std::memory_order_acquire);
}

// Slow path of every hook: as SettleMode, except that a forked child keeps recording into its
// memory copies until it has lived long enough (ForkSnapshot::DueToWrite).
uint32_t HookMode() {
  uint32_t mode = g.mode.load(std::memory_order_acquire);
  if (mode != kForkDeferred) return SettleMode();
  if (!g.fork_snapshot.DueToWrite()) return g.mode_before_fork;
  WriteChildDirectory();
  return g.mode.load(std::memory_order_acquire);
}

// Entry points that write the session or change the mode, outside hooks: a forked child writes
// its directory first (its session is still its parent's).
void SettleForkedChild() {
  if (g.mode.load(std::memory_order_acquire) != kForkDeferred) return;
  GuardScope guard;
  WriteChildDirectory();
}

// The mode for hooks that apply frees.
uint32_t FreeMode() {
  uint32_t mode = g.mode.load(std::memory_order_acquire);
  return mode == kForkDeferred ? HookMode() : mode;
}

uint32_t NextSequence() {
  if (t_state.seq_next == t_state.seq_end) {
    t_state.seq_next = g.session.TakeSequenceBlock();
    t_state.seq_end = t_state.seq_next + SessionFile::kSequenceBlock;
  }
  return static_cast<uint32_t>(t_state.seq_next++);
}

// FNV-style in four independent lanes (frame i goes to lane i % 4), so that a deep stack costs a
// quarter of one multiply chain's latency, then the lanes folded into one.
uint64_t HashFrames(const uintptr_t* frames, uint32_t depth) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  uint64_t a = 0x84222325cbf29ce4ull ^ depth, b = 0x9e3779b97f4a7c15ull;
  uint64_t c = 0xc2b2ae3d27d4eb4full, d = 0x165667b19e3779f9ull;
  uint32_t i = 0;
  for (; i + 4 <= depth; i += 4) {
    a = (a ^ frames[i]) * kPrime;
    b = (b ^ frames[i + 1]) * kPrime;
    c = (c ^ frames[i + 2]) * kPrime;
    d = (d ^ frames[i + 3]) * kPrime;
  }
  if (i < depth) a = (a ^ frames[i++]) * kPrime;
  if (i < depth) b = (b ^ frames[i++]) * kPrime;
  if (i < depth) c = (c ^ frames[i]) * kPrime;
  uint64_t h = (a ^ (a >> 29) ^ b) * kPrime;
  h = (h ^ (h >> 29) ^ c) * kPrime;
  h = (h ^ (h >> 29) ^ d) * kPrime;
  return h ^ (h >> 29);
}

// Takes the calling thread's stack cache from the pool; the key's destructor (ThreadExit) gives
// it back. Without a key the cache is never given back (the pool has thousands).
StackCacheEntry* TakeStackCache() {
  if (t_state.stack_cache_closed) return nullptr;
  t_state.stack_cache = g_stack_caches.Take();
  if (t_state.stack_cache == nullptr) {
    t_state.stack_cache_closed = true;  // the pool is full: not asked again by this thread
  } else if (g_shard_key_made) {
    pthread_setspecific(g_shard_key, &t_state);  // any non-null value: the destructor runs
  }
  return t_state.stack_cache;
}

// The calling thread's stack cache entry for a hash of frames (direct-mapped).
StackCacheEntry& CachedStack(uint64_t hash) {
  StackCacheEntry* cache = t_state.stack_cache;
  if (__builtin_expect(cache == nullptr, 0) && (cache = TakeStackCache()) == nullptr) {
    return t_state.fallback_entry;
  }
  return cache[hash % StackCachePool::kEntries];
}

// Stack id for the captured frames. A per-thread cache keyed by a 64-bit hash of the frames
// skips the table walk for stacks this thread saw recently (a false hit needs a 64-bit collision).
uint32_t InternStack(const uintptr_t* frames, uint32_t depth) {
  uint64_t hash = HashFrames(frames, depth);
  StackCacheEntry& entry = CachedStack(hash);
  if (entry.hash == hash && entry.id != 0) return entry.id;
  uint32_t new_nodes = 0;
  uint32_t id = g.stacks.Intern(frames, depth, &new_nodes);
  if (g_fork_hints.reporting() && id != 0) g_fork_hints.Report(ForkChildHints::kStack, id);
  // A frame we have never seen may come from a module the map does not have yet.
  if (new_nodes != 0) g.modules.Learn(frames, depth);
  entry.hash = hash;
  entry.id = id;
  return id;
}

// The shard of the live-allocation tree this thread inserts into: threads take shards in turn,
// and each owns its own when it can (no lock on its inserts and on its frees of its own blocks;
// SlabShard), else inserts under a lock into lines that other threads rarely touch.
uint32_t ThreadShard() {
  if (t_state.shard_plus_one == 0) {
    static constinit std::atomic<uint32_t> next{0};
    uint32_t shard = next.fetch_add(1, std::memory_order_relaxed) % g.heap.shard_count();
    const uint32_t owned = g_shard_key_made ? g.heap.Claim(shard) : LiveAllocationTree::kNoShard;
    if (owned != LiveAllocationTree::kNoShard) {
      shard = owned;
      t_state.owns_shard = true;
      pthread_setspecific(g_shard_key, &t_state);  // any non-null value: the destructor runs
    }
    t_state.shard_plus_one = shard + 1;
  }
  return t_state.shard_plus_one - 1;
}

// The shard this thread owns, or kNoShard.
uint32_t OwnShard() {
  return t_state.owns_shard ? t_state.shard_plus_one - 1 : LiveAllocationTree::kNoShard;
}

// Applies a queue of deferred frees: out of the tree while the recorder still applies frees (and
// `with_tree`: false inside a hook, whose locks the tree may need), then glibc's free.
void ApplyQueue(HeapgraphDeferredFrees& queue, bool with_tree = true) {
  DeferredFrees::Apply(queue, with_tree && Recording(FreeMode()) ? &g.heap : nullptr, OwnShard());
}

// Applies this thread's deferred frees (inside a hook: later).
void ApplyOwnQueue() {
  if (t_state.deferred.count == 0 || t_state.guard) return;
  GuardScope guard;
  ApplyQueue(t_state.deferred);
}

// This thread's queue joins the registry, where checks and forks find it, and the key's destructor
// will apply it at the thread's exit; false (and never again) without a slot or a key.
bool JoinDeferredFrees() {
  uint32_t slot;
  if (!g_shard_key_made || !DeferredFrees::Register(&t_state.deferred, &slot)) {
    t_state.deferred_slot = kNoQueue;
    return false;
  }
  t_state.deferred_slot = slot + 1;
  pthread_setspecific(g_shard_key, &t_state);  // any non-null value: the destructor runs
  return true;
}

// Fork, child side: the parent's other threads do not exist here. Their queued frees are applied
// (out of the child's tree when `tree`) and their registry slots freed. A thread that was between
// writing an entry and counting it leaves that block in the child's tree, as a thread inside
// free() before the recorder saw it always did.
void ApplyOtherThreadsQueues(LiveAllocationTree* tree) {
  DeferredFrees::ForEachRegistered([&](HeapgraphDeferredFrees& queue, uint32_t slot) {
    if (&queue == &t_state.deferred) return;
    DeferredFrees::Apply(queue, tree, OwnShard());
    DeferredFrees::Unregister(slot);
  });
}

// pthread key destructor at the thread's exit: its deferred frees are applied and its queue leaves
// the registry (later frees are applied at once), then its stack cache goes back to the pool and
// its own shard is given back (the thread keeps inserting into the shard, under its lock, if it
// allocates after this). Guarded like a hook: a signal handler allocating on this thread while
// Release holds the shard's lock word is not recorded (it would wait for itself); inside a hook
// the queue is freed without the tree, and the cache and the shard stay the thread's.
void ThreadExit(void*) {
  const bool entered = !t_state.guard;
  GuardScope guard;
  ApplyQueue(t_state.deferred, /*with_tree=*/entered);
  if (t_state.deferred_slot != 0 && t_state.deferred_slot != kNoQueue) {
    DeferredFrees::Unregister(t_state.deferred_slot - 1);
  }
  t_state.deferred_slot = kNoQueue;
  if (!entered) return;  // a hook of this thread may be using its cache: it keeps it
  // Later allocations of this thread (other destructors) use the fallback entry.
  t_state.stack_cache_closed = true;
  g_stack_caches.Give(t_state.stack_cache);
  t_state.stack_cache = nullptr;
  if (!t_state.owns_shard) return;
  t_state.owns_shard = false;
  g.heap.Release(t_state.shard_plus_one - 1);
}

// The slot a recorded heap block's tag names; false for a block that carries no tag.
bool TaggedSlot(void* address, LiveAllocationTree::Slot* slot) {
  block_tag::Read(address, &slot->shard, &slot->index);
  return g.heap.Holds(*slot, reinterpret_cast<uintptr_t>(address));
}

// Puts a heap block in the tree and names its slot in the block's tag. A block that still carries
// a valid tag of an earlier block at this address (whose free the recorder missed: it came while
// the thread was inside a hook) first takes that record out, as the tree's only record of the
// address.
void InsertHeapBlock(void* address, const BlockRecord& block) {
  LiveAllocationTree::Slot slot;
  if (TaggedSlot(address, &slot)) g.heap.Remove(slot, block.address, nullptr, OwnShard());
  const uint32_t shard = ThreadShard();
  if (!g.heap.Insert(block, shard, &slot, t_state.owns_shard)) return;
  // A full shard sends a thread without a shard of its own on to the next.
  if (!t_state.owns_shard) t_state.shard_plus_one = slot.shard + 1;
  block_tag::Write(address, slot.shard, slot.index);
}

// Records the block: in the heap tree (heap = true; the block has room for its tag), or in the
// VM-region tree; nowhere if !insert (an unsampled block that is still reported as large). Its
// bytes from `fresh_from` on are cleared (FreshBytes) once the stack is interned, before the
// insert.
void Record(bool heap, void* address, size_t size, AllocFunction function, bool insert = true,
            size_t fresh_from = SIZE_MAX) {
  uintptr_t frames[format::kMaxStackDepth + StackCapture::kMaxOwnFrames];
  uint32_t depth =
      StackCapture::Capture(frames, g.depth.load(std::memory_order_relaxed), &t_state.walk_memo);
  BlockRecord block;
  block.address = reinterpret_cast<uintptr_t>(address);
  block.size = size > format::kMaxBlockSize ? format::kMaxBlockSize : size;
  block.stack = InternStack(frames, depth);
  if (fresh_from < size) ClearFreshBytes(address, fresh_from, size);
  block.function = function;
  block.ignored = t_state.lsan_disabled != 0;
  if (insert) {
    block.seq = NextSequence();
    if (heap) {
      InsertHeapBlock(address, block);
    } else {
      g.vm.Insert(block);
    }
  }
  if (g.large.IsLarge(size)) g.large.Report(address, size, function, frames, depth, &g.modules);
}

// The lag monitor's sample, in its signal handler on the monitored thread (heap/lag/LagWatchdog):
// nothing while the thread is inside a hook or the recorder (its unwinder cache and stack cache
// are in use); else its stack from the interrupted frame on, interned like an allocation stack.
uint32_t SampleLagStack(uintptr_t skip_begin, uintptr_t skip_end, uintptr_t* top) {
  if (t_state.guard) return 0;
  GuardScope guard;
  uintptr_t frames[format::kMaxStackDepth + StackCapture::kMaxOwnFrames];
  uint32_t depth = StackCapture::Capture(frames, format::kMaxStackDepth);
  uint32_t first = depth;
  for (uint32_t i = 0; i < depth; ++i) {
    if (frames[i] >= skip_begin && frames[i] < skip_end) {
      first = i + 1;
      break;
    }
  }
  if (first >= depth) return 0;
  uint32_t kept = depth - first;
  uint32_t limit = g.depth.load(std::memory_order_relaxed);
  *top = frames[first];
  return InternStack(frames + first, kept < limit ? kept : limit);
}

// heapgraph's own threads (session, lag watchdog): never recorded.
void MarkToolThread() {
  t_state.ignored = true;
}

LagWatchdog::Settings LagSettings() {
  LagWatchdog::Settings settings;
  settings.config = &g.config;
  settings.dir_fd = g.directory.fd();
  settings.sample = &SampleLagStack;
  settings.on_thread_start = &MarkToolThread;
  return settings;
}

}  // namespace

bool InHook() {
  return t_state.guard;
}

HEAPGRAPH_CLEARS_SCRATCH bool IgnoreBlock(const void* address) {
  if (t_state.guard || address == nullptr) return false;
  GuardScope guard;
  if (!Recording(FreeMode())) return false;
  LiveAllocationTree::Slot slot;
  void* block = const_cast<void*>(address);
  bool marked =
      TaggedSlot(block, &slot) && g.heap.MarkIgnored(slot, reinterpret_cast<uintptr_t>(address));
  ClearVectorScratch();
  return marked;
}

bool ChangeDisabledDepth(int delta) {
  if (delta < 0 && t_state.lsan_disabled == 0) return false;
  t_state.lsan_disabled += static_cast<uint32_t>(delta);
  return true;
}

void ForgetUnwinderMaps(void* address, size_t length) {
  auto begin = reinterpret_cast<uint64_t>(address);
  g_unwinder.Forget(begin, begin + length);
}

void NoteDlclose() {
  StackCapture::ForgetRuleWalkRules();  // whatever the state: rules read while paused count too
  if (t_state.guard) return;
  GuardScope guard;
  if (!Recording(FreeMode())) return;
  g.modules.ForgetUnloaded();
}

void BeforeThreadCreate() {
  SettleForkedChild();
}

void RecordExit(format::ExitKind kind, int status) {
  ApplyOwnQueue();
  SettleForkedChild();  // a child that exits has lived
  if (Recording(g.mode.load(std::memory_order_acquire))) g.session.RecordExit(kind, status);
}

// A new block whose first `written` bytes hold the program's data (calloc's zeroes, realloc's
// copy); the rest is cleared (heap/runtime/FreshBytes) when checks may scan it.
static void RecordNewBlock(void* address, size_t size, AllocFunction function, size_t written) {
  if (t_state.guard || t_state.ignored || address == nullptr) return;
  GuardScope guard;
  uint32_t mode = g.mode.load(std::memory_order_acquire);
  if (mode != kActive && (mode = HookMode()) != kActive) return;
  uint64_t mean = g.config.sample_mean;
  if (mean != 0 && !t_state.sampler.Sample(size, mean)) {
    // Not sampled: no stack, no tree entry; only the large-allocation monitor still sees it.
    if (g.large.IsLarge(size)) Record(true, address, size, function, false);
    return;
  }
  // No room for a tag: the hook did not pad the request (the recorder started during the call).
  if (!block_tag::Fits(address, size)) return;
  // The bytes to clear are fetched while Record walks and interns the stack.
  const size_t fresh_from = mean == 0 && g.config.scrub ? written : SIZE_MAX;
  PrefetchFreshBytes(address, fresh_from, size);
  Record(true, address, size, function, true, fresh_from);
}

size_t RequestSize(size_t size, bool aligned) {
  if (t_state.guard || t_state.ignored || g.mode.load(std::memory_order_relaxed) == kDisabled) {
    return size;
  }
  return aligned ? block_tag::PlusTag(size) : block_tag::PaddedRequest(size);
}

size_t UsableSize(void* address) {
  const size_t usable = glibc_chunk::UsableSize(address);
  if (t_state.guard) return usable;
  GuardScope guard;
  LiveAllocationTree::Slot slot;
  return TaggedSlot(address, &slot) ? usable - block_tag::kBytes : usable;
}

// The entry points that touch the live-allocation tree leave no other block's address in the
// caller's scratch registers (heap/platform/ScratchRegisters.h).
HEAPGRAPH_CLEARS_SCRATCH void RecordAlloc(void* address, size_t size, AllocFunction function) {
  RecordNewBlock(address, size, function, function == AllocFunction::kCalloc ? size : 0);
  ClearVectorScratch();
}

// Removes a heap block through its tag, and erases the tag; false for a block that was not
// recorded.
static bool RemoveHeapBlock(void* address, BlockRecord* removed) {
  LiveAllocationTree::Slot slot;
  block_tag::Read(address, &slot.shard, &slot.index);
  if (!g.heap.Remove(slot, reinterpret_cast<uintptr_t>(address), removed, OwnShard())) {
    return false;
  }
  block_tag::Clear(address);
  return true;
}

HEAPGRAPH_CLEARS_SCRATCH void RecordFree(void* address) {
  if (t_state.guard || address == nullptr) return;
  GuardScope guard;
  if (!Recording(FreeMode())) return;
  RemoveHeapBlock(address, nullptr);
  ClearVectorScratch();
}

HEAPGRAPH_CLEARS_SCRATCH bool QueueFree(void* address) {
  if (t_state.guard || t_state.ignored || t_state.deferred_slot == kNoQueue) return false;
  const uint32_t mode = g.mode.load(std::memory_order_acquire);
  if ((mode != kActive && mode != kPaused) || !g.config.batch_frees) return false;
  if (!DeferredFrees::Queues(address)) return false;
  GuardScope guard;
  if (t_state.deferred_slot == 0 && !JoinDeferredFrees()) return false;
  if (DeferredFrees::Push(t_state.deferred, address)) {
    DeferredFrees::Apply(t_state.deferred, &g.heap, OwnShard());
    ClearVectorScratch();
  }
  return true;
}

HEAPGRAPH_CLEARS_SCRATCH ReallocTicket BeginRealloc(void* old_address) {
  ReallocTicket ticket;
  if (t_state.guard) return ticket;
  GuardScope guard;
  if (!Recording(FreeMode())) return ticket;
  ticket.recorded = RemoveHeapBlock(old_address, &ticket.old);
  ClearVectorScratch();
  return ticket;
}

HEAPGRAPH_CLEARS_SCRATCH void EndRealloc(const ReallocTicket& ticket, void* result, size_t size,
                                         AllocFunction function) {
  if (result != nullptr) {
    // The old block's bytes were copied: only the grown part is cleared (nothing when the old
    // size is unknown).
    RecordNewBlock(result, size, function, ticket.recorded ? ticket.old.size : size);
  } else if (size != 0 && ticket.recorded && !t_state.guard) {
    GuardScope guard;
    // The allocator failed: the old block is still live, with its tag's room.
    InsertHeapBlock(reinterpret_cast<void*>(ticket.old.address), ticket.old);
  }
  ClearVectorScratch();
}

void RecordMap(void* address, size_t length, AllocFunction function) {
  if (t_state.guard || address == nullptr || !g.config.record_mmap) return;
  RecordUnmap(address, length);
  if (t_state.ignored) return;
  GuardScope guard;
  uint32_t mode = g.mode.load(std::memory_order_acquire);
  if (mode != kActive && (mode = HookMode()) != kActive) return;
  Record(false, address, length, function);
}

void RecordRemap(void* old_address, size_t old_length, void* address, size_t length) {
  if (t_state.guard || old_address == nullptr || !g.config.record_mmap) return;
  bool recorded;
  {
    GuardScope guard;
    BlockRecord region;
    uint64_t old_begin = reinterpret_cast<uintptr_t>(old_address);
    recorded = g.vm.Floor(old_begin, &region) && region.address + region.size > old_begin;
  }
  if (!recorded) return;
  RecordUnmap(old_address, old_length);
  RecordMap(address, length, AllocFunction::kMremap);
}

// Removes [address, address + length) from the VM regions; a region cut in the middle keeps its
// outer parts (with the original stack and sequence number).
void RecordUnmap(void* address, size_t length) {
  if (t_state.guard || address == nullptr || length == 0) return;
  GuardScope guard;
  if (!Recording(FreeMode())) return;
  uint64_t begin = reinterpret_cast<uintptr_t>(address);
  uint64_t end = begin + length;
  BlockRecord region;
  // Regions starting inside the range, then a region that starts before it and overlaps it.
  for (int guard_steps = 0; guard_steps < 4096; ++guard_steps) {
    if (!g.vm.Floor(end - 1, &region) || region.address + region.size <= begin) break;
    g.vm.Remove(region.address, nullptr);
    if (region.address < begin) {
      BlockRecord head = region;
      head.size = begin - region.address;
      g.vm.Insert(head);
    }
    if (region.address + region.size > end) {
      BlockRecord tail = region;
      tail.address = end;
      tail.size = region.address + region.size - end;
      g.vm.Insert(tail);
    }
  }
}

}  // namespace heapgraph::recorder

using namespace heapgraph;
using namespace heapgraph::recorder;

extern "C" {

HEAPGRAPH_API int heapgraph_set_options(const char* options) {
  GuardScope guard;
  SettleMode();
  Config runtime = g.config;
  int rejected = runtime.Parse(options);
  g.depth.store(runtime.depth, std::memory_order_relaxed);
  g.large.set_threshold(runtime.large_threshold);
  if (runtime.start_paused != g.config.start_paused) {
    runtime.start_paused ? heapgraph_pause() : heapgraph_resume();
  }
  g.config.depth = runtime.depth;
  g.config.large_threshold = runtime.large_threshold;
  g.config.start_paused = runtime.start_paused;
  return rejected;
}

HEAPGRAPH_API void heapgraph_pause(void) {
  SettleForkedChild();
  uint32_t expected = kActive;
  g.mode.compare_exchange_strong(expected, kPaused);
}

HEAPGRAPH_API void heapgraph_resume(void) {
  SettleForkedChild();
  uint32_t expected = kPaused;
  g.mode.compare_exchange_strong(expected, kActive);
}

HEAPGRAPH_API int heapgraph_is_recording(void) {
  GuardScope guard;
  return SettleMode() == kActive ? 1 : 0;
}

HEAPGRAPH_API const char* heapgraph_recording_dir(void) {
  GuardScope guard;
  return Recording(SettleMode()) ? g.directory.path() : nullptr;
}

HEAPGRAPH_API void heapgraph_set_large_alloc_callback(heapgraph_large_alloc_callback callback,
                                                      void* user_data) {
  g.large.SetCallback(callback, user_data);
}

HEAPGRAPH_API void heapgraph_ignore_current_thread(void) {
  t_state.ignored = true;
}

HEAPGRAPH_API void heapgraph_set_app_state(int foreground) {
  SettleForkedChild();
  g.session.SetAppState(foreground != 0 ? format::kAppForeground : format::kAppBackground);
}

HEAPGRAPH_API void heapgraph_heartbeat(void) {
  SettleForkedChild();
  g.session.CountAppHeartbeat();
}

HEAPGRAPH_API void heapgraph_work_begin(void) {
  GuardScope guard;
  if (SettleMode() != kActive) return;
  LagWatchdog::BeginWork(LagSettings());
}

HEAPGRAPH_API void heapgraph_work_end(void) {
  LagWatchdog::EndWork();
}

HEAPGRAPH_API void heapgraph_sync(void) {
  ApplyOwnQueue();
  g.heap.file().Sync();
  g.vm.file().Sync();
  g.stacks.file().Sync();
}

HEAPGRAPH_API int heapgraph_checkpoint(const char* name) {
  GuardScope guard;
  if (name == nullptr || !Recording(SettleMode())) return -1;
  // This thread's next block takes a fresh sequence block, at or after the checkpoint.
  t_state.seq_next = t_state.seq_end;
  g_checkpoints.Set(name, g.session.header()->sequence.load(std::memory_order_relaxed));
  return 0;
}

HEAPGRAPH_API int heapgraph_internal_sequence(const char* checkpoint, uint64_t* sequence) {
  GuardScope guard;
  if (!Recording(SettleMode())) return -1;
  if (checkpoint == nullptr) {
    *sequence = g.session.header()->sequence.load(std::memory_order_relaxed);
    return 0;
  }
  return g_checkpoints.Find(checkpoint, sequence) ? 0 : 1;
}

HEAPGRAPH_API int heapgraph_internal_ignore_thread(int ignore) {
  int before = t_state.ignored ? 1 : 0;
  t_state.ignored = ignore != 0;
  return before;
}

HEAPGRAPH_API int heapgraph_internal_begin_check(uint64_t program_stack_pointer) {
  return CheckLock::Acquire(program_stack_pointer) ? 0 : -1;
}

HEAPGRAPH_API void heapgraph_internal_end_check(void) {
  CheckLock::Release();
}

HEAPGRAPH_API int heapgraph_internal_begin_snapshot(HeapgraphRecorderView* view) {
  ApplyOwnQueue();  // other threads' queues: the check reads them (deferred_queues)
  uint32_t mode = SettleMode();
  if (!Recording(mode)) return -1;
  g.guard_before_snapshot = t_state.guard;
  t_state.guard = true;
  LockWait::Open(LockWait::Window());  // waits from here on are this check's
  g.modules.Lock();
  g.heap.LockAll();
  g.vm.LockAll();
  view->heap = &g.heap;
  view->vm = &g.vm;
  view->recording_dir = g.directory.path();
  view->recording = mode == kActive ? 1 : 0;
  view->sample_mean = g.config.sample_mean;
  view->unwinder = &g_unwinder;
  StaticTlsArea state = StaticTlsArea::Of(&t_state, sizeof(t_state));
  view->thread_state_offset = state.offset();
  view->thread_state_size = state.size();
  view->heap_tree_fd = g.heap.file().OwnFd();
  view->stacks_fd = g.stacks.file().OwnFd();
  view->modules_fd = g.modules.file().OwnFd();
  view->session_fd = g.session.file().OwnFd();
  view->check_entrants = CheckEntrants::Slots();
  view->check_entrant_slots = CheckEntrants::kSlots;
  view->stacks = &g.stacks;
  view->root_regions = RootRegions::Slots();
  view->root_region_slots = RootRegions::kSlots;
  view->suppressions = g.config.suppressions;
  view->symbol_cache = g.config.symbol_cache;
  view->max_leaks = g.config.max_leaks;
  view->categories = g.config.leak_categories ? 1 : 0;
  view->preview_bytes = g.config.leak_preview;
  view->lock_waits = &LockWait::Window();
  view->own_data = OwnLibraryData::Ranges(&view->own_data_ranges);
  view->deferred_queues = DeferredFrees::Slots();
  view->deferred_queue_slots = DeferredFrees::kSlots;
  return 0;
}

HEAPGRAPH_API void heapgraph_internal_end_snapshot(void) {
  g.vm.UnlockAll();
  g.heap.UnlockAll();
  g.modules.Unlock();
  t_state.guard = g.guard_before_snapshot;
}

}  // extern "C"

namespace {

// Changes whenever the program allocates or frees (a hash of the sequence and the live totals);
// read without locks: a torn sum is just another value that differs.
uint64_t AllocationProgress() {
  uint64_t sequence = g.session.header()->sequence.load(std::memory_order_relaxed);
  return sequence ^ (g.heap.LiveCount() * 0x9E3779B97F4A7C15ull) ^ (g.heap.LiveBytes() << 1);
}

// Before the at-exit check heapgraph's own threads end (no heartbeat or pressure reading is due
// any more), so that a program that has no other thread left is checked without stopping one
// (docs/performance.md). The leak-check signal's thread, started by a signal, stays.
bool AtExitCheckStopsToolThreads() {
  return g.config.leak_check_at_exit && g.config.detect_leaks;
}

// `wait` false: only asks them to end (they end while the check gets ready); true: joins them.
void StopToolThreads(bool wait) {
  if (!wait) {
    SessionMonitor::RequestStop();
    PressureWatcher::RequestStop();
    return;
  }
  (void)SessionMonitor::Stop();
  (void)PressureWatcher::Stop();
}

// The session's signal handler and tool thread (FOOM dumps: docs/foom-report.md).
void StartSessionRecord() {
  if (g.config.signals) FatalSignalHandler::Install(&g.session);
  SessionMonitor::Settings settings;
  settings.session = &g.session;
  // A process of a `heapgraph run` (run_tag) leaves the root's dump retention to the run: its
  // summary reads the verdicts of every process of the run when it ends, and a start that scanned
  // a root holding all of them would cost each process of a long run in proportion to the run.
  settings.root_fd = g.config.run_tag == 0 ? g.directory.root_fd() : -1;
  settings.own_name = g.directory.name();
  settings.executable = g.session.header()->executable;
  settings.keep = g.config.keep;
  settings.interval_ms = g.config.heartbeat_ms;
  settings.on_thread_start = &MarkToolThread;
  settings.allocation_progress = &AllocationProgress;
  settings.wake_fd = LeakCheckTrigger::SignalFd();
  settings.on_wake = &LeakCheckTrigger::StartSignalWatcher;
  settings.stoppable = AtExitCheckStopsToolThreads();
  if (!SessionMonitor::Start(settings)) {
    WarningLine::Print("cannot start the session thread; no heartbeat or dump retention");
    LeakCheckTrigger::StartSignalWatcher();
  }
}

__attribute__((constructor(101))) void StartRecorder() {
  GuardScope guard;
  if (!Recording(SettleMode())) return;
  LeakCheckTrigger::Install(g.config, g.directory.path(), &StopToolThreads);
  StartSessionRecord();
  PressureWatcher::Install(g.config, {g.directory.fd(), &g.heap, &g.vm, g.session.header()},
                           AtExitCheckStopsToolThreads());
}

__attribute__((destructor(101))) void StopRecorder() {
  ApplyOwnQueue();
  SettleForkedChild();
  if (Recording(g.mode.load(std::memory_order_acquire))) g.session.MarkExited();
}

}  // namespace
