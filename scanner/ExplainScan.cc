#include "scanner/ExplainScan.h"

#include <unistd.h>

#include <algorithm>
#include <optional>

#include "scanner/MmapAllocator.h"
#include "scanner/RecordFile.h"
#include "scanner/RetentionPaths.h"

namespace heapgraph::scanner {
namespace {

constexpr uint64_t kMagic = 0x4e49414c50584548ull;  // "HEXPLAIN"
constexpr uint32_t kNone = UINT32_MAX;
constexpr uint32_t kMaxFrames = 64;

struct Header {
  uint64_t magic;
  uint64_t targets;
  uint64_t chains;
};

struct ChainHeader {
  uint32_t target;
  uint8_t leaked;
  uint8_t reached;
  uint16_t reserved;
  uint32_t steps;
  RootOrigin root;
};

struct Selected {
  uint32_t target;
  uint32_t block;
};

// The function targets whose code holds one of the stack's return addresses, as a bit set.
uint64_t FunctionsOnStack(const StackStore& stacks, uint32_t stack, const ExplainRequest& r) {
  uintptr_t frames[kMaxFrames];
  uint32_t depth = stacks.Frames(stack, frames, kMaxFrames);
  uint64_t found = 0;
  for (uint32_t i = 0; i < depth; ++i) {
    uint64_t pc = frames[i] - 1;  // the call, not the instruction after it
    for (const ExplainRequest::CodeRange& c : r.code) {
      if (pc >= c.begin && pc < c.end) found |= uint64_t{1} << c.function;
    }
  }
  return found;
}

// FunctionsOnStack, remembered per stack id in a direct-mapped table: blocks share few stacks.
class StackMatches {
 public:
  StackMatches(const StackStore& stacks, const ExplainRequest& request)
      : stacks_(stacks), request_(request), ids_(kSlots, 0), found_(kSlots, 0) {}
  uint64_t Of(uint32_t stack) {
    uint32_t slot = (stack * 2654435761u) >> (32 - kSlotBits);
    if (ids_[slot] != stack) {
      ids_[slot] = stack;
      found_[slot] = FunctionsOnStack(stacks_, stack, request_);
    }
    return found_[slot];
  }

 private:
  static constexpr uint32_t kSlotBits = 16;
  static constexpr uint32_t kSlots = 1u << kSlotBits;
  const StackStore& stacks_;
  const ExplainRequest& request_;
  MmapVector<uint32_t> ids_;  // 0: empty (stack 0 is never looked up)
  MmapVector<uint64_t> found_;
};

// The target blocks, by target then address; matched[t] counts target t's blocks.
void Select(const ExplainScan::Input& in, MmapVector<Selected>& selected,
            MmapVector<uint64_t>& matched) {
  const ExplainRequest& r = in.request;
  const auto first_function = static_cast<uint32_t>(r.addresses.size());
  for (uint32_t t = 0; t < first_function; ++t) {
    uint32_t b = in.index.Find(r.addresses[t]);
    if (b == BlockIndex::kNotFound) continue;
    matched[t] = 1;
    selected.push_back({t, b});
  }
  if (r.functions == 0 || r.code.empty() || in.stacks == nullptr) return;
  StackMatches matches(*in.stacks, r);
  for (uint32_t b = 0; b < in.blocks.size(); ++b) {
    if (in.blocks[b].stack == 0) continue;
    uint64_t found = matches.Of(in.blocks[b].stack);
    for (uint32_t f = 0; found != 0; ++f, found >>= 1) {
      if ((found & 1) == 0) continue;
      if (matched[first_function + f]++ < ExplainRequest::kMaxPerFunction) {
        selected.push_back({first_function + f, b});
      }
    }
  }
  std::stable_sort(selected.begin(), selected.end(),
                   [](const Selected& a, const Selected& b) { return a.target < b.target; });
}

// One group per distinct reachable target block; returns how many.
uint32_t Groups(const ExplainScan::Input& in, const MmapVector<Selected>& selected,
                MmapVector<uint32_t>& group) {
  uint32_t groups = 0;
  group.assign(in.blocks.size(), kNone);
  for (const Selected& s : selected) {
    if (in.marker.marked(s.block) && group[s.block] == kNone) group[s.block] = groups++;
  }
  return groups;
}

bool WriteChain(const ExplainScan::Input& in, const Selected& s, const RetentionPaths* search,
                MmapVector<ExplainStep>& steps, AppendWriter& w) {
  ChainHeader h = {s.target, 0, 0, 0, 0, {}};
  steps.clear();
  auto step = [&](uint32_t b, uint32_t offset) {
    const LeakedBlock& block = in.blocks[b];
    steps.push_back({block.address, block.size, offset, block.stack, block.function, {}});
  };
  if (!in.marker.marked(s.block)) {
    h.leaked = 1;
    step(s.block, 0);
  } else if (search != nullptr && search->discovered(s.block)) {
    uint32_t first = s.block;
    for (uint32_t x = s.block; x != RetentionPaths::kNone; x = search->parent(x)) {
      step(x, search->parent(x) == RetentionPaths::kNone ? 0u : search->offset(x));
      first = x;
    }
    std::reverse(steps.begin(), steps.end());
    h.reached = 1;
    h.root = ClassifyRoot(search->root(first), in.roots, /*describe_frame=*/true);
  } else {
    step(s.block, 0);
  }
  h.steps = static_cast<uint32_t>(steps.size());
  return w.Put(&h, 1) && w.Put(steps.data(), steps.size());
}

}  // namespace

bool ExplainScan::WriteTo(int fd, const Input& in) {
  const uint32_t targets = in.request.targets();
  MmapVector<Selected> selected;
  MmapVector<uint64_t> matched(targets, 0);
  Select(in, selected, matched);
  MmapVector<uint32_t> group;
  uint32_t groups = Groups(in, selected, group);
  std::optional<RetentionPaths> search;
  if (groups != 0) {
    search.emplace(in.marker, in.index, group, groups);
    search->Search(in.roots.roots, in.roots.threads);
  }
  Header h = {kMagic, targets, selected.size()};
  AppendWriter w(fd);
  if (!w.Put(&h, 1) || !w.Put(matched.data(), matched.size())) return false;
  MmapVector<ExplainStep> steps;
  for (const Selected& s : selected) {
    if (!WriteChain(in, s, search ? &*search : nullptr, steps, w)) return false;
  }
  return true;
}

bool ExplainScan::ReadFrom(int fd, uint32_t targets, ExplainScanResult* out, std::string* error) {
  Header h;
  if (pread(fd, &h, sizeof(h), 0) != static_cast<ssize_t>(sizeof(h)) || h.magic != kMagic ||
      h.targets != targets) {
    *error = "the snapshot process wrote no explanation";
    return false;
  }
  off_t offset = sizeof(h);
  if (!ReadArray(fd, &offset, h.targets, &out->matched) || h.chains > (uint64_t{1} << 24)) {
    *error = "the snapshot process wrote a truncated explanation";
    return false;
  }
  out->chains.clear();
  for (uint64_t c = 0; c < h.chains; ++c) {
    ChainHeader ch;
    ExplainChain chain;
    bool ok = pread(fd, &ch, sizeof(ch), offset) == static_cast<ssize_t>(sizeof(ch));
    offset += sizeof(ch);
    if (!ok || ch.target >= targets || !ReadArray(fd, &offset, ch.steps, &chain.steps)) {
      *error = "the snapshot process wrote a truncated explanation";
      return false;
    }
    chain.target = ch.target;
    chain.leaked = ch.leaked != 0;
    chain.reached = ch.reached != 0;
    chain.root = ch.root;
    out->chains.push_back(std::move(chain));
  }
  out->enabled = true;
  return true;
}

}  // namespace heapgraph::scanner
