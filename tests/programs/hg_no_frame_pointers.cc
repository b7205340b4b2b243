// tests/programs: built with -O2 -fomit-frame-pointer. Allocates through libstdc++'s operator new
// (UserAllocatesWithNew, called from UserCaller) and through glibc's strdup (UserDuplicates,
// called from UserDuplicatesCaller); neither library keeps frame pointers, so the recorded stacks
// reach the user functions only if the recorder unwinds with unwind tables. Prints
// "new <address>" and "strdup <address>", then "ready", and waits for stdin to close.
#include <stdlib.h>
#include <string.h>

#include "ProgramSupport.h"

// noipa: no inlining, cloning or interprocedural shortcuts, so each function keeps its own frame
// and name. Clang has no noipa; noinline is what it needs.
#ifdef __clang__
#define HG_USER_FUNCTION __attribute__((noinline))
#else
#define HG_USER_FUNCTION __attribute__((noipa))
#endif

struct Payload {
  char bytes[40];
};

HG_USER_FUNCTION Payload* UserAllocatesWithNew() {
  auto* p = new Payload;
  hgprog::Keep(p);
  return p;
}

HG_USER_FUNCTION void UserCaller() {
  Payload* p = UserAllocatesWithNew();
  hgprog::PrintAddress("new", p);
}

HG_USER_FUNCTION char* UserDuplicates(const char* text) {
  char* p = strdup(text);
  hgprog::Keep(p);
  return p;
}

HG_USER_FUNCTION void UserDuplicatesCaller(const char* text) {
  char* p = UserDuplicates(text);
  hgprog::PrintAddress("strdup", p);
}

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  UserCaller();
  UserDuplicatesCaller(argc > 1 ? argv[1] : "duplicated by strdup");
  hgprog::Ready();
  hgprog::WaitForStdinEof();
  return 0;
}
