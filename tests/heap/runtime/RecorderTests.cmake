# tests/heap: process tests of the recorder (included from tests/heap/CMakeLists.txt). Each runs
# programs of tests/programs as real children under LD_PRELOAD=libheapgraph.so (or linked with
# it) and checks their recordings with RecordingReader. Not labelled sanitizable: they exercise
# libheapgraph.so, which is never sanitized. The test binaries themselves never load it, so in a
# HEAPGRAPH_SANITIZE build they get ASan+UBSan like the reader libraries they link.

# Spawning children, talking to them with timeouts, reading their recording directories.
add_library(heapgraph_proctest STATIC ${PROJECT_SOURCE_DIR}/tests/ChildProcess.cc)
target_link_libraries(heapgraph_proctest PUBLIC heapgraph_reader heapgraph_core)
target_compile_definitions(heapgraph_proctest PRIVATE
  HEAPGRAPH_PRELOAD="$<TARGET_FILE:heapgraph>"
  HEAPGRAPH_PROGRAM_DIR="${PROJECT_BINARY_DIR}/tests/programs")
heapgraph_sanitize(heapgraph_proctest)

# heapgraph_add_process_test(NAME [LIBS ...]): NAME.cc in this directory.
function(heapgraph_add_process_test name)
  cmake_parse_arguments(T "" "" "LIBS" ${ARGN})
  heapgraph_add_test(${name} SOURCES ${CMAKE_CURRENT_LIST_DIR}/${name}.cc
                     LIBS heapgraph_proctest heapgraph_reader ${T_LIBS})
  heapgraph_test_target(${name} executable)
  heapgraph_sanitize(${executable})
  add_dependencies(${name} heapgraph heapgraph_test_programs)
endfunction()

heapgraph_add_process_test(InterposerFunctionsTest)
heapgraph_add_process_test(InterposerDlopenTest)
heapgraph_add_process_test(RecorderStressTest)
heapgraph_add_process_test(RecorderForkTest)
heapgraph_add_process_test(RecorderLoaderTest)
heapgraph_add_process_test(RecorderKillTest)
heapgraph_add_process_test(RecorderCorruptRecordingTest)
heapgraph_add_process_test(RecorderUnwindTest LIBS heapgraph_report)
# Issue 14, stacks: recorded stacks against libgcc's unwinder (tests/programs/stack_oracle.cc) on
# hg_churn, python3, git and a C++ test binary.
heapgraph_add_process_test(StackOracleTest LIBS heapgraph_report)
heapgraph_add_process_test(RecorderLargeAllocationTest)
heapgraph_add_process_test(RecorderConfigTest)
heapgraph_add_process_test(RecorderPauseTest)
heapgraph_add_process_test(RecorderSamplingTest LIBS nlohmann_json::nlohmann_json)
add_dependencies(RecorderSamplingTest heapgraph_cli)
heapgraph_add_process_test(RecorderLagTest LIBS nlohmann_json::nlohmann_json)
add_dependencies(RecorderLagTest heapgraph_cli)  # heapgraph foom: the crash-lag
if(TARGET heapgraph_scan)  # the leak checks during sampling
  add_dependencies(RecorderLagTest heapgraph_scan)
endif()
heapgraph_add_process_test(RecorderPressureTest)
if(TARGET heapgraph_scan)  # the type refresh; absent in sanitizer builds
  add_dependencies(RecorderPressureTest heapgraph_scan)
endif()
add_dependencies(RecorderCorruptRecordingTest heapgraph_cli)
heapgraph_add_process_test(RecorderFoomTest LIBS nlohmann_json::nlohmann_json)
add_dependencies(RecorderFoomTest heapgraph_cli)
if(TARGET heapgraph_scan)
  add_dependencies(RecorderFoomTest heapgraph_scan)  # the watcher's type refresh
endif()
heapgraph_test_target(RecorderFoomTest foom_test_executable)
heapgraph_test_target(RecorderLoaderTest loader_test_executable)
# By hand: SIGKILL at 100 random moments (docs/foom-report.md).
add_custom_target(foom_stress
  COMMAND ${CMAKE_COMMAND} -E env HEAPGRAPH_FOOM_RUNS=100 $<TARGET_FILE:${foom_test_executable}>
          --gtest_filter=*SigkillAtRandomMoments*
  DEPENDS RecorderFoomTest
  USES_TERMINAL)
# By hand: the loader-lock tests long (issue 12, items 1 and 2): 3,000 callback rounds, 1,000 forks.
add_custom_target(loader_stress
  COMMAND ${CMAKE_COMMAND} -E env HEAPGRAPH_LOADER_ROUNDS=3000 HEAPGRAPH_LOADER_FORKS=1000
          $<TARGET_FILE:${loader_test_executable}> --gtest_filter=RecorderLoaderTest.*
  DEPENDS RecorderLoaderTest
  USES_TERMINAL)
