// tests/programs: retain cycles through clang Blocks in C++ (clang -fblocks, libBlocksRuntime),
// for tests/scanner/BlocksObjcCycleTest. Usage: cycle_blocks CASE; run under `heapgraph run`.
//   shared_capture  blocks::ChatSession (make_shared) keeps a copied Block (onMessage) whose
//                   capture is a std::shared_ptr copy of the session: a leaked block-self cycle
//   byref_capture   the same with the shared_ptr in a __block variable the Block captures: the
//                   cycle goes through the heap Block_byref
//   weak_capture    control: the Block captures a std::weak_ptr to the session (held by a global)
//   plain_capture   control: the Block captures a plain ChatSession* (held by a global)
//   all             every case
// Prints nothing; exits 0 (64 on a bad argument).
#include <Block.h>

#include <cstdio>
#include <cstring>
#include <memory>

namespace blocks {

struct ChatSession {
  void (^onMessage)() = nullptr;
  int messages = 0;
};

}  // namespace blocks

namespace {

using blocks::ChatSession;

std::shared_ptr<ChatSession>* g_weak_owner;
ChatSession* g_plain_owner;

__attribute__((noinline)) void SharedCapture() {
  auto session = std::make_shared<ChatSession>();
  std::shared_ptr<ChatSession> self = session;
  session->onMessage = Block_copy(^{
    self->messages++;
  });
}

__attribute__((noinline)) void ByrefCapture() {
  auto session = std::make_shared<ChatSession>();
  __block std::shared_ptr<ChatSession> self = session;
  session->onMessage = Block_copy(^{
    self->messages++;
  });
}

__attribute__((noinline)) void WeakCapture() {
  g_weak_owner = new std::shared_ptr<ChatSession>(std::make_shared<ChatSession>());
  std::weak_ptr<ChatSession> weak = *g_weak_owner;
  (*g_weak_owner)->onMessage = Block_copy(^{
    if (auto s = weak.lock()) s->messages++;
  });
}

__attribute__((noinline)) void PlainCapture() {
  ChatSession* session = new ChatSession;
  g_plain_owner = session;
  session->onMessage = Block_copy(^{
    session->messages++;
  });
}

// Overwrites the stack below this frame, so no dead frame keeps a pointer to a case's objects.
__attribute__((noinline)) void ClearStack() {
  volatile char buffer[16384];
  std::memset(const_cast<char*>(buffer), 0, sizeof(buffer));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 64;
  bool all = std::strcmp(argv[1], "all") == 0;
  bool any = false;
  struct Case {
    const char* name;
    void (*run)();
  } cases[] = {{"shared_capture", SharedCapture},
               {"byref_capture", ByrefCapture},
               {"weak_capture", WeakCapture},
               {"plain_capture", PlainCapture}};
  for (const Case& c : cases) {
    if (all || std::strcmp(argv[1], c.name) == 0) {
      c.run();
      any = true;
    }
  }
  ClearStack();
  return any ? 0 : 64;
}
