# tests/scanner: end-to-end leak accuracy (`heapgraph run` on tests/programs/leak_*), included from
# tests/scanner/CMakeLists.txt. Never sanitized: they only run children, and nothing here is
# worth the second build.
heapgraph_add_test(leak_accuracy_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/LeakAccuracyTest.cc
                   LIBS nlohmann_json::nlohmann_json)
add_dependencies(leak_accuracy_test leak_programs heapgraph heapgraph_cli)

# The same table under Valgrind memcheck (a few cases, ~10 s): its own executable so that ctest can
# leave it out with -LE valgrind (or set HEAPGRAPH_SKIP_VALGRIND=1 to skip it at run time).
add_executable(leak_accuracy_valgrind_test ${CMAKE_CURRENT_LIST_DIR}/LeakAccuracyTest.cc)
target_link_libraries(leak_accuracy_valgrind_test PRIVATE nlohmann_json::nlohmann_json
                      GTest::gtest GTest::gtest_main Threads::Threads)
target_compile_definitions(leak_accuracy_valgrind_test PRIVATE
  HEAPGRAPH_LEAK_ACCURACY_VALGRIND=1
  HEAPGRAPH_PRELOAD="$<TARGET_FILE:heapgraph>"
  HEAPGRAPH_PROGRAM_DIR="${PROJECT_BINARY_DIR}/tests/programs"
  HEAPGRAPH_CLI="$<TARGET_FILE:heapgraph_cli>")
add_dependencies(leak_accuracy_valgrind_test leak_programs heapgraph heapgraph_cli)
gtest_discover_tests(leak_accuracy_valgrind_test DISCOVERY_TIMEOUT 60
                     PROPERTIES TIMEOUT 300 LABELS valgrind)
# libheapgraph.so loads the checker (libheapgraph_scan.so) from its own directory at exit.
if(TARGET heapgraph_scan)
  add_dependencies(leak_accuracy_test heapgraph_scan)
  add_dependencies(leak_accuracy_valgrind_test heapgraph_scan)
endif()
