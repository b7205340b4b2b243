// tests/programs: retain cycles through clang Blocks in C++ (clang -fblocks, libBlocksRuntime),
// for tests/scanner/BlocksObjcCycleTest. Usage: cycle_blocks CASE; run under `heapgraph run`.
//   shared_capture  blocks::ChatSession (make_shared) keeps a copied Block (onMessage) whose
//                   capture is a std::shared_ptr copy of the session: a leaked block-self cycle
//   byref_capture   the same with the shared_ptr in a __block variable the Block captures: the
//                   cycle goes through the heap Block_byref
//   weak_capture    control: the Block captures a std::weak_ptr to the session (held by a global)
//   plain_capture   control: the Block captures a plain ChatSession* (held by a global)
//   raw_holder      control: a blocks::Registry (held by a global) owns the copied Block, which
//                   captures a shared_ptr copy of the session; the session keeps a raw pointer to
//                   the Block without Block_copy, which does not own it: no retain cycle
//   c_struct_owner  a plain C struct (calloc, no vtable: untyped) keeps a copied Block that
//                   captures a plain pointer to the struct; both dropped: a leaked cycle through
//                   the Block's captured slot, kind block-self although the owner is untyped
//   all             every case
// Prints nothing; exits 0 (64 on a bad argument).
#include <Block.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace blocks {

struct ChatSession {
  void (^onMessage)() = nullptr;
  int messages = 0;
};

// Polymorphic, so that it is typed (a holder of the Block among the typed objects).
struct Registry {
  virtual ~Registry() = default;
  void (^handler)() = nullptr;
};

}  // namespace blocks

extern "C" {
struct c_owner {
  void (^callback)(void);
  int calls;
};
}

namespace {

using blocks::ChatSession;

std::shared_ptr<ChatSession>* g_weak_owner;
ChatSession* g_plain_owner;
blocks::Registry* g_registry;

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

__attribute__((noinline)) void RawHolder() {
  auto session = std::make_shared<ChatSession>();
  std::shared_ptr<ChatSession> self = session;
  g_registry = new blocks::Registry;
  g_registry->handler = Block_copy(^{
    self->messages++;
  });
  session->onMessage = g_registry->handler;  // borrowed: no Block_copy
}

__attribute__((noinline)) void CStructOwner() {
  struct c_owner* owner = static_cast<struct c_owner*>(std::calloc(1, sizeof(struct c_owner)));
  owner->callback = Block_copy(^{
    owner->calls++;
  });
}

// Overwrites the stack below this frame, so no dead frame keeps a pointer to a case's objects
// (the allocation hooks' frames below the cases hold block addresses). The asm keeps the compiler
// from dropping the dead stores, and with them the whole call.
__attribute__((noinline)) void ClearStack() {
  char buffer[64 * 1024];
  std::memset(buffer, 0, sizeof(buffer));
  asm volatile("" : : "r"(buffer) : "memory");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 64;
  bool all = std::strcmp(argv[1], "all") == 0;
  bool any = false;
  struct Case {
    const char* name;
    void (*run)();
  } cases[] = {{"shared_capture", SharedCapture}, {"byref_capture", ByrefCapture},
               {"weak_capture", WeakCapture},     {"plain_capture", PlainCapture},
               {"raw_holder", RawHolder},         {"c_struct_owner", CStructOwner}};
  for (const Case& c : cases) {
    if (all || std::strcmp(argv[1], c.name) == 0) {
      c.run();
      any = true;
    }
  }
  ClearStack();
  return any ? 0 : 64;
}
