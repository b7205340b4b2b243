// Lag monitor through the Boost.Asio adapter (tests/adapters/AdapterLagTest.cc): a real
// io_context (Debian libboost-dev, header-only) compiled with the adapter's custom handler
// tracking (BOOST_ASIO_CUSTOM_HANDLER_TRACKING) and linked with libheapgraph_asio, built twice:
// run with libheapgraph.so preloaded (hg_asio_lag), and linked with it (hg_asio_lag_linked).
// Prints the code range of AsioSlowHandler, then "ready <pid>"; a timer's handler calls
// AsioSlowHandler, which sleeps 3 s (argv[1] "hang": until killed); then 20 ticks of 50 ms, so
// the watchdog sees the unit end; prints "done" and exits.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "tests/programs/ProgramSupport.h"

extern "C" __attribute__((noinline)) void AsioSlowHandler(unsigned seconds) {
  hgprog::SleepFully(seconds);
}

namespace {

using std::chrono::milliseconds;

struct Ticker {
  boost::asio::steady_timer timer;
  bool* slow_done;
  int after = 0;

  void Next() {
    timer.expires_after(milliseconds(50));
    timer.async_wait([this](const boost::system::error_code&) {
      if (*slow_done && ++after == 20) return;
      Next();
    });
  }
};

}  // namespace

int main(int argc, char** argv) {
  hgprog::LineBufferedStdout();
  unsigned slow_seconds = argc > 1 && strcmp(argv[1], "hang") == 0 ? 100000 : 3;
  hgprog::PrintRange("AsioSlowHandler", reinterpret_cast<void*>(&AsioSlowHandler));
  boost::asio::io_context io;
  bool slow_done = false;
  boost::asio::steady_timer slow(io, milliseconds(200));
  slow.async_wait([&](const boost::system::error_code&) {
    AsioSlowHandler(slow_seconds);
    slow_done = true;
  });
  Ticker ticker{boost::asio::steady_timer(io), &slow_done};
  ticker.Next();
  hgprog::Ready();
  io.run();
  printf("done\n");
  return 0;
}
