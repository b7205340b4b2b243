#include "heap/store/ModuleMap.h"

#include <elf.h>
#include <link.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>

namespace heapgraph {

using format::ModuleRecord;

namespace {

constexpr uint32_t kMaxSeen = 8192;

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
void ReadBuildId(const dl_phdr_info* info, const ElfW(Phdr) & note, ModuleRecord* out) {
  auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + note.p_vaddr);
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

void Describe(const dl_phdr_info* info, ModuleRecord* out) {
  memset(out, 0, sizeof(*out));
  out->load_bias = info->dlpi_addr;
  out->start = UINT64_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_NOTE && out->build_id_len == 0) ReadBuildId(info, ph, out);
    if (ph.p_type != PT_LOAD) continue;
    uint64_t begin = info->dlpi_addr + ph.p_vaddr;
    if (begin < out->start) out->start = begin;
    if (begin + ph.p_memsz > out->end) out->end = begin + ph.p_memsz;
    if (out->segment_count < format::kMaxSegments) {
      format::ModuleSegment& s = out->segments[out->segment_count++];
      s.vaddr = ph.p_vaddr;
      s.memsz = ph.p_memsz;
      s.flags = ph.p_flags;
    }
  }
  if (out->start == UINT64_MAX) out->start = 0;
  out->state = format::kModuleLoaded;
  CopyPath(info->dlpi_name, out->path);
}

}  // namespace

struct ModuleMap::Visit {
  ModuleMap* map;
  uint8_t seen[kMaxSeen / 8];
  bool counters_only;
  bool changed;
};

bool ModuleMap::Create(int dir_fd, const char* name, uint32_t capacity) {
  if (capacity > kMaxSeen) capacity = kMaxSeen;
  uint64_t size = RecordsOffset() + uint64_t{capacity} * sizeof(ModuleRecord);
  if (!file_.Create(dir_fd, name, size) || !file_.Reserve(0, size)) return false;
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
  // The whole file: its records are reserved up front, so appends can never raise SIGBUS.
  MappedFile::Range all = {0, file_.size()};
  return file_.CopyTo(dir_fd, name, &all, 1);
}

void ModuleMap::Lock() {
  while (lock_.exchange(1, std::memory_order_acquire) != 0) sched_yield();
}

void ModuleMap::Unlock() {
  lock_.store(0, std::memory_order_release);
}

int ModuleMap::OnModule(dl_phdr_info* info, size_t size, void* data) {
  auto* visit = static_cast<Visit*>(data);
  ModuleMap* map = visit->map;
  if (visit->counters_only) {
    visit->changed = info->dlpi_adds != map->last_adds_ || info->dlpi_subs != map->last_subs_;
    map->last_adds_ = info->dlpi_adds;
    map->last_subs_ = info->dlpi_subs;
    return 1;  // the counters are the same for every module
  }
  ModuleRecord fresh;
  Describe(info, &fresh);
  uint32_t count = map->header_->count.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < count; ++i) {
    const ModuleRecord& r = map->records_[i];
    if (r.state == format::kModuleLoaded && r.start == fresh.start &&
        r.load_bias == fresh.load_bias && strcmp(r.path, fresh.path) == 0) {
      visit->seen[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
      return 0;
    }
  }
  if (count < map->capacity_) {
    map->records_[count] = fresh;
    visit->seen[count / 8] |= static_cast<uint8_t>(1u << (count % 8));
    map->header_->count.store(count + 1, std::memory_order_release);
  }
  return 0;
}

void ModuleMap::Refresh() {
  Lock();
  Visit visit;
  visit.map = this;
  visit.counters_only = true;
  visit.changed = false;
  dl_iterate_phdr(&ModuleMap::OnModule, &visit);
  if (visit.changed) {
    memset(visit.seen, 0, sizeof(visit.seen));
    visit.counters_only = false;
    header_->sequence.fetch_add(1, std::memory_order_acq_rel);  // odd: being written
    dl_iterate_phdr(&ModuleMap::OnModule, &visit);
    uint32_t count = header_->count.load(std::memory_order_relaxed);
    for (uint32_t i = 0; i < count; ++i) {
      if ((visit.seen[i / 8] & (1u << (i % 8))) == 0) records_[i].state = format::kModuleUnloaded;
    }
    header_->sequence.fetch_add(1, std::memory_order_acq_rel);  // even: consistent
  }
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
