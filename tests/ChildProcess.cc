#include "tests/ChildProcess.h"

#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "heap/runtime/LargeAllocationMonitor.h"

extern char** environ;

namespace heapgraph::proctest {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void Check(bool ok, const char* what) {
  if (!ok) throw std::system_error(errno, std::generic_category(), what);
}

bool HasPrefix(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Our environment without the recorder's variables, plus `extra`.
std::vector<std::string> ChildEnvironment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (HasPrefix(entry, "LD_PRELOAD=") || HasPrefix(entry, "HEAPGRAPH_OPTIONS=")) continue;
    env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

int MillisecondsUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::string ProgramPath(const std::string& name) {
  return std::string(HEAPGRAPH_PROGRAM_DIR) + "/" + name;
}

std::vector<std::string> Split(const std::string& line) {
  std::istringstream in(line);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

uint64_t ParseNumber(const std::string& text) {
  size_t used = 0;
  uint64_t value = std::stoull(text, &used, 0);
  if (used != text.size()) throw std::invalid_argument("not a number: " + text);
  return value;
}

// ---- TempRoot -----------------------------------------------------------------------------------

TempRoot::TempRoot() {
  char pattern[] = "/tmp/heapgraph-proctest-XXXXXX";
  Check(mkdtemp(pattern) != nullptr, "mkdtemp");
  path_ = pattern;
}

TempRoot::~TempRoot() {
  if (getenv("HEAPGRAPH_TEST_KEEP") != nullptr) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string TempRoot::DirectoryOf(pid_t pid) const {
  std::string prefix = std::to_string(pid) + "-";
  for (const std::string& entry : Entries()) {
    if (HasPrefix(entry, prefix)) return path_ + "/" + entry;
  }
  return "";
}

std::vector<std::string> TempRoot::Entries() const {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(path_, error)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> RecordingEnv(const std::string& root, const std::string& extra_options,
                                      bool preload) {
  std::string options = "HEAPGRAPH_OPTIONS=dir=" + root;
  if (!extra_options.empty()) options += "," + extra_options;
  std::vector<std::string> env = {options};
  if (preload) env.push_back(std::string("LD_PRELOAD=") + HEAPGRAPH_PRELOAD);
  return env;
}

// ---- ChildProcess -------------------------------------------------------------------------------

ChildProcess::ChildProcess(const std::string& path, const std::vector<std::string>& args,
                           const std::vector<std::string>& env) {
  int in[2], out[2];
  Check(pipe2(in, O_CLOEXEC) == 0, "pipe2");
  Check(pipe2(out, O_CLOEXEC) == 0, "pipe2");
  stderr_fd_ = memfd_create("child-stderr", MFD_CLOEXEC);
  Check(stderr_fd_ >= 0, "memfd_create");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, stderr_fd_, 2);
  std::vector<std::string> argv_strings = {path};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = ChildEnvironment(env);
  std::vector<char*> argv = Pointers(argv_strings), envp = Pointers(env_strings);
  int error = posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  stdin_fd_ = in[1];
  stdout_fd_ = out[0];
  if (error != 0) {
    CloseFd(&stdin_fd_);
    CloseFd(&stdout_fd_);
    CloseFd(&stderr_fd_);
    throw std::system_error(error, std::generic_category(), "posix_spawn " + path);
  }
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
  CloseFd(&stdin_fd_);
  CloseFd(&stdout_fd_);
  CloseFd(&stderr_fd_);
}

bool ChildProcess::ReadSome(Clock::time_point deadline) {
  if (stdout_fd_ < 0) return false;
  pollfd p = {stdout_fd_, POLLIN, 0};
  int r = poll(&p, 1, MillisecondsUntil(deadline));
  if (r < 0 && errno == EINTR) return true;
  if (r <= 0) return false;
  char buffer[4096];
  ssize_t n = read(stdout_fd_, buffer, sizeof(buffer));
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) {
    CloseFd(&stdout_fd_);
    return false;
  }
  partial_.append(buffer, static_cast<size_t>(n));
  for (size_t end; (end = partial_.find('\n')) != std::string::npos;) {
    std::string line = partial_.substr(0, end);
    partial_.erase(0, end + 1);
    if (line == "ready " + std::to_string(pid_)) {
      ready_ = true;
    } else {
      lines_.push_back(line);
    }
  }
  return true;
}

bool ChildProcess::WaitReady(milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  while (!ready_) {
    if (!ReadSome(deadline)) return false;
  }
  return true;
}

bool ChildProcess::ReadToEof(milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  while (stdout_fd_ >= 0) {
    if (!ReadSome(deadline)) return stdout_fd_ < 0;
  }
  return true;
}

std::vector<std::string> FieldOf(const std::vector<std::string>& lines, const std::string& key) {
  for (const std::string& line : lines) {
    std::vector<std::string> words = Split(line);
    if (!words.empty() && words[0] == key) return {words.begin() + 1, words.end()};
  }
  return {};
}

uint64_t ChildProcess::Number(const std::string& key, size_t index) const {
  std::vector<std::string> words = Field(key);
  if (index >= words.size()) throw std::out_of_range("child printed no '" + key + "' value");
  return ParseNumber(words[index]);
}

std::vector<std::vector<std::string>> ChildProcess::Records(const std::string& key) const {
  std::vector<std::vector<std::string>> records;
  for (const std::string& line : lines_) {
    std::vector<std::string> words = Split(line);
    if (!words.empty() && words[0] == key) records.emplace_back(words.begin() + 1, words.end());
  }
  return records;
}

void ChildProcess::CloseStdin() {
  CloseFd(&stdin_fd_);
}

void ChildProcess::Kill(int signal) {
  if (!reaped_) kill(pid_, signal);
}

std::optional<int> ChildProcess::Wait(milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  while (!reaped_) {
    pid_t r = waitpid(pid_, &status_, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      reaped_ = true;
      break;
    }
    if (Clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      reaped_ = true;
      return std::nullopt;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  return status_;
}

bool ChildProcess::Finish(milliseconds timeout) {
  CloseStdin();
  std::optional<int> status = Wait(timeout);
  return status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
}

std::string ChildProcess::Stderr() const {
  std::string text;
  char buffer[4096];
  for (off_t offset = 0;;) {
    ssize_t n = pread(stderr_fd_, buffer, sizeof(buffer), offset);
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    offset += n;
  }
  return text;
}

std::vector<std::string> ChildProcess::StderrLines() const {
  return SplitLines(Stderr());
}

std::string ChildProcess::Describe() const {
  std::string text = "child pid " + std::to_string(pid_) + "\n--- stdout:\n";
  for (const std::string& line : lines_) text += line + "\n";
  return text + partial_ + "--- stderr:\n" + Stderr();
}

bool ExitedZero(const RunResult& run) {
  return run.status && WIFEXITED(*run.status) && WEXITSTATUS(*run.status) == 0;
}

RunResult RunToExit(const std::string& path, const std::vector<std::string>& args,
                    const std::vector<std::string>& env, milliseconds timeout) {
  ChildProcess child(path, args, env);
  child.CloseStdin();
  RunResult result;
  child.ReadToEof(timeout);
  result.status = child.Wait(timeout);
  result.lines = child.lines();
  result.stderr_text = child.Stderr();
  result.stderr_lines = SplitLines(result.stderr_text);
  return result;
}

// ---- recordings ---------------------------------------------------------------------------------

AddressRange RangeOf(const std::vector<std::string>& lines, const std::string& name) {
  for (const std::string& line : lines) {
    std::vector<std::string> r = Split(line);
    if (r.size() == 4 && r[0] == "range" && r[1] == name) {
      return {ParseNumber(r[2]), ParseNumber(r[3])};
    }
  }
  return {};
}

const LiveBlock* FindBlock(const RecordingReader& reader, uint64_t address, TreeKind tree) {
  for (const LiveBlock& block : reader.blocks()) {
    if (block.tree == tree && block.address == address) return &block;
  }
  return nullptr;
}

std::vector<LiveBlock> Overlapping(const RecordingReader& reader, uint64_t begin, uint64_t end,
                                   TreeKind tree) {
  std::vector<LiveBlock> found;
  for (const LiveBlock& block : reader.blocks()) {
    uint64_t block_end = block.address + std::max<uint64_t>(block.size, 1);
    if (block.tree == tree && block.address < end && block_end > begin) found.push_back(block);
  }
  return found;
}

bool StackPassesThrough(const RecordingReader& reader, const LiveBlock& block,
                        const AddressRange& range) {
  for (uint64_t frame : reader.Frames(block.stack)) {
    if (range.Contains(frame)) return true;
  }
  return false;
}

std::string FunctionName(format::AllocFunction function) {
  std::string name = AllocFunctionName(function);  // the recorder's own names
  return name != "?" ? name : "function " + std::to_string(static_cast<int>(function));
}

namespace {

std::string Hex(const uint8_t* bytes, size_t length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < length; ++i) {
    text += kDigits[bytes[i] >> 4];
    text += kDigits[bytes[i] & 15];
  }
  return text;
}

// The build-id note inside [data, data + size), or "".
std::string BuildIdInNotes(const char* data, size_t size) {
  for (size_t offset = 0; offset + sizeof(Elf64_Nhdr) <= size;) {
    Elf64_Nhdr header;
    memcpy(&header, data + offset, sizeof(header));
    size_t name = offset + sizeof(header);
    size_t desc = name + ((header.n_namesz + 3) & ~size_t{3});
    size_t next = desc + ((header.n_descsz + 3) & ~size_t{3});
    if (next > size) break;
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
        memcmp(data + name, "GNU", 4) == 0) {
      return Hex(reinterpret_cast<const uint8_t*>(data + desc), header.n_descsz);
    }
    offset = next;
  }
  return "";
}

}  // namespace

std::string BuildIdHex(const std::string& elf_path) {
  std::ifstream in(elf_path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Elf64_Ehdr ehdr;
  if (bytes.size() < sizeof(ehdr)) return "";
  memcpy(&ehdr, bytes.data(), sizeof(ehdr));
  if (memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_ident[EI_CLASS] != ELFCLASS64) return "";
  for (unsigned i = 0; i < ehdr.e_phnum; ++i) {
    Elf64_Phdr phdr;
    uint64_t at = ehdr.e_phoff + uint64_t{i} * ehdr.e_phentsize;
    if (at + sizeof(phdr) > bytes.size()) return "";
    memcpy(&phdr, bytes.data() + at, sizeof(phdr));
    if (phdr.p_type != PT_NOTE || phdr.p_offset + phdr.p_filesz > bytes.size()) continue;
    std::string id = BuildIdInNotes(bytes.data() + phdr.p_offset, phdr.p_filesz);
    if (!id.empty()) return id;
  }
  return "";
}

std::string BuildIdHex(const format::ModuleRecord& module) {
  return Hex(module.build_id, std::min<size_t>(module.build_id_len, format::kMaxBuildId));
}

}  // namespace heapgraph::proctest
