#include "heap/config/LsanOptions.h"

#include <unistd.h>

#include <cstring>

#include "heap/platform/LineBuffer.h"
#include "heap/platform/WarningLine.h"

namespace heapgraph {
namespace {

enum class Kind {
  kMapped,     // applied to the heapgraph option `target`
  kLogPath,    // log_path -> leak_text
  kAccepted,   // any flag value, no effect
  kAlwaysOn,   // heapgraph always does it: 1 accepted, 0 refused
  kAlwaysOff,  // heapgraph never does it: 0 accepted, 1 refused
};

struct Flag {
  const char* name;
  Kind kind;
  const char* target;  // kMapped: the heapgraph key; kAlwaysOn/Off: why
};

constexpr Flag kFlags[] = {
    {"exitcode", Kind::kMapped, "exitcode"},
    {"suppressions", Kind::kMapped, "suppressions"},
    {"max_leaks", Kind::kMapped, "max_leaks"},
    {"detect_leaks", Kind::kMapped, "detect_leaks"},
    {"leak_check_at_exit", Kind::kMapped, "leak_check"},
    {"log_path", Kind::kLogPath, nullptr},
    {"report_objects", Kind::kAccepted, nullptr},
    {"use_registers", Kind::kAlwaysOn, "heapgraph always scans registers"},
    {"use_stacks", Kind::kAlwaysOn, "heapgraph always scans stacks"},
    {"use_globals", Kind::kAlwaysOn, "heapgraph always scans globals"},
    {"use_tls", Kind::kAlwaysOn, "heapgraph always scans TLS"},
    {"use_root_regions", Kind::kAlwaysOn, "heapgraph always scans registered root regions"},
    {"use_unaligned", Kind::kAlwaysOff, "heapgraph reads aligned words only"},
};

bool IsSeparator(char c) {
  return c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

const Flag* Find(const char* key, size_t key_len) {
  for (const Flag& f : kFlags) {
    if (option::Equals(key, key_len, f.name)) return &f;
  }
  return nullptr;
}

// "heapgraph: <source> flag '<key>' <what>; ignored".
void Complain(const char* source, const char* key, size_t key_len, const char* what) {
  WarningLine line;
  line.Append(source).Append(" flag '").AppendUntrusted(key, key_len).Append("' ");
  line.Append(what).Append("; ignored").Write();
}

// One "key=value" entry of `text`: [begin, end) with the value's bounds found.
struct Entry {
  const char* key;
  size_t key_len;
  const char* value;  // null: no '='
  size_t value_len;
};

// The entry starting at `*p` (not a separator); advances `*p` past it. A quoted value may hold
// separators.
Entry Next(const char** p) {
  Entry e = {*p, 0, nullptr, 0};
  const char* q = *p;
  while (*q != '\0' && *q != '=' && !IsSeparator(*q)) ++q;
  e.key_len = static_cast<size_t>(q - e.key);
  if (*q == '=') {
    ++q;
    char quote = (*q == '"' || *q == '\'') ? *q : '\0';
    if (quote != '\0') ++q;
    e.value = q;
    while (*q != '\0' && (quote != '\0' ? *q != quote : !IsSeparator(*q))) ++q;
    e.value_len = static_cast<size_t>(q - e.value);
    if (quote != '\0' && *q == quote) ++q;
  }
  while (*q != '\0' && !IsSeparator(*q)) ++q;  // the rest of a malformed entry
  *p = q;
  return e;
}

// Did an entry before `before` in `text` name the same key? (each unsupported flag is named once)
bool SeenBefore(const char* text, const char* before, const Entry& e) {
  const char* p = text;
  while (p < before) {
    while (p < before && IsSeparator(*p)) ++p;
    if (p >= before) break;
    Entry earlier = Next(&p);
    if (earlier.key_len == e.key_len && memcmp(earlier.key, e.key, e.key_len) == 0) return true;
  }
  return false;
}

// LeakSanitizer writes to "<log_path>.<pid>"; "stderr" is heapgraph's "-". Too long a path is
// left to Config's own length check (LineBuffer cuts at its capacity, beyond kMaxPath).
bool ApplyLogPath(const Entry& e, const char* source, Config* config) {
  if (option::Equals(e.value, e.value_len, "stderr")) {
    return config->ApplyEntry("leak_text", 9, "-", 1, source);
  }
  if (option::Equals(e.value, e.value_len, "stdout") || e.value_len == 0) {
    Complain(source, e.key, e.key_len, "value 'stdout' or empty is not supported (use a path)");
    return false;
  }
  LineBuffer value;
  value.Append(e.value, e.value_len).Append(".").AppendDecimal(static_cast<uint64_t>(getpid()));
  return config->ApplyEntry("leak_text", 9, value.data(), value.size(), source);
}

bool ApplyEntry(const Flag& flag, const Entry& e, const char* source, Config* config) {
  bool on = false;
  switch (flag.kind) {
    case Kind::kMapped:
      return config->ApplyEntry(flag.target, strlen(flag.target), e.value, e.value_len, source);
    case Kind::kLogPath:
      return ApplyLogPath(e, source, config);
    case Kind::kAccepted:
      return true;
    case Kind::kAlwaysOn:
    case Kind::kAlwaysOff:
      if (!option::Flag().Parse(e.value, e.value_len, &on)) {
        Complain(source, e.key, e.key_len, "has a bad value (expected 0 or 1)");
        return false;
      }
      if (on == (flag.kind == Kind::kAlwaysOn)) return true;
      WarningLine line;
      line.Append(source).Append(" flag '").AppendUntrusted(e.key, e.key_len);
      line.Append("=").AppendUntrusted(e.value, e.value_len).Append("' is not supported (");
      line.Append(flag.target).Append("); ignored").Write();
      return false;
  }
  return false;
}

}  // namespace

int LsanOptions::Apply(const char* text, const char* source, Config* config) {
  if (text == nullptr) return 0;
  int rejected = 0;
  const char* p = text;
  for (;;) {
    while (IsSeparator(*p)) ++p;
    if (*p == '\0') break;
    const char* start = p;
    Entry e = Next(&p);
    if (e.key_len == 0 || e.value == nullptr) {
      Complain(source, start, static_cast<size_t>(p - start), "is not flag=value");
      ++rejected;
      continue;
    }
    const Flag* flag = Find(e.key, e.key_len);
    if (flag == nullptr) {
      if (!SeenBefore(text, start, e)) {
        Complain(source, e.key, e.key_len, "is not supported by heapgraph");
      }
      ++rejected;
      continue;
    }
    if (!ApplyEntry(*flag, e, source, config)) ++rejected;
  }
  return rejected;
}

}  // namespace heapgraph
