// check/: the C entry of libheapgraph_html.so, the HTML renderer a leak check loads only when
// asked for a page (option leak_html, docs/configuration.md). It is a library apart from
// libheapgraph_scan.so so that Graphviz and the page renderer (report/LeakReportHtml) are loaded
// into a recorded process only when a page is wanted, never by every check. Both libraries come
// from one build: the entry has no version of its own.
#pragma once

#include <stddef.h>

#define HEAPGRAPH_HTML_LIBRARY "libheapgraph_html.so"
#define HEAPGRAPH_RENDER_HTML_SYMBOL "heapgraph_internal_render_html"

extern "C" {

// Renders the leak or FOOM report `json` (a whole JSON document, report/ReportDocument) as one
// self-contained page and writes it to `html_path` (check/ReportFile: 0600, renamed into place).
// `json_path`, when not null, is where that JSON was saved: the page names it. Returns 0, or -1
// with one line in `error` (NUL-terminated, cut to `error_size`). Never throws.
using HeapgraphRenderHtmlFn = int (*)(const char* json, size_t json_size, const char* json_path,
                                      const char* html_path, char* error, size_t error_size);

}  // extern "C"
