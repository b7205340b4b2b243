// tests/programs: blocks kept alive by each kind of root, for tests/check/LeakCheckExplainTest
// (issue 11, item 2: "why is this block reachable?"). Each block has its own allocation site:
//   ExplainGlobalSite     48 B, kept by the global g_global (a)
//   ExplainStackSite      64 B, kept by a local of ExplainStackHolder on a second thread, which
//                         blocks in read() until the process ends (b)
//   ExplainChainHeadSite  96 B, kept by the global g_chain; its word at +16 points to
//   ExplainChainTailSite 112 B (c)
//   ExplainTlsSite        80 B, kept by the main thread's thread_local t_tls (d)
//   ExplainLeakSite      128 B, leaked (its address is kept XOR-masked)
// Usage: explain_roots run         prints "name 0x..." per block, "worker_tid N", "main_tid N",
//                                  then returns (the at-exit check of `heapgraph run` explains)
//        explain_roots api JSON    the same lines, then heapgraph_check_leaks_explain with the five
//                                  addresses, the JSON report to JSON; prints "result N" and
//                                  exits 0
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ProgramSupport.h"
#include "heapgraph/heapgraph.h"

#define SITE extern "C" __attribute__((noinline, used))

namespace {

constexpr uintptr_t kMask = 0x5a5a5a5a5a5a5a5aull;

void* volatile g_global;
void* volatile g_chain;
thread_local void* volatile t_tls;
volatile uintptr_t g_leak_masked;
volatile uintptr_t g_stack_masked;  // the worker's block, for printing only
volatile pid_t g_worker_tid;
int g_ready[2];
int g_block[2];

void* Filled(void* p, size_t size) {
  memset(p, 0, size);
  return p;
}

}  // namespace

SITE void* ExplainGlobalSite() {
  return Filled(malloc(48), 48);
}
SITE void* ExplainStackSite() {
  return Filled(malloc(64), 64);
}
SITE void* ExplainChainHeadSite() {
  return Filled(malloc(96), 96);
}
SITE void* ExplainChainTailSite() {
  return Filled(malloc(112), 112);
}
SITE void* ExplainTlsSite() {
  return Filled(malloc(80), 80);
}
SITE void* ExplainLeakSite() {
  return Filled(malloc(128), 128);
}

// The worker's frame holds the only pointer to its block, in a volatile local, while it blocks.
SITE void ExplainStackHolder() {
  void* volatile local = ExplainStackSite();
  g_stack_masked = reinterpret_cast<uintptr_t>(local) ^ kMask;
  g_worker_tid = static_cast<pid_t>(syscall(SYS_gettid));
  char byte = 1;
  (void)!write(g_ready[1], &byte, 1);
  (void)!read(g_block[0], &byte, 1);  // never returns: nobody writes
  local = nullptr;
}

void* Worker(void*) {
  ExplainStackHolder();
  return nullptr;
}

SITE void SetUp() {
  g_global = ExplainGlobalSite();
  void* head = ExplainChainHeadSite();
  static_cast<void**>(head)[2] = ExplainChainTailSite();
  g_chain = head;
  t_tls = ExplainTlsSite();
  g_leak_masked = reinterpret_cast<uintptr_t>(ExplainLeakSite()) ^ kMask;
}

// The five addresses as text (never as pointers on this stack), in the order above.
SITE void Targets(char* out, size_t size) {
  uintptr_t tail = reinterpret_cast<uintptr_t>(static_cast<void* const*>(g_chain)[2]);
  snprintf(out, size, "%#jx/%#jx/%#jx/%#jx/%#jx",
           static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(g_global)),
           static_cast<uintmax_t>(g_stack_masked ^ kMask), static_cast<uintmax_t>(tail),
           static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(t_tls)),
           static_cast<uintmax_t>(g_leak_masked ^ kMask));
}

SITE void PrintBlocks() {
  char targets[256];
  Targets(targets, sizeof(targets));
  const char* names[] = {"global", "stack", "chain_tail", "tls", "leak"};
  char* cursor = targets;
  for (const char* name : names) {
    char* slash = strchr(cursor, '/');
    if (slash != nullptr) *slash = '\0';
    printf("%s %s\n", name, cursor);
    cursor = slash != nullptr ? slash + 1 : cursor;
  }
  printf("chain_head %#jx\n", static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(g_chain)));
  printf("worker_tid %d\nmain_tid %d\n", static_cast<int>(g_worker_tid),
         static_cast<int>(getpid()));
  fflush(stdout);
}

int main(int argc, char** argv) {
  bool api = argc == 3 && strcmp(argv[1], "api") == 0;
  if (!api && !(argc == 2 && strcmp(argv[1], "run") == 0)) {
    fprintf(stderr, "usage: explain_roots run | api JSON\n");
    return 64;
  }
  if (pipe(g_ready) != 0 || pipe(g_block) != 0) return 1;
  static char out_buffer[1 << 16];
  setvbuf(stdout, out_buffer, _IOLBF, sizeof(out_buffer));
  pthread_t worker;
  if (pthread_create(&worker, nullptr, Worker, nullptr) != 0) return 1;
  pthread_detach(worker);
  char byte;
  (void)!read(g_ready[0], &byte, 1);
  SetUp();
  PrintBlocks();
  hgprog::ScrubStack();
  if (!api) return 0;
  char targets[256];
  Targets(targets, sizeof(targets));
  hgprog::ScrubStack();
  heapgraph_leak_summary summary;
  int result = heapgraph_check_leaks_explain(argv[2], nullptr, targets, &summary);
  printf("result %d %s\n", result, summary.error);
  fflush(stdout);
  _exit(0);
}
