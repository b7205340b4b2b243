// heap/runtime/: the named checkpoints of heapgraph_checkpoint(): a fixed table of names and the
// allocation sequence number where each was set, so a later check can limit its candidates to
// blocks allocated after one. No allocation, no exceptions; thread-safe (a spinlock around the
// table, never held across a call out). Setting a name again moves it; when the table is full the
// least recently set entry is replaced. Names longer than kNameBytes - 1 are cut.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace heapgraph {

class Checkpoints {
 public:
  static constexpr size_t kEntries = 64;
  static constexpr size_t kNameBytes = 96;

  void Set(const char* name, uint64_t sequence);
  // The sequence of `name`; false when it was never set (or was replaced).
  bool Find(const char* name, uint64_t* sequence) const;

 private:
  struct Entry {
    char name[kNameBytes];
    uint64_t sequence;
    uint64_t set_order;  // 0 = free
  };
  void Lock() const;
  void Unlock() const;
  // The entry named `name` (cut to kNameBytes - 1), or null.
  const Entry* Named(const char* name) const;

  Entry entries_[kEntries] = {};
  uint64_t next_order_ = 1;
  mutable std::atomic<bool> locked_{false};
};

}  // namespace heapgraph
