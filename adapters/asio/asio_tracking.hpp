// adapters/asio: the lag monitor's Boost.Asio adapter (libheapgraph_asio.so, docs/lag.md
// "Adapters"), as Asio's custom handler tracking: compile every translation unit that includes
// Asio with
//   -DBOOST_ASIO_CUSTOM_HANDLER_TRACKING='"adapters/asio/asio_tracking.hpp"'
// and link libheapgraph_asio. Asio then calls heapgraph_asio_invocation_begin / _end around every
// completion handler it invokes, on the thread that runs it (io_context::run on any number of
// threads): each handler is one unit of work (heapgraph_work_begin / _end), a handler invoked
// inside another (dispatch) joins the outer one. So a handler that blocks its thread longer than
// lag_threshold_ms is a lag whose stack names it. Asio has no run-loop observer; its handler
// tracking hooks are the one place every handler passes through, with no change to the program's
// handlers or executors. A handler that throws ends its unit too (the begin is a scope guard).
// Every other tracking point expands to nothing.
#pragma once

extern "C" {
__attribute__((visibility("default"))) void heapgraph_asio_invocation_begin(void);
__attribute__((visibility("default"))) void heapgraph_asio_invocation_end(void);
}

namespace heapgraph::adapters {

// One handler invocation: begun when constructed, ended by End() or, when the handler throws,
// as its scope is left.
class AsioInvocation {
 public:
  AsioInvocation() { heapgraph_asio_invocation_begin(); }
  ~AsioInvocation() { End(); }
  AsioInvocation(const AsioInvocation&) = delete;
  AsioInvocation& operator=(const AsioInvocation&) = delete;
  void End() {
    if (open_) heapgraph_asio_invocation_end();
    open_ = false;
  }

 private:
  bool open_ = true;
};

}  // namespace heapgraph::adapters

#define BOOST_ASIO_INHERIT_TRACKED_HANDLER
#define BOOST_ASIO_ALSO_INHERIT_TRACKED_HANDLER
#define BOOST_ASIO_HANDLER_TRACKING_INIT (void)0
#define BOOST_ASIO_HANDLER_LOCATION(args) (void)0
#define BOOST_ASIO_HANDLER_CREATION(args) (void)0
#define BOOST_ASIO_HANDLER_COMPLETION(args) (void)0
#define BOOST_ASIO_HANDLER_INVOCATION_BEGIN(args) \
  ::heapgraph::adapters::AsioInvocation heapgraph_asio_invocation_
#define BOOST_ASIO_HANDLER_INVOCATION_END heapgraph_asio_invocation_.End()
#define BOOST_ASIO_HANDLER_OPERATION(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_REGISTRATION(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_DEREGISTRATION(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_READ_EVENT 1
#define BOOST_ASIO_HANDLER_REACTOR_WRITE_EVENT 2
#define BOOST_ASIO_HANDLER_REACTOR_ERROR_EVENT 4
#define BOOST_ASIO_HANDLER_REACTOR_EVENTS(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_OPERATION(args) (void)0
