#include "heap/session/DumpRetention.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "heap/platform/LineBuffer.h"
#include "heap/session/ExitEvidenceProbe.h"
#include "heap/store/MappedFile.h"
#include "heap/store/RecordingDirectory.h"

namespace heapgraph {
namespace {

struct FinishedRun {
  char name[256];
  uint64_t start_time_ns;
  uint32_t executable;  // index into g_executables
};

// Run's scratch, too large for a tool thread's stack: one tool thread per process runs it, once.
// Not function-local statics: their guards were libheapgraph.so's only use of libstdc++
// (heap/CMakeLists.txt links what it uses statically). constinit: initialized at compile time,
// never by a dynamic initializer. The session thread that runs this starts in the recorder's
// constructor(101), before the library's default-priority initializers; a dynamic initializer of
// g_session (the zeroing of its atomics) then ran in the main thread while that thread read a
// finished run's session into it, and the run read as still alive (`state` 0): it was neither
// classified nor pruned (RecorderFoomTest.NextStartClassifiesEarlierRunsAndKeepsTheLastK failed
// in 1 run of 4).
constinit FinishedRun g_runs[DumpRetention::kMaxRuns] = {};
constinit format::SessionHeader g_session = {};
// The executables of g_runs, each once (one entry unless Run is asked for every executable).
constinit char g_executables[DumpRetention::kMaxRuns][format::kMaxModulePath] = {};

// The index of `executable` in g_executables[0, *count), added if new.
uint32_t ExecutableIndex(const char* executable, uint32_t* count) {
  for (uint32_t i = 0; i < *count; ++i) {
    if (strcmp(g_executables[i], executable) == 0) return i;
  }
  size_t length = strnlen(executable, format::kMaxModulePath - 1);
  memcpy(g_executables[*count], executable, length);
  g_executables[*count][length] = '\0';
  return (*count)++;
}

// How many runs before runs[i] (newer ones, once sorted) are of the same executable.
size_t NewerOfTheSameExecutable(const FinishedRun* runs, size_t i) {
  size_t n = 0;
  for (size_t j = 0; j < i; ++j) n += runs[j].executable == runs[i].executable ? 1 : 0;
  return n;
}

bool ReadExact(int fd, void* out, size_t length) {
  ssize_t n = pread(fd, out, length, 0);
  return n >= 0 && static_cast<size_t>(n) == length;
}

bool HasFile(int dir_fd, const char* name) {
  struct stat st;
  return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

uint64_t RealtimeNs() {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

// Newest first (insertion sort: at most kMaxRuns entries, once per process start).
void SortNewestFirst(FinishedRun* runs, size_t count) {
  for (size_t i = 1; i < count; ++i) {
    FinishedRun r = runs[i];
    size_t j = i;
    for (; j > 0 && runs[j - 1].start_time_ns < r.start_time_ns; --j) runs[j] = runs[j - 1];
    runs[j] = r;
  }
}

bool WriteExitFile(int dir_fd, const ExitClassification& c) {
  LineBuffer text;
  DumpRetention::Format(c, RealtimeNs(), getpid(), &text);
  unlinkat(dir_fd, "exit.tmp", 0);
  int fd = openat(dir_fd, "exit.tmp", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok && renameat(dir_fd, "exit.tmp", dir_fd, format::kExitFile) == 0;
}

// One level: a recording directory holds only files.
bool RemoveContentsAndDirectory(int root_fd, const char* name) {
  int fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return false;
  }
  while (dirent* e = readdir(dir)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(fd, e->d_name, 0);
  }
  closedir(dir);
  return unlinkat(root_fd, name, AT_REMOVEDIR) == 0;
}

bool IsBeingRemoved(const char* name) {
  return strncmp(name, DumpRetention::kRemovingPrefix, strlen(DumpRetention::kRemovingPrefix)) == 0;
}

// The recorder's mapped files, which a new recording can take over (MappedFile::kReusePrefix).
bool IsReusable(const char* name) {
  for (const char* reusable : {format::kHeapTreeFile, format::kVmTreeFile, format::kStackFile,
                               format::kModuleFile, format::kSessionFile}) {
    if (strcmp(name, reusable) == 0) return true;
  }
  return false;
}

bool IsParked(const char* name) {
  return strncmp(name, MappedFile::kReusePrefix, sizeof(MappedFile::kReusePrefix) - 1) == 0;
}

// Empties a reusable file (its blocks freed, its inode kept) and parks it; false when it is not
// one, is shared with another recording (a forked child's stack table) or cannot be.
bool ParkFile(int dir_fd, const char* name) {
  if (!IsReusable(name)) return false;
  int fd = openat(dir_fd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
            ftruncate(fd, 0) == 0;
  if (fd >= 0) close(fd);
  LineBuffer parked;
  parked.Append(MappedFile::kReusePrefix).Append(name).AppendChar('\0');
  return ok && renameat2(dir_fd, name, dir_fd, parked.data(), RENAME_NOREPLACE) == 0;
}

// Turns the hidden directory of a pruned run into a spare (RecordingDirectory::kSparePrefix):
// reusable files parked empty, everything else removed, then renamed into a free slot. False
// (the caller removes it) when no slot is free or anything could not be cleared: a spare never
// holds a file a new recording would collide with.
bool ParkAsSpare(int root_fd, const char* hidden) {
  int fd = openat(root_fd, hidden, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return false;
  }
  bool clear = true;
  while (dirent* e = readdir(dir)) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || IsParked(e->d_name)) {
      continue;
    }
    if (!ParkFile(fd, e->d_name) && unlinkat(fd, e->d_name, 0) != 0) clear = false;
  }
  closedir(dir);
  for (uint32_t slot = 0; clear && slot < RecordingDirectory::kSpareSlots; ++slot) {
    LineBuffer spare;
    spare.Append(RecordingDirectory::kSparePrefix).AppendDecimal(slot).AppendChar('\0');
    if (renameat2(root_fd, hidden, root_fd, spare.data(), RENAME_NOREPLACE) == 0) return true;
  }
  return false;
}

// Renames the run out of sight first, so that a process that exits (or is killed) halfway
// through leaves no run without its session behind, only a hidden directory the next start
// finishes removing (or a spare for the next recording). A concurrent start that renamed it
// first wins; this one removes nothing.
bool RemoveRun(int root_fd, const char* name) {
  char hidden[sizeof(FinishedRun::name) + 16];
  size_t prefix = strlen(DumpRetention::kRemovingPrefix);
  size_t length = strlen(name);
  if (prefix + length >= sizeof(hidden)) return false;
  memcpy(hidden, DumpRetention::kRemovingPrefix, prefix);
  memcpy(hidden + prefix, name, length + 1);
  if (renameat(root_fd, name, root_fd, hidden) != 0) return false;
  if (!ParkAsSpare(root_fd, hidden)) RemoveContentsAndDirectory(root_fd, hidden);
  return true;
}

// True when `tag` names a `heapgraph run` in progress.
bool Busy(uint32_t tag, std::span<const uint32_t> busy_tags) {
  for (uint32_t busy : busy_tags) {
    if (tag != 0 && tag == busy) return true;
  }
  return false;
}

}  // namespace

bool DumpRetention::ReadSession(int dir_fd, format::SessionHeader* out, bool* has_record) {
  // Non-blocking and regular only: a FIFO or device planted as `session` must not hang the
  // program's start (nor `heapgraph foom --root`).
  int fd = openat(dir_fd, format::kSessionFile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return false;
  }
  memset(static_cast<void*>(out), 0, sizeof(*out));
  bool ok = ReadExact(fd, out, format::kSessionV1Size) &&
            memcmp(out->file.magic, format::kSessionMagic, 8) == 0;
  *has_record = ok && out->file.version >= format::kSessionVersion &&
                out->file.header_size >= sizeof(format::SessionHeader) &&
                ReadExact(fd, out, sizeof(*out));
  close(fd);
  out->executable[format::kMaxModulePath - 1] = '\0';
  out->record.boot_id[format::kBootIdSize - 1] = '\0';
  out->record.oom_counter_path[format::kCounterPath - 1] = '\0';
  return ok;
}

bool DumpRetention::ReadSessionIn(const char* dir_path, format::SessionHeader* out,
                                  bool* has_record) {
  int dir_fd = open(dir_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return false;
  bool ok = ReadSession(dir_fd, out, has_record);
  close(dir_fd);
  return ok;
}

void DumpRetention::Format(const ExitClassification& c, uint64_t realtime_ns, int classifier_pid,
                           LineBuffer* out) {
  out->Append("heapgraph-exit 1\nkind ").Append(ExitClassifier::Name(c.kind));
  out->Append("\nreason ").Append(c.reason);
  out->Append("\nsignal ").AppendDecimal(c.signal);
  out->Append("\nsignal_code ").AppendDecimal(static_cast<uint32_t>(c.signal_code));
  out->Append("\nsignal_address ").AppendDecimal(c.signal_address);
  out->Append("\nexit_status_known ").AppendDecimal(c.exit_status_known ? 1 : 0);
  out->Append("\nexit_status ").AppendDecimal(static_cast<uint32_t>(c.exit_status));
  out->Append("\noom_kills_before ").AppendDecimal(c.oom_kills_before);
  out->Append("\noom_kills_now ").AppendDecimal(c.oom_kills_now);
  out->Append("\nstall_ms ").AppendDecimal(c.stall_ms);
  out->Append("\nforeground ").AppendDecimal(c.foreground ? 1 : 0);
  out->Append("\nclassified_realtime_ns ").AppendDecimal(realtime_ns);
  out->Append("\nclassified_by_pid ").AppendDecimal(static_cast<uint64_t>(classifier_pid));
  out->AppendChar('\n');
}

bool DumpRetention::MayBeAliveElsewhere(const format::SessionHeader& s, bool has_record,
                                        uint64_t now_realtime_ns) {
  if (s.state.load(std::memory_order_relaxed) == format::kSessionExited) return false;
  uint64_t last = s.start_time_ns;
  uint64_t bound = kNoHeartbeatBoundNs;
  if (has_record && s.record.heartbeat_interval_ms != 0) {
    if (s.record.heartbeat_realtime_ns > last) last = s.record.heartbeat_realtime_ns;
    bound = uint64_t{kStaleHeartbeats} * s.record.heartbeat_interval_ms * 1000000ull;
    if (bound < kMinStaleNs) bound = kMinStaleNs;
  }
  return now_realtime_ns < last + bound;
}

size_t DumpRetention::Run(int root_fd, const char* own_name, const char* executable, uint32_t keep,
                          std::span<const uint32_t> busy_tags) {
  FinishedRun* runs = g_runs;
  size_t count = 0;
  int scan_fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* root = scan_fd < 0 ? nullptr : fdopendir(scan_fd);
  if (root == nullptr) {
    if (scan_fd >= 0) close(scan_fd);
    return 0;
  }
  char boot_id[format::kBootIdSize] = {};  // read once, for the first run that needs it
  uint32_t executables = 0;
  while (dirent* e = readdir(root)) {
    if (IsBeingRemoved(e->d_name)) RemoveContentsAndDirectory(root_fd, e->d_name);
    if (e->d_name[0] == '.' || strcmp(e->d_name, own_name) == 0 || count == kMaxRuns) continue;
    if (strlen(e->d_name) >= sizeof(runs[0].name)) continue;
    int dir_fd = openat(root_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir_fd < 0) continue;
    format::SessionHeader& session = g_session;
    bool has_record = false;
    if (ReadSession(dir_fd, &session, &has_record) &&
        (executable == nullptr || strcmp(session.executable, executable) == 0)) {
      // An `exit` file is written only for a finished run: nothing to probe again. Otherwise the
      // liveness first; the rest of the evidence only for a run to classify.
      bool finished = HasFile(dir_fd, format::kExitFile);
      if (!finished) {
        if (boot_id[0] == '\0') ExitEvidenceProbe::ReadBootId(boot_id);
        // Not in our /proc is not enough: the run may live in another pid namespace.
        finished = !ExitEvidenceProbe::Alive(session, has_record, boot_id) &&
                   !MayBeAliveElsewhere(session, has_record, RealtimeNs());
        if (finished) {
          ExitEvidence now = ExitEvidenceProbe::Gather(session, has_record);
          WriteExitFile(dir_fd, ExitClassifier::Classify(session, has_record, now));
        }
      }
      if (finished && !Busy(session.run_tag, busy_tags)) {
        memcpy(runs[count].name, e->d_name, strlen(e->d_name) + 1);
        runs[count].start_time_ns = session.start_time_ns;
        runs[count].executable = ExecutableIndex(session.executable, &executables);
        ++count;
      }
    }
    close(dir_fd);
  }
  closedir(root);
  if (keep == 0) return 0;
  SortNewestFirst(runs, count);
  size_t removed = 0;
  for (size_t i = keep; i < count; ++i) {
    if (NewerOfTheSameExecutable(runs, i) >= keep)
      removed += RemoveRun(root_fd, runs[i].name) ? 1 : 0;
  }
  return removed;
}

}  // namespace heapgraph
