#include "heap/lag/LagWatchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <new>

#include "heap/lag/CostlyStack.h"
#include "heap/platform/EhFrameRules.h"
#include "heap/platform/ToolThread.h"
#include "heap/platform/WarningLine.h"

namespace heapgraph {
namespace {

alignas(LagWatchdog) unsigned char g_storage[sizeof(LagWatchdog)];
std::atomic<bool> g_started{false};
// What the signal handler needs, set before the handler is installed.
uint32_t (*g_sample)(uintptr_t, uintptr_t, uintptr_t*) = nullptr;
uint32_t g_ring = 1;
uintptr_t g_restorer = 0;  // the signal trampoline glibc installed with our handler

uint64_t Now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

// The per-thread CPU clock of `tid` (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)):
// clock_gettime fails with EINVAL once the thread is gone, unlike pthread_getcpuclockid.
bool ThreadCpuNs(pid_t tid, uint64_t* out) {
  clockid_t clock = static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 4 | 2);
  struct timespec t;
  if (clock_gettime(clock, &t) != 0) return false;
  *out = static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
  return true;
}

bool Signal(pid_t tid, int signal) {
  return syscall(SYS_tgkill, getpid(), tid, signal) == 0;
}

// The start of the function containing `ip` (its FDE's), so that samples anywhere in one
// function share a top frame; `ip` itself when the unwind tables do not know it.
uintptr_t FunctionStart(uintptr_t ip) {
  uintptr_t begin = 0, end = 0;
  return EhFrameRules::FunctionRange(ip, &begin, &end) ? begin : ip;
}

void Complain(const char* what, const char* detail) {
  WarningLine().Append("lag monitor: ").Append(what).AppendDetail(detail).Write();
}

}  // namespace

LagWatchdog::LagWatchdog(const Settings& settings) : settings_(settings) {}

void LagWatchdog::BeginWork(const Settings& settings) {
  if (MonitoredThreads::BeginWork() && !g_started.load(std::memory_order_acquire)) {
    Start(settings);
  }
}

void LagWatchdog::EndWork() {
  MonitoredThreads::EndWork();
}

void LagWatchdog::Start(const Settings& settings) {
  if (g_started.exchange(true, std::memory_order_acq_rel)) return;
  auto* self = new (g_storage) LagWatchdog(settings);
  if (!self->OpenFile()) {
    Complain("cannot create the lag file", strerror(errno));
    return;
  }
  self->sampling_ = self->InstallHandler();
  int error = ToolThread::Start(&LagWatchdog::Main, self);
  if (error != 0) Complain("cannot start its thread", strerror(error));
}

bool LagWatchdog::InstallHandler() {
  const Config& c = *settings_.config;
  if (c.lag_sample_ms == 0 || c.lag_signal == 0 || settings_.sample == nullptr) return false;
  struct sigaction old;
  if (sigaction(static_cast<int>(c.lag_signal), nullptr, &old) != 0) return false;
  if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) {
    Complain("the program handles lag_signal itself", "no stack sampling");
    return false;
  }
  g_sample = settings_.sample;
  g_ring = c.lag_ring;
  struct sigaction action = {};
  action.sa_sigaction = &LagWatchdog::OnSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(static_cast<int>(c.lag_signal), &action, nullptr) != 0) return false;
  struct sigaction installed;
  sigaction(static_cast<int>(c.lag_signal), nullptr, &installed);
  g_restorer = reinterpret_cast<uintptr_t>(installed.sa_restorer);
  return true;
}

void LagWatchdog::OnSignal(int, siginfo_t*, void*) {
  int saved_errno = errno;
  MonitoredThread* slot = MonitoredThreads::CurrentIfClaimed();
  if (slot != nullptr) {
    uintptr_t top = 0;
    // __restore_rt is a few instructions long; its frame is the handler's caller.
    uint32_t stack = g_sample(g_restorer, g_restorer + 16, &top);
    if (stack != 0) MonitoredThreads::Push(*slot, g_ring, stack, top);
    slot->pending.store(0, std::memory_order_release);
  }
  errno = saved_errno;
}

bool LagWatchdog::OpenFile() {
  int fd = openat(settings_.dir_fd, format::kLagFile,
                  O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (!file_.Adopt(fd)) return false;
  const Config& c = *settings_.config;
  format::LagHeader h = {};
  memcpy(h.file.magic, format::kLagMagic, sizeof(h.file.magic));
  h.file.version = 1;
  h.file.header_size = sizeof(h);
  h.record_size = sizeof(format::LagRecord);
  h.interval_ms = c.lag_interval_ms;
  h.threshold_ms = c.lag_threshold_ms;
  h.sample_ms = c.lag_sample_ms;
  h.ring = c.lag_ring;
  h.cpu_percent = c.lag_cpu_percent;
  return write(file_.fd(), &h, sizeof(h)) == static_cast<ssize_t>(sizeof(h));
}

void* LagWatchdog::Main(void* self) {
  auto* watchdog = static_cast<LagWatchdog*>(self);
  if (watchdog->settings_.on_thread_start != nullptr) watchdog->settings_.on_thread_start();
  watchdog->Loop();
  return nullptr;
}

void LagWatchdog::Loop() {
  const Config& c = *settings_.config;
  uint64_t interval = uint64_t{c.lag_interval_ms} * 1000000;
  uint64_t tick = sampling_ && c.lag_sample_ms < c.lag_interval_ms
                      ? uint64_t{c.lag_sample_ms} * 1000000
                      : interval;
  uint64_t last_check = Now(CLOCK_MONOTONIC);
  while (file_.fd() >= 0) {
    struct timespec pause = {static_cast<time_t>(tick / 1000000000),
                             static_cast<long>(tick % 1000000000)};
    nanosleep(&pause, nullptr);
    uint64_t now = Now(CLOCK_MONOTONIC);
    if (sampling_) SampleRunning(now);
    if (now - last_check + tick / 2 >= interval) {
      Check(now, now - last_check);
      last_check = now;
    }
  }
}

// Sends the sampling signal to each thread whose unit has run for two periods or more.
void LagWatchdog::SampleRunning(uint64_t now) {
  const Config& c = *settings_.config;
  uint64_t after = uint64_t{c.lag_sample_ms} * 2000000;
  for (uint32_t i = 0; i < MonitoredThreads::kMaxThreads; ++i) {
    MonitoredThread& t = MonitoredThreads::At(i);
    pid_t tid = t.tid.load(std::memory_order_acquire);
    uint64_t begin = t.begin_ns.load(std::memory_order_acquire);
    if (tid <= 0 || begin == 0 || now < begin + after) continue;  // also a unit begun since now
    ThreadState& s = state_[i];
    uint64_t unit = t.unit.load(std::memory_order_relaxed);
    if (s.missed_unit != unit) {  // counted per unit, from its first sampling period
      s.missed_unit = unit;
      s.missed = 0;
    }
    if (t.pending.load(std::memory_order_acquire) != 0) {
      ++s.missed;  // blocked, or still in the handler: never a second one queued
      continue;
    }
    t.pending.store(1, std::memory_order_release);
    if (!Signal(tid, static_cast<int>(c.lag_signal))) t.pending.store(0);
  }
}

void LagWatchdog::Check(uint64_t now, uint64_t elapsed_ns) {
  for (uint32_t i = 0; i < MonitoredThreads::kMaxThreads; ++i) CheckThread(i, now, elapsed_ns);
}

void LagWatchdog::CheckThread(uint32_t index, uint64_t now, uint64_t elapsed_ns) {
  const Config& c = *settings_.config;
  MonitoredThread& t = MonitoredThreads::At(index);
  ThreadState& s = state_[index];
  pid_t tid = t.tid.load(std::memory_order_acquire);
  if (tid <= 0) return;  // free, or being claimed
  uint64_t cpu = 0;
  if (!ThreadCpuNs(tid, &cpu)) {  // the thread is gone
    // It exited during a lag: the lag ended with it (not in progress at the process's death).
    if (s.reported_unit != 0) {
      Write(format::kLagEnded, index, s.reported_unit,
            MonitoredThreads::WatchedDuration(t, s.reported_unit), 0, false);
    }
    MonitoredThreads::Release(t);
    s = ThreadState();
    return;
  }
  uint64_t begin = t.begin_ns.load(std::memory_order_acquire);
  uint64_t unit = t.unit.load(std::memory_order_relaxed);
  if (s.reported_unit != 0 && (begin == 0 || unit != s.reported_unit)) {
    uint64_t duration = MonitoredThreads::WatchedDuration(t, s.reported_unit);
    Write(format::kLagEnded, index, s.reported_unit, duration, 0, false);
    s.reported_unit = 0;
    s.lag.Reset();
  }
  uint32_t permille = 0;
  if (s.cpu_ns != 0 && elapsed_ns != 0) {
    permille = static_cast<uint32_t>((cpu - s.cpu_ns) * 1000 / elapsed_ns);
  }
  s.cpu_ns = cpu;
  if (begin != 0 && now > begin && now - begin >= uint64_t{c.lag_threshold_ms} * 1000000) {
    if (s.reported_unit != unit) {
      s.lag.Reset();
      MonitoredThreads::Watch(t, unit);
    }
    s.reported_unit = unit;
    if (s.lag.Due()) Write(format::kLagLong, index, unit, now - begin, permille, true);
  } else if (c.lag_cpu_percent != 0 && permille > c.lag_cpu_percent * 10) {
    uint64_t running = begin != 0 && now > begin ? now - begin : 0;
    if (s.cpu.Due()) Write(format::kLagCpu, index, unit, running, permille, true);
  } else {
    s.cpu.Reset();
  }
}

void LagWatchdog::Write(uint32_t kind, uint32_t index, uint64_t unit, uint64_t duration_ns,
                        uint32_t cpu_permille, bool with_stack) {
  MonitoredThread& t = MonitoredThreads::At(index);
  ThreadState& s = state_[index];
  format::LagRecord r = {};
  r.tag = format::kLagRecordTag;
  r.kind = kind;
  r.realtime_ns = Now(CLOCK_REALTIME);
  r.duration_ns = duration_ns;
  r.unit = unit;
  r.tid = t.tid.load(std::memory_order_relaxed);
  r.cpu_permille = cpu_permille;
  r.samples_missed = s.missed_unit == unit ? s.missed : 0;
  if (with_stack) {
    CostlySample samples[format::kMaxLagSamples];
    uint64_t written = t.written.load(std::memory_order_acquire);
    uint32_t ring = settings_.config->lag_ring;
    uint64_t first = written > ring ? written - ring : 0;
    for (uint64_t n = first; n < written; ++n) {
      const LagSample& sample = t.ring[n % ring];
      if (sample.unit.load(std::memory_order_relaxed) != unit) continue;
      samples[r.sample_count] = {sample.stack.load(std::memory_order_relaxed),
                                 FunctionStart(sample.top.load(std::memory_order_relaxed))};
      r.samples[r.sample_count] = samples[r.sample_count].stack;
      ++r.sample_count;
    }
    CostlyChoice choice = CostlyStack::Choose(samples, r.sample_count);
    Annealing& annealing = kind == format::kLagCpu ? s.cpu : s.lag;
    if (!annealing.ShouldWrite(choice.stack)) return;
    r.stack = choice.stack;
    r.stack_repeats = choice.repeats;
  }
  r.check = format::LagCheck(r);
  if (!file_.StillOurs()) {
    file_.Abandon();  // the host closed and reused the number: stop
    return;
  }
  if (write(file_.fd(), &r, sizeof(r)) != static_cast<ssize_t>(sizeof(r))) file_.Abandon();
}

}  // namespace heapgraph
