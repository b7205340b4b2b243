#include "heap/session/ExitEvidenceProbe.h"

#include <cstring>

#include "heap/platform/ProcessStartTicks.h"
#include "heap/platform/SmallFile.h"
#include "heap/session/ExecutableBuildId.h"
#include "heap/session/OomCounter.h"

namespace heapgraph {

void ExitEvidenceProbe::ReadBootId(char (&out)[format::kBootIdSize]) {
  memset(out, 0, sizeof(out));
  char buffer[format::kBootIdSize];
  ssize_t n = SmallFile::Read("/proc/sys/kernel/random/boot_id", buffer, sizeof(buffer));
  for (ssize_t i = 0; i < n && buffer[i] != '\n' && buffer[i] != '\0'; ++i) out[i] = buffer[i];
}

bool ExitEvidenceProbe::Alive(const format::SessionHeader& session, bool has_record,
                              const char (&boot_id)[format::kBootIdSize]) {
  bool same_boot = !has_record || session.record.boot_id[0] == '\0' ||
                   strncmp(session.record.boot_id, boot_id, format::kBootIdSize) == 0;
  return same_boot && session.boot_time_ticks != 0 &&
         ProcessStartTicks::Of(session.pid) == session.boot_time_ticks;
}

ExitEvidence ExitEvidenceProbe::Gather(const format::SessionHeader& session, bool has_record) {
  ExitEvidence now;
  ReadBootId(now.boot_id);
  now.alive = Alive(session, has_record, now.boot_id);
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
