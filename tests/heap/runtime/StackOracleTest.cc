// Issue 14, stacks: every recorded stack equals the stack a full DWARF unwind gives at the same
// call. Each workload (tests/programs/hg_churn, python3, git, the C++ test binary hg_cxx_gtest)
// runs under LD_PRELOAD=libhg_stack_oracle.so:libheapgraph.so. The oracle (tests/programs/
// stack_oracle.cc) takes libgcc's _Unwind_Backtrace at sampled allocation calls and keeps those
// blocks live; the test then reads the recording and compares, block by block (matched by
// address), the recorder's frames with the oracle's, frame by frame.
//
// Alignment: the recorder sees the oracle's malloc as the innermost caller (one frame in
// libhg_stack_oracle.so, the return address of its call into libheapgraph.so); that frame is
// dropped and the rest must equal the reference, which leaves the oracle's own frames out. The
// recorded stack (oracle frame included) may be cut only at the session's depth limit: then the
// rest must be a prefix of the reference.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "reader/RecordingReader.h"
#include "report/Symbolizer.h"
#include "tests/ChildProcess.h"
#include "tests/programs/StackOracle.h"

namespace heapgraph::proctest {
namespace {

struct ReferenceStack {
  uint64_t address = 0;
  std::vector<uint64_t> frames;
  bool more = false;              // the reference had more frames than the oracle keeps
  bool unwind_info_ends = false;  // libgcc stopped at a frame without unwind info
};

struct OracleFile {
  hgoracle::Header header{};
  std::vector<ReferenceStack> samples;  // published ones only, without `own`
  uint64_t own = 0;  // published samples of the recorder's own allocations (its tool threads)
};

OracleFile ReadOracle(const std::string& path) {
  OracleFile file;
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(&file.header), sizeof(file.header))) return file;
  if (file.header.sample_size != sizeof(hgoracle::Sample)) return file;
  uint32_t count = std::min(file.header.claimed, file.header.capacity);
  for (uint32_t i = 0; i < count; ++i) {
    hgoracle::Sample raw;
    if (!in.read(reinterpret_cast<char*>(&raw), sizeof(raw))) break;
    if (raw.address == 0) continue;
    if (raw.next_library != 0) {  // the recorder's own allocation: never recorded
      ++file.own;
      continue;
    }
    ReferenceStack stack;
    stack.address = raw.address;
    stack.frames.assign(raw.frames, raw.frames + std::min(raw.depth, hgoracle::kFrames));
    stack.more = raw.more != 0;
    stack.unwind_info_ends = raw.unwind_info_ends != 0;
    file.samples.push_back(std::move(stack));
  }
  return file;
}

// What the comparison found for one program.
struct Tally {
  uint64_t calls = 0;     // allocation calls the oracle saw
  uint64_t sampled = 0;   // published reference stacks
  uint64_t recorded = 0;  // of those, live blocks of the recording
  uint64_t equal = 0;     // recorded stack == reference
  uint64_t cut = 0;       // recorded stack cut at the depth limit, a prefix of the reference
  uint64_t mismatched = 0;
  // Recorded stacks that equal the reference and go on past its last frame, where libgcc stopped
  // for want of unwind info (JIT-like code, an lld-linked program's PLT stub interrupted by a
  // signal): the complete walk's frame-pointer step (reads checked) found callers there. `next`
  // holds the first frame past it.
  uint64_t continued = 0;
  std::vector<uint64_t> next;
  std::vector<std::string> examples;    // the first few mismatches, symbolized
  std::vector<std::string> unrecorded;  // reference stacks of the first few blocks not recorded

  void Add(const Tally& other) {
    calls += other.calls;
    sampled += other.sampled;
    recorded += other.recorded;
    equal += other.equal;
    cut += other.cut;
    mismatched += other.mismatched;
    continued += other.continued;
    next.insert(next.end(), other.next.begin(), other.next.end());
    examples.insert(examples.end(), other.examples.begin(), other.examples.end());
    unrecorded.insert(unrecorded.end(), other.unrecorded.begin(), other.unrecorded.end());
  }

  std::string Line(const std::string& program) const {
    std::ostringstream line;
    line << "stacks " << program << ": calls " << calls << ", sampled " << sampled << ", recorded "
         << recorded << ", equal " << equal + cut << " (" << cut
         << " cut at the depth limit), continued past code without unwind info " << continued
         << ", mismatched " << mismatched;
    return line.str();
  }
};

class StackComparison {
 public:
  StackComparison(const RecordingReader& reader, report::Symbolizer* symbolizer)
      : reader_(reader), symbolizer_(symbolizer) {
    limit_ = reader.session() ? reader.session()->max_depth : format::kMaxStackDepth;
    for (const LiveBlock& block : reader.blocks()) {
      if (block.tree == TreeKind::kHeap) by_address_[block.address] = &block;
    }
  }

  void Add(const ReferenceStack& reference, Tally* tally) {
    auto found = by_address_.find(reference.address);
    if (found == by_address_.end()) {
      if (tally->unrecorded.size() < 3) tally->unrecorded.push_back(Describe(reference.frames));
      return;
    }
    ++tally->recorded;
    std::vector<uint64_t> recorded = reader_.Frames(found->second->stack);
    size_t oracle_frames = 0;
    while (oracle_frames < recorded.size() && InOracle(recorded[oracle_frames])) ++oracle_frames;
    std::string problem = Problem(recorded, oracle_frames, reference, tally);
    if (problem.empty()) return;
    ++tally->mismatched;
    if (tally->examples.size() < 3) {
      tally->examples.push_back(problem + "\n  recorded:\n" + Describe(recorded) +
                                "  reference:\n" + Describe(reference.frames));
    }
  }

 private:
  // "" when the recorded stack matches; else what is wrong. Counts matches in `tally`.
  std::string Problem(const std::vector<uint64_t>& recorded, size_t oracle_frames,
                      const ReferenceStack& reference, Tally* tally) const {
    if (oracle_frames != 1) {
      return "the recorded stack starts with " + std::to_string(oracle_frames) +
             " oracle frames, not 1";
    }
    const std::vector<uint64_t>& want = reference.frames;
    size_t have = recorded.size() - 1;
    bool at_limit = recorded.size() == limit_;
    for (size_t i = 0; i < have && i < want.size(); ++i) {
      if (recorded[i + 1] != want[i]) return "frame " + std::to_string(i) + " differs";
    }
    if (have == want.size() && !reference.more) {
      ++tally->equal;
      return "";
    }
    if (have > want.size() && reference.unwind_info_ends) {
      ++tally->continued;
      tally->next.push_back(recorded[want.size() + 1]);
      return "";
    }
    if (have > want.size()) {
      return "the recorded stack has " + std::to_string(have - want.size()) + " more frames";
    }
    if (at_limit) {
      ++tally->cut;
      return "";
    }
    return "the recorded stack ends after " + std::to_string(have) + " of " +
           std::to_string(want.size()) + (reference.more ? "+" : "") +
           " frames, below the depth limit " + std::to_string(limit_);
  }

  bool InOracle(uint64_t address) const {
    std::optional<ModuleLocation> where = reader_.Locate(address);
    return where && std::string(reader_.modules()[where->module].path).find("libhg_stack_oracle") !=
                        std::string::npos;
  }

  std::string Describe(const std::vector<uint64_t>& frames) const {
    std::ostringstream text;
    for (uint64_t address : frames) {
      text << "    0x" << std::hex << address << std::dec;
      std::optional<ModuleLocation> where = reader_.Locate(address);
      if (where) {
        std::string path = reader_.modules()[where->module].path;
        text << " " << path.substr(path.rfind('/') + 1);
        std::vector<report::SourceFrame> names = symbolizer_->Symbolize(path, where->offset - 1);
        if (!names.empty()) text << " " << names.back().function;
      }
      text << "\n";
    }
    return text.str();
  }

  const RecordingReader& reader_;
  report::Symbolizer* symbolizer_;
  uint32_t limit_ = 0;
  std::unordered_map<uint64_t, const LiveBlock*> by_address_;
};

// The words after `key` on every line of `lines` that starts with it.
std::vector<std::vector<std::string>> ChildRecords(const std::vector<std::string>& lines,
                                                   const std::string& key) {
  std::vector<std::vector<std::string>> records;
  for (const std::string& line : lines) {
    std::vector<std::string> words = Split(line);
    if (!words.empty() && words[0] == key) records.emplace_back(words.begin() + 1, words.end());
  }
  return records;
}

// The first executable `name` on PATH, or "".
std::string FindOnPath(const std::string& name) {
  const char* path = getenv("PATH");
  std::istringstream dirs(path == nullptr ? "/usr/bin:/bin" : path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = dir + "/" + name;
    // A pyenv or similar shim is a shell script: the workload would be the shell.
    if (access(candidate.c_str(), X_OK) == 0 && candidate.find("shims") == std::string::npos) {
      return candidate;
    }
  }
  return "";
}

class StackOracleTest : public ::testing::Test {
 protected:
  // Environment of a workload under the oracle and the recorder, sampling one call in `every`.
  std::vector<std::string> Env(uint32_t every, const std::string& options) const {
    return {"LD_PRELOAD=" + ProgramPath("libhg_stack_oracle.so") + ":" + HEAPGRAPH_PRELOAD,
            "HEAPGRAPH_OPTIONS=dir=" + root_.path() + (options.empty() ? "" : "," + options),
            "HG_ORACLE_FILE=" + root_.path() + "/oracle",
            "HG_ORACLE_EVERY=" + std::to_string(every),
            "HG_ORACLE_SAMPLES=" + std::to_string(kSamples)};
  }

  // Runs `path` to completion under the oracle and compares its stacks.
  Tally RunAndCompare(const std::string& path, const std::vector<std::string>& args, uint32_t every,
                      const std::string& options = "",
                      const std::vector<std::string>& extra_env = {},
                      std::vector<std::string>* lines = nullptr) {
    std::vector<std::string> env = Env(every, options);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    ChildProcess child(path, args, env);
    child.CloseStdin();
    EXPECT_TRUE(child.ReadToEof(kTimeout)) << child.Describe();
    std::optional<int> status = child.Wait(kTimeout);
    EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << child.Describe();
    if (lines != nullptr) *lines = child.lines();
    return Compare(child.pid());
  }

  Tally Compare(pid_t pid) {
    Tally tally;
    OracleFile oracle = ReadOracle(root_.path() + "/oracle." + std::to_string(pid));
    tally.calls = oracle.header.calls;
    tally.sampled = oracle.samples.size();
    std::string dir = root_.DirectoryOf(pid);
    EXPECT_FALSE(dir.empty()) << "no recording of " << pid;
    if (dir.empty()) return tally;
    RecordingReader reader(dir);
    StackComparison comparison(reader, &symbolizer_);
    for (const ReferenceStack& reference : oracle.samples) comparison.Add(reference, &tally);
    return tally;
  }

  // The verdict: enough samples, found in the recording, and every one equal.
  void Expect(const std::string& program, const Tally& tally, uint64_t min_compared,
              bool killed = false) {
    std::cout << tally.Line(program) << std::endl;
    RecordProperty("stacks_" + program, tally.Line(program));
    EXPECT_GE(tally.recorded, min_compared) << tally.Line(program);
    // Every sampled block is live in the recording; after a SIGKILL (`killed`) a shard the
    // writer was rehashing may be unreadable, so a few may be missing.
    if (killed) {
      EXPECT_GE(tally.recorded * 100, tally.sampled * 99) << tally.Line(program);
    } else {
      EXPECT_EQ(tally.recorded, tally.sampled)
          << tally.Line(program) << "\nnot recorded:\n"
          << (tally.unrecorded.empty() ? "" : tally.unrecorded[0]);
    }
    if (getenv("HG_ORACLE_VERBOSE") != nullptr) {
      for (const std::string& stack : tally.unrecorded) std::cout << "not recorded:\n" << stack;
    }
    EXPECT_EQ(tally.mismatched, 0u) << tally.Line(program) << "\n"
                                    << (tally.examples.empty() ? "" : tally.examples[0]) << "\n"
                                    << (tally.examples.size() < 2 ? "" : tally.examples[1]);
  }

  static constexpr uint32_t kSamples = 12000;
  static constexpr std::chrono::milliseconds kTimeout{60000};
  TempRoot root_;
  report::Symbolizer symbolizer_;
  std::vector<std::string> lines_;  // stdout of the last RunAndCompare that asked for it
};

// The bench's churn loop from 2 threads, killed once the oracle's samples are taken.
TEST_F(StackOracleTest, ChurnStacksEqualTheReferenceUnwind) {
  ChildProcess child(ProgramPath("hg_churn"), {"2"}, Env(16, "depth=64"));
  ASSERT_TRUE(child.WaitReady()) << child.Describe();
  std::string oracle = root_.path() + "/oracle." + std::to_string(child.pid());
  auto deadline = std::chrono::steady_clock::now() + kTimeout;
  hgoracle::Header header{};
  while (header.claimed < kSamples + 100 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(oracle, std::ios::binary);
    in.read(reinterpret_cast<char*>(&header), sizeof(header));
  }
  child.Kill(SIGKILL);
  child.Wait();
  Expect("churn", Compare(child.pid()), 10000, /*killed=*/true);
}

TEST_F(StackOracleTest, CxxTestBinaryStacksEqualTheReferenceUnwind) {
  Expect("hg_cxx_gtest", RunAndCompare(ProgramPath("hg_cxx_gtest"), {}, 3), 10000);
}

// Option unwind_rules=0: the complete, uncached walk (DwarfWalk) takes every stack.
TEST_F(StackOracleTest, CompleteWalkStacksEqualTheReferenceUnwind) {
  Expect("hg_cxx_gtest unwind_rules=0",
         RunAndCompare(ProgramPath("hg_cxx_gtest"), {}, 3, "unwind_rules=0"), 10000);
}

TEST_F(StackOracleTest, Python3StacksEqualTheReferenceUnwind) {
  std::string python = FindOnPath("python3");
  if (python.empty()) GTEST_SKIP() << "python3 is not installed";
  const std::string script =
      "import json, re, collections\n"
      "data = [{'id': i, 'name': 'item%d' % i, 'tags': ['t%d' % (i % 7), 'x' * (i % 13)]}"
      " for i in range(20000)]\n"
      "text = json.dumps(data)\n"
      "back = json.loads(text)\n"
      "words = re.findall(r'[a-z]+[0-9]*', text)\n"
      "counts = collections.Counter(words)\n"
      "by_length = {}\n"
      "for w in words[:50000]: by_length.setdefault(len(w), []).append(w)\n"
      "print(len(back), len(counts), len(by_length))\n";
  // PYTHONMALLOC=malloc: every object through malloc, not only pymalloc's arenas.
  Expect("python3", RunAndCompare(python, {"-c", script}, 16, "depth=64", {"PYTHONMALLOC=malloc"}),
         10000);
}

TEST_F(StackOracleTest, GitStacksEqualTheReferenceUnwind) {
  std::string git = FindOnPath("git");
  if (git.empty()) GTEST_SKIP() << "git is not installed";
  // A small repository with history (40 commits of 10 files), made without the recorder by one
  // git fast-import.
  std::string repo = root_.path() + "/repo", stream_path = root_.path() + "/history";
  {
    std::ofstream stream(stream_path);
    for (int c = 1; c <= 40; ++c) {
      stream << "commit refs/heads/master\ncommitter t <t@example.com> " << 1700000000 + c
             << " +0000\ndata <<E\ncommit " << c << "\nE\n";
      for (int f = 1; f <= 10; ++f) {
        std::string body;
        for (int i = c; i <= c * 50 + f; ++i) body += std::to_string(i) + "\n";
        stream << "M 644 inline file" << f << ".txt\ndata " << body.size() << "\n" << body << "\n";
      }
    }
  }
  std::string make = git + " init -q -b master " + repo + " && " + git + " -C " + repo +
                     " fast-import --quiet < " + stream_path + " >/dev/null 2>&1";
  ASSERT_EQ(system(make.c_str()), 0) << make;
  Expect("git", RunAndCompare(git, {"-C", repo, "log", "-p", "--stat"}, 1), 10000);
}

// A signal handler allocates while the main thread sorts and copies in glibc (no frame
// pointers): every stack crosses a signal frame at an arbitrary instruction.
TEST_F(StackOracleTest, SignalHandlerStacksEqualTheReferenceUnwind) {
  Expect("signal", RunAndCompare(ProgramPath("hg_unusual_stacks"), {"signal"}, 1), 2000);
}

// The same with the handler on an alternate signal stack: the walk crosses from it to the thread's.
TEST_F(StackOracleTest, AlternateSignalStackStacksEqualTheReferenceUnwind) {
  Expect("signal_altstack", RunAndCompare(ProgramPath("hg_unusual_stacks"), {"signal_altstack"}, 1),
         2000);
}

// Threads exiting: a pthread key destructor and a thread_local destructor allocate.
TEST_F(StackOracleTest, ThreadExitStacksEqualTheReferenceUnwind) {
  Expect("thread_exit", RunAndCompare(ProgramPath("hg_unusual_stacks"), {"thread_exit"}, 1), 500);
}

// Coroutines on stacks of their own (makecontext/swapcontext): the walk ends where the
// coroutine's stack begins (glibc's __start_context), like the reference's.
TEST_F(StackOracleTest, CoroutineStacksEqualTheReferenceUnwind) {
  Expect("coroutine", RunAndCompare(ProgramPath("hg_unusual_stacks"), {"coroutine"}, 1), 2000);
}

// The memo of the last walk (WalkMemo): the innermost frames repeat at the same stack pointers
// while the callers above them alternate; with the memo off, the same stacks.
TEST_F(StackOracleTest, MemoStacksBelowAnUnchangedTopEqualTheReferenceUnwind) {
  Expect("memo_top", RunAndCompare(ProgramPath("hg_unusual_stacks"), {"memo_top"}, 1), 2000);
  Expect("memo_top unwind_memo=0",
         RunAndCompare(ProgramPath("hg_unusual_stacks"), {"memo_top"}, 1, "unwind_memo=0"), 2000);
}

// JIT-like code without unwind info whose rbp points at an unmapped page: the walk stops at the
// JIT frame like the reference's (the JIT frame recorded), no crash.
TEST_F(StackOracleTest, JitCodeWithoutUnwindInfoEndsTheStack) {
  Tally tally = RunAndCompare(ProgramPath("hg_unusual_stacks"), {"jit"}, 1);
  Expect("jit", tally, 1000);
  EXPECT_EQ(tally.continued, 0u);
}

// The same JIT code keeping a frame-pointer chain: libgcc stops at the JIT frame; the recorder
// (the complete walk's frame-pointer step) goes on through the chain to the real caller, HgCallJit,
// and beyond. Accepted: those frames are right.
TEST_F(StackOracleTest, JitCodeWithFramePointerContinuesToItsCaller) {
  Tally tally = RunAndCompare(ProgramPath("hg_unusual_stacks"), {"jit_fp"}, 1, "", {}, &lines_);
  Expect("jit_fp", tally, 1000);
  AddressRange caller = RangeOf(lines_, "call_jit");
  EXPECT_GE(tally.continued, 2000u);
  for (uint64_t next : tally.next) ASSERT_TRUE(caller.Contains(next)) << std::hex << next;
}

// Children forked while another thread allocates (no unwinder lock may be left held in the
// child): each child's stacks, in its own recording.
TEST_F(StackOracleTest, ForkedChildrenStacksEqualTheReferenceUnwind) {
  Tally parent = RunAndCompare(ProgramPath("hg_unusual_stacks"), {"fork"}, 3, "", {}, &lines_);
  EXPECT_EQ(parent.mismatched, 0u) << parent.Line("fork parent");
  Tally children;
  std::vector<std::vector<std::string>> pids = ChildRecords(lines_, "child");
  EXPECT_EQ(pids.size(), 4u);
  for (const std::vector<std::string>& pid : pids) {
    Tally child = Compare(static_cast<pid_t>(ParseNumber(pid.at(0))));
    children.Add(child);
  }
  Expect("fork children", children, 2000);
}

// libhg_unwind_b.so loaded where libhg_unwind_a.so was, same code layout, other frame sizes:
// no unwind rule cached for A may be used for B.
TEST_F(StackOracleTest, LibraryReloadedAtTheSameAddressUsesItsOwnUnwindRules) {
  std::vector<std::string> args = {"reload", ProgramPath("libhg_unwind_a.so"),
                                   ProgramPath("libhg_unwind_b.so")};
  Expect("reload", RunAndCompare(ProgramPath("hg_unusual_stacks"), args, 1, "", {}, &lines_), 1000);
  std::vector<std::string> a = FieldOf(lines_, "base_a"), b = FieldOf(lines_, "base_b");
  ASSERT_FALSE(a.empty() || b.empty()) << "no base_a/base_b line";
  if (a != b) GTEST_SKIP() << "B was not loaded at A's address (" << a[0] << ", " << b[0] << ")";
}

// The same 20 times over while another thread allocates: stale ranges are published while other
// threads capture.
TEST_F(StackOracleTest, LibrariesReloadedWhileAnotherThreadAllocates) {
  std::vector<std::string> args = {"reload_threads", ProgramPath("libhg_unwind_a.so"),
                                   ProgramPath("libhg_unwind_b.so")};
  Expect("reload_threads", RunAndCompare(ProgramPath("hg_unusual_stacks"), args, 2), 5000);
}

}  // namespace
}  // namespace heapgraph::proctest
