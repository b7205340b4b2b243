# tests/programs: retain-cycle programs with clang Blocks and Objective-C (GNUstep Base on GCC's
# runtime), for tests/scanner/BlocksObjcCycleTest. Built with their own compilers (clang -fblocks,
# gobjc), with -g (the report names Block invoke functions from .symtab) and -rdynamic.
find_program(HEAPGRAPH_CLANG NAMES clang clang-14)
find_program(HEAPGRAPH_CLANGXX NAMES clang++ clang++-14)
find_program(HEAPGRAPH_GOBJC gcc)
find_program(HEAPGRAPH_GNUSTEP_CONFIG gnustep-config)
find_library(HEAPGRAPH_BLOCKS_RUNTIME BlocksRuntime)
set(objc_blocks_programs "")
if(HEAPGRAPH_CLANGXX AND HEAPGRAPH_BLOCKS_RUNTIME)
  add_custom_command(OUTPUT ${HEAPGRAPH_PROGRAM_DIR}/cycle_blocks
    COMMAND ${HEAPGRAPH_CLANGXX} -fblocks -g -O1 -rdynamic ${CMAKE_CURRENT_LIST_DIR}/cycle_blocks.cc
            -o ${HEAPGRAPH_PROGRAM_DIR}/cycle_blocks -lBlocksRuntime
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cycle_blocks.cc VERBATIM)
  list(APPEND objc_blocks_programs ${HEAPGRAPH_PROGRAM_DIR}/cycle_blocks)
endif()
if(HEAPGRAPH_GNUSTEP_CONFIG AND HEAPGRAPH_GOBJC)
  execute_process(COMMAND ${HEAPGRAPH_GNUSTEP_CONFIG} --objc-flags OUTPUT_VARIABLE flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${HEAPGRAPH_GNUSTEP_CONFIG} --base-libs OUTPUT_VARIABLE libs
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  separate_arguments(libs UNIX_COMMAND "${libs}")
  list(REMOVE_ITEM flags -MMD -MP -O2)
  add_custom_command(OUTPUT ${HEAPGRAPH_PROGRAM_DIR}/cycle_objc
    COMMAND ${HEAPGRAPH_GOBJC} ${flags} -O1 ${CMAKE_CURRENT_LIST_DIR}/cycle_objc.m
            -o ${HEAPGRAPH_PROGRAM_DIR}/cycle_objc ${libs}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cycle_objc.m VERBATIM)
  list(APPEND objc_blocks_programs ${HEAPGRAPH_PROGRAM_DIR}/cycle_objc)
  if(HEAPGRAPH_CLANG AND HEAPGRAPH_BLOCKS_RUNTIME)
    # clang compiles Objective-C for GCC's runtime (-fobjc-runtime=gcc) against GNUstep's headers:
    # GCC's own objc/ headers come after clang's (-idirafter), and objc_shim/ supplies the
    # <objc/blocks_runtime.h> GNUstep includes when the compiler has Blocks. libBlocksRuntime is
    # linked before GNUstep Base: Base 1.28 exports a Blocks runtime of its own whose _Block_copy
    # copies only blocks flagged BLOCK_HAS_DESCRIPTOR (1 << 29), which clang 14 no longer sets;
    # it would hand back the stack block.
    execute_process(COMMAND ${HEAPGRAPH_GOBJC} -print-file-name=include OUTPUT_VARIABLE gcc_include
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    add_custom_command(OUTPUT ${HEAPGRAPH_PROGRAM_DIR}/cycle_objc_blocks
      COMMAND ${HEAPGRAPH_CLANG} -fblocks -fobjc-runtime=gcc -I${CMAKE_CURRENT_LIST_DIR}/objc_shim
              -idirafter ${gcc_include} ${flags} -O1 -Wno-unused-command-line-argument
              ${CMAKE_CURRENT_LIST_DIR}/cycle_objc_blocks.m
              -o ${HEAPGRAPH_PROGRAM_DIR}/cycle_objc_blocks -lBlocksRuntime ${libs} -ldl
      DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cycle_objc_blocks.m
              ${CMAKE_CURRENT_LIST_DIR}/objc_shim/objc/blocks_runtime.h VERBATIM)
    list(APPEND objc_blocks_programs ${HEAPGRAPH_PROGRAM_DIR}/cycle_objc_blocks)
  endif()
endif()
add_custom_target(objc_blocks_programs DEPENDS ${objc_blocks_programs})
