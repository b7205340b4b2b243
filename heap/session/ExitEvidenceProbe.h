// heap/session/: gathers what is true now about a recorded run (ExitEvidence): the current boot id,
// whether the recorded process still runs, the build-id of its executable file, and its cgroup's
// OOM-kill counter. libc only, no allocation (the recorder's tool thread uses it too).
#pragma once

#include <cstdint>

#include "heap/session/ExitClassifier.h"
#include "heap/store/PersistedFormat.h"

namespace heapgraph {

namespace ExitEvidenceProbe {

ExitEvidence Gather(const format::SessionHeader& session, bool has_record);
// Gather's `alive` alone, with the current boot id given (ReadBootId): the recorded process still
// runs (same boot, and its pid has the recorded start time).
bool Alive(const format::SessionHeader& session, bool has_record,
           const char (&boot_id)[format::kBootIdSize]);
// /proc/sys/kernel/random/boot_id without the newline; "" when unreadable.
void ReadBootId(char (&out)[format::kBootIdSize]);

}  // namespace ExitEvidenceProbe

}  // namespace heapgraph
