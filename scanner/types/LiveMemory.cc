#include "scanner/types/LiveMemory.h"

#include <sys/mman.h>

#include <cstring>

#include "roots/RawSyscall.h"

namespace heapgraph::scanner::types {

LiveMemory::LiveMemory() {
  void* p = mmap(nullptr, 2 * kWindow, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;  // every read then goes straight to process_vm_readv
  windows_[0].bytes = static_cast<unsigned char*>(p);
  windows_[1].bytes = static_cast<unsigned char*>(p) + kWindow;
}

LiveMemory::~LiveMemory() {
  if (windows_[0].bytes != nullptr) munmap(windows_[0].bytes, 2 * kWindow);
}

// The kernel copies page by page and reports how much it copied before the first unreadable page.
bool LiveMemory::Copy(uint64_t address, void* out, size_t length, size_t* got) {
  long n = roots::RawSyscall::ReadOwnMemoryPart(address, out, length);
  *got = n < 0 ? 0 : static_cast<size_t>(n);
  return n >= 0;
}

bool LiveMemory::Fill(Window& w, uint64_t address, size_t length) {
  size_t got = 0;
  ++copies_;
  uint64_t room = address + kWindow < address ? UINT64_MAX - address : kWindow;
  Copy(address, w.bytes, room, &got);
  if (got < length) {
    w.length = 0;
    return false;
  }
  w.begin = address;
  w.length = got;
  return true;
}

bool LiveMemory::Read(uint64_t address, void* out, size_t length) {
  if (length == 0 || address + length < address) return false;
  ++reads_;
  for (Window& w : windows_) {
    if (w.length != 0 && address >= w.begin && address + length <= w.begin + w.length) {
      w.used = reads_;
      std::memcpy(out, w.bytes + (address - w.begin), length);
      return true;
    }
  }
  if (windows_[0].bytes != nullptr && length <= kWindow) {
    Window& w = windows_[0].used <= windows_[1].used ? windows_[0] : windows_[1];
    if (Fill(w, address, length)) {
      w.used = reads_;
      std::memcpy(out, w.bytes, length);
      return true;
    }
  }
  size_t got = 0;
  ++copies_;
  return Copy(address, out, length, &got) && got == length;
}

}  // namespace heapgraph::scanner::types
