#!/usr/bin/env bash
# bench/: records a real command under libheapgraph.so and prints, per recorded process, the stack
# store's counters (stacks file header, heap/store/PersistedFormat.h StackHeader): nodes, unique stacks,
# new nodes per unique stack and payload bytes per stack (nodes x 8). The ground truth that
# stack_store_bench's synthetic call trees are compared with in docs/performance.md.
#
# Usage: real_stack_stats.sh [--heapgraph PATH] [--min-stacks N] -- COMMAND [ARGS...]
# Example: real_stack_stats.sh -- cmake -S . -B /tmp/hg-cmake-probe
# Beware: forking commands can hang under the current recorder (docs/performance.md, "Recorder
# problems found"); commands that fork and exec, such as cmake, are fine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
heapgraph=${BUILD_DIR:-$here/../build-bench}/heap/libheapgraph.so
min_stacks=1
while [ $# -gt 0 ]; do
  case "$1" in
    --heapgraph) heapgraph=$2; shift 2 ;;
    --min-stacks) min_stacks=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { sed -n '2,12p' "$0"; exit 2; }
dir=$(mktemp -d /tmp/hg-stack-stats.XXXXXX)
trap 'rm -rf "$dir"' EXIT
HEAPGRAPH_OPTIONS="dir=$dir" LD_PRELOAD="$heapgraph" "$@" > /dev/null 2>&1 || true
python3 - "$dir" "$min_stacks" <<'EOF'
import glob, os, struct, sys
rows = []
for path in glob.glob(os.path.join(sys.argv[1], "*", "stacks")):
    with open(path, "rb") as f:
        head = f.read(64)
    if head[:8] != b"HGSTACK1":
        continue
    # FileHeader(16) slot_bits max_depth slots_offset prefix_count reserved node_count stack_count dropped
    nodes, stacks, dropped = struct.unpack_from("<QQQ", head, 40)
    if stacks >= int(sys.argv[2]):
        exe = ""
        session = os.path.join(os.path.dirname(path), "session")
        if os.path.exists(session):
            with open(session, "rb") as f:
                s = f.read(4096)
            exe = s[56:56 + 256].split(b"\0")[0].decode(errors="replace")
        rows.append((stacks, nodes, dropped, os.path.basename(os.path.dirname(path)), exe))
rows.sort(reverse=True)
print("| process | executable | unique stacks | nodes | new nodes / stack | bytes / stack |")
print("|---|---|---|---|---|---|")
for stacks, nodes, dropped, name, exe in rows:
    print(f"| {name} | {os.path.basename(exe)} | {stacks} | {nodes} | {nodes / stacks:.2f} | "
          f"{nodes * 8 / stacks:.1f} |" + (f" dropped {dropped}" if dropped else ""))
tot_s = sum(r[0] for r in rows); tot_n = sum(r[1] for r in rows)
if tot_s:
    print(f"| all {len(rows)} processes | | {tot_s} | {tot_n} | {tot_n / tot_s:.2f} | {tot_n * 8 / tot_s:.1f} |")
EOF
