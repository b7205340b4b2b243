#include "heap/runtime/Checkpoints.h"

#include <string.h>

namespace heapgraph {

void Checkpoints::Lock() const {
  while (locked_.exchange(true, std::memory_order_acquire)) {
  }
}

void Checkpoints::Unlock() const {
  locked_.store(false, std::memory_order_release);
}

const Checkpoints::Entry* Checkpoints::Named(const char* name) const {
  for (const Entry& entry : entries_) {
    if (entry.set_order != 0 && strncmp(entry.name, name, kNameBytes - 1) == 0) return &entry;
  }
  return nullptr;
}

void Checkpoints::Set(const char* name, uint64_t sequence) {
  Lock();
  Entry* entry = const_cast<Entry*>(Named(name));
  if (entry == nullptr) {  // a free entry, else the least recently set one
    entry = &entries_[0];
    for (Entry& candidate : entries_) {
      if (candidate.set_order < entry->set_order) entry = &candidate;
    }
    strncpy(entry->name, name, kNameBytes - 1);
    entry->name[kNameBytes - 1] = '\0';
  }
  entry->sequence = sequence;
  entry->set_order = next_order_++;
  Unlock();
}

bool Checkpoints::Find(const char* name, uint64_t* sequence) const {
  Lock();
  const Entry* entry = Named(name);
  if (entry != nullptr) *sequence = entry->sequence;
  Unlock();
  return entry != nullptr;
}

}  // namespace heapgraph
