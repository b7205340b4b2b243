#include "heap/session/ExitEvidenceProbe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "heap/platform/LineBuffer.h"
#include "heap/session/ExecutableBuildId.h"
#include "heap/session/OomCounter.h"

namespace heapgraph {
namespace {

ssize_t ReadFile(const char* path, char* buffer, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buffer, size - 1);
  close(fd);
  buffer[n > 0 ? n : 0] = '\0';
  return n;
}

}  // namespace

void ExitEvidenceProbe::ReadBootId(char (&out)[format::kBootIdSize]) {
  memset(out, 0, sizeof(out));
  char buffer[format::kBootIdSize];
  ssize_t n = ReadFile("/proc/sys/kernel/random/boot_id", buffer, sizeof(buffer));
  for (ssize_t i = 0; i < n && buffer[i] != '\n' && buffer[i] != '\0'; ++i) out[i] = buffer[i];
}

uint64_t ExitEvidenceProbe::StartTicks(int pid) {
  if (pid <= 0) return 0;
  LineBuffer path;
  path.Append("/proc/").AppendDecimal(static_cast<uint64_t>(pid)).Append("/stat").AppendChar('\0');
  char buffer[1024];
  if (ReadFile(path.data(), buffer, sizeof(buffer)) <= 0) return 0;
  // Field 2 (comm) may contain spaces; fields are counted after its closing parenthesis.
  char* p = strrchr(buffer, ')');
  if (p == nullptr) return 0;
  int field = 2;
  for (; *p != '\0' && field < 22; ++p) {
    if (*p == ' ') ++field;
  }
  uint64_t ticks = 0;
  for (; *p >= '0' && *p <= '9'; ++p) ticks = ticks * 10 + static_cast<uint64_t>(*p - '0');
  return ticks;
}

ExitEvidence ExitEvidenceProbe::Gather(const format::SessionHeader& session, bool has_record) {
  ExitEvidence now;
  ReadBootId(now.boot_id);
  bool same_boot = !has_record || session.record.boot_id[0] == '\0' ||
                   strncmp(session.record.boot_id, now.boot_id, format::kBootIdSize) == 0;
  now.alive = same_boot && session.boot_time_ticks != 0 &&
              StartTicks(session.pid) == session.boot_time_ticks;
  char executable[format::kMaxModulePath];
  memcpy(executable, session.executable, sizeof(executable));
  executable[sizeof(executable) - 1] = '\0';
  now.exe_build_id_known =
      ExecutableBuildId::Read(executable, now.exe_build_id, &now.exe_build_id_len);
  if (has_record) {
    char path[format::kCounterPath];
    memcpy(path, session.record.oom_counter_path, sizeof(path));
    path[sizeof(path) - 1] = '\0';
    now.oom_kills_now = OomCounter::Read(path);
  }
  return now;
}

}  // namespace heapgraph
