#include "report/HtmlEscape.h"

#include "report/Utf8Sequence.h"

namespace heapgraph::report {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t n = Utf8SequenceLength(text, i);
      out.append(n == 0 ? std::string_view(kReplacementCharacter) : text.substr(i, n));
      i += n == 0 ? 1 : n;
      continue;
    }
    ++i;
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
        out += static_cast<char>(c);
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += kReplacementCharacter;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

}  // namespace heapgraph::report
