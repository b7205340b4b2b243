#include "scanner/SeqWindow.h"

#include "heap/plugin/RecorderEntries.h"
#include "heap/store/LiveAllocationTree.h"
#include "heap/store/LockWait.h"
#include "scanner/LeakScan.h"

namespace heapgraph::scanner {

size_t KeepLeaked(ScanResult& result, const std::vector<bool>& keep) {
  std::vector<uint32_t> new_index(result.leaked.size(), UINT32_MAX);
  size_t kept = 0;
  for (size_t i = 0; i < result.leaked.size(); ++i) {
    if (keep[i]) new_index[i] = static_cast<uint32_t>(kept++);
  }
  for (size_t i = 0; i < result.leaked.size(); ++i) {
    if (new_index[i] != UINT32_MAX) result.leaked[new_index[i]] = result.leaked[i];
  }
  result.leaked.resize(kept);
  size_t edges = 0;
  for (const auto& [from, to] : result.edges) {
    if (new_index[from] == UINT32_MAX || new_index[to] == UINT32_MAX) continue;
    result.edges[edges++] = {new_index[from], new_index[to]};
  }
  result.edges.resize(edges);
  for (TypedObject& object : result.typed.objects) {
    if (object.leaked_index == UINT32_MAX) continue;
    object.leaked_index = new_index[object.leaked_index];
    if (object.leaked_index == UINT32_MAX) object.leaked = 0;
  }
  return kept;
}

size_t LimitToWindow(ScanResult& result, const SeqWindow& window) {
  std::vector<bool> keep(result.leaked.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = window.Contains(result.leaked[i].seq);
  return KeepLeaked(result, keep);
}

int64_t LiveBlocksInWindow(const SeqWindow* window, ScanResult* unscanned) {
  const RecorderEntries& recorder = RecorderEntries::Get();
  HeapgraphRecorderView view{};
  if (!recorder.loaded() || recorder.begin_snapshot(&view) != 0) return -1;
  int64_t inside = -1;  // a sample: the scan says why it refuses
  if (view.sample_mean == 0) {
    unscanned->stats.live_blocks = view.heap->LiveCount();
    unscanned->stats.live_bytes = view.heap->LiveBytes();
    TakeReportOptions(view, unscanned);
    inside = window == nullptr ? static_cast<int64_t>(unscanned->stats.live_blocks) : 0;
    for (uint32_t i = 0; window != nullptr && i < view.heap->shard_count(); ++i) {
      view.heap->shard(i).ForEach([&](const BlockRecord& block) {
        if (window->Contains(block.seq)) ++inside;
      });
    }
  }
  recorder.end_snapshot();
  // begin_snapshot opened the window of lock waits for a scan; this count is none.
  if (view.lock_waits != nullptr) LockWait::Close(*view.lock_waits);
  return inside;
}

}  // namespace heapgraph::scanner
