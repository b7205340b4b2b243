#include "report/StackResolver.h"

#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <optional>
#include <utility>

#include "report/BaseName.h"
#include "report/BuildIdHex.h"

namespace heapgraph::report {
namespace {

// The record's path, which the writer NUL-terminates; bounded in case a reader ever hands over one
// that is not.
std::string ModulePath(const format::ModuleRecord& module) {
  return std::string(module.path, strnlen(module.path, sizeof(module.path)));
}

}  // namespace

StackResolver::StackResolver(const RecordingReader& reader, Symbolizer& symbolizer)
    : StackResolver(reader, &symbolizer) {}

StackResolver::StackResolver(const RecordingReader& reader, Symbolizer* symbolizer)
    : reader_(reader), symbolizer_(symbolizer) {}

const FrameList& StackResolver::Resolve(uint32_t stack_id) {
  auto [it, inserted] = cache_.try_emplace(stack_id);
  if (inserted) Build(stack_id, it->second);
  return it->second;
}

FrameList StackResolver::Take(uint32_t stack_id) {
  auto node = cache_.extract(stack_id);
  if (!node.empty()) return std::move(node.mapped());
  FrameList frames;
  Build(stack_id, frames);
  return frames;
}

const FrameList& StackResolver::ResolveOrThrow(uint32_t stack_id) {
  auto it = cache_.find(stack_id);
  if (it == cache_.end()) {
    FrameList frames;
    AppendStack(stack_id, frames);
    it = cache_.emplace(stack_id, std::move(frames)).first;
  }
  return it->second;
}

void StackResolver::Build(uint32_t stack_id, FrameList& frames) {
  try {
    AppendStack(stack_id, frames);
  } catch (const RecordingError& e) {
    warnings_.push_back(fmt::format("stack {}: {}", stack_id, e.what()));
  }
}

void StackResolver::AppendStack(uint32_t stack_id, FrameList& frames) {
  for (uint64_t address : reader_.Frames(stack_id)) frames.append(AddressFrames(address));
}

const FrameList& StackResolver::AddressFrames(uint64_t address) {
  auto [it, inserted] = address_cache_.try_emplace(address);
  if (inserted) AppendAddress(address, it->second);
  return it->second;
}

void StackResolver::Warm(uint64_t address) {
  std::optional<ModuleLocation> where = reader_.Locate(address);
  if (!where) return;
  const format::ModuleRecord& module = reader_.modules()[where->module];
  SourceOf(ModulePath(module), BuildIdHex(module.build_id, module.build_id_len), where->offset);
}

std::vector<SourceFrame> StackResolver::SourceOf(const std::string& module_path,
                                                 const std::string& build_id, uint64_t offset) {
  // A return address: the call instruction is the byte before it.
  if (offset == 0 || symbolizer_ == nullptr) return {};
  try {
    return symbolizer_->Symbolize(module_path, offset - 1, build_id);
  } catch (const std::exception&) {
    return {};
  }
}

void StackResolver::AppendAddress(uint64_t address, FrameList& frames) {
  ReportFrame base;
  base.address = address;
  std::optional<ModuleLocation> where = reader_.Locate(address);
  if (!where) {
    frames.push_back(std::move(base));
    return;
  }
  const format::ModuleRecord& module = reader_.modules()[where->module];
  base.module_path = ModulePath(module);
  base.module = BaseName(base.module_path);
  base.build_id = BuildIdHex(module.build_id, module.build_id_len);
  base.offset = where->offset;
  std::vector<SourceFrame> source = SourceOf(base.module_path, base.build_id, base.offset);
  if (source.empty()) {
    frames.push_back(std::move(base));
    return;
  }
  AppendSourceFrames(base, std::move(source), frames);
}

void AppendSourceFrames(const ReportFrame& base, std::vector<SourceFrame> source,
                        FrameList& frames) {
  for (SourceFrame& s : source) {
    ReportFrame frame = base;
    frame.function = std::move(s.function);
    frame.file = std::move(s.file);
    frame.line = s.line;
    frame.inlined = s.inlined;
    frames.push_back(std::move(frame));
  }
}

}  // namespace heapgraph::report
