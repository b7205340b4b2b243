// scanner/types/: std::function heap functors (libstdc++). A std::function is
// {_Any_data (16 bytes), _M_manager, _M_invoker}; a functor that does not fit in _Any_data, or is
// not trivially copyable (a lambda capturing a shared_ptr), lives in a heap block that the first
// word of _Any_data points to. The functor has no header of its own, so it is typed from its
// holder: IdentifyReferenced looks in every live block for a word equal to a known _M_manager
// (collected by Prepare from every module's .dynsym in memory and the .symtab of unstripped
// modules with libelf: the std::_Function_handler<Sig, F>::_M_manager instantiations) whose word 16
// bytes earlier is the start of a live block; that block is the functor. Identity: model
// kStdFunctor, key = the manager's address. Named "std::function<lambda in ChatSession::start()>"
// (or the functor's type) from the manager's symbol; fields from the _Functor template parameter's
// DWARF, else none. Functors held by a std::function outside the heap (stack, globals) are not
// typed, nor any functor in a stripped binary whose managers are not in .dynsym. May include heap/,
// roots/ and scanner/.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scanner/types/DebugLayouts.h"
#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::scanner::types {

class StdFunctionReader : public ObjectModelReader {
 public:
  explicit StdFunctionReader(DebugLayouts* layouts = nullptr) : layouts_(layouts) {}

  const char* name() const override { return "std::function"; }
  bool Prepare(const PrepareContext& context) override;
  bool Identify(const SnapshotMemory&, uint32_t, TypeIdentity*) const override { return false; }
  bool wants_referenced() const override { return true; }
  void IdentifyReferenced(const SnapshotMemory& memory, uint32_t block, const TypeIdentity& own,
                          TypeSink& sink) const override;
  TypeDescription Describe(const TypeIdentity& identity, const DescribeContext& context) override;

  // For tests: a manager address and its mangled symbol, given directly.
  void AddManager(uint64_t address, std::string symbol);
  size_t manager_count() const { return managers_.size(); }
  // "std::_Function_handler<void (), Foo::bar()::{lambda()#1}>::_M_manager(...)" ->
  // "std::function<lambda in Foo::bar()>"; a non-lambda functor F -> "std::function<F>".
  static std::string FunctionName(const std::string& demangled_manager);

 private:
  void CollectModule(const Module& module);
  bool IsManager(uint64_t word) const {
    if (word - lowest_ > highest_ - lowest_) return false;
    return std::binary_search(managers_.begin(), managers_.end(), word);
  }

  std::vector<uint64_t> managers_;         // sorted
  std::map<uint64_t, std::string> names_;  // manager -> mangled symbol
  uint64_t lowest_ = 1, highest_ = 0;
  DebugLayouts* layouts_;
};

}  // namespace heapgraph::scanner::types
