#include <climits>

#include "adapters/WorkMarks.h"
#include "adapters/glib/heapgraph_glib.h"

namespace {

using heapgraph::adapters::WorkBegin;
using heapgraph::adapters::WorkEnd;

gboolean BeforePoll(GSource*, gint* timeout) {
  *timeout = -1;  // no say in how long the context waits
  WorkEnd();
  return FALSE;
}

gboolean AfterPoll(GSource*) {
  WorkBegin();
  return FALSE;
}

GSourceFuncs g_funcs = {BeforePoll, AfterPoll, nullptr, nullptr, nullptr, nullptr};

}  // namespace

extern "C" GSource* heapgraph_glib_monitor_attach(GMainContext* context) {
  GSource* source = g_source_new(&g_funcs, sizeof(GSource));
  g_source_set_priority(source, INT_MIN);
  g_source_set_name(source, "heapgraph lag monitor");
  g_source_attach(source, context);
  g_source_unref(source);  // the context holds it
  WorkBegin();
  return source;
}

extern "C" void heapgraph_glib_monitor_detach(GSource* source) {
  WorkEnd();
  g_source_destroy(source);
}
