#include "heap/store/ModuleMap.h"

#include <elf.h>
#include <link.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>

#include "heap/store/LockWait.h"

namespace heapgraph {

using format::ModuleRecord;

namespace {

uint64_t RecordsOffset() {
  return format::kPageSize;
}

void CopyPath(const char* name, char* out) {
  if (name == nullptr || name[0] == '\0') {
    ssize_t n = readlink("/proc/self/exe", out, format::kMaxModulePath - 1);
    out[n > 0 ? n : 0] = '\0';
    return;
  }
  size_t n = strnlen(name, format::kMaxModulePath - 1);
  memcpy(out, name, n);
  out[n] = '\0';
}

// Reads NT_GNU_BUILD_ID from a PT_NOTE segment already mapped in memory.
void ReadBuildId(uintptr_t bias, const ElfW(Phdr) & note, ModuleRecord* out) {
  auto* p = reinterpret_cast<const uint8_t*>(bias + note.p_vaddr);
  const uint8_t* end = p + note.p_memsz;
  while (p + sizeof(ElfW(Nhdr)) <= end) {
    auto* header = reinterpret_cast<const ElfW(Nhdr)*>(p);
    const uint8_t* name = p + sizeof(ElfW(Nhdr));
    const uint8_t* desc = name + ((header->n_namesz + 3) & ~3u);
    const uint8_t* next = desc + ((header->n_descsz + 3) & ~3u);
    if (next > end) return;
    if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
      uint32_t n = header->n_descsz < format::kMaxBuildId ? header->n_descsz : format::kMaxBuildId;
      memcpy(out->build_id, desc, n);
      out->build_id_len = n;
      return;
    }
    p = next;
  }
}

// An object whose image does not map its program headers is described by its mapping alone.
void Describe(const LoadedObject& object, ModuleRecord* out) {
  memset(out, 0, sizeof(*out));
  out->load_bias = object.bias;
  out->start = UINT64_MAX;
  for (uint16_t i = 0; i < object.phnum; ++i) {
    const ElfW(Phdr)& ph = object.phdr[i];
    if (ph.p_type == PT_NOTE && out->build_id_len == 0) ReadBuildId(object.bias, ph, out);
    if (ph.p_type != PT_LOAD) continue;
    uint64_t begin = object.bias + ph.p_vaddr;
    if (begin < out->start) out->start = begin;
    if (begin + ph.p_memsz > out->end) out->end = begin + ph.p_memsz;
    if (out->segment_count < format::kMaxSegments) {
      format::ModuleSegment& s = out->segments[out->segment_count++];
      s.vaddr = ph.p_vaddr;
      s.memsz = ph.p_memsz;
      s.flags = ph.p_flags;
    }
  }
  if (out->start == UINT64_MAX) {
    out->start = object.map_start;
    out->end = object.map_end;
  }
  out->state = format::kModuleLoaded;
  CopyPath(object.name, out->path);
}

}  // namespace

bool ModuleMap::Create(int dir_fd, const char* name, uint32_t capacity) {
  if (capacity > kMaxCapacity) capacity = kMaxCapacity;
  uint64_t size = RecordsOffset() + uint64_t{capacity} * sizeof(ModuleRecord);
  if (!file_.Create(dir_fd, name, size) || !file_.Reserve(0, RecordsOffset())) return false;
  reserved_ = RecordsOffset();
  header_ = reinterpret_cast<format::ModuleHeader*>(file_.data());
  records_ = reinterpret_cast<ModuleRecord*>(file_.data() + RecordsOffset());
  capacity_ = capacity;
  header_->record_size = sizeof(ModuleRecord);
  header_->capacity = capacity;
  header_->file.version = format::kVersion;
  header_->file.header_size = static_cast<uint32_t>(RecordsOffset());
  memcpy(header_->file.magic, format::kModuleMagic, sizeof(header_->file.magic));
  return true;
}

bool ModuleMap::CopyTo(int dir_fd, const char* name) const {
  // The reserved part (the copy reserves it too), so the child's appends stay as safe as ours.
  MappedFile::Range reserved = {0, reserved_};
  return file_.CopyTo(dir_fd, name, &reserved, 1);
}

int ModuleMap::CopyToMemory(const char* name) const {
  MappedFile::Range reserved = {0, reserved_};
  return file_.CopyToMemory(name, &reserved, 1);
}

void ModuleMap::Lock() {
  if (lock_.exchange(1, std::memory_order_acquire) == 0) return;
  const uint64_t began = LockWait::Begin();  // held: a check's snapshot, or a module change
  while (lock_.exchange(1, std::memory_order_acquire) != 0) sched_yield();
  LockWait::End(began);
}

void ModuleMap::Unlock() {
  lock_.store(0, std::memory_order_release);
}

bool ModuleMap::IsKnown(const LoadedObject& object) const {
  uint32_t count = header_->count.load(std::memory_order_relaxed);
  for (uint32_t i = count; i-- > 0;) {
    if (records_[i].state == format::kModuleLoaded && identities_[i].link_map == object.link_map &&
        identities_[i].map_start == object.map_start) {
      return true;
    }
  }
  return false;
}

// Under Lock: makes sure record `index` has disk blocks, reserving eight records ahead (to a page
// boundary) so that a full disk refuses a record instead of raising SIGBUS.
bool ModuleMap::ReserveRecord(uint32_t index) {
  uint64_t end = RecordsOffset() + (uint64_t{index} + 1) * sizeof(ModuleRecord);
  if (end <= reserved_) return true;
  uint64_t target = end + 7 * sizeof(ModuleRecord);
  target = (target + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
  if (target > file_.size()) target = file_.size();
  if (!file_.Reserve(reserved_, target - reserved_)) return false;
  reserved_ = target;
  return true;
}

// Under Lock. A full map (or a full disk) keeps its records as they are.
void ModuleMap::Append(const LoadedObject& object) {
  uint32_t count = header_->count.load(std::memory_order_relaxed);
  if (count >= capacity_ || !ReserveRecord(count)) return;
  ModuleRecord fresh;
  Describe(object, &fresh);
  header_->sequence.fetch_add(1, std::memory_order_acq_rel);  // odd: being written
  for (uint32_t i = 0; i < count; ++i) {
    ModuleRecord& r = records_[i];
    if (r.state == format::kModuleLoaded && r.start < fresh.end && fresh.start < r.end) {
      r.state = format::kModuleUnloaded;  // its addresses belong to the new object now
    }
  }
  records_[count] = fresh;
  identities_[count] = {object.link_map, object.map_start};
  header_->count.store(count + 1, std::memory_order_release);
  header_->sequence.fetch_add(1, std::memory_order_acq_rel);  // even: consistent
}

void ModuleMap::Learn(const uintptr_t* addresses, uint32_t count) {
  Lock();
  uintptr_t begin = 0, end = 0;  // the object of the previous address: frames come in runs
  for (uint32_t i = 0; i < count; ++i) {
    if (addresses[i] >= begin && addresses[i] < end) continue;
    LoadedObject object;
    if (!LoadedObject::Find(addresses[i], &object)) continue;
    begin = object.map_start;
    end = object.map_end;
    if (!IsKnown(object)) Append(object);
  }
  Unlock();
}

void ModuleMap::ForgetUnloaded() {
  Lock();
  uint32_t count = header_->count.load(std::memory_order_relaxed);
  bool writing = false;
  for (uint32_t i = 0; i < count; ++i) {
    if (records_[i].state != format::kModuleLoaded) continue;
    LoadedObject object;
    if (LoadedObject::Find(identities_[i].map_start, &object) &&
        object.link_map == identities_[i].link_map &&
        object.map_start == identities_[i].map_start) {
      continue;
    }
    if (!writing) header_->sequence.fetch_add(1, std::memory_order_acq_rel);  // odd
    writing = true;
    records_[i].state = format::kModuleUnloaded;
  }
  if (writing) header_->sequence.fetch_add(1, std::memory_order_acq_rel);  // even
  Unlock();
}

const ModuleRecord* ModuleMap::Find(uint64_t address) const {
  uint32_t count = header_->count.load(std::memory_order_acquire);
  for (uint32_t i = count; i-- > 0;) {
    const ModuleRecord& r = records_[i];
    if (r.state == format::kModuleLoaded && address >= r.start && address < r.end) return &r;
  }
  return nullptr;
}

}  // namespace heapgraph
