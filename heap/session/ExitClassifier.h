// heap/session/: how a recorded run ended, decided by elimination (seed 000, after Facebook's FOOM
// method) from its session record and what is true now (boot id, executable, cgroup counter,
// whether the process still runs). Pure logic on plain data, libc only: the recorder's tool
// thread classifies the previous run with it, and `heapgraph foom` the same way.
//
// Order (the first rule that applies wins): running; crash (a fault signal, or abort, was
// recorded); terminated (a terminating signal was recorded and not survived); clean exit
// (exit/_exit/return from main); reboot (boot id changed: unknown); OOM kill proven (the memory
// cgroup's oom_kill counter moved after the last heartbeat); hang (the program had made no
// progress for hang_threshold_ms before the last heartbeat); upgrade (the executable's build-id
// changed: unknown); background (the app said it was in the background: unknown); otherwise likely
// OOM kill (killed without a trace while in the foreground).
#pragma once

#include <cstdint>

#include "heap/store/PersistedFormat.h"

namespace heapgraph {

enum class ExitClass : uint32_t {
  kRunning,
  kCleanExit,
  kCrash,
  kTerminated,
  kHang,
  kOomKill,
  kLikelyOomKill,
  kUnknown,
};

// What is known now, gathered by ExitEvidence::Gather or set by tests.
struct ExitEvidence {
  char boot_id[format::kBootIdSize] = "";  // "" = unknown
  bool alive = false;                      // the recorded pid runs with the recorded start time
  bool exe_build_id_known = false;
  uint8_t exe_build_id[format::kMaxBuildId] = {};
  uint32_t exe_build_id_len = 0;
  uint64_t oom_kills_now = format::kUnknownCounter;  // at the recorded counter path
};

struct ExitClassification {
  ExitClass kind = ExitClass::kUnknown;
  const char* reason = "";  // one sentence, static storage
  uint32_t signal = 0;      // crash / terminated
  int32_t signal_code = 0;
  uint64_t signal_address = 0;
  bool exit_status_known = false;
  int32_t exit_status = 0;
  uint64_t oom_kills_before = format::kUnknownCounter;  // at the last heartbeat
  uint64_t oom_kills_now = format::kUnknownCounter;
  uint64_t stall_ms = 0;  // no progress for this long before the last heartbeat
  bool foreground = true;
};

namespace ExitClassifier {

// `has_record`: the session is version 2 (SessionRecord valid); a version 1 session can only
// be told apart as clean exit or unknown.
ExitClassification Classify(const format::SessionHeader& session, bool has_record,
                            const ExitEvidence& now);
// "clean_exit", "likely_oom_kill", ... (the JSON and `exit` file spelling).
const char* Name(ExitClass kind);
// Parses Name()'s spelling; false for anything else.
bool FromName(const char* name, ExitClass* kind);
// Fault signals (SEGV, BUS, ILL, FPE, ABRT, TRAP, SYS) are crashes; others terminations.
bool IsCrashSignal(uint32_t signal);

}  // namespace ExitClassifier

}  // namespace heapgraph
