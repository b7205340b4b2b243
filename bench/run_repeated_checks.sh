#!/usr/bin/env bash
# bench/: repeated on-demand leak checks while threads churn (issue 13 item 7), heapgraph against
# LeakSanitizer on the same program (bench/repeated_checks.cc), run interleaved: each round runs
# heapgraph then LSan. Prints markdown tables on stdout (docs/performance.md, "Repeated checks
# while threads churn"), progress on stderr. Wall and CPU time (user + system) are of the whole
# process, its snapshot processes included (/usr/bin/time).
#
# Usage: bench/run_repeated_checks.sh --bin build/bench/repeated_checks
#          [--lsan build/bench/lsan/repeated_checks_lsan] --preload build/heap/libheapgraph.so
#          [--baseline OTHER/libheapgraph.so] [--rounds 3] [--raw FILE] [-- PROGRAM ARGS...]
# PROGRAM ARGS go to every build (default: --threads 10 --checks 100). --baseline: an A/B of two
# heapgraph builds (each library with its libheapgraph_scan.so beside it), the baseline run in
# the same rounds ("baseline" row, ratios heapgraph / baseline); without --lsan LSan is not run.
set -euo pipefail

bin="" lsan_bin="" preload="" baseline="" rounds=3 raw_out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --lsan) lsan_bin=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --raw) raw_out=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--threads 10 --checks 100)
for f in "$bin" "$preload" ${lsan_bin:+"$lsan_bin"} ${baseline:+"$baseline"}; do
  [ -e "$f" ] || { echo "missing: '$f' (--bin and --preload are required)" >&2; exit 2; }
done
preload=$(readlink -f "$preload")
[ -z "$baseline" ] || baseline=$(readlink -f "$baseline")

work=$(mktemp -d "${TMPDIR:-/tmp}/repeated-checks.XXXXXX")
trap 'rm -rf "$work"' EXIT
results="$work/results"
: > "$results"

# One run of `tool`: appends "RESULT ... wall=... user=... sys=..." to $results.
run() {
  local tool=$1 status=0 log="$work/log" times="$work/time"
  case "$tool" in
    heapgraph | baseline)
      local lib=$preload
      [ "$tool" = heapgraph ] || lib=$baseline
      HEAPGRAPH_OPTIONS="dir=$work/rec" LD_PRELOAD="$lib" \
        /usr/bin/time -f "wall=%e user=%U sys=%S" -o "$times" \
        "$bin" "${args[@]}" > "$log" 2> "$work/stderr" || status=$? ;;
    lsan)
      LSAN_OPTIONS="detect_leaks=1" /usr/bin/time -f "wall=%e user=%U sys=%S" -o "$times" \
        "$lsan_bin" "${args[@]}" > "$log" 2> "$work/stderr" || status=$? ;;
  esac
  rm -rf "$work/rec"
  if ! grep -q '^RESULT ' "$log"; then
    echo "  $tool: no result (exit $status); stderr:" >&2
    tail -5 "$work/stderr" >&2
    return 0
  fi
  echo "$(grep '^RESULT ' "$log") $(tail -1 "$times") tool=$tool" >> "$results"
  tail -1 "$results" | tr ' ' '\n' \
    | grep -E '^(total_s|check_med_ms|churn_base_kops|churn_kops|wall|user|sys|load1)=' \
    | tr '\n' ' ' | sed "s/^/  $tool: /" >&2
  echo >&2
}

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs; program args: ${args[*]}" >&2
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((round = 1; round <= rounds; ++round)); do
  echo "## round $round/$rounds" >&2
  run heapgraph
  [ -z "$baseline" ] || run baseline
  [ -z "$lsan_bin" ] || run lsan
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# load after: $load_after" >&2
[ -z "$raw_out" ] || cp "$results" "$raw_out"

python3 - "$results" "$load_before" "$load_after" <<'EOF'
import collections, statistics, sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
    kv["cpu"] = str(float(kv["user"]) + float(kv["sys"]))
    runs[kv["tool"]].append(kv)

def values(tool, key):
    return [float(r[key]) for r in runs.get(tool, []) if key in r]

def cell(tool, key, digits=1, scale=1.0):
    v = values(tool, key)
    if not v:
        return "–"
    v = [x * scale for x in v]
    return (f"{statistics.median(v):,.{digits}f} ({min(v):,.{digits}f}-{max(v):,.{digits}f})")

def med(tool, key):
    v = values(tool, key)
    return statistics.median(v) if v else None

print("| tool | runs | program wall s | program CPU s (user+sys) | one check ms (median of the run's"
      " medians) | slowest check ms | churn kops/s before | churn kops/s during the checks |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for tool in ("heapgraph", "baseline", "lsan"):
    if not runs.get(tool):
        continue
    print(f"| {tool} | {len(runs[tool])} | {cell(tool, 'wall')} | {cell(tool, 'cpu')} | "
          f"{cell(tool, 'check_med_ms')} | {cell(tool, 'check_max_ms', 0)} | "
          f"{cell(tool, 'churn_base_kops', 0)} | {cell(tool, 'churn_kops', 0)} |")

def ratio(key, other):
    a, b = med("heapgraph", key), med(other, key)
    return "–" if a is None or not b else f"{a / b:.2f}"

for other, name in (("baseline", "baseline"), ("lsan", "LSan")):
    if not runs.get(other):
        continue
    print()
    print(f"Ratios heapgraph / {name} (medians): program wall {ratio('wall', other)}, program CPU"
          f" {ratio('cpu', other)}, one check {ratio('check_med_ms', other)}, churn rate during the"
          f" checks {ratio('churn_kops', other)}.")
loads = values("heapgraph", "load1") + values("baseline", "load1") + values("lsan", "load1")
print(f"Load average: {sys.argv[2]} before, {sys.argv[3]} after; 1-minute load at the end of each"
      f" run: median {statistics.median(loads):.1f}, min {min(loads):.1f}, max {max(loads):.1f}"
      f" ({len(loads)} runs).")
EOF
