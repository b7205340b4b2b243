#include "report/BlockInvokeName.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

namespace heapgraph::report {
namespace {

constexpr std::string_view kSuffix = "_block_invoke";

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The function's name: demangled (C++), unprefixed (Objective-C), or as it is (C); "" if the
// symbol's function part cannot be read.
std::string FunctionName(std::string_view function) {
  if (function.starts_with("_Z")) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(std::string(function).c_str(), nullptr, nullptr, &status), &std::free);
    return status == 0 && demangled != nullptr ? std::string(demangled.get()) : "";
  }
  size_t digits = 0;
  while (digits < function.size() && std::isdigit(static_cast<unsigned char>(function[digits]))) {
    ++digits;
  }
  if (digits == 0) return std::string(function);
  // Objective-C: the method name is prefixed with its length.
  size_t length = std::strtoul(std::string(function.substr(0, digits)).c_str(), nullptr, 10);
  return length == function.size() - digits ? std::string(function.substr(digits)) : "";
}

}  // namespace

std::string BlockInvokeName::Readable(std::string_view symbol) {
  if (!symbol.starts_with("__")) return std::string(symbol);
  size_t at = symbol.rfind(kSuffix);
  if (at == std::string_view::npos || at <= 2) return std::string(symbol);
  std::string_view number = symbol.substr(at + kSuffix.size());
  if (!number.empty() && !(number[0] == '_' && AllDigits(number.substr(1)))) {
    return std::string(symbol);
  }
  std::string function = FunctionName(symbol.substr(2, at - 2));
  if (function.empty()) return std::string(symbol);
  std::string block = number.empty() ? "block" : "block #" + std::string(number.substr(1));
  return block + " in " + function;
}

}  // namespace heapgraph::report
