#include "heap/session/SessionFile.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "heap/platform/ProcessStartTicks.h"
#include "heap/session/ExitEvidenceProbe.h"
#include "heap/session/OomCounter.h"

namespace heapgraph {
namespace {

template <typename T>
void Store(T& field, T value) {
  std::atomic_ref<T>(field).store(value, std::memory_order_relaxed);
}

template <typename T>
T Load(T& field) {
  return std::atomic_ref<T>(field).load(std::memory_order_relaxed);
}

uint64_t Now(clockid_t clock) {
  struct timespec now;
  clock_gettime(clock, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace

bool SessionFile::Create(int dir_fd, uint32_t max_depth, uint64_t first_sequence,
                         uint32_t heartbeat_interval_ms, uint32_t hang_threshold_ms) {
  if (!file_.Create(dir_fd, format::kSessionFile, format::kPageSize) ||
      !file_.Reserve(0, format::kPageSize)) {
    return false;
  }
  static_assert(sizeof(format::SessionHeader) <= format::kPageSize);
  header_ = reinterpret_cast<format::SessionHeader*>(file_.data());
  header_->pid = getpid();
  header_->max_depth = max_depth;
  header_->start_time_ns = Now(CLOCK_REALTIME);
  header_->boot_time_ticks = ProcessStartTicks::OfSelf();
  ssize_t n = readlink("/proc/self/exe", header_->executable, format::kMaxModulePath - 1);
  header_->executable[n > 0 ? n : 0] = '\0';
  header_->sequence.store(first_sequence, std::memory_order_relaxed);
  header_->state.store(format::kSessionRecording, std::memory_order_relaxed);
  format::SessionRecord& r = header_->record;
  r.start_boottime_ns = Now(CLOCK_BOOTTIME);
  ExitEvidenceProbe::ReadBootId(r.boot_id);
  r.heartbeat_interval_ms = heartbeat_interval_ms;
  r.hang_threshold_ms = hang_threshold_ms;
  OomCounter::FindPath(0, r.oom_counter_path, sizeof(r.oom_counter_path));
  r.oom_kills_at_start = OomCounter::Read(r.oom_counter_path);
  r.oom_kills_at_heartbeat = r.oom_kills_at_start;
  last_progress_ = UINT64_MAX;
  header_->file.version = format::kSessionVersion;
  header_->file.header_size = sizeof(format::SessionHeader);
  memcpy(header_->file.magic, format::kSessionMagic, sizeof(header_->file.magic));
  return true;
}

void SessionFile::SetExecutableBuildId(const uint8_t* id, uint32_t length) {
  if (header_ == nullptr) return;
  if (length > format::kMaxBuildId) length = format::kMaxBuildId;
  memcpy(header_->record.exe_build_id, id, length);
  header_->record.exe_build_id_len = length;
}

void SessionFile::SetRunTag(uint32_t tag) {
  if (header_ != nullptr) header_->run_tag = tag;
}

bool SessionFile::OwnedByThisProcess() const {
  // getpid() is a system call in glibc >= 2.25; a vfork child shares this mapping but not the pid.
  return header_ != nullptr && static_cast<int32_t>(syscall(SYS_getpid)) == header_->pid;
}

void SessionFile::MarkExited() {
  if (!OwnedByThisProcess()) return;
  uint32_t none = format::kExitNone;
  std::atomic_ref<uint32_t>(header_->record.exit_kind)
      .compare_exchange_strong(none, format::kExitDestructor);
  header_->state.store(format::kSessionExited, std::memory_order_release);
}

void SessionFile::RecordExit(format::ExitKind kind, int status) {
  if (!OwnedByThisProcess()) return;
  Store(header_->record.exit_status, static_cast<int32_t>(status));
  Store(header_->record.exit_kind, static_cast<uint32_t>(kind));
  header_->state.store(format::kSessionExited, std::memory_order_release);
}

void SessionFile::RecordSignal(int signal, int code, uint64_t address) {
  if (!OwnedByThisProcess()) return;
  format::SessionRecord& r = header_->record;
  uint32_t none = 0;
  // Claim first: a later signal must not overwrite the first one's details.
  if (!std::atomic_ref<uint32_t>(r.fatal_signal)
           .compare_exchange_strong(none, static_cast<uint32_t>(signal))) {
    return;
  }
  signal_tid_.store(static_cast<int32_t>(syscall(SYS_gettid)), std::memory_order_release);
  Store(r.fatal_code, static_cast<int32_t>(code));
  Store(r.fatal_address, address);
  Store(r.fatal_boottime_ns, Now(CLOCK_BOOTTIME));
}

void SessionFile::ClearSignal(int signal) {
  if (!OwnedByThisProcess()) return;
  // Only the thread that recorded the signal forgets it: another thread's handled signal must
  // not erase this one.
  int32_t self = static_cast<int32_t>(syscall(SYS_gettid));
  if (signal_tid_.load(std::memory_order_acquire) != self) return;
  signal_tid_.store(0, std::memory_order_relaxed);
  uint32_t expected = static_cast<uint32_t>(signal);
  std::atomic_ref<uint32_t>(header_->record.fatal_signal).compare_exchange_strong(expected, 0);
}

void SessionFile::SetAppState(format::AppState state) {
  if (header_ != nullptr) Store(header_->record.app_state, static_cast<uint32_t>(state));
}

void SessionFile::CountAppHeartbeat() {
  if (header_ != nullptr) {
    std::atomic_ref<uint64_t>(header_->record.app_heartbeats)
        .fetch_add(1, std::memory_order_relaxed);
  }
}

void SessionFile::Beat(uint64_t allocation_progress, bool read_cgroup) {
  if (header_ == nullptr) return;
  format::SessionRecord& r = header_->record;
  uint64_t now = Now(CLOCK_BOOTTIME);
  uint64_t app = Load(r.app_heartbeats);
  if (allocation_progress == UINT64_MAX) {
    allocation_progress = header_->sequence.load(std::memory_order_relaxed);
  }
  uint64_t progress = app != 0 ? app : allocation_progress;
  if (progress != last_progress_) {
    last_progress_ = progress;
    Store(r.progress_boottime_ns, now);
  }
  if (read_cgroup) {
    char path[format::kCounterPath];
    if (OomCounter::FindPath(0, path, sizeof(path)) && strcmp(path, r.oom_counter_path) != 0) {
      memcpy(r.oom_counter_path, path, sizeof(path));  // the process moved to another cgroup
    }
    Store(r.oom_kills_at_heartbeat, OomCounter::Read(r.oom_counter_path));
  }
  Store(r.heartbeat_realtime_ns, Now(CLOCK_REALTIME));
  Store(r.heartbeat_boottime_ns, now);
  Store(r.heartbeat_count, Load(r.heartbeat_count) + 1);
}

uint64_t SessionFile::TakeSequenceBlock() {
  return header_->sequence.fetch_add(kSequenceBlock, std::memory_order_relaxed);
}

}  // namespace heapgraph
