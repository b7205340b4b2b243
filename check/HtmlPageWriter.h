// check/: writes a check's report as an HTML page (option leak_html) through libheapgraph_html.so
// (check/HtmlRenderEntry.h), loaded on the first page from the directory of this library (where
// the build and an install put both) and kept loaded. Full C++ (allocation); call it on a thread
// whose allocations are not recorded (the check's).
#pragma once

#include <string>

namespace heapgraph::report::HtmlPageWriter {

// Renders `json` (a whole report document; `json_path`: where it was saved, "" if nowhere) to
// `html_path`. False with `*error` set to one line when the renderer cannot be loaded or the page
// cannot be written.
bool Write(const std::string& json, const std::string& json_path, const std::string& html_path,
           std::string* error);

}  // namespace heapgraph::report::HtmlPageWriter
