// tests/heap: helpers of the recorder's process tests (Recorder*Test, Interposer*Test). They run
// the programs of tests/programs as real child processes, under LD_PRELOAD=libheapgraph.so or
// linked with it, talk to them over pipes with timeouts, and read their recording directories.
// Child protocol (tests/programs/ProgramSupport.h): "key value..." lines on stdout, "ready <pid>",
// then the child usually waits for its stdin to close.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reader/RecordingReader.h"

namespace heapgraph::proctest {

using std::chrono::milliseconds;

inline constexpr milliseconds kDefaultTimeout{30000};

// The path of a program built from tests/programs.
std::string ProgramPath(const std::string& name);

// Splits on spaces, dropping empty words.
std::vector<std::string> Split(const std::string& line);
// Decimal, or hexadecimal with 0x; throws std::invalid_argument on anything else.
uint64_t ParseNumber(const std::string& text);
// The words after `key` on the first of `lines` whose first word is `key`; empty if none.
std::vector<std::string> FieldOf(const std::vector<std::string>& lines, const std::string& key);

// A fresh recording root from mkdtemp (mode 0700), removed with its contents on destruction
// unless HEAPGRAPH_TEST_KEEP is set in the environment.
class TempRoot {
 public:
  TempRoot();
  ~TempRoot();
  TempRoot(const TempRoot&) = delete;
  TempRoot& operator=(const TempRoot&) = delete;

  const std::string& path() const { return path_; }
  // The recording directory <root>/<pid>-... of `pid`, or "" when there is none.
  std::string DirectoryOf(pid_t pid) const;
  // Every entry of the root, sorted.
  std::vector<std::string> Entries() const;

 private:
  std::string path_;
};

// The environment entries that make a child record into `root`: LD_PRELOAD of libheapgraph.so
// (unless `preload` is false: the child links it) and HEAPGRAPH_OPTIONS=dir=<root>[,extra].
std::vector<std::string> RecordingEnv(const std::string& root, const std::string& extra_options,
                                      bool preload = true);

// One child program. The environment is this process's minus LD_PRELOAD and HEAPGRAPH_OPTIONS,
// plus `env` ("KEY=VALUE"); stdin and stdout are pipes, stderr goes to a memory file.
class ChildProcess {
 public:
  ChildProcess(const std::string& path, const std::vector<std::string>& args,
               const std::vector<std::string>& env);
  ~ChildProcess();  // SIGKILL and reap if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Reads stdout until the line "ready <pid>"; false on EOF or timeout.
  bool WaitReady(milliseconds timeout = kDefaultTimeout);
  // Reads stdout until EOF; false on timeout.
  bool ReadToEof(milliseconds timeout = kDefaultTimeout);
  // Lines read from stdout so far, without the "ready" line.
  const std::vector<std::string>& lines() const { return lines_; }
  // FieldOf(lines(), key).
  std::vector<std::string> Field(const std::string& key) const { return FieldOf(lines_, key); }
  // ParseNumber(Field(key)[index]); throws std::out_of_range when missing.
  uint64_t Number(const std::string& key, size_t index = 0) const;
  // Every line whose first word is `key`, split, without the key.
  std::vector<std::vector<std::string>> Records(const std::string& key) const;

  void CloseStdin();
  void Kill(int signal);
  // Waits for the child to exit: its wait status, or nullopt after `timeout` (it is then killed
  // and reaped).
  std::optional<int> Wait(milliseconds timeout = kDefaultTimeout);
  // CloseStdin, then Wait; true when the child exited with status 0.
  bool Finish(milliseconds timeout = kDefaultTimeout);

  std::string Stderr() const;
  std::vector<std::string> StderrLines() const;
  // Everything known about the child, for failure messages.
  std::string Describe() const;

 private:
  // Reads one chunk of stdout into lines_; false on EOF or timeout.
  bool ReadSome(std::chrono::steady_clock::time_point deadline);

  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::string partial_;
  std::vector<std::string> lines_;
  bool ready_ = false;
};

// Runs a program to completion (stdin closed at once): its wait status (nullopt on timeout),
// stdout lines and stderr.
struct RunResult {
  std::optional<int> status;
  std::vector<std::string> lines;
  std::string stderr_text;
  std::vector<std::string> stderr_lines;
};
RunResult RunToExit(const std::string& path, const std::vector<std::string>& args,
                    const std::vector<std::string>& env, milliseconds timeout = kDefaultTimeout);
// True when the run ended by exiting with status 0.
bool ExitedZero(const RunResult& run);

// ---- recordings -------------------------------------------------------------------------------

struct AddressRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool Contains(uint64_t address) const { return address >= begin && address < end; }
};
// The "range <name> <begin> <end>" line of a child; begin == end == 0 when missing.
AddressRange RangeOf(const std::vector<std::string>& lines, const std::string& name);
inline AddressRange RangeOf(const ChildProcess& child, const std::string& name) {
  return RangeOf(child.lines(), name);
}

// The live block of `tree` that starts at `address`, or null.
const LiveBlock* FindBlock(const RecordingReader& reader, uint64_t address,
                           TreeKind tree = TreeKind::kHeap);
// Blocks of `tree` overlapping [begin, end).
std::vector<LiveBlock> Overlapping(const RecordingReader& reader, uint64_t begin, uint64_t end,
                                   TreeKind tree);
// True when a frame of the block's stack lies in `range`.
bool StackPassesThrough(const RecordingReader& reader, const LiveBlock& block,
                        const AddressRange& range);

// "malloc", "mmap", ... (for messages).
std::string FunctionName(format::AllocFunction function);

// The GNU build-id of an ELF file as lowercase hex, or "" when it has none.
std::string BuildIdHex(const std::string& elf_path);
// Lowercase hex of the build-id in a module record.
std::string BuildIdHex(const format::ModuleRecord& module);

}  // namespace heapgraph::proctest
