// scanner/types/: see ObjcClassCatalog.h. May include heap/, roots/ and scanner/.
#include "scanner/types/ObjcClassCatalog.h"

#include <algorithm>

namespace heapgraph::scanner::types {

void ObjcClassCatalog::Assign(std::vector<ObjcClass> classes) {
  std::sort(classes.begin(), classes.end(),
            [](const ObjcClass& a, const ObjcClass& b) { return a.address < b.address; });
  classes.erase(
      std::unique(classes.begin(), classes.end(),
                  [](const ObjcClass& a, const ObjcClass& b) { return a.address == b.address; }),
      classes.end());
  classes_ = std::move(classes);
  addresses_.clear();
  addresses_.reserve(classes_.size());
  for (const ObjcClass& c : classes_) addresses_.push_back(c.address);
}

const ObjcClass* ObjcClassCatalog::Find(uint64_t address) const {
  auto it = std::lower_bound(addresses_.begin(), addresses_.end(), address);
  if (it == addresses_.end() || *it != address) return nullptr;
  return &classes_[static_cast<size_t>(it - addresses_.begin())];
}

}  // namespace heapgraph::scanner::types
