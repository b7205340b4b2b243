// tests/heap/runtime/LeakCheckTriggerTest's C child (no C++ runtime, whose emergency pool is a
// live block from the start): allocates and frees one block, so it holds no live block at exit;
// with the argument "keep" it keeps one, reachable from a global; with "lose" it keeps one and
// drops its only pointer (one direct leak).
#include <stdlib.h>
#include <string.h>

void* volatile g_kept;

int main(int argc, char** argv) {
  void* block = malloc(100);
  if (argc > 1 && strcmp(argv[1], "keep") == 0) {
    g_kept = block;
  } else if (argc > 1 && strcmp(argv[1], "lose") == 0) {
    g_kept = block;
    g_kept = NULL;
  } else {
    free(block);
  }
  return 0;
}
