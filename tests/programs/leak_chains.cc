// tests/programs: leaked structures with indirect blocks and cycles, for the leak scanner's
// accuracy test (tests/scanner/LeakAccuracyTest). Usage: leak_chains CASE.
//   list          LeakListHead (48 B) -> 10 x LeakListNode (32 B): 1 direct, 10 indirect
//   tree          a complete binary tree of depth 4: LeakTreeRoot (32 B) and 14 x LeakTreeNode
//                 (32 B): 1 direct, 14 indirect
//   self_cycle    LeakSelfCycle (80 B) points to itself: 1 direct, no cycle
//   cycle2        2 x LeakCycle2 (96 B) pointing to each other: 1 direct, 1 indirect
//   cycle3        3 x LeakCycle3 (112 B) in a ring: 1 direct, 2 indirect
//   cycle_tail_out  2-cycle of LeakCycleTailOut (144 B); one member points to a chain of
//                   3 x LeakTailOutNode (160 B): 1 direct (a cycle member), 4 indirect
//   cycle_tail_in   a chain of 3 x LeakTailInNode (176 B) whose last node points into a
//                   2-cycle of LeakCycleTailIn (192 B) ("rho"): the chain head is the only
//                   direct block; 2 + 2 indirect
//   all           every case above in one process
// Block sizes are unique per structure (the test matches cycles by member size), multiples of 16,
// and every block is zero-filled before its links are set. Prints nothing; exits 0 (64 on a bad
// argument).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ProgramSupport.h"

#define SITE extern "C" __attribute__((noinline, used))

namespace {

inline void Use(const volatile void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

// Every node starts with a link; the rest is zero padding up to its size.
struct Node {
  Node* next;
  Node* other;
};

Node* Zeroed(void* p, size_t size) {
  memset(p, 0, size);
  return static_cast<Node*>(p);
}

}  // namespace

// --- list ---------------------------------------------------------------------------------------

SITE Node* LeakListNode(Node* next) {
  Node* n = Zeroed(malloc(32), 32);
  n->next = next;
  return n;
}

SITE void LeakListHead() {
  Node* first = nullptr;
  for (int i = 0; i < 10; ++i) first = LeakListNode(first);
  Node* volatile head = Zeroed(malloc(48), 48);
  head->next = first;
  head = nullptr;
}

// --- tree ---------------------------------------------------------------------------------------

SITE Node* LeakTreeNode(int depth) {
  Node* n = Zeroed(malloc(32), 32);
  if (depth > 1) {
    n->next = LeakTreeNode(depth - 1);
    n->other = LeakTreeNode(depth - 1);
  }
  return n;
}

SITE void LeakTreeRoot() {
  Node* volatile root = Zeroed(malloc(32), 32);
  root->next = LeakTreeNode(3);
  root->other = LeakTreeNode(3);
  root = nullptr;
}

// --- cycles -------------------------------------------------------------------------------------

SITE void LeakSelfCycle() {
  Node* volatile n = Zeroed(malloc(80), 80);
  n->next = n;
  n = nullptr;
}

SITE void LeakCycle2() {
  Node* volatile a = Zeroed(malloc(96), 96);
  Node* volatile b = Zeroed(malloc(96), 96);
  a->next = b;
  b->next = a;
  a = nullptr;
  b = nullptr;
}

SITE void LeakCycle3() {
  Node* volatile a = Zeroed(malloc(112), 112);
  Node* volatile b = Zeroed(malloc(112), 112);
  Node* volatile c = Zeroed(malloc(112), 112);
  a->next = b;
  b->next = c;
  c->next = a;
  a = nullptr;
  b = nullptr;
  c = nullptr;
}

SITE Node* LeakTailOutNode(Node* next) {
  Node* n = Zeroed(malloc(160), 160);
  n->next = next;
  return n;
}

SITE void LeakCycleTailOut() {
  Node* volatile a = Zeroed(malloc(144), 144);
  Node* volatile b = Zeroed(malloc(144), 144);
  a->next = b;
  b->next = a;
  b->other = LeakTailOutNode(LeakTailOutNode(LeakTailOutNode(nullptr)));
  a = nullptr;
  b = nullptr;
}

SITE Node* LeakTailInNode(Node* next) {
  Node* n = Zeroed(malloc(176), 176);
  n->next = next;
  return n;
}

SITE void LeakCycleTailIn() {
  Node* volatile a = Zeroed(malloc(192), 192);
  Node* volatile b = Zeroed(malloc(192), 192);
  a->next = b;
  b->next = a;
  Node* volatile head = LeakTailInNode(LeakTailInNode(LeakTailInNode(a)));
  a = nullptr;
  b = nullptr;
  head = nullptr;
  Use(&head);
}

// ------------------------------------------------------------------------------------------------

namespace {

struct Case {
  const char* name;
  void (*run)();
};

const Case kCases[] = {
    {"list", LeakListHead},
    {"tree", LeakTreeRoot},
    {"self_cycle", LeakSelfCycle},
    {"cycle2", LeakCycle2},
    {"cycle3", LeakCycle3},
    {"cycle_tail_out", LeakCycleTailOut},
    {"cycle_tail_in", LeakCycleTailIn},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: leak_chains CASE\n");
    return 64;
  }
  bool all = strcmp(argv[1], "all") == 0;
  bool known = all;
  for (const Case& c : kCases) {
    if (all || strcmp(argv[1], c.name) == 0) {
      c.run();
      hgprog::ScrubStack();
      known = true;
    }
  }
  if (!known) {
    fprintf(stderr, "leak_chains: unknown case %s\n", argv[1]);
    return 64;
  }
  return 0;
}
