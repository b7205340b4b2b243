# scanner/types/: the clang Blocks and Objective-C (GNU runtime) object-model readers and the
# Capstone analysis of Block dispose helpers, part of heapgraph_scanner. Included from
# scanner/CMakeLists.txt.
target_sources(heapgraph_scanner PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/DisposeHelperAnalyzer.cc
  ${CMAKE_CURRENT_LIST_DIR}/CapstoneLoader.cc
  ${CMAKE_CURRENT_LIST_DIR}/DynamicSymbols.cc
  ${CMAKE_CURRENT_LIST_DIR}/BlockReader.cc
  ${CMAKE_CURRENT_LIST_DIR}/ObjcIvarRules.cc
  ${CMAKE_CURRENT_LIST_DIR}/ObjcClassCatalog.cc
  ${CMAKE_CURRENT_LIST_DIR}/GnuObjcReader.cc)
# Capstone's headers only: CapstoneLoader.cc loads the library on first use (issue 14).
target_include_directories(heapgraph_scanner PUBLIC
  $<TARGET_PROPERTY:PkgConfig::CAPSTONE,INTERFACE_INCLUDE_DIRECTORIES>)
