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
  heapgraph_add_test(dynamic_symbols_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/DynamicSymbolsTest.cc LIBS heapgraph_scanner SANITIZE)
  foreach(t dispose_helper_analyzer_test block_reader_test dynamic_symbols_test)
    if(TARGET ${t})
      add_dependencies(${t} block_shapes)
      heapgraph_test_target(${t} executable)
      target_compile_definitions(${executable} PRIVATE BLOCK_SHAPES_DIR="${CMAKE_CURRENT_BINARY_DIR}")
    endif()
  endforeach()
else()
  message(STATUS "clang++ or libBlocksRuntime not found: Blocks reader tests skipped")
endif()

heapgraph_add_test(objc_ivar_rules_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/ObjcIvarRulesTest.cc
                   LIBS heapgraph_scanner SANITIZE)
heapgraph_add_test(objc_class_catalog_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/ObjcClassCatalogTest.cc
                   LIBS heapgraph_scanner SANITIZE)

# The Objective-C fixtures: GCC's Objective-C with GNUstep Base (gnustep-config's flags).
find_program(HEAPGRAPH_GNUSTEP_CONFIG gnustep-config)
find_program(HEAPGRAPH_GOBJC gcc)  # gobjc: GCC's Objective-C front end
if(HEAPGRAPH_GNUSTEP_CONFIG AND HEAPGRAPH_GOBJC)
  execute_process(COMMAND ${HEAPGRAPH_GNUSTEP_CONFIG} --objc-flags OUTPUT_VARIABLE objc_flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${HEAPGRAPH_GNUSTEP_CONFIG} --base-libs OUTPUT_VARIABLE objc_libs
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  separate_arguments(objc_flags UNIX_COMMAND "${objc_flags}")
  separate_arguments(objc_libs UNIX_COMMAND "${objc_libs}")
  list(REMOVE_ITEM objc_flags -MMD -MP)
  set(HEAPGRAPH_OBJC_FLAGS ${objc_flags} CACHE INTERNAL "gnustep-config --objc-flags")
  set(HEAPGRAPH_OBJC_LIBS ${objc_libs} CACHE INTERNAL "gnustep-config --base-libs")
  set(fixtures ${CMAKE_CURRENT_BINARY_DIR}/libobjc_fixtures.so)
  add_custom_command(OUTPUT ${fixtures}
    COMMAND ${HEAPGRAPH_GOBJC} ${objc_flags} -shared -fPIC
            ${CMAKE_CURRENT_LIST_DIR}/objc_fixtures.m -o ${fixtures} ${objc_libs}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/objc_fixtures.m VERBATIM)
  add_custom_target(objc_fixtures DEPENDS ${fixtures})
  heapgraph_add_test(gnu_objc_reader_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/GnuObjcReaderTest.cc
                     LIBS heapgraph_scanner SANITIZE)
  if(TARGET gnu_objc_reader_test)
    add_dependencies(gnu_objc_reader_test objc_fixtures)
    heapgraph_test_target(gnu_objc_reader_test executable)
    target_compile_definitions(${executable} PRIVATE OBJC_FIXTURES="${fixtures}")
  endif()
else()
  message(STATUS "gnustep-config not found: Objective-C reader tests skipped")
endif()


# libFuzzer target for the user's ivar rule files, built with clang++ like the recording reader's.
heapgraph_add_fuzzer(objc_ivar_rules_fuzzer
  SOURCES ${PROJECT_SOURCE_DIR}/scanner/types/ObjcIvarRules.cc
          ${CMAKE_CURRENT_LIST_DIR}/ObjcIvarRulesFuzzer.cc
  RUN -runs=20000 -max_len=4096)
