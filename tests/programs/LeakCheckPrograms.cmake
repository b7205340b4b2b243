# Child programs of tests/scanner/LeakCheckTriggerTest: linked with libheapgraph.so and
# libheapgraph_scan.so (the "link it into a test build" form).
if(TARGET heapgraph_scan)
  add_executable(leak_check_child ${CMAKE_CURRENT_LIST_DIR}/leak_check_child.cc)
  target_include_directories(leak_check_child PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(leak_check_child PRIVATE -O1 -g)
  target_link_libraries(leak_check_child PRIVATE heapgraph heapgraph_scan)
  set_target_properties(leak_check_child PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/programs)
endif()

# tests/scanner/LeakScanTest's child: RunLeakScan with a reader that faults in the snapshot.
if(TARGET heapgraph_scan)
  heapgraph_add_program(typing_dies SOURCES ${CMAKE_CURRENT_LIST_DIR}/typing_dies.cc
                        LIBS heapgraph heapgraph_scanner)
endif()

# tests/scanner/UnwinderRootsTest's child: libunwind's caches are no roots, the program's own
# mappings still are.
if(TARGET heapgraph_scan)
  heapgraph_add_program(unwinder_roots SOURCES ${CMAKE_CURRENT_LIST_DIR}/unwinder_roots.cc
                        LIBS heapgraph heapgraph_scanner)
endif()

# tests/report/SymbolWarmupTest's child: the check's steps cold, warmed and as RunLeakCheck.
if(TARGET heapgraph_scan)
  heapgraph_add_program(leak_warmup_child
                        SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_warmup_child.cc
                        LIBS heapgraph heapgraph_check nlohmann_json::nlohmann_json)
endif()

# tests/scanner/RecorderTlsRootsTest's child: the recorder's per-thread state is no root, the
# program's own thread-locals still are.
if(TARGET heapgraph_scan)
  heapgraph_add_program(recorder_tls_roots SOURCES ${CMAKE_CURRENT_LIST_DIR}/recorder_tls_roots.cc
                        LIBS heapgraph heapgraph_scanner)
endif()

# tests/scanner/UnreadablePagesProgramTest's children: memory that faults when the snapshot reads
# it (a PROT_NONE or guard page in a block or a root, a truncated file mapping), issue 12 item 4.
if(TARGET heapgraph_scan)
  heapgraph_add_program(unreadable_pages SOURCES ${CMAKE_CURRENT_LIST_DIR}/unreadable_pages.cc
                        LIBS heapgraph heapgraph_scanner)
endif()
heapgraph_add_program(leak_check_segv SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_check_segv.cc)

# tests/scanner/SparseRootsTest's child: a sparse MAP_NORESERVE reservation as a root (issue 12,
# item 10).
if(TARGET heapgraph_scan)
  heapgraph_add_program(sparse_roots SOURCES ${CMAKE_CURRENT_LIST_DIR}/sparse_roots.cc
                        LIBS heapgraph heapgraph_scanner)
endif()

# tests/check/LeakCheckOverlapTest's child: checks that overlap, from a thread with its own malloc
# arena, and in children forked during a check (issue 12, item 8).
if(TARGET heapgraph_scan)
  heapgraph_add_program(overlapping_checks SOURCES ${CMAKE_CURRENT_LIST_DIR}/overlapping_checks.cc
                        LIBS heapgraph heapgraph_scan)
endif()

# tests/check/LeakCheckDroppedPrivilegesTest's child: checks after setresuid to nobody (issue 12,
# item 7).
if(TARGET heapgraph_scan)
  heapgraph_add_program(leak_check_dropped SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_check_dropped.cc
                        LIBS heapgraph heapgraph_scan)
endif()

# tests/check/LeakCheckExplainTest's child: a block kept by each kind of root, one leaked; run
# under `heapgraph run --explain` and through heapgraph_check_leaks_explain (issue 11, item 2).
if(TARGET heapgraph_scan)
  heapgraph_add_program(explain_roots SOURCES ${CMAKE_CURRENT_LIST_DIR}/explain_roots.cc
                        LIBS heapgraph heapgraph_scan)
  target_include_directories(explain_roots PRIVATE ${PROJECT_SOURCE_DIR}/include)
endif()

# tests/gtest/LeakCheckListenerTest's children: the same suite under heapgraph::gtest_main, linked
# with libheapgraph.so and libheapgraph_scan.so, and without them (for LD_PRELOAD).
if(TARGET heapgraph_scan)
  heapgraph_add_program(gtest_leaks_linked SOURCES ${CMAKE_CURRENT_LIST_DIR}/gtest_leaks.cc
                        LIBS heapgraph heapgraph_scan heapgraph_gtest_main)
  target_compile_definitions(gtest_leaks_linked PRIVATE HEAPGRAPH_GTEST_LINKED)
  heapgraph_add_program(gtest_leaks_preload SOURCES ${CMAKE_CURRENT_LIST_DIR}/gtest_leaks.cc
                        LIBS heapgraph_gtest_main)
endif()
