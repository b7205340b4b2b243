// report/: the last component of a path, as the reports name modules and source files
// ("/usr/lib/libc.so.6" -> "libc.so.6"): what follows the last '/', or the whole path when it has
// none ("" for a path ending in '/'). May include every layer below report/.
#pragma once

#include <string>
#include <string_view>

namespace heapgraph::report {

std::string BaseName(std::string_view path);

}  // namespace heapgraph::report
