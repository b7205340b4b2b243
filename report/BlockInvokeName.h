// report/: a readable name for a clang Block's invoke function. clang names it after the function
// that contains the Block, and numbers the second and later Blocks of one function:
//   __<function>_block_invoke[_N]        a C function          -> block in main
//   ___Z<mangled>_block_invoke[_N]       a C++ function        -> block in ChatSession::start()
//   __<length><method>_block_invoke[_N]  an Objective-C method -> block in -[ChatSession start]
//                                         (Apple), block in _i_ChatSession__start (GNU runtime,
//                                         whose method names are printed as the runtime spells
//                                         them: its '_' separators are ambiguous)
// "_N" becomes "block #N in ...". Anything else (not a Block's invoke function, an unparsable
// length, a C++ name the demangler refuses) is returned unchanged. Neither GNU c++filt nor
// __cxa_demangle knows these names; LLVM's demangler calls them "invocation function for block in
// <function>", without the number. May include every layer below report/.
#pragma once

#include <string>
#include <string_view>

namespace heapgraph::report {

namespace BlockInvokeName {

std::string Readable(std::string_view symbol);

}  // namespace BlockInvokeName

}  // namespace heapgraph::report
