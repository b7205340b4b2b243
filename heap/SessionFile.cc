#include "heap/SessionFile.h"

#include <time.h>
#include <unistd.h>

#include <cstring>

#include "heap/RecordingDirectory.h"

namespace heapgraph {

bool SessionFile::Create(int dir_fd, uint32_t max_depth, uint64_t first_sequence) {
  if (!file_.Create(dir_fd, format::kSessionFile, format::kPageSize) ||
      !file_.Reserve(0, format::kPageSize)) {
    return false;
  }
  header_ = reinterpret_cast<format::SessionHeader*>(file_.data());
  header_->pid = getpid();
  header_->max_depth = max_depth;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  header_->start_time_ns =
      static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
  header_->boot_time_ticks = RecordingDirectory::ProcessStartTicks();
  ssize_t n = readlink("/proc/self/exe", header_->executable, format::kMaxModulePath - 1);
  header_->executable[n > 0 ? n : 0] = '\0';
  header_->sequence.store(first_sequence, std::memory_order_relaxed);
  header_->state.store(format::kSessionRecording, std::memory_order_relaxed);
  header_->file.version = format::kVersion;
  header_->file.header_size = sizeof(format::SessionHeader);
  memcpy(header_->file.magic, format::kSessionMagic, sizeof(header_->file.magic));
  return true;
}

void SessionFile::MarkExited() {
  if (header_ != nullptr) header_->state.store(format::kSessionExited, std::memory_order_release);
}

uint64_t SessionFile::TakeSequenceBlock() {
  return header_->sequence.fetch_add(kSequenceBlock, std::memory_order_relaxed);
}

}  // namespace heapgraph
