#include "heap/runtime/CheckCall.h"

#include "heap/platform/StackScrub.h"
#include "heap/plugin/ScanPlugin.h"
#include "heap/runtime/CheckEntrants.h"

namespace heapgraph::CheckCall {
namespace {

__attribute__((noinline)) bool RunListed(HeapgraphCheckRequest& request, int* result) {
  HeapgraphCheckLeaksFn check = ScanPlugin::CheckLeaks();
  if (check == nullptr) return false;
  *result = check(&request);
  return true;
}

}  // namespace

bool Run(HeapgraphCheckRequest& request, int* result) {
  CheckEntrant listed(request.program_stack_pointer);
  bool ran = RunListed(request, result);
  ScrubStackBelow();
  return ran;
}

}  // namespace heapgraph::CheckCall
