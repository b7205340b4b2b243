#include "heap/config/Config.h"

#include <cstring>

#include "heap/platform/WarningLine.h"
#include "heap/runtime/AllocationSampler.h"

namespace heapgraph {
namespace {

bool Equals(const char* a, size_t a_len, const char* b) {
  return a_len == strlen(b) && memcmp(a, b, a_len) == 0;
}

bool ParseUnsigned(const char* text, size_t length, uint64_t* out) {
  if (length == 0) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < length; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

bool ParseBool(const char* text, size_t length, bool* out) {
  if (Equals(text, length, "1") || Equals(text, length, "true") || Equals(text, length, "yes")) {
    *out = true;
    return true;
  }
  if (Equals(text, length, "0") || Equals(text, length, "false") || Equals(text, length, "no")) {
    *out = false;
    return true;
  }
  return false;
}

bool ParseRange(const char* text, size_t length, uint64_t lo, uint64_t hi, uint32_t* out) {
  uint64_t v;
  if (!ParseUnsigned(text, length, &v) || v < lo || v > hi) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

bool CopyPath(const char* text, size_t length, char* out) {
  if (length >= Config::kMaxPath) return false;
  memcpy(out, text, length);
  out[length] = '\0';
  return true;
}

void Complain(const char* what, const char* key, size_t key_len, const char* value,
              size_t value_len, const char* expected) {
  WarningLine line;
  line.Append(what).Append(" '").AppendUntrusted(key, key_len);
  if (value != nullptr) line.Append("=").AppendUntrusted(value, value_len);
  line.Append("' in HEAPGRAPH_OPTIONS");
  if (expected != nullptr) line.Append(" (expected ").Append(expected).Append(")");
  line.Append("; ignored").Write();
}

// "0"/"off" = full mode, "1"/"on" = the default mean, else a byte size (suffixes K, M, G) >= 2.
bool ParseSampleMean(const char* text, size_t length, uint64_t* out) {
  bool on = Equals(text, length, "on");
  if (on || Equals(text, length, "off") || ParseBool(text, length, &on)) {
    *out = on ? AllocationSampler::kDefaultMean : 0;
    return true;
  }
  uint64_t v;
  if (!ParseByteSize(text, length, &v) || v < 2 || v > AllocationSampler::kMaxMean) return false;
  *out = v;
  return true;
}

// "50/75/90": 1..kMaxWatermarks strictly ascending percentages in 1..100.
bool ParseWatermarks(const char* text, size_t length, Config* config) {
  uint32_t values[Config::kMaxWatermarks];
  uint32_t count = 0;
  for (size_t begin = 0; begin <= length;) {
    size_t end = begin;
    while (end < length && text[end] != '/') ++end;
    uint32_t v;
    if (count == Config::kMaxWatermarks || !ParseRange(text + begin, end - begin, 1, 100, &v) ||
        (count > 0 && v <= values[count - 1])) {
      return false;
    }
    values[count++] = v;
    begin = end + 1;
  }
  memcpy(config->watermarks, values, count * sizeof(values[0]));
  config->watermark_count = count;
  return true;
}

bool ParseWatch(const char* text, size_t length, uint32_t* out) {
  bool on;
  if (Equals(text, length, "auto")) {
    *out = Config::kWatchAuto;
  } else if (ParseBool(text, length, &on)) {
    *out = on ? Config::kWatchOn : Config::kWatchOff;
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool ParseByteSize(const char* text, size_t length, uint64_t* out) {
  if (length == 0) return false;
  uint64_t multiplier = 1;
  char unit = text[length - 1];
  if (unit == 'k' || unit == 'K') multiplier = uint64_t{1} << 10;
  if (unit == 'm' || unit == 'M') multiplier = uint64_t{1} << 20;
  if (unit == 'g' || unit == 'G') multiplier = uint64_t{1} << 30;
  if (multiplier != 1) --length;
  uint64_t v;
  if (!ParseUnsigned(text, length, &v)) return false;
  if (v > UINT64_MAX / multiplier) return false;
  *out = v * multiplier;
  return true;
}

bool Config::ApplyEntry(const char* key, size_t key_len, const char* value, size_t value_len) {
  const char* expected = nullptr;
  bool ok = false;
  if (Equals(key, key_len, "dir")) {
    expected = "a path shorter than 512 bytes";
    ok = value_len > 0 && CopyPath(value, value_len, dir);
  } else if (Equals(key, key_len, "depth")) {
    expected = "1..64";
    ok = ParseRange(value, value_len, 1, 64, &depth);
  } else if (Equals(key, key_len, "large_threshold")) {
    expected = "a byte count such as 8M, or 0 to disable";
    ok = ParseByteSize(value, value_len, &large_threshold);
  } else if (Equals(key, key_len, "large_log")) {
    expected = "'stderr' or a path";
    ok = Equals(value, value_len, "stderr")
             ? (large_log[0] = '\0', true)
             : value_len > 0 && CopyPath(value, value_len, large_log);
  } else if (Equals(key, key_len, "shards")) {
    expected = "a power of two in 1..1024";
    uint32_t v;
    ok = ParseRange(value, value_len, 1, 1024, &v) && (v & (v - 1)) == 0;
    if (ok) shards = v;
  } else if (Equals(key, key_len, "shard_capacity_log2")) {
    expected = "10..28";
    ok = ParseRange(value, value_len, 10, 28, &shard_capacity_log2);
  } else if (Equals(key, key_len, "stack_slots_log2")) {
    expected = "16..28";
    ok = ParseRange(value, value_len, 16, 28, &stack_slots_log2);
  } else if (Equals(key, key_len, "mmap")) {
    expected = "0 or 1";
    ok = ParseBool(value, value_len, &record_mmap);
  } else if (Equals(key, key_len, "enabled")) {
    expected = "0 or 1";
    ok = ParseBool(value, value_len, &enabled);
  } else if (Equals(key, key_len, "leak_check")) {
    expected = "0 or 1";
    ok = ParseBool(value, value_len, &leak_check_at_exit);
  } else if (Equals(key, key_len, "leak_json")) {
    expected = "a path shorter than 512 bytes";
    ok = CopyPath(value, value_len, leak_json);
  } else if (Equals(key, key_len, "leak_text")) {
    expected = "a path, 'stderr' or empty";
    ok = Equals(value, value_len, "stderr") ? (memcpy(leak_text, "-", 2), true)
                                            : CopyPath(value, value_len, leak_text);
  } else if (Equals(key, key_len, "exitcode")) {
    expected = "0..255";
    ok = ParseRange(value, value_len, 0, 255, &leak_exitcode);
  } else if (Equals(key, key_len, "interior")) {
    expected = "0 or 1";
    ok = ParseBool(value, value_len, &interior_pointers);
  } else if (Equals(key, key_len, "scan_signal")) {
    expected = "0 (off) or a signal number 1..64 other than SIGKILL/SIGSTOP";
    uint32_t v;
    ok = ParseRange(value, value_len, 0, 64, &v) && v != 9 && v != 19;
    if (ok) scan_signal = v;
  } else if (Equals(key, key_len, "keep")) {
    expected = "0 (keep all) .. 100000";
    ok = ParseRange(value, value_len, 0, 100000, &keep);
  } else if (Equals(key, key_len, "heartbeat_ms")) {
    expected = "0 (off) or 10..600000";
    uint32_t v;
    ok = ParseRange(value, value_len, 0, 600000, &v) && (v == 0 || v >= 10);
    if (ok) heartbeat_ms = v;
  } else if (Equals(key, key_len, "hang_ms")) {
    expected = "0 (never a hang) .. 3600000";
    ok = ParseRange(value, value_len, 0, 3600000, &hang_ms);
  } else if (Equals(key, key_len, "signals")) {
    expected = "0 or 1";
    ok = ParseBool(value, value_len, &signals);
  } else if (Equals(key, key_len, "sample")) {
    expected = "0 (record everything), 1 (sample, mean 512K) or a mean such as 256K (2..1G)";
    ok = ParseSampleMean(value, value_len, &sample_mean);
  } else if (Equals(key, key_len, "sample_seed")) {
    expected = "a number";
    ok = ParseUnsigned(value, value_len, &sample_seed);
  } else if (Equals(key, key_len, "watch")) {
    expected = "auto, 0 or 1";
    ok = ParseWatch(value, value_len, &watch);
  } else if (Equals(key, key_len, "memory_limit")) {
    expected = "a byte count such as 2G, or 0 for the cgroup's limit";
    ok = ParseByteSize(value, value_len, &memory_limit);
  } else if (Equals(key, key_len, "watermarks")) {
    expected = "ascending percentages 1..100 separated by '/', at most 8, such as 50/75/90";
    ok = ParseWatermarks(value, value_len, this);
  } else if (Equals(key, key_len, "watch_interval_ms")) {
    expected = "10..10000";
    ok = ParseRange(value, value_len, 10, 10000, &watch_interval_ms);
  } else if (Equals(key, key_len, "paused")) {
    expected = "0 or 1";
    ok = ParseBool(value, value_len, &start_paused);
  } else {
    Complain("unknown option", key, key_len, nullptr, 0, nullptr);
    return false;
  }
  if (!ok) Complain("bad value for option", key, key_len, value, value_len, expected);
  return ok;
}

int Config::Parse(const char* options) {
  if (options == nullptr) return 0;
  int rejected = 0;
  const char* p = options;
  while (*p != '\0') {
    const char* end = p;
    while (*end != '\0' && *end != ',' && *end != ':') ++end;
    if (end != p) {
      const char* eq = static_cast<const char*>(memchr(p, '=', static_cast<size_t>(end - p)));
      if (eq == nullptr) {
        Complain("missing '=' in option", p, static_cast<size_t>(end - p), nullptr, 0, "key=value");
        ++rejected;
      } else if (!ApplyEntry(p, static_cast<size_t>(eq - p), eq + 1,
                             static_cast<size_t>(end - eq - 1))) {
        ++rejected;
      }
    }
    p = (*end == '\0') ? end : end + 1;
  }
  return rejected;
}

}  // namespace heapgraph
