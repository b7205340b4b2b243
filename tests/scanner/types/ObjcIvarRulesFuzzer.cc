// libFuzzer target for ObjcIvarRules' rule files (the user's HEAPGRAPH_OBJC_IVARS file): every
// input is loaded as a file's text (LoadText, which LoadFile calls). It must never crash; a
// rejected file gives one line of error that names the file and line.
//
// Built by tests/scanner/types/BlocksObjcTests.cmake with clang++ -fsanitize=fuzzer,address,
// undefined into <build>/tests/scanner/objc_ivar_rules_fuzzer; ctest runs a 20000-input smoke
// test (objc_ivar_rules_fuzz_smoke). A longer run:
//   mkdir -p /tmp/ivar-corpus && FUZZER=<build>/tests/scanner/objc_ivar_rules_fuzzer
//   $FUZZER /tmp/ivar-corpus -max_len=4096 -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scanner/types/ObjcIvarRules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "rules.txt";
  heapgraph::scanner::types::ObjcIvarRules rules;
  std::string error;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!rules.LoadText(text, name, &error)) {
    if (error.find('\n') != std::string::npos || error.rfind(name + ":", 0) != 0) std::abort();
  }
  for (const auto& r : rules.rules()) {
    (void)rules.Classify(r.class_name, r.ivar);
  }
  return 0;
}
