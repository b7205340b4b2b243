// bench/: why the leak scan's snapshot child pays for every root byte it reads
// (docs/performance.md, "Leak scan"). A forked child reads its parent's memory, which it shares
// copy-on-write, three ways: process_vm_readv() on itself in 64 KiB pieces (what
// scanner/HeapMarker::ScanRoot does), plain loads, and pread() of /proc/self/mem. For each it
// prints the time and the child's Private_Clean + Private_Dirty (smaps_rollup) afterwards: a
// read that pins pages (FOLL_PIN, process_vm_readv) makes the kernel unshare, i.e. copy, every
// shared anonymous page it touches.
//
// Usage: leak_cow_read_bench [MiB (default 256)]
#include <fcntl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

double NowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

long PrivateKb() {
  FILE* f = fopen("/proc/self/smaps_rollup", "r");
  if (f == nullptr) return -1;
  char line[256];
  long total = 0;
  while (fgets(line, sizeof(line), f) != nullptr) {
    if (strncmp(line, "Private_Dirty:", 14) == 0) total += atol(line + 14);
    if (strncmp(line, "Private_Clean:", 14) == 0) total += atol(line + 14);
  }
  fclose(f);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = (argc > 1 ? strtoull(argv[1], nullptr, 0) : 256) << 20;
  auto* memory = static_cast<char*>(malloc(bytes));
  memset(memory, 1, bytes);
  const char* names[] = {"process_vm_readv (64 KiB pieces)", "plain loads", "pread /proc/self/mem"};
  printf("| %zu MiB shared copy-on-write, read by the child with | ms | child private MiB after |\n",
         bytes >> 20);
  printf("| --- | ---: | ---: |\n");
  for (int mode = 0; mode < 3; ++mode) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      static char piece[64 * 1024];
      long before = PrivateKb();
      int mem = mode == 2 ? open("/proc/self/mem", O_RDONLY | O_CLOEXEC) : -1;
      uint64_t sum = 0;
      double start = NowMs();
      for (size_t offset = 0; offset < bytes; offset += sizeof(piece)) {
        if (mode == 0) {
          iovec local = {piece, sizeof(piece)}, remote = {memory + offset, sizeof(piece)};
          if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) < 0) _exit(3);
          sum += static_cast<uint64_t>(piece[7]);
        } else if (mode == 1) {
          for (size_t i = 0; i < sizeof(piece); i += 64) sum += static_cast<uint64_t>(memory[offset + i]);
        } else {
          if (pread(mem, piece, sizeof(piece), static_cast<off_t>(reinterpret_cast<uintptr_t>(memory + offset))) < 0) _exit(3);
          sum += static_cast<uint64_t>(piece[7]);
        }
      }
      double ms = NowMs() - start;
      printf("| %s | %.0f | %.0f |\n", names[mode], ms, (PrivateKb() - before) / 1024.0);
      fflush(stdout);
      _exit(sum == 0 ? 1 : 0);
    }
    waitpid(pid, nullptr, 0);
  }
  return 0;
}
