# scanner/types/: the clang Blocks and Objective-C (GNU runtime) object-model readers and the
# Capstone analysis of Block dispose helpers. Included from scanner/CMakeLists.txt.
add_library(heapgraph_types_objc STATIC
  ${CMAKE_CURRENT_LIST_DIR}/DisposeHelperAnalyzer.cc
  ${CMAKE_CURRENT_LIST_DIR}/ImportSlots.cc)
target_include_directories(heapgraph_types_objc PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(heapgraph_types_objc PUBLIC heapgraph_scanner PkgConfig::CAPSTONE
                                                  ${CMAKE_DL_LIBS})
heapgraph_sanitize(heapgraph_types_objc)
