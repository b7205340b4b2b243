#include "check/HtmlPageWriter.h"

#include <dlfcn.h>

#include <mutex>

#include "check/HtmlRenderEntry.h"

namespace heapgraph::report {
namespace {

// The renderer's path: beside the library (or executable) holding this code.
std::string RendererPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&RendererPath), &info) == 0 || info.dli_fname == nullptr) {
    return HEAPGRAPH_HTML_LIBRARY;
  }
  std::string self = info.dli_fname;
  size_t slash = self.rfind('/');
  return slash == std::string::npos ? HEAPGRAPH_HTML_LIBRARY
                                    : self.substr(0, slash + 1) + HEAPGRAPH_HTML_LIBRARY;
}

// The entry, loaded once; null (and `*why` set) when the library or its symbol is missing.
HeapgraphRenderHtmlFn Renderer(std::string* why) {
  static std::once_flag once;
  static HeapgraphRenderHtmlFn render = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::string path = RendererPath();
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* error = dlerror();
      failure = "cannot load the HTML renderer: " + std::string(error != nullptr ? error : path);
      return;
    }
    render = reinterpret_cast<HeapgraphRenderHtmlFn>(dlsym(library, HEAPGRAPH_RENDER_HTML_SYMBOL));
    if (render == nullptr) failure = "cannot load the HTML renderer: " + path + " has no entry";
  });
  if (render == nullptr) *why = failure;
  return render;
}

}  // namespace

bool HtmlPageWriter::Write(const std::string& json, const std::string& json_path,
                           const std::string& html_path, std::string* error) {
  HeapgraphRenderHtmlFn render = Renderer(error);
  if (render == nullptr) return false;
  char why[512] = "";
  if (render(json.data(), json.size(), json_path.empty() ? nullptr : json_path.c_str(),
             html_path.c_str(), why, sizeof(why)) == 0) {
    return true;
  }
  *error = why;
  return false;
}

}  // namespace heapgraph::report
