// adapters/: the public API's two work marks as the adapters call them: heapgraph_work_begin and
// heapgraph_work_end referenced weakly, so an adapter library has no dependency on
// libheapgraph.so. The loader binds them to the recorder whether the host links it or it is
// LD_PRELOADed; in a process without the recorder they are null and the marks do nothing.
#pragma once

#include "heapgraph/heapgraph.h"

#pragma weak heapgraph_work_begin
#pragma weak heapgraph_work_end

namespace heapgraph::adapters {

inline void WorkBegin() {
  if (heapgraph_work_begin != nullptr) heapgraph_work_begin();
}

inline void WorkEnd() {
  if (heapgraph_work_end != nullptr) heapgraph_work_end();
}

}  // namespace heapgraph::adapters
