# tests/programs: child programs of the leak scanner's accuracy test
# (tests/scanner/LeakAccuracyTest.cc). Included from tests/programs/CMakeLists.txt, after
# heapgraph_add_program() is defined. They use its defaults (-O1 -fno-inline -fno-builtin -g,
# -rdynamic, never sanitized) and land in HEAPGRAPH_PROGRAM_DIR.
heapgraph_add_program(leak_direct SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_direct.cc)
heapgraph_add_program(leak_chains SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_chains.cc)
heapgraph_add_program(leak_traps SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_traps.cc)

# dlopen'd by leak_traps (dlopen_tls) from its own directory: a global-dynamic __thread slot.
add_library(leak_tls_lib SHARED ${CMAKE_CURRENT_LIST_DIR}/leak_tls_lib.cc)
target_compile_options(leak_tls_lib PRIVATE -g -O1 -fno-inline -fno-builtin)
set_target_properties(leak_tls_lib PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${HEAPGRAPH_PROGRAM_DIR})
add_dependencies(leak_traps leak_tls_lib)

# leak_direct without -rdynamic: its functions are in no .dynsym, so a stripped copy names none of
# them (tests/tools/ReportCommandTest strips a copy and renders its report with the debug file).
heapgraph_add_program(leak_direct_local SOURCES ${CMAKE_CURRENT_LIST_DIR}/leak_direct.cc)
set_target_properties(leak_direct_local PROPERTIES ENABLE_EXPORTS OFF)

add_custom_target(leak_programs)
add_dependencies(leak_programs leak_direct leak_chains leak_traps leak_tls_lib leak_direct_local)
add_dependencies(heapgraph_test_programs leak_programs)

# C++ retain cycles and their weak_ptr controls (tests/scanner/RetainCycleTest).
heapgraph_add_program(cycle_cxx SOURCES ${CMAKE_CURRENT_LIST_DIR}/cycle_cxx.cc)
add_dependencies(leak_programs cycle_cxx)
# The same without DWARF and without .symtab (.dynsym stays: -rdynamic exports the
# std::function managers); typeinfo names survive stripping.
heapgraph_add_program(cycle_cxx_stripped SOURCES ${CMAKE_CURRENT_LIST_DIR}/cycle_cxx.cc
                      OPTIONS -O1 -fno-inline -g0)
add_custom_command(TARGET cycle_cxx_stripped POST_BUILD
                   COMMAND strip --strip-all $<TARGET_FILE:cycle_cxx_stripped>)
add_dependencies(leak_programs cycle_cxx_stripped)
