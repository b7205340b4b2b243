// report/: turns recorded stack ids into symbolized report frames, once per distinct stack.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "reader/RecordingReader.h"
#include "report/FrameList.h"
#include "report/LeakReport.h"
#include "report/Symbolizer.h"

namespace heapgraph::report {

// Appends to `frames` one frame per entry of `source` (a Symbolizer's frames of one address,
// inlined callees first): `base` (address, module, module path, build-id, offset) with that
// entry's function, file, line and inlined flag. Shared by the recording's stacks and by saved
// reports symbolized again (FrameResymbolizer).
void AppendSourceFrames(const ReportFrame& base, std::vector<SourceFrame> source,
                        FrameList& frames);

// Resolves stacks of one recording. Invariant: cache_ holds exactly the stack ids resolved and not
// taken so far, each mapped to its final frames, so a stack is read once until it is taken, and the
// references Resolve() returns stay valid until that stack is taken or the resolver dies
// (unordered_map never moves its values). Likewise address_cache_ holds the frames of every return
// address seen, so each distinct address is located and symbolized once however many stacks share
// it.
class StackResolver {
 public:
  StackResolver(const RecordingReader& reader, Symbolizer& symbolizer);
  // A null `symbolizer` looks up no source: frames keep module + offset only.
  StackResolver(const RecordingReader& reader, Symbolizer* symbolizer);

  // Frames of `stack_id`, innermost first, each return address followed by its inline chain
  // flattened (inlined callees first). Every address yields at least one frame: unsymbolized
  // addresses keep module + offset, addresses outside every module keep only the address. Stack 0
  // and stacks the recording cannot read are empty; the latter add a warning.
  const FrameList& Resolve(uint32_t stack_id);
  // The same frames, moved out of the cache (or built without caching): for a stack's last use,
  // so its frames are not copied. A stack taken is built again, and warned about again, if it is
  // resolved or taken later.
  FrameList Take(uint32_t stack_id);
  // As Resolve(), but a stack the recording cannot read throws its RecordingError (nothing is
  // cached or warned): for a report that cannot go on without it. A stack Resolve() already
  // warned about stays cached empty.
  const FrameList& ResolveOrThrow(uint32_t stack_id);

  // Symbolizes one return address exactly as Resolve() would, caching only in the Symbolizer (no
  // frames built): warms the Symbolizer for a later resolver of the same recording.
  void Warm(uint64_t address);

  // One line per stack that could not be read.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void Build(uint32_t stack_id, FrameList& frames);
  // Appends the frames of `stack_id`; throws RecordingError, before appending any, when the
  // recording cannot read it.
  void AppendStack(uint32_t stack_id, FrameList& frames);
  void AppendAddress(uint64_t address, FrameList& frames);
  // The frames of one return address, computed once: stacks share most of their addresses.
  const FrameList& AddressFrames(uint64_t address);
  // The source frames of the call before return address `offset` in `module_path` (of build
  // `build_id`, lower-case hex or ""); best effort.
  std::vector<SourceFrame> SourceOf(const std::string& module_path, const std::string& build_id,
                                    uint64_t offset);

  const RecordingReader& reader_;
  Symbolizer* symbolizer_;  // null: no source lookups
  std::unordered_map<uint32_t, FrameList> cache_;
  std::unordered_map<uint64_t, FrameList> address_cache_;
  std::vector<std::string> warnings_;
};

}  // namespace heapgraph::report
