// Lag monitor through the GLib adapter (tests/adapters/AdapterLagTest.cc): a real GLib main loop
// (Debian libglib2.0-dev) monitored by libheapgraph_glib, built twice: run with libheapgraph.so
// preloaded (hg_glib_lag), and linked with it (hg_glib_lag_linked). Prints the code range of
// GlibSlowHandler, then "ready <pid>"; a timeout calls GlibSlowHandler, which sleeps 3 s (argv[1]
// "hang": until killed); then 20 ticks of 50 ms, so the watchdog sees the unit end; prints "done"
// and exits.
#include <glib.h>

#include <cstdio>
#include <cstring>

#include "adapters/glib/heapgraph_glib.h"
#include "tests/programs/ProgramSupport.h"

extern "C" __attribute__((noinline)) void GlibSlowHandler(unsigned seconds) {
  hgprog::SleepFully(seconds);
}

namespace {

unsigned g_slow_seconds = 3;
int g_ticks_after = 0;
bool g_slow_done = false;

gboolean OnSlow(gpointer) {
  GlibSlowHandler(g_slow_seconds);
  g_slow_done = true;
  return G_SOURCE_REMOVE;
}

gboolean OnTick(gpointer loop) {
  if (g_slow_done && ++g_ticks_after == 20) {
    g_main_loop_quit(static_cast<GMainLoop*>(loop));
    return G_SOURCE_REMOVE;
  }
  return G_SOURCE_CONTINUE;
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc > 1 && strcmp(argv[1], "hang") == 0) g_slow_seconds = 100000;
  hgprog::PrintRange("GlibSlowHandler", reinterpret_cast<void*>(&GlibSlowHandler));
  GMainLoop* loop = g_main_loop_new(nullptr, FALSE);
  GSource* monitor = heapgraph_glib_monitor_attach(nullptr);
  g_timeout_add(200, OnSlow, nullptr);
  g_timeout_add(50, OnTick, loop);
  hgprog::Ready();
  g_main_loop_run(loop);
  heapgraph_glib_monitor_detach(monitor);
  g_main_loop_unref(loop);
  printf("done\n");
  return 0;
}
