// check/: writes one leak report file: the at-exit check's leak_json= / leak_text=, the signal
// check's <recording dir>/leaks-<n>.json/.txt, and the paths given to heapgraph_check_leaks().
//
// Contract: "-" is stderr. A path that is a symbolic link is never followed, nor replaced: the
// report is not written, and the one-line error says why (a pre-created link must not make a
// check overwrite another file). A regular file, or a path that does not exist yet, gets a new
// file created 0600 whatever the umask (mkostemp: O_EXCL, beside the path) and renamed over the
// path once complete, so a reader never sees half a report and the old file's owner and mode are
// not inherited. A character device (/dev/null, a terminal) is written in place; any other kind of
// file (FIFO, directory, socket) is refused without blocking. Full C++ (allocation).
#pragma once

#include <string>

namespace heapgraph::report {

namespace ReportFile {

// Writes `text` to `path` as above. False with `*error` set to one line
// "cannot write <path>: <why>" when the report could not be written.
bool Write(const std::string& path, const std::string& text, std::string* error);

}  // namespace ReportFile

}  // namespace heapgraph::report
