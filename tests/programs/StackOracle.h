// tests/programs: the file format of the stack oracle (stack_oracle.cc, libhg_stack_oracle.so),
// shared with the test that reads it (tests/heap/runtime/StackOracleTest). The oracle maps the
// file <HG_ORACLE_FILE>.<pid> shared and writes samples into it as they are taken, so the file is
// complete up to the last published sample even after SIGKILL. A sample whose address is 0 was
// claimed but not (or not yet) published, or its allocation failed: readers skip it.
#pragma once

#include <cstdint>

namespace hgoracle {

inline constexpr char kMagic[8] = {'H', 'G', 'O', 'R', 'A', 'C', 'L', '1'};
// Reference frames kept per sample: more than the recorder's deepest stack (64) plus the
// oracle's own frame, so a recorded stack cut at its depth limit is still checked as a prefix.
inline constexpr uint32_t kFrames = 72;

struct Header {
  char magic[8];
  uint32_t capacity;     // samples the file holds
  uint32_t sample_size;  // sizeof(Sample)
  uint32_t claimed;      // samples claimed so far (atomic in the oracle; may exceed capacity)
  uint32_t every;        // one allocation call in `every` is sampled
  uint64_t calls;        // allocation calls seen (atomic; approximate after SIGKILL)
};

struct Sample {
  uint64_t address;  // the block the call returned; written last (release)
  uint32_t depth;    // frames stored
  uint32_t more;     // 1: the reference unwind had more than kFrames frames
  uint32_t
      function;  // 1 malloc, 2 calloc, 3 realloc, 4 posix_memalign, 5 aligned_alloc, 6 memalign
  uint32_t unwind_info_ends;  // 1: libgcc stopped at a frame without unwind info (no FDE): JIT
                              // code, an lld-linked program's PLT (lld writes no FDE for it)
  uint32_t next_library;  // 1: a frame lies in the next interposer (libheapgraph.so's own calls,
                          // from its tool threads, which it never records)
  uint32_t reserved;
  uint64_t frames[kFrames];  // return addresses, innermost first, the oracle's own frames left out
};

}  // namespace hgoracle
