/* tests/programs: GNUstep Base's headers include <objc/blocks_runtime.h> when the compiler has
   Blocks (clang). That header belongs to libobjc2, which Debian 12 does not ship; GCC's libobjc
   has no Blocks runtime. libBlocksRuntime's <Block.h> declares the same API. */
#include <Block.h>
