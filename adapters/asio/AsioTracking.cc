#include "adapters/WorkMarks.h"
#include "adapters/asio/asio_tracking.hpp"

// A handler invoked inside another (dispatch) nests: the recorder counts nested pairs as one unit.
extern "C" void heapgraph_asio_invocation_begin(void) {
  heapgraph::adapters::WorkBegin();
}

extern "C" void heapgraph_asio_invocation_end(void) {
  heapgraph::adapters::WorkEnd();
}
