// Stacks recorded through code without frame pointers (tests/programs/hg_no_frame_pointers.cc,
// built -O2 -fomit-frame-pointer, allocating through libstdc++'s operator new and glibc's strdup):
// the innermost frame lies in the library that called malloc, and the user's functions beyond it
// symbolize (module map + Symbolizer), so the recorder unwound through code that keeps no frame
// pointer.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "reader/RecordingReader.h"
#include "report/Symbolizer.h"
#include "tests/ChildProcess.h"

namespace heapgraph::proctest {
namespace {

struct SymbolizedFrame {
  std::string module;                  // path of the frame's module, "" when none
  std::vector<std::string> functions;  // inlined callees first, then the containing function
};

bool NamesFunction(const std::string& symbol, const std::string& function) {
  return symbol == function || symbol.rfind(function + "(", 0) == 0;
}

std::string Join(const std::vector<SymbolizedFrame>& frames) {
  std::string text;
  for (const SymbolizedFrame& f : frames) {
    text += "  " + (f.module.empty() ? std::string("?") : f.module) + ":";
    for (const std::string& name : f.functions) text += " " + name;
    text += "\n";
  }
  return text;
}

class RecorderUnwindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    child_ =
        std::make_unique<ChildProcess>(ProgramPath("hg_no_frame_pointers"),
                                       std::vector<std::string>{}, RecordingEnv(root_.path(), ""));
    ASSERT_TRUE(child_->WaitReady()) << child_->Describe();
    reader_ = std::make_unique<RecordingReader>(root_.DirectoryOf(child_->pid()));
  }

  void TearDown() override {
    if (child_ != nullptr) {
      EXPECT_TRUE(child_->Finish()) << child_->Describe();
    }
  }

  // The stack of the block the child printed as `name`, symbolized frame by frame.
  std::vector<SymbolizedFrame> StackOf(const std::string& name) {
    const LiveBlock* block = FindBlock(*reader_, child_->Number(name));
    EXPECT_NE(block, nullptr) << name << " is not recorded";
    std::vector<SymbolizedFrame> frames;
    if (block == nullptr) return frames;
    for (uint64_t address : reader_->Frames(block->stack)) {
      SymbolizedFrame frame;
      std::optional<ModuleLocation> where = reader_->Locate(address);
      if (where) {
        frame.module = reader_->modules()[where->module].path;
        // A return address: the call instruction is the byte before it.
        for (const report::SourceFrame& f :
             symbolizer_.Symbolize(frame.module, where->offset - 1)) {
          frame.functions.push_back(f.function);
        }
      }
      frames.push_back(frame);
    }
    return frames;
  }

  // The innermost frame lies in a module whose path contains `library`, and some later frames
  // name each of `functions` in order, innermost first.
  void ExpectUnwoundThrough(const std::string& block, const std::string& library,
                            const std::vector<std::string>& functions) {
    std::vector<SymbolizedFrame> frames = StackOf(block);
    ASSERT_FALSE(frames.empty()) << block << " has no stack";
    EXPECT_NE(frames[0].module.find(library), std::string::npos)
        << "the innermost frame is not in " << library << ":\n"
        << Join(frames);
    size_t next = 0;
    for (size_t i = 1; i < frames.size() && next < functions.size(); ++i) {
      for (const std::string& symbol : frames[i].functions) {
        if (next < functions.size() && NamesFunction(symbol, functions[next])) ++next;
      }
    }
    EXPECT_EQ(next, functions.size())
        << "missing " << functions[std::min(next, functions.size() - 1)] << " in the stack of "
        << block << ":\n"
        << Join(frames);
  }

  TempRoot root_;
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<RecordingReader> reader_;
  report::Symbolizer symbolizer_;
};

TEST_F(RecorderUnwindTest, OperatorNewFromCodeWithoutFramePointersReachesBothCallers) {
  ExpectUnwoundThrough("new", "libstdc++", {"UserAllocatesWithNew", "UserCaller"});
}

TEST_F(RecorderUnwindTest, StrdupFromCodeWithoutFramePointersReachesBothCallers) {
  ExpectUnwoundThrough("strdup", "libc.so", {"UserDuplicates", "UserDuplicatesCaller"});
}

}  // namespace
}  // namespace heapgraph::proctest
