#include "adapters/WorkMarks.h"
#include "adapters/uv/heapgraph_uv.h"

namespace {

using heapgraph::adapters::WorkBegin;
using heapgraph::adapters::WorkEnd;

void BeforeWait(uv_prepare_t*) {
  WorkEnd();
}
void AfterWait(uv_check_t*) {
  WorkBegin();
}

}  // namespace

extern "C" int heapgraph_uv_monitor_start(heapgraph_uv_monitor* m, uv_loop_t* loop) {
  int error = uv_prepare_init(loop, &m->prepare);
  if (error != 0) return error;
  error = uv_check_init(loop, &m->check);
  if (error != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&m->prepare), nullptr);
    return error;
  }
  uv_unref(reinterpret_cast<uv_handle_t*>(&m->prepare));
  uv_unref(reinterpret_cast<uv_handle_t*>(&m->check));
  uv_prepare_start(&m->prepare, BeforeWait);
  uv_check_start(&m->check, AfterWait);
  WorkBegin();
  return 0;
}

extern "C" void heapgraph_uv_monitor_stop(heapgraph_uv_monitor* m) {
  WorkEnd();
  uv_close(reinterpret_cast<uv_handle_t*>(&m->prepare), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&m->check), nullptr);
}
