#include "report/TypeNamer.h"

#include <fmt/format.h>

#include <vector>

#include "report/BlockInvokeName.h"

namespace heapgraph::report {

std::string TypeNamer::Name(const scanner::types::TypeDescription& d,
                            const scanner::types::ModuleSegments& modules, Symbolizer& symbolizer) {
  if (d.name_symbol == 0) return d.name.empty() ? "(unnamed type)" : d.name;
  std::string function = fmt::format("{:#x}", d.name_symbol);
  if (const scanner::types::Segment* s = modules.Find(d.name_symbol)) {
    const scanner::types::Module& m = modules.modules()[s->module];
    std::vector<SourceFrame> frames = symbolizer.Symbolize(m.path, d.name_symbol - m.bias);
    if (!frames.empty() && !frames.back().function.empty()) {
      function = BlockInvokeName::Readable(frames.back().function);
    }
  }
  std::string name = d.name;
  size_t at = name.find("{}");
  return at == std::string::npos ? name : name.replace(at, 2, function);
}

}  // namespace heapgraph::report
