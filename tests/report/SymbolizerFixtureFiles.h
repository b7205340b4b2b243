// tests/report: the symbolizer fixture library and the copies tests/report/CMakeLists.txt derives
// from it (one build-id for all three): the library with full DWARF, its --strip-all copy (only
// .dynsym names), and its separate debug file (objcopy --only-keep-debug). For the tests that
// symbolize a stripped build from its debug file (DebugFileSearchTest, FrameResymbolizerTest).
#pragma once

namespace heapgraph::report {

constexpr char kFixture[] = HEAPGRAPH_SYMBOLIZER_FIXTURE;
constexpr char kStripped[] = HEAPGRAPH_SYMBOLIZER_FIXTURE_STRIPPED;
constexpr char kSplitDebug[] = HEAPGRAPH_SYMBOLIZER_FIXTURE_SPLIT_DEBUG;

}  // namespace heapgraph::report
