// heap/config/: recorder configuration, parsed from HEAPGRAPH_OPTIONS ("key=value" pairs separated
// by ',' or ':') without allocating. The options, their fields, defaults and syntaxes are one
// table: heap/config/Options.inc. A bad entry prints one line on stderr and leaves that key at its
// previous value; parsing never fails the host. Includes libc only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heap/config/OptionSyntax.h"

namespace heapgraph {

struct Config {
  static constexpr size_t kMaxPath = 512;
  static constexpr uint32_t kMaxWatermarks = 8;
  enum Watch : uint32_t { kWatchOff = 0, kWatchOn = 1, kWatchAuto = 2 };
  using Path = char[kMaxPath];
  using Watermarks = uint32_t[kMaxWatermarks];  // percent of the limit, ascending

  // One field per option, with its default.
#define HEAPGRAPH_OPTION(Type, field, key, syntax, expected, description, ...) \
  Type field = __VA_ARGS__;
#include "heap/config/Options.inc"

  // How many of `watermarks` are in use (the default list has 3); set with them.
  uint32_t watermark_count = 3;

  // Applies every entry of `options` (may be null): key=value entries separated by ',' or ':'; a
  // value in quotes (' or ") may hold both. Returns the number of rejected entries; each
  // rejection has already been reported on stderr as one line prefixed "heapgraph: ", naming
  // `source` (where the text came from).
  int Parse(const char* options, const char* source = "HEAPGRAPH_OPTIONS");

  // Applies a single key=value entry; false (after one line on stderr) if rejected.
  bool ApplyEntry(const char* key, size_t key_len, const char* value, size_t value_len,
                  const char* source = "HEAPGRAPH_OPTIONS");
};

}  // namespace heapgraph
