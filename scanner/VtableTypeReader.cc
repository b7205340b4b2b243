#include "scanner/VtableTypeReader.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace heapgraph::scanner {
namespace {

constexpr size_t kMaxName = 1024;

// The address point of a __cxxabiv1 type_info vtable: two words past the symbol.
uint64_t TypeInfoVtable(const char* symbol) {
  void* vtable = dlsym(RTLD_DEFAULT, symbol);
  return vtable == nullptr ? 0 : reinterpret_cast<uint64_t>(vtable) + 2 * sizeof(uint64_t);
}

}  // namespace

VtableTypeReader::VtableTypeReader() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* ranges = static_cast<std::vector<std::pair<uint64_t, uint64_t>>*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          bool read_only = ph.p_type == PT_LOAD && (ph.p_flags & PF_W) == 0;
          if (!read_only && ph.p_type != PT_GNU_RELRO) continue;
          uint64_t begin = info->dlpi_addr + ph.p_vaddr;
          ranges->push_back({begin, begin + ph.p_memsz});
        }
        return 0;
      },
      &ranges_);
  std::sort(ranges_.begin(), ranges_.end());
  type_info_vptrs_[0] = TypeInfoVtable("_ZTVN10__cxxabiv117__class_type_infoE");
  type_info_vptrs_[1] = TypeInfoVtable("_ZTVN10__cxxabiv120__si_class_type_infoE");
  type_info_vptrs_[2] = TypeInfoVtable("_ZTVN10__cxxabiv121__vmi_class_type_infoE");
}

bool VtableTypeReader::ReadWords(uint64_t address, uint64_t* out, size_t count) {
  struct iovec local = {out, count * sizeof(uint64_t)};
  struct iovec remote = {reinterpret_cast<void*>(address), count * sizeof(uint64_t)};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
         static_cast<ssize_t>(count * sizeof(uint64_t));
}

bool VtableTypeReader::InReadOnlyData(uint64_t address, uint64_t length) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), std::make_pair(address, UINT64_MAX));
  if (it == ranges_.begin()) return false;
  --it;
  return address >= it->first && address + length <= it->second && address + length > address;
}

const std::string* VtableTypeReader::TypeOf(uint64_t vptr) {
  auto [it, added] = cache_.try_emplace(vptr, nullptr);
  if (added) it->second = Classify(vptr);
  return it->second;
}

const std::string* VtableTypeReader::Classify(uint64_t vptr) {
  constexpr uint64_t kWord = sizeof(uint64_t);
  if (vptr % kWord != 0 || vptr < 2 * kWord || !InReadOnlyData(vptr - 2 * kWord, 3 * kWord)) {
    return nullptr;
  }
  uint64_t prefix[2];  // offset-to-top, typeinfo
  if (!ReadWords(vptr - 2 * kWord, prefix, 2) || prefix[0] != 0) return nullptr;
  uint64_t typeinfo = prefix[1];
  uint64_t header[2];  // the type_info's vptr and its name pointer
  if (typeinfo % kWord != 0 || !InReadOnlyData(typeinfo, 2 * kWord) ||
      !ReadWords(typeinfo, header, 2)) {
    return nullptr;
  }
  if (header[0] == 0 || std::find(std::begin(type_info_vptrs_), std::end(type_info_vptrs_),
                                  header[0]) == std::end(type_info_vptrs_)) {
    return nullptr;
  }
  std::string mangled;
  if (!ReadName(header[1], &mangled)) return nullptr;
  auto [it, added] = names_.try_emplace(mangled);
  if (added) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
    it->second = status == 0 && demangled ? demangled.get() : mangled;
  }
  return &it->second;
}

// A NUL-terminated name of at most kMaxName bytes in read-only data (a leading '*' marks a
// local type in GCC's encoding and is dropped).
bool VtableTypeReader::ReadName(uint64_t address, std::string* name) const {
  char buffer[kMaxName + 1];
  size_t have = 0;
  while (have < kMaxName) {
    size_t chunk = std::min<size_t>(64, kMaxName - have);
    if (!InReadOnlyData(address + have, chunk)) chunk = 1;
    if (!InReadOnlyData(address + have, chunk)) return false;
    struct iovec local = {buffer + have, chunk};
    struct iovec remote = {reinterpret_cast<void*>(address + have), chunk};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(chunk)) {
      return false;
    }
    if (void* nul = memchr(buffer + have, '\0', chunk)) {
      size_t length = static_cast<size_t>(static_cast<char*>(nul) - buffer);
      if (length == 0) return false;
      name->assign(buffer[0] == '*' ? buffer + 1 : buffer, buffer[0] == '*' ? length - 1 : length);
      return !name->empty();
    }
    have += chunk;
  }
  return false;
}

}  // namespace heapgraph::scanner
