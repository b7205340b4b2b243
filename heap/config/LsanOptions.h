// heap/config/: LeakSanitizer's LSAN_OPTIONS (and the text of a program's __lsan_default_options)
// read onto heapgraph's option table (heap/config/Options.inc, Config), without allocating.
// Entries are "flag=value", separated by ',', ':', spaces, tabs or newlines, as compiler-rt's
// flag parser splits them; a value may be quoted with '"' or '\''. The flags with a meaning here
// (docs/lsan-compatibility.md has the table):
//   exitcode -> exitcode; suppressions -> suppressions; max_leaks -> max_leaks;
//   detect_leaks -> detect_leaks; leak_check_at_exit -> leak_check;
//   log_path -> leak_text ("stderr" -> "-", a path P -> "P.<pid>", as LeakSanitizer names it);
//   report_objects: accepted, no effect (every report already lists block addresses);
//   use_registers, use_stacks, use_globals, use_tls, use_root_regions: heapgraph always scans
//   these, so 1 is accepted and 0 refused; use_unaligned: heapgraph reads aligned words only, so
//   0 is accepted and 1 refused.
// Every other flag is named once per text on stderr ("heapgraph: LSAN_OPTIONS flag 'x' is not
// supported by heapgraph; ignored"), as is a bad value. Parsing never fails the host.
#pragma once

#include "heap/config/Config.h"

namespace heapgraph {

namespace LsanOptions {

// Applies `text` (may be null) to `config`; `source` names it in every line ("LSAN_OPTIONS",
// "__lsan_default_options"). Returns the number of entries not applied.
int Apply(const char* text, const char* source, Config* config);

}  // namespace LsanOptions

}  // namespace heapgraph
