// report/: the printed name of a type description. A description whose name holds "{}" and whose
// name_symbol is a code address (a Block's invoke function) gets "{}" replaced by that function,
// symbolized and made readable by BlockInvokeName ("block in ChatSession::start()"); an address
// the modules or the symbolizer cannot name stays hexadecimal. The leak report (TypedAnalysis) and
// the watcher's types file (TypeRefresh) both name types here. May include every layer below
// report/.
#pragma once

#include <string>

#include "report/Symbolizer.h"
#include "scanner/types/ModuleSegments.h"
#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::report {

namespace TypeNamer {

std::string Name(const scanner::types::TypeDescription& d,
                 const scanner::types::ModuleSegments& modules, Symbolizer& symbolizer);

}  // namespace TypeNamer

}  // namespace heapgraph::report
