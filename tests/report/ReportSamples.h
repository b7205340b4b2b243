// tests/report: small report models for the renderers' and readers' tests: a leak report with a
// direct leak, an indirect one, a leaked typed cycle and a reachable one with its root path, and
// a FOOM report with a session, a pressure time line and a suspect. `hostile` puts HTML and
// control characters into every function, type and file name.
#pragma once

#include <string>

#include "report/FoomReport.h"
#include "report/LeakReport.h"

namespace heapgraph::report::samples {

inline std::string Name(const std::string& plain, bool hostile) {
  return hostile ? plain + "<script>alert(\"x\")</script>&amp;\x01" : plain;
}

inline ReportFrame Frame(uint64_t address, const std::string& function, const std::string& file,
                         int line, bool hostile = false) {
  ReportFrame f;
  f.address = address;
  f.module = "app";
  f.module_path = "/usr/bin/app";
  f.build_id = "0123abcd";
  f.offset = address - 0x555500000000;
  f.function = Name(function, hostile);
  f.file = file.empty() ? "" : Name(file, hostile);
  f.line = file.empty() ? 0 : line;
  return f;
}

inline LeakReport SampleLeakReport(bool hostile = false) {
  LeakReport r;
  r.summary = {.direct_blocks = 1,
               .indirect_blocks = 2,
               .leaked_bytes = 192,
               .direct_bytes = 64,
               .indirect_bytes = 128,
               .cycles = 2,
               .live_blocks = 10,
               .live_bytes = 1000};
  ReportFrame malloc_frame;
  malloc_frame.address = 0x7f0000001234;
  malloc_frame.module = "libheapgraph.so";
  malloc_frame.module_path = "/opt/libheapgraph.so";
  malloc_frame.offset = 0x1234;
  malloc_frame.function = "malloc";
  LeakRecord direct;
  direct.kind = LeakKind::kDirect;
  direct.stack_id = 7;
  direct.size = 64;
  direct.count = 1;
  direct.block_size = 64;
  direct.retained_bytes = 192;
  direct.type = Name("ChatSession", hostile);
  direct.stack = {malloc_frame,
                  Frame(0x555500001000, "ChatSession::start()", "chat.cc", 12, hostile),
                  Frame(0x555500002000, "main", "main.cc", 5, hostile)};
  direct.examples = {0x1000};
  LeakRecord indirect;
  indirect.kind = LeakKind::kIndirect;
  indirect.stack_id = 8;
  indirect.size = 128;
  indirect.count = 2;
  indirect.block_size = 64;
  indirect.type = Name("std::function<lambda>", hostile);
  indirect.stack = {Frame(0x555500003000, "make_callback", "", 0, hostile)};
  indirect.examples = {0x2000, 0x3000};
  r.leaks = {direct, indirect};
  LeakCycle leaked;
  leaked.kind = "function-self";
  leaked.typed = true;
  leaked.members = {{.address = 0x1000,
                     .size = 64,
                     .type = direct.type,
                     .stack_id = 7,
                     .record = 0,
                     .field = Name("_onMessage", hostile)},
                    {.address = 0x2000,
                     .size = 64,
                     .type = indirect.type,
                     .stack_id = 8,
                     .record = 1,
                     .field = "session"}};
  leaked.retained_bytes = 192;
  leaked.representative = 0;
  leaked.representative_reason = "earliest allocated";
  leaked.path = {0, 1};
  LeakCycle reachable;
  reachable.kind = "shared_ptr";
  reachable.leaked = false;
  reachable.typed = true;
  reachable.members = {{.address = 0x5000,
                        .size = 32,
                        .type = "Node",
                        .stack_id = 9,
                        .record = CycleMember::kNoRecord,
                        .field = "next"},
                       {.address = 0x6000,
                        .size = 32,
                        .type = "Node",
                        .stack_id = 9,
                        .record = CycleMember::kNoRecord,
                        .field = "prev"}};
  reachable.retained_bytes = 64;
  reachable.representative_reason = "reachable from a root";
  reachable.path = {0, 1};
  reachable.root =
      CycleRoot{.kind = "global",
                .module = "/usr/bin/app",
                .address = 0x555500009000,
                .path = {{.address = 0x4000, .size = 16, .type = "Registry", .field = "+0x0"},
                         {.address = 0x5000, .size = 32, .type = "Node", .field = "head"}}};
  r.cycles = {leaked, reachable};
  r.categories = {{.type = "Node", .live_count = 3, .live_bytes = 96},
                  {.type = direct.type,
                   .live_count = 1,
                   .live_bytes = 64,
                   .leaked_count = 1,
                   .leaked_bytes = 64}};
  r.stats.threads = 2;
  r.stats.stop_method = "ptrace";
  r.recording_dir = "/tmp/rec";
  return r;
}

inline FoomReport SampleFoomReport(bool hostile = false) {
  FoomReport r;
  r.directory = "/tmp/rec/123-456";
  r.exit.kind = "oom_kill";
  r.exit.reason = "the cgroup's oom_kill counter rose";
  r.exit.source = "exit file";
  r.exit.signal = 9;
  r.exit.oom_kills_before = 0;
  r.exit.oom_kills_now = 1;
  SessionInfo session;
  session.pid = 123;
  session.executable = "/usr/bin/app";
  session.start_time_ns = 456;
  r.session = session;
  r.live = {.count = 1000, .bytes = 64 << 20};
  FoomCategory c;
  c.name = Name("Malloc 64.00KiB", hostile);
  c.kind = "heap";
  c.count = 1000;
  c.bytes = 64 << 20;
  c.stack_count = 1;
  c.suspect_reasons = {"more than half of the live bytes"};
  FoomStack s;
  s.stack_id = 3;
  s.count = 1000;
  s.bytes = 64 << 20;
  s.frames = {Frame(0x555500001000, "Cache::grow()", "cache.cc", 40, hostile),
              Frame(0x555500002000, "main", "main.cc", 5, hostile)};
  c.stacks = {s};
  r.categories = {c};
  r.feature = FeatureValue{.caller1 = Name("Cache::grow()", hostile),
                           .caller2 = "main",
                           .category = c.name,
                           .reason = "oom_kill"};
  format::PressureHeader h = {};
  h.configured_limit = 128 << 20;
  h.sources = format::kSourceRss;
  h.watermark_count = 2;
  h.watermarks[0] = 50;
  h.watermarks[1] = 90;
  std::vector<PressureEntry> entries(2);
  entries[0].record.watermark = 50;
  entries[0].record.percent = 51;
  entries[0].record.trigger = format::kTriggerPoll;
  entries[0].record.elapsed_ns = 1000000000;
  entries[0].record.limit = 128 << 20;
  entries[0].record.rss = 65 << 20;
  entries[1].record = entries[0].record;
  entries[1].record.watermark = 90;
  entries[1].record.percent = 92;
  entries[1].record.elapsed_ns = 3000000000;
  entries[1].record.rss = 118 << 20;
  entries[1].categories.resize(2);
  r.pressure = PressureTimeline(h, std::move(entries), false);
  return r;
}

}  // namespace heapgraph::report::samples
