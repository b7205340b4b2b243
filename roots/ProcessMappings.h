// roots/: the memory map of a process, parsed from /proc/<pid>/maps (or from given text).
//
// Each Mapping's name is a view into this object's own text buffer, so a ProcessMappings can be
// moved but not copied. Once Reserve() has sized the buffers, ReadWithoutAllocating() re-reads
// the live map without touching the heap, which is what a caller needs while the world is stopped
// (a stopped thread may hold the malloc lock).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace heapgraph::roots {

class ProcessMappings {
 public:
  enum class Kind : uint8_t {
    kMainStack,  // "[stack]": the main thread's stack
    kHeap,       // "[heap]": the brk heap
    kAnonymous,  // no name, or "[anon:...]" (PR_SET_VMA_ANON_NAME)
    kFile,       // backed by a file ("/path", possibly " (deleted)"), or a non-zero inode
    kSpecial,    // "[vdso]", "[vvar]", "[vsyscall]" and any other bracketed kernel name
  };

  struct Mapping {
    uintptr_t start = 0;  // inclusive
    uintptr_t end = 0;    // exclusive; start < end
    bool readable = false;
    bool writable = false;
    bool executable = false;
    bool shared = false;  // 's' in the fourth permission column; 'p' means private
    uint64_t offset = 0;
    uint32_t dev_major = 0;
    uint32_t dev_minor = 0;
    uint64_t inode = 0;
    std::string_view name;  // empty for anonymous mappings
    Kind kind = Kind::kAnonymous;

    uintptr_t size() const { return end - start; }
    bool Contains(uintptr_t address) const { return address >= start && address < end; }
  };

  ProcessMappings() = default;
  ProcessMappings(ProcessMappings&&) = default;
  ProcessMappings& operator=(ProcessMappings&&) = default;
  ProcessMappings(const ProcessMappings&) = delete;
  ProcessMappings& operator=(const ProcessMappings&) = delete;

  // Parses `text` (the format of /proc/<pid>/maps). Malformed lines are skipped and counted.
  void ParseText(std::string_view text);
  // Reads and parses /proc/<pid>/maps (pid 0: this process). False and error() on I/O failure.
  bool Read(pid_t pid = 0);
  // Sizes the buffers so that ReadWithoutAllocating() can hold `text_bytes` of map text and
  // `mappings` entries.
  void Reserve(size_t text_bytes, size_t mappings);
  // Like Read(0), but fails (error() says why) instead of growing a buffer past its reserve.
  // Uses only raw system calls: safe while other threads are stopped.
  bool ReadWithoutAllocating();

  // Takes the address ranges [first, second) out of the list, as if they were not mapped: a
  // mapping they cover goes, one they overlap shrinks, one they fall inside is split in two.
  // Without allocating (a split needs a free entry of the reserve): false and error() if a
  // split had none (the rest of that range is then left in the list). Empty ranges are ignored.
  bool Cut(std::span<const std::pair<uint64_t, uint64_t>> ranges);

  std::span<const Mapping> mappings() const { return mappings_; }
  // The address ranges of the text and mapping buffers (their capacity): memory of the scan's own
  // that a leak scan must not treat as a root.
  std::array<std::pair<uint64_t, uint64_t>, 2> BufferRanges() const;
  size_t malformed_lines() const { return malformed_lines_; }
  const char* error() const { return error_; }

  // The mapping containing `address`, or nullptr. Mappings are sorted and disjoint.
  const Mapping* Find(uintptr_t address) const;
  // The "[stack]" mapping (the main thread's own stack), or nullptr.
  const Mapping* MainStack() const;

  static Kind Classify(std::string_view name, uint64_t inode);
  // Parses one line (without its newline). False if it is malformed.
  static bool ParseLine(std::string_view line, Mapping* out);

 private:
  // Parses text_[0, text_size_) into mappings_; appends only within capacity if !may_grow.
  bool ParseBuffer(bool may_grow);
  bool ReadFile(const char* path, bool may_grow);

  // Leaves the bytes of a resize uninitialized: Reserve's 16 MiB is never written or faulted in
  // beyond what the map text fills (zeroing it was most of a small heap's check).
  template <typename T>
  struct UninitializedAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
      using other = UninitializedAllocator<U>;
    };
    template <typename U>
    void construct(U* p) noexcept {
      ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
  };

  std::vector<char, UninitializedAllocator<char>> text_;  // owns the bytes Mapping::name views
  size_t text_size_ = 0;
  std::vector<Mapping> mappings_;
  size_t malformed_lines_ = 0;
  const char* error_ = "";  // static strings only: setting it never allocates
};

}  // namespace heapgraph::roots
