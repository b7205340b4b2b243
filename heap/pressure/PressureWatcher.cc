#include "heap/pressure/PressureWatcher.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include "heap/platform/ToolThread.h"
#include "heap/platform/WarningLine.h"
#include "heap/plugin/ScanInterface.h"
#include "heap/plugin/ScanPlugin.h"

namespace heapgraph {
namespace {

uint64_t Now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

void Complain(const char* what, const char* detail) {
  WarningLine()
      .Append("memory-pressure watcher: ")
      .Append(what)
      .AppendDetail(detail)
      .Append("; not watching")
      .Write();
}

bool WriteAll(int fd, struct iovec* parts, int count) {
  // One writev per entry: a kill leaves at most this entry short.
  return writev(fd, parts, count) >= 0;
}

alignas(PressureWatcher) unsigned char g_storage[sizeof(PressureWatcher)];
PressureWatcher* g_watcher = nullptr;  // once its thread started

}  // namespace

PressureWatcher::PressureWatcher(const Config& config, const Recording& recording)
    : config_(config), recording_(recording) {
  for (uint32_t i = 0; i < config.watermark_count; ++i) armed_[i] = true;
}

void PressureWatcher::Install(const Config& config, const Recording& recording, bool stoppable) {
  if (config.watch == Config::kWatchOff) return;
  // Constructed once in static storage (the recorder never allocates on its own behalf).
  auto* self = new (g_storage) PressureWatcher(config, recording);
  self->limit_.Discover(config.memory_limit);
  if (!self->limit_.HasLimit()) {
    if (config.watch == Config::kWatchOn) {
      Complain("no limit to watch", "set memory_limit= or run in a cgroup v2 with memory.max");
    }
    return;
  }
  if (!self->totals_.Map() || !self->OpenFile()) {
    Complain("cannot create the pressure file", strerror(errno));
    return;
  }
  int error =
      ToolThread::Start(&PressureWatcher::Main, self, 0, stoppable ? &self->stop_ : nullptr);
  if (error != 0) {
    Complain("cannot start its thread", strerror(error));
    return;
  }
  g_watcher = self;
}

void PressureWatcher::RequestStop() {
  if (g_watcher != nullptr) (void)g_watcher->stop_.Request();
}

bool PressureWatcher::Stop() {
  return g_watcher != nullptr && g_watcher->stop_.Stop(kStopWaitMs);
}

bool PressureWatcher::OpenFile() {
  if (!file_.Adopt(openat(recording_.dir_fd, format::kPressureFile,
                          O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600))) {
    return false;
  }
  format::PressureHeader h = {};
  memcpy(h.file.magic, format::kPressureMagic, sizeof(h.file.magic));
  h.file.version = 1;
  h.file.header_size = sizeof(h);
  h.record_size = sizeof(format::PressureRecord);
  h.category_size = sizeof(format::CategoryTotal);
  h.configured_limit = config_.memory_limit;
  // PSI is armed after kPsiDelayMs: the header names it when it can be.
  h.sources =
      limit_.sources() | (limit_.PressureTriggerPossible() ? uint32_t{MemoryLimit::kPsi} : 0u);
  h.watermark_count = config_.watermark_count;
  memcpy(h.watermarks, config_.watermarks, sizeof(h.watermarks));
  h.sample_mean = config_.sample_mean;
  size_t length = strnlen(limit_.cgroup_dir(), sizeof(h.cgroup_dir) - 1);
  memcpy(h.cgroup_dir, limit_.cgroup_dir(), length);  // truncated if longer; NUL from = {}
  return write(file_.fd(), &h, sizeof(h)) == static_cast<ssize_t>(sizeof(h));
}

void* PressureWatcher::Main(void* self) {
  heapgraph_internal_ignore_thread(1);
  static_cast<PressureWatcher*>(self)->Loop();
  return nullptr;
}

void PressureWatcher::Loop() {
  start_ns_ = Now(CLOCK_MONOTONIC);
  stop_fd_ = stop_.fd();
  while (file_.fd() >= 0) {
    ArmPsiWhenDue();
    const uint32_t trigger = Wait();
    if (trigger == kStopped) return;
    Check(trigger);
  }
}

void PressureWatcher::ArmPsiWhenDue() {
  if (psi_tried_ || Now(CLOCK_MONOTONIC) - start_ns_ < kPsiDelayMs * 1000000ull) return;
  psi_tried_ = true;
  limit_.ArmPressureTrigger();
}

uint32_t PressureWatcher::Wait() {
  int timeout = static_cast<int>(config_.watch_interval_ms);
  // A negative descriptor is not watched: no PSI trigger, or not stoppable.
  struct pollfd p[2] = {{limit_.pressure_fd(), POLLPRI, 0}, {stop_fd_, POLLIN, 0}};
  int n = poll(p, 2, timeout);
  if (n > 0 && (p[1].revents & POLLIN) != 0) return kStopped;
  if (n > 0 && p[1].revents != 0) stop_fd_ = -1;  // closed by the program: never stopped
  return n > 0 && (p[0].revents & POLLPRI) != 0 ? format::kTriggerPsi : format::kTriggerPoll;
}

void PressureWatcher::Check(uint32_t trigger) {
  MemoryReading reading = limit_.Read();
  uint32_t percent = limit_.Percent(reading);
  uint32_t crossed[format::kMaxWatermarks];
  uint32_t count = 0;
  for (uint32_t i = 0; i < config_.watermark_count; ++i) {
    uint32_t mark = config_.watermarks[i];
    if (armed_[i] && percent >= mark) {
      armed_[i] = false;
      crossed[count++] = mark;
    } else if (!armed_[i] && percent + kRearmPercent < mark) {
      armed_[i] = true;
    }
  }
  if (count != 0) WriteEntries(reading, percent, trigger, crossed, count);
}

void PressureWatcher::CollectTotals() {
  totals_.Clear();
  totals_.AddHeapTree(*recording_.heap);
  totals_.SetVm(recording_.vm->LiveCount(), recording_.vm->LiveBytes());
}

// Every watermark crossed by this reading gets its own entry; the totals and the types are read
// once (the last, highest entry carries the refresh time).
void PressureWatcher::WriteEntries(const MemoryReading& reading, uint32_t percent, uint32_t trigger,
                                   const uint32_t* crossed, uint32_t count) {
  uint64_t begin = Now(CLOCK_MONOTONIC);
  CollectTotals();
  bool overflowed = totals_.overflowed();
  uint32_t categories = 0;
  const format::CategoryTotal* table = totals_.Pack(&categories);
  bool types = RefreshTypes();
  format::PressureRecord r = {};
  r.tag = format::kPressureRecordTag;
  r.percent = percent;
  r.trigger = trigger;
  r.realtime_ns = Now(CLOCK_REALTIME);
  r.elapsed_ns = begin - start_ns_;
  r.limit = limit_.EffectiveLimit(reading);
  r.rss = reading.rss;
  r.cgroup_current = reading.cgroup_current;
  r.cgroup_max = reading.cgroup_max;
  r.oom_events = reading.oom_events;
  r.oom_kills = reading.oom_kills;
  r.heap_blocks = totals_.heap_count();
  r.heap_bytes = totals_.heap_bytes();
  r.vm_blocks = recording_.vm->LiveCount();
  r.vm_bytes = recording_.vm->LiveBytes();
  r.sequence = recording_.session->sequence.load(std::memory_order_relaxed);
  r.category_count = categories;
  r.other_sizes = overflowed ? 1 : 0;
  r.types_written = types ? 1 : 0;
  if (!file_.StillOurs()) {  // the host closed the number (and maybe reused it)
    Complain("the pressure file's descriptor was closed or reused by the program", nullptr);
    file_.Abandon();
    return;
  }
  for (uint32_t i = 0; i < count; ++i) {
    r.watermark = crossed[i];
    r.refresh_ns = Now(CLOCK_MONOTONIC) - begin;
    struct iovec parts[2] = {
        {&r, sizeof(r)},
        {const_cast<format::CategoryTotal*>(table), categories * sizeof(format::CategoryTotal)}};
    WriteAll(file_.fd(), parts, 2);
  }
}

bool PressureWatcher::RefreshTypes() {
  static HeapgraphRefreshTypesFn refresh = nullptr;
  static bool looked = false;
  if (!looked) {
    looked = true;
    refresh = ScanPlugin::RefreshTypes();
  }
  if (refresh == nullptr) return false;
  HeapgraphTypeRefresh request = {recording_.heap, recording_.dir_fd,
                                  recording_.session->sequence.load(std::memory_order_relaxed),
                                  config_.sample_mean};
  return refresh(&request) >= 0;
}

}  // namespace heapgraph
