#!/usr/bin/env bash
# bench/: the pause an allocating thread feels during a leak check (docs/performance.md, issue 14,
# "The pause the program feels"). leak_workload_heapgraph --alloc-probe builds the big heap (N
# blocks of 64 B with 8 pointers each), starts a thread that every 0.2 ms makes 16 malloc+free
# pairs and times them (like a server answering requests), then runs one API check. Per run: the
# probe's longest iteration during the check (the stall the program felt) and before it (the
# normal worst case), beside the check's own figures from its JSON report: world stopped,
# allocations paused and the longest allocation wait the waiting threads timed themselves.
# With --baseline DIR the same binary also runs against DIR's libheapgraph.so and
# libheapgraph_scan.so (LD_LIBRARY_PATH before the binary's RUNPATH), interleaved run by run.
#
# Usage: run_check_stall.sh [--bin BIN] [--baseline DIR] [--rounds N] [--sizes "N ..."]
#   defaults: BIN ../build/bench/leak_workload_heapgraph, 3 rounds, sizes "10000 1000000"
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../build/bench/leak_workload_heapgraph
baseline=""
rounds=3
sizes="10000 1000000"
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "missing $bin (build leak_workload_heapgraph)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/stall.XXXXXX")
trap 'rm -rf "$work"' EXIT
results=$work/results
: > "$results"

# one VARIANT N: one run; appends "VARIANT N key=value..." to $results.
one() {
  local variant=$1 n=$2 line
  rm -rf "$work/rec" "$work/out"; mkdir -p "$work/out"
  local libs=""
  [ "$variant" = after ] || libs=$baseline/heap
  line=$(LD_LIBRARY_PATH=$libs HEAPGRAPH_OPTIONS="dir=$work/rec,large_threshold=0" \
           "$bin" --heapgraph bigheap "$n" --alloc-probe --out "$work/out" 2> "$work/err" |
           grep '^RESULT' || true)
  [ -n "$line" ] || { echo "$variant $n: no result" >&2; tail -3 "$work/err" >&2; return; }
  echo "$variant $n $line" | tee -a "$results" | tr ' ' '\n' |
    grep -E '^(stopped_ms|pause_ms|alloc_wait_ms|alloc_iter_ms|alloc_iter_base_ms|load1)=' |
    tr '\n' ' '
  echo "($variant $n)"
}

variants=(after)
[ -z "$baseline" ] || variants=(before after)
for round in $(seq 1 "$rounds"); do
  for n in $sizes; do
    for v in "${variants[@]}"; do one "$v" "$n"; done
  done
done

python3 - "$results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(x.split("=", 1) for x in f[2:] if "=" in x)
    runs.setdefault((f[0], int(f[1])), []).append(kv)
def cell(rows, key):
    v = [float(r[key]) for r in rows if key in r and float(r[key]) >= 0]
    return f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f})" if v else "-"
print("\n| libraries | blocks | runs | world stopped ms | allocations paused ms | longest allocation wait ms (reported) | program's longest stall ms (during) | program's longest stall ms (before) | check ms | check CPU ms | load |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for (variant, n), rows in sorted(runs.items(), key=lambda x: (x[0][1], x[0][0] != "before")):
    print(f"| {variant} | {n:,} | {len(rows)} | " + " | ".join(cell(rows, k) for k in (
        "stopped_ms", "pause_ms", "alloc_wait_ms", "alloc_iter_ms", "alloc_iter_base_ms",
        "check_ms", "cpu_ms", "load1")) + " |")
PY
