# Child programs of the in-process leak check's tests, linked with libheapgraph.so and
# libheapgraph_scan.so or with the scanner's libraries (the "link it into a test build" form); only
# where the scan library is built.
if(NOT TARGET heapgraph_scan)
  return()
endif()

# tests/scanner/LeakCheckTriggerTest's child.
add_executable(leak_check_child ${CMAKE_CURRENT_LIST_DIR}/leak_check_child.cc)
target_include_directories(leak_check_child PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_options(leak_check_child PRIVATE -O1 -g)
target_link_libraries(leak_check_child PRIVATE heapgraph heapgraph_scan)
set_target_properties(leak_check_child PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/programs)

# tests/scanner/LeakScanTest's child: what a scan or check leaves mapped, with and without
# process_exits.
heapgraph_add_program(scan_left_to_exit SOURCES ${CMAKE_CURRENT_LIST_DIR}/scan_left_to_exit.cc
                      LIBS heapgraph heapgraph_check)

# tests/heap/runtime/LeakCheckTriggerTest's C child: no live block at exit, or one kept.
heapgraph_add_program(no_heap SOURCES ${CMAKE_CURRENT_LIST_DIR}/no_heap.c)

# tests/scanner/LeakScanTest's child: RunLeakScan with a reader that faults in the snapshot.
heapgraph_add_program(typing_dies SOURCES ${CMAKE_CURRENT_LIST_DIR}/typing_dies.cc
                      LIBS heapgraph heapgraph_scanner)

# tests/scanner/UnwinderRootsTest's child: the rule walk's table is no root, the program's own
# mappings still are.
heapgraph_add_program(unwinder_roots SOURCES ${CMAKE_CURRENT_LIST_DIR}/unwinder_roots.cc
                      LIBS heapgraph heapgraph_scanner)

# tests/report/SymbolWarmupTest's child: the check's steps cold, warmed and as RunLeakCheck.
heapgraph_add_program(leak_warmup_child
                      SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_warmup_child.cc
                      LIBS heapgraph heapgraph_check nlohmann_json::nlohmann_json)

# tests/scanner/RecorderTlsRootsTest's child: the recorder's per-thread state is no root, the
# program's own thread-locals still are.
heapgraph_add_program(recorder_tls_roots SOURCES ${CMAKE_CURRENT_LIST_DIR}/recorder_tls_roots.cc
                      LIBS heapgraph heapgraph_scanner)

# tests/scanner/UnreadablePagesProgramTest's children: memory that faults when the snapshot reads
# it (a PROT_NONE or guard page in a block or a root, a truncated file mapping), issue 12 item 4.
heapgraph_add_program(unreadable_pages SOURCES ${CMAKE_CURRENT_LIST_DIR}/unreadable_pages.cc
                      LIBS heapgraph heapgraph_scanner)
heapgraph_add_program(leak_check_segv SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_check_segv.cc)

# tests/scanner/SparseRootsTest's child: a sparse MAP_NORESERVE reservation as a root (issue 12,
# item 10).
heapgraph_add_program(sparse_roots SOURCES ${CMAKE_CURRENT_LIST_DIR}/sparse_roots.cc
                      LIBS heapgraph heapgraph_scanner)

# tests/check/LeakCheckOverlapTest's child: checks that overlap, from a thread with its own malloc
# arena, and in children forked during a check (issue 12, item 8).
heapgraph_add_program(overlapping_checks SOURCES ${CMAKE_CURRENT_LIST_DIR}/overlapping_checks.cc
                      LIBS heapgraph heapgraph_scan)

# tests/check/LeakCheckDroppedPrivilegesTest's child: checks after setresuid to nobody (issue 12,
# item 7).
heapgraph_add_program(leak_check_dropped SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_check_dropped.cc
                      LIBS heapgraph heapgraph_scan)

# tests/check/LeakCheckExplainTest's child: a block kept by each kind of root, one leaked; run
# under `heapgraph run --explain` and through heapgraph_check_leaks_explain (issue 11, item 2).
heapgraph_add_program(explain_roots SOURCES ${CMAKE_CURRENT_LIST_DIR}/explain_roots.cc
                      LIBS heapgraph heapgraph_scan)
target_include_directories(explain_roots PRIVATE ${PROJECT_SOURCE_DIR}/include)

# tests/check/LsanCompatibilityTest's child: LeakSanitizer's interface, linked with libheapgraph.so
# and compiled against compiler-rt's lsan_interface.h where the system has it (issue 13, item 4).
# tests/heap/runtime/LeakCheckTriggerTest's child: a process tree under `heapgraph run`.
heapgraph_add_program(leak_tree SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_tree.cc)

# tests/heap/runtime/LeakCheckTriggerTest's child: the public check functions found with dlsym
# under LD_PRELOAD, in a program that does not link heapgraph.
heapgraph_add_program(dlsym_check SOURCES ${CMAKE_CURRENT_LIST_DIR}/dlsym_check.cc)
target_include_directories(dlsym_check PRIVATE ${PROJECT_SOURCE_DIR}/include)

heapgraph_add_program(lsan_api SOURCES ${CMAKE_CURRENT_LIST_DIR}/lsan_api.cc LIBS heapgraph)
file(GLOB HEAPGRAPH_LSAN_HEADERS /usr/lib/llvm-*/lib/clang/*/include/sanitizer/lsan_interface.h)
if(HEAPGRAPH_LSAN_HEADERS)
  list(GET HEAPGRAPH_LSAN_HEADERS 0 lsan_header)
  get_filename_component(lsan_dir ${lsan_header} DIRECTORY)
  # Only <sanitizer/...>: clang's own stddef.h and friends beside it must not reach GCC.
  set(lsan_include ${CMAKE_CURRENT_BINARY_DIR}/lsan_include)
  file(MAKE_DIRECTORY ${lsan_include})
  file(CREATE_LINK ${lsan_dir} ${lsan_include}/sanitizer SYMBOLIC)
  target_include_directories(lsan_api SYSTEM PRIVATE ${lsan_include})
  target_compile_definitions(lsan_api PRIVATE HEAPGRAPH_REAL_LSAN_HEADER=1)
  message(STATUS "lsan_api: compiled against ${lsan_header}")
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

# tests/check/LeakCheckAllocationWaitTest's child: threads allocate during API checks (issue 14,
# the pause the program feels).
heapgraph_add_program(alloc_during_checks SOURCES ${CMAKE_CURRENT_LIST_DIR}/alloc_during_checks.cc
                      LIBS heapgraph heapgraph_scan)

# tests/heap/runtime/LeakCheckTriggerTest's child: a C program linked with both libraries (not
# dropped by --as-needed: it calls only libheapgraph.so), whose full check reports its own leak.
if(TARGET heapgraph_scan)
  heapgraph_add_program(linked_check SOURCES ${CMAKE_CURRENT_LIST_DIR}/linked_check.c)
  target_include_directories(linked_check PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_options(linked_check PRIVATE -Wl,--no-as-needed)
  target_link_libraries(linked_check PRIVATE heapgraph heapgraph_scan)
endif()
