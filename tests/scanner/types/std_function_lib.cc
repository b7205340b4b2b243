// A library for StdFunctionReaderTest, linked stripped (-s): the std::function manager of its
// functor is only in its .dynsym, which StdFunctionReader reads in memory. Adder has external
// linkage, so that manager (a template instantiation) is an exported weak symbol; 32 bytes, so a
// std::function stores it on the heap.
#include <functional>
#include <memory>

namespace hgtest {

struct Adder {
  std::shared_ptr<int> base;
  long pad[2];
  int operator()(int x) const { return *base + x + static_cast<int>(pad[0]); }
};

}  // namespace hgtest

extern "C" std::function<int(int)>* hg_make_adder(int base) {
  return new std::function<int(int)>(hgtest::Adder{std::make_shared<int>(base), {0, 0}});
}

extern "C" void hg_free_adder(std::function<int(int)>* adder) {
  delete adder;
}
