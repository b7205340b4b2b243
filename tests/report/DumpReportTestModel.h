// tests/report: a small DumpReport built by hand for the text and JSON form tests: a session, one
// group with a symbolized inline chain, an address without source, one outside every module, and
// a group without a stack.
#pragma once

#include <string>
#include <utility>

#include "report/DumpReport.h"

namespace heapgraph::report::testing {

inline ReportFrame Where(uint64_t address, const std::string& module_path, uint64_t offset,
                         const std::string& build_id) {
  ReportFrame f;
  f.address = address;
  f.module_path = module_path;
  f.module = module_path.substr(module_path.rfind('/') + 1);
  f.offset = offset;
  f.build_id = build_id;
  return f;
}

inline ReportFrame WithSource(ReportFrame f, const std::string& function, const std::string& file,
                              int line, bool inlined) {
  f.function = function;
  f.file = file;
  f.line = line;
  f.inlined = inlined;
  return f;
}

inline StackGroup Group(uint32_t stack, uint64_t count, uint64_t bytes,
                        const std::string& category) {
  StackGroup g;
  g.stack = stack;
  g.count = count;
  g.bytes = bytes;
  g.category = category;
  g.estimate = SampleEstimate(0);
  for (uint64_t i = 0; i < count; ++i) g.estimate.Add(bytes / count);
  return g;
}

inline DumpReport SmallReport() {
  DumpReport r;
  r.directory = "/rec/77-1";
  r.live_blocks = 4;
  r.live_bytes = 3 * 48 + 100;
  r.unique_stacks = 2;
  r.modules = 2;
  SessionInfo s;
  s.pid = 77;
  s.executable = "/bin/app";
  s.state = format::kSessionExited;
  s.start_time_ns = 5;
  s.sequence = 9;
  r.session = s;
  r.group_count = 2;

  ReportFrame inlined = Where(0x7f0000001234, "/lib/libfoo.so", 0x1234, "abcd");
  DumpGroup first{1, Group(3, 3, 144, "Malloc 48 B"), {}};
  first.addresses.push_back({FrameList{WithSource(inlined, "inner()", "/src/a.cc", 7, true),
                                       WithSource(inlined, "outer()", "/src/a.cc", 12, false)}});
  first.addresses.push_back({FrameList{Where(0x555500001000, "/bin/app", 0x1000, "")}});
  ReportFrame nowhere;
  nowhere.address = 0xdeadbeef0000;
  first.addresses.push_back({FrameList{nowhere}});
  r.groups.push_back(std::move(first));
  r.groups.push_back({2, Group(0, 1, 100, "Malloc 100 B"), {}});
  return r;
}

}  // namespace heapgraph::report::testing
