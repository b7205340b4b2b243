#include "heap/session/ExitClassifier.h"

#include <signal.h>

#include <cstring>

namespace heapgraph {
namespace {

using format::SessionRecord;

constexpr const char* kNames[] = {"running", "clean_exit", "crash",           "terminated",
                                  "hang",    "oom_kill",   "likely_oom_kill", "unknown"};

bool SameBuildId(const SessionRecord& r, const ExitEvidence& now) {
  return r.exe_build_id_len == now.exe_build_id_len &&
         memcmp(r.exe_build_id, now.exe_build_id, r.exe_build_id_len) == 0;
}

bool Rebooted(const SessionRecord& r, const ExitEvidence& now) {
  return r.boot_id[0] != '\0' && now.boot_id[0] != '\0' &&
         strncmp(r.boot_id, now.boot_id, format::kBootIdSize) != 0;
}

uint64_t StallMs(const SessionRecord& r) {
  if (r.heartbeat_interval_ms == 0 || r.heartbeat_count < 2 || r.progress_boottime_ns == 0 ||
      r.heartbeat_boottime_ns < r.progress_boottime_ns) {
    return 0;
  }
  return (r.heartbeat_boottime_ns - r.progress_boottime_ns) / 1000000;
}

bool ClassifyExit(const format::SessionHeader& s, const SessionRecord& r, bool has_record,
                  ExitClassification* c) {
  bool exited = s.state.load(std::memory_order_relaxed) == format::kSessionExited;
  uint32_t kind = has_record ? r.exit_kind : format::kExitNone;
  if (!exited && kind == format::kExitNone) return false;
  c->kind = ExitClass::kCleanExit;
  c->exit_status_known = kind == format::kExitCalled || kind == format::kExitImmediate;
  c->exit_status = c->exit_status_known ? r.exit_status : 0;
  switch (kind) {
    case format::kExitCalled:
      c->reason = "the program called exit()";
      break;
    case format::kExitImmediate:
      c->reason = "the program called _exit()";
      break;
    default:
      c->reason = "the program returned from main (library destructors ran)";
  }
  return true;
}

}  // namespace

const char* ExitClassifier::Name(ExitClass kind) {
  return kNames[static_cast<uint32_t>(kind)];
}

bool ExitClassifier::FromName(const char* name, ExitClass* kind) {
  for (uint32_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    if (strcmp(name, kNames[i]) == 0) {
      *kind = static_cast<ExitClass>(i);
      return true;
    }
  }
  return false;
}

bool ExitClassifier::IsCrashSignal(uint32_t signal) {
  switch (signal) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGABRT:
    case SIGTRAP:
    case SIGSYS:
      return true;
    default:
      return false;
  }
}

ExitClassification ExitClassifier::Classify(const format::SessionHeader& s, bool has_record,
                                            const ExitEvidence& now) {
  ExitClassification c;
  static const SessionRecord kEmpty{};
  const SessionRecord& r = has_record ? s.record : kEmpty;
  c.oom_kills_before = has_record ? r.oom_kills_at_heartbeat : format::kUnknownCounter;
  c.oom_kills_now = now.oom_kills_now;
  c.stall_ms = has_record ? StallMs(r) : 0;
  c.foreground = !has_record || r.app_state != format::kAppBackground;
  if (now.alive) {
    c.kind = ExitClass::kRunning;
    c.reason = "the process is still running";
    return c;
  }
  // A terminating (non-fault) signal whose handler went on to exit: the exit record decides,
  // with the signal kept as context. A fault stays a crash even when its handler exits (crash
  // reporters do; the record has no exit time to tell a recovered fault from one).
  if (has_record && r.fatal_signal != 0 && !IsCrashSignal(r.fatal_signal) &&
      ClassifyExit(s, r, has_record, &c)) {
    c.reason = "a terminating signal was handled and the program then exited";
    c.signal = r.fatal_signal;
    c.signal_code = r.fatal_code;
    c.signal_address = r.fatal_address;
    return c;
  }
  if (has_record && r.fatal_signal != 0) {
    bool crash = IsCrashSignal(r.fatal_signal);
    c.kind = crash ? ExitClass::kCrash : ExitClass::kTerminated;
    c.reason = crash ? "a fatal signal was delivered (crash)"
                     : "a terminating signal was delivered and not survived";
    c.signal = r.fatal_signal;
    c.signal_code = r.fatal_code;
    c.signal_address = r.fatal_address;
    return c;
  }
  if (ClassifyExit(s, r, has_record, &c)) return c;
  c.kind = ExitClass::kUnknown;
  if (!has_record) {
    c.reason = "killed without a trace; the session (version 1) has no exit record";
  } else if (Rebooted(r, now)) {
    c.reason = "the system rebooted since the run (boot id changed)";
  } else if (c.oom_kills_before != format::kUnknownCounter &&
             c.oom_kills_now != format::kUnknownCounter && c.oom_kills_now > c.oom_kills_before) {
    c.kind = ExitClass::kOomKill;
    c.reason = "the memory cgroup's oom_kill counter moved after the last heartbeat";
  } else if (r.hang_threshold_ms != 0 && c.stall_ms >= r.hang_threshold_ms) {
    c.kind = ExitClass::kHang;
    c.reason = "no progress for longer than the hang threshold before it was killed (watchdog)";
  } else if (now.exe_build_id_known && r.exe_build_id_len != 0 && !SameBuildId(r, now)) {
    c.reason = "the executable was replaced since the run (build-id changed)";
  } else if (!c.foreground) {
    c.reason = "killed without a trace while in the background";
  } else {
    c.kind = ExitClass::kLikelyOomKill;
    c.reason = "killed without a trace in the foreground: no exit, crash, reboot, upgrade or hang";
  }
  return c;
}

}  // namespace heapgraph
