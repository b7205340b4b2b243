#include "heap/config/Config.h"

#include <cstring>

#include "heap/platform/WarningLine.h"

namespace heapgraph {
namespace {

bool Equals(const char* a, size_t a_len, const char* b) {
  return a_len == strlen(b) && memcmp(a, b, a_len) == 0;
}

// "heapgraph: <what> '<key>[=<value>]' in <source>[ (expected <expected>)]; ignored".
void Complain(const char* what, const char* key, size_t key_len, const char* value,
              size_t value_len, const char* expected, const char* source) {
  WarningLine line;
  line.Append(what).Append(" '").AppendUntrusted(key, key_len);
  if (value != nullptr) line.Append("=").AppendUntrusted(value, value_len);
  line.Append("' in ").Append(source);
  if (expected != nullptr) line.Append(" (expected ").Append(expected).Append(")");
  line.Append("; ignored").Write();
}

}  // namespace

// The table's entries in turn: the first whose key matches parses the value into its field.
bool Config::ApplyEntry(const char* key, size_t key_len, const char* value, size_t value_len,
                        const char* source) {
  using namespace option;
#define HEAPGRAPH_OPTION(Type, field, name, syntax, expected, description, ...)         \
  if (Equals(key, key_len, name)) {                                                     \
    if (syntax.Parse(value, value_len, &field)) return true;                            \
    Complain("bad value for option", key, key_len, value, value_len, expected, source); \
    return false;                                                                       \
  }
#include "heap/config/Options.inc"
  Complain("unknown option", key, key_len, nullptr, 0, nullptr, source);
  return false;
}

int Config::Parse(const char* options, const char* source) {
  if (options == nullptr) return 0;
  int rejected = 0;
  const char* p = options;
  while (*p != '\0') {
    const char* end = p;
    while (*end != '\0' && *end != ',' && *end != ':') ++end;
    if (end != p) {
      const char* eq = static_cast<const char*>(memchr(p, '=', static_cast<size_t>(end - p)));
      if (eq == nullptr) {
        Complain("missing '=' in option", p, static_cast<size_t>(end - p), nullptr, 0, "key=value",
                 source);
        ++rejected;
      } else if (!ApplyEntry(p, static_cast<size_t>(eq - p), eq + 1,
                             static_cast<size_t>(end - eq - 1), source)) {
        ++rejected;
      }
    }
    p = (*end == '\0') ? end : end + 1;
  }
  return rejected;
}

}  // namespace heapgraph
