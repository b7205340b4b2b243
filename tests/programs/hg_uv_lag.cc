// Lag monitor through the libuv adapter (tests/adapters/AdapterLagTest.cc): a real libuv loop
// (Debian libuv1-dev) monitored by libheapgraph_uv, built twice: run with libheapgraph.so
// preloaded (hg_uv_lag), and linked with it (hg_uv_lag_linked). Prints the code range of
// UvSlowHandler, then "ready <pid>"; a timer's callback calls UvSlowHandler, which sleeps 3 s
// (argv[1] "hang": until killed); then 20 ticks of 50 ms, so the watchdog sees the unit end;
// prints "done" and exits.
#include <uv.h>

#include <cstdio>
#include <cstring>

#include "adapters/uv/heapgraph_uv.h"
#include "tests/programs/ProgramSupport.h"

namespace {

unsigned g_slow_seconds = 3;
int g_ticks_after = 0;
bool g_slow_done = false;

void OnSlow(uv_timer_t*);
void OnTick(uv_timer_t* timer) {
  if (g_slow_done && ++g_ticks_after == 20)
    uv_close(reinterpret_cast<uv_handle_t*>(timer), nullptr);
}

}  // namespace

extern "C" __attribute__((noinline)) void UvSlowHandler(unsigned seconds) {
  hgprog::SleepFully(seconds);
}

namespace {

void OnSlow(uv_timer_t* timer) {
  UvSlowHandler(g_slow_seconds);
  g_slow_done = true;
  uv_close(reinterpret_cast<uv_handle_t*>(timer), nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  if (argc > 1 && strcmp(argv[1], "hang") == 0) g_slow_seconds = 100000;
  hgprog::PrintRange("UvSlowHandler", reinterpret_cast<void*>(&UvSlowHandler));
  uv_loop_t* loop = uv_default_loop();
  heapgraph_uv_monitor monitor;
  if (heapgraph_uv_monitor_start(&monitor, loop) != 0) return 1;
  uv_timer_t slow, tick;
  uv_timer_init(loop, &slow);
  uv_timer_init(loop, &tick);
  uv_timer_start(&slow, OnSlow, 200, 0);
  uv_timer_start(&tick, OnTick, 50, 50);
  hgprog::Ready();
  uv_run(loop, UV_RUN_DEFAULT);
  heapgraph_uv_monitor_stop(&monitor);
  uv_run(loop, UV_RUN_NOWAIT);  // the monitor's close callbacks
  uv_loop_close(loop);
  printf("done\n");
  return 0;
}
