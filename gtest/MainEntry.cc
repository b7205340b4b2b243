// gtest/: main() of heapgraph::gtest_main: heapgraph_gtest_main (include/heapgraph/gtest.h).
#include "heapgraph/gtest.h"

int main(int argc, char** argv) {
  return heapgraph_gtest_main(argc, argv);
}
