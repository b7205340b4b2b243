// scanner/types/: the Objective-C classes a runtime has registered, with their instance sizes and
// instance variables (a class's own and inherited ones), collected before the world stops. Find
// and InstanceSize are child-safe (a binary search over a sorted array; no allocation). Model
// neutral: the GNU reader fills it from libobjc's API, an Apple reader would from its own.
// May include heap/, roots/ and scanner/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heapgraph::scanner::types {

struct ObjcIvar {
  uint32_t offset = 0;          // from the object's start (its isa)
  std::string name;             // "_target"
  std::string encoding;         // "@", "@\"NSDate\"", "@?" (a Block), "i", ...
  std::string declaring_class;  // the class whose @interface declares it

  // An object pointer: id, a class-typed pointer or a Block.
  bool object_typed() const { return !encoding.empty() && encoding[0] == '@'; }
};

struct ObjcClass {
  uint64_t address = 0;
  std::string name;
  uint64_t instance_size = 0;
  std::vector<ObjcIvar> ivars;  // superclasses' first, by offset
};

class ObjcClassCatalog {
 public:
  // Builds the catalog; classes need not be sorted, duplicates are dropped.
  void Assign(std::vector<ObjcClass> classes);

  // Child-safe. The class registered at `address`, or nullptr.
  const ObjcClass* Find(uint64_t address) const;
  size_t size() const { return classes_.size(); }
  const std::vector<ObjcClass>& classes() const { return classes_; }

 private:
  std::vector<ObjcClass> classes_;   // sorted by address
  std::vector<uint64_t> addresses_;  // the same order: a dense array for the child's search
};

}  // namespace heapgraph::scanner::types
