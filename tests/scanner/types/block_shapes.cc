// tests/scanner/types: Blocks of several capture shapes, compiled by clang -fblocks at -O0 and at
// -O2 into two shared libraries that DisposeHelperAnalyzerTest and BlockReaderTest load. Each
// shape_* returns a heap copy (Block_copy) of a block; what it captured is given back through the
// out-parameters so the test can find each capture's offset in the block from its value.
#include <Block.h>

#include <cstdio>
#include <memory>

typedef struct Opaque* __attribute__((NSObject)) ObjRef;
using Callback = void (^)();

extern "C" {

// One object pointer (BLOCK_FIELD_IS_OBJECT).
__attribute__((visibility("default"))) void* shape_object(ObjRef object) {
  Callback b = ^{
    std::printf("%p\n", (void*)object);
  };
  return (void*)Block_copy(b);
}

// Another block (BLOCK_FIELD_IS_BLOCK) and a plain int (trivial: no helper entry).
__attribute__((visibility("default"))) void* shape_block(Callback inner, int n) {
  Callback b = ^{
    inner();
    std::printf("%d\n", n);
  };
  return (void*)Block_copy(b);
}

// A __block int (BLOCK_FIELD_IS_BYREF). *variable: the variable inside the heap byref.
__attribute__((visibility("default"))) void* shape_byref(int** variable) {
  __block int counter = 0;
  Callback b = ^{
    ++counter;
  };
  void* copy = (void*)Block_copy(b);
  *variable = &counter;  // after the copy, the byref lives on the heap
  return copy;
}

// A __block object pointer: the byref has its own dispose helper (flags 131).
__attribute__((visibility("default"))) void* shape_byref_object(ObjRef object, ObjRef** variable) {
  __block ObjRef held = object;
  Callback b = ^{
    std::printf("%p\n", (void*)held);
  };
  void* copy = (void*)Block_copy(b);
  *variable = &held;
  return copy;
}

// A std::shared_ptr copy: a C++ object inline in the block, destroyed by the helper.
__attribute__((visibility("default"))) void* shape_shared_ptr(const std::shared_ptr<int>* owner) {
  std::shared_ptr<int> copy = *owner;
  Callback b = ^{
    std::printf("%d\n", *copy);
  };
  return (void*)Block_copy(b);
}

// Everything at once: object, block, byref, shared_ptr and a trivial pointer.
__attribute__((visibility("default"))) void* shape_mixed(ObjRef object, Callback inner,
                                                         const std::shared_ptr<int>* owner,
                                                         void* plain, int** variable) {
  __block int counter = 0;
  std::shared_ptr<int> copy = *owner;
  Callback b = ^{
    ++counter;
    inner();
    std::printf("%p %p %d\n", (void*)object, plain, *copy);
  };
  void* result = (void*)Block_copy(b);
  *variable = &counter;
  return result;
}

// Only trivial captures: no copy/dispose helpers at all.
__attribute__((visibility("default"))) void* shape_trivial(void* plain) {
  Callback b = ^{
    std::printf("%p\n", plain);
  };
  return (void*)Block_copy(b);
}

__attribute__((visibility("default"))) void shape_release(void* block) {
  Block_release(block);
}
}
