# tests/scanner/types: tests of the Blocks and Objective-C readers. Included from
# tests/scanner/CMakeLists.txt. The Blocks fixtures need clang (-fblocks) and libBlocksRuntime.
find_program(HEAPGRAPH_CLANGXX NAMES clang++ clang++-14)
find_library(HEAPGRAPH_BLOCKS_RUNTIME BlocksRuntime)
if(HEAPGRAPH_CLANGXX AND HEAPGRAPH_BLOCKS_RUNTIME)
  # The capture shapes at -O0 and -O2, each a shared library the tests dlopen.
  set(shape_libs "")
  foreach(opt O0 O2)
    set(lib ${CMAKE_CURRENT_BINARY_DIR}/libblock_shapes_${opt}.so)
    add_custom_command(OUTPUT ${lib}
      COMMAND ${HEAPGRAPH_CLANGXX} -fblocks -${opt} -g -fPIC -shared -fvisibility=hidden
              ${CMAKE_CURRENT_LIST_DIR}/block_shapes.cc -o ${lib} -lBlocksRuntime
      DEPENDS ${CMAKE_CURRENT_LIST_DIR}/block_shapes.cc VERBATIM)
    list(APPEND shape_libs ${lib})
  endforeach()
  add_custom_target(block_shapes DEPENDS ${shape_libs})
  heapgraph_add_test(dispose_helper_analyzer_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/DisposeHelperAnalyzerTest.cc
    LIBS heapgraph_scanner SANITIZE)
  heapgraph_add_test(block_reader_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/BlockReaderTest.cc LIBS heapgraph_scanner SANITIZE)
  foreach(t dispose_helper_analyzer_test block_reader_test)
    add_dependencies(${t} block_shapes)
    target_compile_definitions(${t} PRIVATE BLOCK_SHAPES_DIR="${CMAKE_CURRENT_BINARY_DIR}")
  endforeach()
else()
  message(STATUS "clang++ or libBlocksRuntime not found: Blocks reader tests skipped")
endif()
