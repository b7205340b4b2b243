#!/usr/bin/env bash
# bench/: `heapgraph run` of the 1M-block big heap (leak_workload_plain --at-exit bigheap N: N
# blocks of 64 B with 8 pointers each, every 100th leaked, then exit(0)) against the same program
# plain and with GCC's liblsan preloaded (its at-exit check), interleaved round by round (plain,
# LSan, heapgraph; then again), so that load from other processes spreads over the three. Each run:
# wall, user and system time of the whole process tree (/usr/bin/time), the load average; for
# heapgraph also its at-exit check's Scan line (world stopped, allocations paused, total) from the
# text report; and `heapgraph run` with leak_check=0 (tool "record": the recording alone, so that
# the check's share is the difference). Prints one line per run and a markdown table of medians
# (min-max), and the time each tool adds over plain (docs/performance.md, issue 14, "heapgraph run
# of the big heap").
#
# Usage: run_at_exit_comparison.sh [--build DIR] [--baseline DIR] [--rounds N] [--blocks N]
#                                   [--keep DIR]
#   --build DIR  the build with bench/leak_workload_plain, tools/heapgraph, heap/libheapgraph.so
#                (default ../build)
#   --baseline DIR  also `heapgraph run` with DIR's tools/heapgraph and heap/libheapgraph.so (tool
#                "before", same program), in the same rounds
#   --keep DIR   keep each run's stderr (the reports) under DIR
#   HEAPGRAPH_RUN_OPTIONS: more `--options` for heapgraph run (e.g. to try a cut)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
rounds=3
blocks=1000000
keep=""
baseline=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --blocks) blocks=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
program=$build/bench/leak_workload_plain
cli=$build/tools/heapgraph
preload=$build/heap/libheapgraph.so
lsan=/usr/lib/x86_64-linux-gnu/liblsan.so.0
for f in "$program" "$cli" "$preload" "$lsan"; do
  [ -e "$f" ] || { echo "missing $f" >&2; exit 1; }
done
tools=(plain lsan record heapgraph)
[ -z "$baseline" ] || tools+=(before)

work=$(mktemp -d "${TMPDIR:-/tmp}/atexit.XXXXXX")
trap 'rm -rf "$work"' EXIT
results=$work/results
: > "$results"

# one TOOL ROUND: runs the program under TOOL; appends "TOOL wall user sys load [scan fields]".
one() {
  local tool=$1 round=$2 err=$work/stderr times=$work/times status=0
  local args=(--plain --at-exit bigheap "$blocks")
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  rm -rf "$work/rec"
  case $tool in
    plain) /usr/bin/time -f "%e %U %S" -o "$times" "$program" "${args[@]}" > /dev/null 2> "$err" ||
             status=$? ;;
    lsan) LD_PRELOAD=$lsan LSAN_OPTIONS=detect_leaks=1:exitcode=0 \
            /usr/bin/time -f "%e %U %S" -o "$times" "$program" "${args[@]}" > /dev/null 2> "$err" ||
            status=$? ;;
    heapgraph|before|record)
      local c=$cli p=$preload o=${HEAPGRAPH_RUN_OPTIONS:-}
      [ "$tool" != before ] || { c=$baseline/tools/heapgraph; p=$baseline/heap/libheapgraph.so; }
      [ "$tool" != record ] || o=leak_check=0${o:+,$o}
      /usr/bin/time -f "%e %U %S" -o "$times" "$c" run --exitcode 0 --dir "$work/rec" \
        --preload "$p" ${o:+--options "$o"} \
        -- "$program" "${args[@]}" > /dev/null 2> "$err" || status=$? ;;
  esac
  [ "$status" = 0 ] || { echo "$tool round $round: exit $status" >&2; tail -5 "$err" >&2; }
  local scan=""
  if [ "$tool" = heapgraph ] || [ "$tool" = before ]; then
    scan=$(sed -n 's/.*world stopped \([0-9.]*\) ms, allocations paused \([0-9.]*\) ms.*total \([0-9.]*\) ms.*/\1 \2 \3/p' "$err" | head -1)
  fi
  echo "$tool $(cat "$times") $load $scan" | tee -a "$results"
  [ -z "$keep" ] || { mkdir -p "$keep"; cp "$err" "$keep/$tool-$round.stderr"; }
}

for round in $(seq 1 "$rounds"); do
  for tool in "${tools[@]}"; do one "$tool" "$round"; done
done

python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def col(tool, i):
    return [float(r[i]) for r in rows if r[0] == tool and len(r) > i]
def fmt(v):
    return f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})" if v else "-"
print("\n| tool | runs | wall s | CPU s (user+sys) | load | at-exit scan: stopped / paused / total ms |")
print("|---|---:|---:|---:|---:|---|")
for tool in ("plain", "lsan", "record", "heapgraph", "before"):
    if not col(tool, 1):
        continue
    wall = col(tool, 1); cpu = [u + s for u, s in zip(col(tool, 2), col(tool, 3))]
    scan = ""
    if tool in ("heapgraph", "before"):
        scan = " / ".join(fmt(col(tool, i)) for i in (5, 6, 7))
    print(f"| {tool} | {len(wall)} | {fmt(wall)} | {fmt(cpu)} | {fmt(col(tool, 4))} | {scan} |")
plain = statistics.median(col("plain", 1))
print()
lsan = statistics.median(col("lsan", 1)) - plain
plain_cpu = statistics.median([u + s for u, s in zip(col("plain", 2), col("plain", 3))])
lsan_cpu = statistics.median([u + s for u, s in zip(col("lsan", 2), col("lsan", 3))]) - plain_cpu
for t in ("lsan", "record", "heapgraph", "before"):
    if col(t, 1):
        added = statistics.median(col(t, 1)) - plain
        cpu = statistics.median([u + s for u, s in zip(col(t, 2), col(t, 3))]) - plain_cpu
        ratio = f" ({added / lsan:.2f}x LSan's)" if lsan > 0 else ""
        cpu_ratio = f" ({cpu / lsan_cpu:.2f}x LSan's)" if lsan_cpu > 0 else ""
        print(f"added over plain (medians), {t}: wall {added:.2f} s{ratio}, CPU {cpu:.2f} s{cpu_ratio}")
PY
