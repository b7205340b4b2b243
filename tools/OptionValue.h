// tools/: one value for a HEAPGRAPH_OPTIONS entry (key=value), written so that the recorder's
// parser (heap/config/Config.cc, the syntax of heap/config/OptionSyntax) reads it back whole.
#pragma once

#include <string>

namespace heapgraph::tools {

// `value` as is when it holds no entry separator (',' or ':') and does not start with a quote;
// otherwise in double quotes, or in single quotes when it holds a double quote (the parser runs
// a quoted value to the next matching quote). Throws std::runtime_error
// "<flag> <value>: must not contain both ' and \"" when neither quote can enclose it.
std::string QuoteOptionValue(const std::string& value, const char* flag);

}  // namespace heapgraph::tools
