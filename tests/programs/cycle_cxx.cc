// tests/programs: C++ retain cycles and their controls, for tests/scanner/RetainCycleTest. Usage:
// cycle_cxx CASE; run under `heapgraph run` (the check runs at exit, after static destructors).
//   shared_leaked    cyc::Alpha <-> cyc::Beta through shared_ptr members (make_shared), both
//                    handles dropped: a leaked shared_ptr cycle
//   shared_global    the same pair (cyc::Gamma <-> cyc::Delta) still held by a global that has no
//                    destructor: a reachable shared_ptr cycle, root kind global
//   shared_tls       the same pair (cyc::Gamma <-> cyc::Delta) held by a thread_local of the main
//                    thread (static TLS, no destructor): a reachable shared_ptr cycle, root kind
//                    tls
//   function_self    cyc::Session (make_shared) keeps a std::function whose lambda captures a
//                    shared_ptr to the session: a leaked function-self cycle
//   containers       a leaked cyc::Registry and one held by a global, each with an empty
//                    std::map, std::set and std::list (their headers point into the object
//                    itself): no cycle, leaked or reachable; one direct leak
//   shared_self      a cyc::Loop (make_shared) holding a shared_ptr to itself: a leaked
//                    shared_ptr cycle of one object (a typed self-capture)
//   mixed            containers, shared_leaked and function_self in one run: exactly the two
//                    real cycles, the one retaining most first
//   counted_ptr      cyc::Left <-> cyc::Right through shared_ptr<T>(new T) (separate control
//                    blocks, _Sp_counted_ptr): a leaked shared_ptr cycle
//   weak_control     cyc::Parent -> shared_ptr<cyc::Child>, Child -> weak_ptr<Parent>, leaked
//                    through a raw `new shared_ptr<Parent>`: no retain cycle
//   weak_function    cyc::Widget keeps a std::function capturing a weak_ptr to itself, held by a
//                    global: no retain cycle
//   polymorphic      one leaked cyc::Derived (a vtable; no cycle): the leak's type
//   all              every case above but mixed
// Prints nothing; exits 0 (64 on a bad argument).
#include <cstdio>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>

#include "ProgramSupport.h"

namespace cyc {

struct Beta;
struct Alpha {
  std::shared_ptr<Beta> beta;
  char pad[40] = {};
};
struct Beta {
  std::shared_ptr<Alpha> alpha;
  char pad[56] = {};
};

struct Delta;
struct Gamma {
  std::shared_ptr<Delta> delta;
  char pad[24] = {};
};
struct Delta {
  std::shared_ptr<Gamma> gamma;
  char pad[72] = {};
};

struct Session {
  std::function<void()> on_message;
  int messages = 0;
};

struct Right;
struct Left {
  virtual ~Left() = default;
  std::shared_ptr<Right> right;
};
struct Right {
  virtual ~Right() = default;
  std::shared_ptr<Left> left;
};

struct Child;
struct Parent {
  std::shared_ptr<Child> child;
  char pad[88] = {};
};
struct Child {
  std::weak_ptr<Parent> parent;
  char pad[104] = {};
};

struct Widget {
  std::function<void()> on_click;
  int clicks = 0;
};

struct Registry {
  virtual ~Registry() = default;
  std::map<int, int> by_id;
  std::set<int> ids;
  std::list<int> pending;
  char pad[200] = {};
};

struct Loop {
  std::shared_ptr<Loop> self;
  char pad[8] = {};
};

struct Base {
  virtual ~Base() = default;
  long value = 1;
};
struct Derived : Base {
  long more[5] = {};
};

}  // namespace cyc

namespace {

// Holders that no static destructor releases: the at-exit check still sees them as roots.
alignas(std::shared_ptr<cyc::Gamma>) unsigned char g_gamma[sizeof(std::shared_ptr<cyc::Gamma>)];
alignas(std::shared_ptr<cyc::Widget>) unsigned char g_widget[sizeof(std::shared_ptr<cyc::Widget>)];
cyc::Base* volatile g_sink = nullptr;
cyc::Registry* volatile g_registry = nullptr;
cyc::Registry* volatile g_leaked_registry = nullptr;
alignas(std::shared_ptr<cyc::Gamma>) thread_local unsigned char t_gamma[sizeof(
    std::shared_ptr<cyc::Gamma>)];

__attribute__((noinline)) void SharedLeaked() {
  auto a = std::make_shared<cyc::Alpha>();
  auto b = std::make_shared<cyc::Beta>();
  a->beta = b;
  b->alpha = a;
}

__attribute__((noinline)) void SharedGlobal() {
  auto g = std::make_shared<cyc::Gamma>();
  auto d = std::make_shared<cyc::Delta>();
  g->delta = d;
  d->gamma = g;
  new (g_gamma) std::shared_ptr<cyc::Gamma>(g);
}

__attribute__((noinline)) void SharedTls() {
  auto g = std::make_shared<cyc::Gamma>();
  auto d = std::make_shared<cyc::Delta>();
  g->delta = d;
  d->gamma = g;
  new (t_gamma) std::shared_ptr<cyc::Gamma>(g);
}

__attribute__((noinline)) void FunctionSelf() {
  auto session = std::make_shared<cyc::Session>();
  session->on_message = [session] { ++session->messages; };
}

__attribute__((noinline)) void CountedPtr() {
  std::shared_ptr<cyc::Left> l(new cyc::Left);
  std::shared_ptr<cyc::Right> r(new cyc::Right);
  l->right = r;
  r->left = l;
}

__attribute__((noinline)) void WeakControl() {
  auto parent = std::make_shared<cyc::Parent>();
  parent->child = std::make_shared<cyc::Child>();
  parent->child->parent = parent;
  new std::shared_ptr<cyc::Parent>(parent);  // leaked on purpose
}

__attribute__((noinline)) void WeakFunction() {
  auto widget = std::make_shared<cyc::Widget>();
  std::weak_ptr<cyc::Widget> weak = widget;
  widget->on_click = [weak] {
    if (auto w = weak.lock()) ++w->clicks;
  };
  new (g_widget) std::shared_ptr<cyc::Widget>(widget);
}

__attribute__((noinline)) void Containers() {
  g_registry = new cyc::Registry;
  g_leaked_registry = new cyc::Registry;
  g_leaked_registry = nullptr;
}

__attribute__((noinline)) void SharedSelf() {
  auto loop = std::make_shared<cyc::Loop>();
  loop->self = loop;
}

__attribute__((noinline)) void Mixed() {
  Containers();
  SharedLeaked();
  FunctionSelf();
}

__attribute__((noinline)) void Polymorphic() {
  g_sink = new cyc::Derived;
  g_sink = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 64;
  std::string c = argv[1];
  bool all = c == "all";
  bool known = false;
  auto run = [&](const char* name, void (*f)()) {
    if (!all && c != name) return;
    known = true;
    f();
    hgprog::ScrubStack();
  };
  run("shared_leaked", SharedLeaked);
  run("shared_global", SharedGlobal);
  run("shared_tls", SharedTls);
  run("function_self", FunctionSelf);
  run("counted_ptr", CountedPtr);
  run("weak_control", WeakControl);
  run("weak_function", WeakFunction);
  run("polymorphic", Polymorphic);
  run("containers", Containers);
  run("shared_self", SharedSelf);
  if (!all) run("mixed", Mixed);
  return known ? 0 : 64;
}
