#include "heap/config/Config.h"

#include <cstring>

#include "heap/platform/WarningLine.h"

namespace heapgraph {
namespace {

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

// One entry: key=value up to the next ',' or ':' (or the end); a value that starts with a quote
// (' or ") runs to the matching quote, so it may hold ',' and ':' (as in sanitizer flags). Returns
// where the next entry starts; counts a rejected entry in `rejected`.
const char* ParseEntry(Config& config, const char* p, int* rejected, const char* source) {
  const char* end = p;
  while (*end != '\0' && *end != ',' && *end != ':' && *end != '=') ++end;
  if (*end != '=') {
    if (end != p) {
      Complain("missing '=' in option", p, static_cast<size_t>(end - p), nullptr, 0, "key=value",
               source);
      ++*rejected;
    }
    return *end == '\0' ? end : end + 1;
  }
  const char* key = p;
  size_t key_len = static_cast<size_t>(end - p);
  const char* value = end + 1;
  const char* value_end = value;
  if (*value == '"' || *value == '\'') {
    const char* close = strchr(value + 1, *value);
    if (close == nullptr || (close[1] != '\0' && close[1] != ',' && close[1] != ':')) {
      Complain("bad quoted value (no closing quote before , or :)", key, key_len, value,
               strlen(value), nullptr, source);
      ++*rejected;
      return value + strlen(value);
    }
    value_end = close + 1;
    ++value;
    end = close;
  } else {
    while (*value_end != '\0' && *value_end != ',' && *value_end != ':') ++value_end;
    end = value_end;
  }
  if (!config.ApplyEntry(key, key_len, value, static_cast<size_t>(end - value), source))
    ++*rejected;
  return *value_end == '\0' ? value_end : value_end + 1;
}

}  // namespace

// The table's entries in turn: the first whose key matches parses the value into its field.
bool Config::ApplyEntry(const char* key, size_t key_len, const char* value, size_t value_len,
                        const char* source) {
  using namespace option;
#define HEAPGRAPH_OPTION(Type, field, name, syntax, expected, description, ...)         \
  if (option::Equals(key, key_len, name)) {                                             \
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
  while (*p != '\0') p = ParseEntry(*this, p, &rejected, source);
  return rejected;
}

}  // namespace heapgraph
