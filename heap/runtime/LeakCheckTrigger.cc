#include "heap/runtime/LeakCheckTrigger.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

#include "heap/platform/HighDescriptor.h"
#include "heap/platform/PidPattern.h"
#include "heap/platform/ToolThread.h"
#include "heap/platform/WarningLine.h"
#include "heap/platform/WriteAt.h"
#include "heap/plugin/RecordingIgnored.h"
#include "heap/plugin/ScanInterface.h"
#include "heap/runtime/AllocationSampler.h"
#include "heap/runtime/CheckCall.h"
#include "heap/runtime/ExitCaller.h"
#include "heap/runtime/LsanHooks.h"
#include "heap/store/PersistedFormat.h"
#include "heapgraph/heapgraph.h"

namespace heapgraph {
namespace {

const Config* g_config = nullptr;
void (*g_stop_tool_threads)(bool) = nullptr;  // Install's stop_tool_threads
char g_start_dir[600] = "";                   // the recording directory at start

// The recording directory now: a forked child writes its own once it lives (ForkSnapshot), and
// its reports and verdict belong there, not in its parent's.
const char* CurrentDir() {
  const char* dir = heapgraph_recording_dir();
  return dir != nullptr ? dir : g_start_dir;
}
// The signal pipe's ends, kept at high numbers and checked before use: a host that closed and
// reused a number must get neither the handler's byte nor lose its data to our read.
HighDescriptor g_pipe_read;
HighDescriptor g_pipe_write;
// __lsan_do_leak_check ran (or is running): the at-exit check and later calls do nothing.
std::atomic<bool> g_checked_once{false};
// Install set up the signal's pipe and handler: its watcher thread may be started.
bool g_signal_ready = false;

// A check LeakSanitizer would run now: detect_leaks and the program's __lsan_is_turned_off.
bool LsanCheckWanted() {
  return g_config != nullptr && g_config->detect_leaks && !LsanHooks::TurnedOff();
}

// Loads the plugin and runs one check; returns leaked blocks, or -1 after one line on stderr.
// The calling thread's stack is scanned from `program_stack_pointer`, or from Run's caller's frame
// when it is 0. "%p" in the paths is this process's id. `repeated`: a check the program may make
// again and again (HeapgraphCheckRequest::repeated). `quiet_when_clean`: no text on stderr when
// nothing leaked (HeapgraphCheckRequest::quiet_when_clean), for the checks LeakSanitizer would run.
// `process_exits`: the at-exit check (HeapgraphCheckRequest::process_exits).
__attribute__((noinline)) int Run(const char* json_pattern, const char* text_pattern,
                                  const char* html_pattern, uint64_t program_stack_pointer = 0,
                                  heapgraph_leak_summary* out = nullptr, bool repeated = false,
                                  bool quiet_when_clean = false, bool process_exits = false) {
  if (program_stack_pointer == 0) {
    program_stack_pointer = reinterpret_cast<uint64_t>(__builtin_frame_address(0)) + 16;
  }
  if (g_config->sample_mean != 0) {
    char mean[32], line[160];
    AllocationSampler::FormatMean(g_config->sample_mean, mean, sizeof(mean));
    snprintf(line, sizeof(line), HEAPGRAPH_SAMPLED_REFUSAL, mean);
    WarningLine::Print(line);
    return -1;
  }
  char json_path[Config::kMaxPath + 16], text_path[Config::kMaxPath + 16];
  char html_path[Config::kMaxPath + 16];
  ExpandPidPattern(json_pattern, getpid(), json_path, sizeof(json_path));
  ExpandPidPattern(text_pattern, getpid(), text_path, sizeof(text_path));
  ExpandPidPattern(html_pattern, getpid(), html_path, sizeof(html_path));
  // The check's own allocations (dlopen, reports) are not the program's.
  RecordingIgnored ignored(&heapgraph_internal_ignore_thread);
  heapgraph_leak_summary summary;
  HeapgraphCheckRequest request = {};
  request.json_path = json_path[0] != '\0' ? json_path : nullptr;
  request.text_path = text_path[0] != '\0' ? text_path : nullptr;
  request.html_path = html_path[0] != '\0' ? html_path : nullptr;
  request.summary = &summary;
  request.program_stack_pointer = program_stack_pointer;
  request.interior_pointers = g_config->interior_pointers ? 1 : 0;
  request.explain = g_config->leak_explain;
  request.window = HEAPGRAPH_WINDOW_ALL;
  request.repeated = repeated ? 1 : 0;
  request.quiet_when_clean = quiet_when_clean ? 1 : 0;
  request.process_exits = process_exits ? 1 : 0;
  int leaked = -1;
  if (!CheckCall::Run(request, &leaked)) return -1;
  if (leaked < 0) WarningLine::Print("leak check failed", summary.error);
  if (out != nullptr) *out = summary;
  return leaked;
}

// The at-exit check's filters (heapgraph run --top-only, --check-exe): this process's parent and
// executable file name.
bool ChosenForTheAtExitCheck() {
  if (g_config->leak_check_parent != 0 &&
      static_cast<uint32_t>(getppid()) != g_config->leak_check_parent) {
    return false;
  }
  if (g_config->leak_check_exe[0] == '\0') return true;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return false;
  exe[n] = '\0';
  const char* slash = strrchr(exe, '/');
  return fnmatch(g_config->leak_check_exe, slash == nullptr ? exe : slash + 1, 0) == 0;
}

// The at-exit check's verdict in the recording directory (format::kExitCheckFile), from which
// `heapgraph run` decides the run's status whatever became of the report files.
void WriteVerdict(int leaked, const heapgraph_leak_summary& summary) {
  char path[700], text[128];
  snprintf(path, sizeof(path), "%s/%s", CurrentDir(), format::kExitCheckFile);
  int n = leaked < 0
              ? snprintf(text, sizeof(text), "failed\n")
              : snprintf(text, sizeof(text), "leaked_blocks %llu\nleaked_bytes %llu\n",
                         summary.direct_blocks + summary.indirect_blocks, summary.leaked_bytes);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  (void)WriteAt(fd, text, static_cast<size_t>(n), 0);
  close(fd);
}

// Leaks exit with `exitcode`; a check that could not run (Run printed why, in one line) exits
// with `error_exitcode`, never 0, so CI cannot read it as "no leaks" (LeakSanitizer likewise dies
// with a fatal error rather than pass); otherwise the program's own status stands.
// The exiting thread's stack is scanned from where exit() was called (ExitCaller): the frames of
// exit and its handlers lie over dead frames whose stale block addresses would hide leaks.
// exitcode=0: leaks leave the program's own status (heapgraph run decides from the report).
void AtExit() {
  if (g_checked_once.load() || LsanHooks::TurnedOff() || !ChosenForTheAtExitCheck()) return;
  if (g_stop_tool_threads != nullptr) g_stop_tool_threads(false);
  const uint64_t exit_caller = ExitCaller::StackPointer();
  if (g_stop_tool_threads != nullptr) g_stop_tool_threads(true);
  heapgraph_leak_summary summary = {};
  int leaked = Run(g_config->leak_json, g_config->leak_text, g_config->leak_html, exit_caller,
                   &summary, /*repeated=*/false, /*quiet_when_clean=*/true, /*process_exits=*/true);
  WriteVerdict(leaked, summary);
  if (leaked == 0 || (leaked > 0 && g_config->leak_exitcode == 0)) return;
  fflush(nullptr);  // _exit skips stdio: keep the program's output
  _exit(static_cast<int>(leaked > 0 ? g_config->leak_exitcode : g_config->check_error_exitcode));
}

void OnSignal(int) {
  int saved = errno;
  char one = 1;
  if (g_pipe_write.StillOurs()) (void)!write(g_pipe_write.fd(), &one, 1);
  errno = saved;
}

// Tool thread: one check per signal, reports numbered in the recording directory.
void* WatchSignals(void*) {
  heapgraph_internal_ignore_thread(1);
  for (unsigned n = 1;; ++n) {
    char byte;
    if (!g_pipe_read.StillOurs()) {
      WarningLine::Print("the leak-check signal pipe was closed by the program", "no more checks");
      return nullptr;
    }
    ssize_t r = read(g_pipe_read.fd(), &byte, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return nullptr;
    char json[700], text[700];
    const char* dir = CurrentDir();
    snprintf(json, sizeof(json), "%s/leaks-%u.json", dir, n);
    snprintf(text, sizeof(text), "%s/leaks-%u.txt", dir, n);
    if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) {
      // The program dropped privileges: the starting user's 0700 directory is closed to it now.
      WarningLine::Print("cannot write leak reports into the recording directory", strerror(errno),
                         "; the text report goes to stderr");
      Run("", "-", "");
      continue;
    }
    int leaked = Run(json, text, "");
    if (leaked >= 0) {
      char line[1600];
      snprintf(line, sizeof(line), "leak check %u on signal %u: %d leaked blocks; report %s (%s)",
               n, g_config->scan_signal, leaked, text, json);
      WarningLine::Print(line);
    }
  }
}

}  // namespace

void LeakCheckTrigger::Install(const Config& config, const char* recording_dir,
                               void (*stop_tool_threads)(bool wait)) {
  g_config = &config;
  g_stop_tool_threads = stop_tool_threads;
  snprintf(g_start_dir, sizeof(g_start_dir), "%s", recording_dir);
  if (config.leak_check_at_exit && config.detect_leaks) atexit(&AtExit);
  if (config.scan_signal == 0) return;
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0 || !g_pipe_read.Adopt(ends[0]) || !g_pipe_write.Adopt(ends[1])) {
    WarningLine::Print("cannot set up the leak-check signal", strerror(errno));
    return;
  }
  struct sigaction action = {};
  action.sa_handler = &OnSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(static_cast<int>(config.scan_signal), &action, nullptr) != 0) {
    WarningLine::Print("cannot set up the leak-check signal", strerror(errno));
    return;
  }
  g_signal_ready = true;
}

int LeakCheckTrigger::SignalFd() {
  return g_signal_ready ? g_pipe_read.fd() : -1;
}

void LeakCheckTrigger::StartSignalWatcher() {
  if (!g_signal_ready) return;
  int error = ToolThread::Start(&WatchSignals, nullptr);
  if (error != 0) WarningLine::Print("cannot set up the leak-check signal", strerror(error));
}

void LeakCheckTrigger::CheckOnce(uint64_t program_stack_pointer) {
  if (!LsanCheckWanted() || g_checked_once.exchange(true)) return;
  heapgraph_leak_summary summary = {};
  int leaked = Run(g_config->leak_json, g_config->leak_text, g_config->leak_html,
                   program_stack_pointer, &summary, /*repeated=*/false, /*quiet_when_clean=*/true);
  WriteVerdict(leaked, summary);  // it replaces the at-exit check, verdict included
  // exitcode=0: the program goes on, as LeakSanitizer's "exitcode flag is non-zero" rule says.
  if (leaked == 0 || (leaked > 0 && g_config->leak_exitcode == 0)) return;
  fflush(nullptr);
  _exit(static_cast<int>(leaked > 0 ? g_config->leak_exitcode : g_config->check_error_exitcode));
}

int LeakCheckTrigger::CheckRecoverable(uint64_t program_stack_pointer) {
  if (!LsanCheckWanted()) return 0;
  return Run(g_config->leak_json, g_config->leak_text, g_config->leak_html, program_stack_pointer,
             nullptr, /*repeated=*/true, /*quiet_when_clean=*/true) == 0
             ? 0
             : 1;
}

}  // namespace heapgraph
