// report/: how long the valid UTF-8 sequence at a position of a string is, for the writers that
// must emit valid UTF-8 whatever bytes a recording holds (the JSON leak report, the HTML pages):
// they copy valid sequences and replace every other byte with U+FFFD.
#pragma once

#include <cstddef>
#include <string_view>

namespace heapgraph::report {

// Length of the valid UTF-8 sequence starting at s[i] (a byte >= 0x80), 0 if it is not one
// (overlong forms, surrogates and code points beyond U+10FFFF are not).
size_t Utf8SequenceLength(std::string_view s, size_t i);

inline constexpr char kReplacementCharacter[] = "\xef\xbf\xbd";  // U+FFFD

}  // namespace heapgraph::report
