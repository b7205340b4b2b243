# scanner/types/: the clang Blocks and Objective-C (GNU runtime) object-model readers and the
# Capstone analysis of Block dispose helpers, part of heapgraph_scanner. Included from
# scanner/CMakeLists.txt.
target_sources(heapgraph_scanner PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/DisposeHelperAnalyzer.cc
  ${CMAKE_CURRENT_LIST_DIR}/DynamicSymbols.cc
  ${CMAKE_CURRENT_LIST_DIR}/BlockReader.cc
  ${CMAKE_CURRENT_LIST_DIR}/ObjcIvarRules.cc
  ${CMAKE_CURRENT_LIST_DIR}/ObjcClassCatalog.cc
  ${CMAKE_CURRENT_LIST_DIR}/GnuObjcReader.cc)
target_link_libraries(heapgraph_scanner PUBLIC PkgConfig::CAPSTONE)
