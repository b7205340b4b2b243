#!/usr/bin/env bash
# bench/: runs churn_workload for threads {1,2} x depth {10,30} under each recorder, REPS times,
# interleaved (rep 1 of every configuration, then rep 2, ...) so that load from other processes
# spreads evenly over the tools, and prints markdown tables of the medians (docs/performance.md).
#
# Tools:
#   none        the workload alone
#   heapgraph   LD_PRELOAD=libheapgraph.so, HEAPGRAPH_OPTIONS=dir=<fresh mktemp dir>
#   heaptrack   `heaptrack -o FILE prog` (preload + heaptrack_interpret reading the pipe
#               concurrently, output compressed); the workload's own ns/pair is the recorder's cost
#               inside the process, heaptrack_interpret runs on the other core
#   lsan        LD_PRELOAD=liblsan.so.0, LSAN_OPTIONS=detect_leaks=0 (LSan's allocator and its
#               malloc stack recording: frame-pointer unwinder, malloc_context_size=30)
# With --extended also:
#   heaptrack_raw  `heaptrack --raw`: the preload writing to a pipe that zstd compresses, no
#                  interpretation
#   lsan_slow      LSan with fast_unwind_on_malloc=0 (DWARF unwinder: correct stacks without
#                  frame pointers, which the default fast unwinder cannot walk)
#   hg_off         heapgraph with enabled=0 (interposition only)
#   hg_depth1      heapgraph with depth=1 (everything but the deep unwind)
#   hg_noscrub     heapgraph with scrub=0 (new blocks' never-written bytes not cleared)
# A/B of two builds of libheapgraph.so (--baseline PATH), name them with --tools:
#   base           the baseline library (e.g. main's), default options
#   base_depth1    the baseline library with depth=1
# Sampling mode (docs/performance.md, "FOOM"): not in the default set, name it with --tools:
#   hg_sample      heapgraph with sample=1 (Poisson sampling by bytes, mean 512 KiB)
#   hg_sample64k   heapgraph with sample=64K
#
# Usage: run_churn_comparison.sh [--workload PATH] [--heapgraph PATH] [--reps N] [--ops M]
#                                [--working-set W] [--extended] [--raw FILE] [--tools "A B ..."]
#                                [--baseline PATH] [--fill]
#   --tools replaces the set of tools (none is always measured first), e.g.
#   --tools "heapgraph hg_sample" for the sampling figures.
#   --raw FILE keeps every measurement as "tool threads depth rep ns cpu_ns" lines.
#   --fill: the workload writes every byte of each new block (churn_workload --fill), as a program
#   that initialises what it allocates does; by default it writes one byte.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
workload=""
heapgraph=""
reps=5
ops=2000000
working_set=10000
extended=0
raw_out=""
only_tools=""
baseline=""
fill=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workload) workload=$2; shift 2 ;;
    --heapgraph) heapgraph=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --working-set) working_set=$2; shift 2 ;;
    --extended) extended=1; shift ;;
    --raw) raw_out=$2; shift 2 ;;
    --tools) only_tools=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --fill) fill=(--fill); shift ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
build=${BUILD_DIR:-$here/../build-bench}
[ -n "$workload" ] || workload=$build/bench/churn_workload
[ -n "$heapgraph" ] || heapgraph=$build/heap/libheapgraph.so
lsan=/usr/lib/x86_64-linux-gnu/liblsan.so.0
for f in "$workload" "$heapgraph"; do
  [ -e "$f" ] || { echo "missing $f (build churn_workload and heapgraph first)" >&2; exit 1; }
done

tools="none heapgraph heaptrack lsan"
[ "$extended" = 1 ] && tools="$tools heaptrack_raw lsan_slow hg_off hg_depth1"
[ -n "$only_tools" ] && tools="none ${only_tools//none/}"
for t in $tools; do
  case $t in
    heaptrack*) command -v heaptrack >/dev/null || { echo "heaptrack not installed" >&2; exit 1; } ;;
    lsan*) [ -e "$lsan" ] || { echo "missing $lsan" >&2; exit 1; } ;;
    base*) [ -e "$baseline" ] || { echo "$t needs --baseline PATH" >&2; exit 1; } ;;
  esac
done

scratch=$(mktemp -d /tmp/hg-churn.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
results=$scratch/results
: > "$results"

# Runs one configuration; appends "tool threads depth rep ns cpu" to $results.
run_one() {
  local tool=$1 threads=$2 depth=$3 rep=$4
  local args=(--threads "$threads" --depth "$depth" --ops "$ops" --working-set "$working_set"
    "${fill[@]}")
  local out dir
  dir=$(mktemp -d "$scratch/run.XXXXXX")
  case $tool in
    none) out=$("$workload" "${args[@]}") ;;
    heapgraph) out=$(HEAPGRAPH_OPTIONS="dir=$dir" LD_PRELOAD="$heapgraph" "$workload" "${args[@]}") ;;
    hg_off) out=$(HEAPGRAPH_OPTIONS="dir=$dir,enabled=0" LD_PRELOAD="$heapgraph" "$workload" "${args[@]}") ;;
    hg_depth1) out=$(HEAPGRAPH_OPTIONS="dir=$dir,depth=1" LD_PRELOAD="$heapgraph" "$workload" "${args[@]}") ;;
    base) out=$(HEAPGRAPH_OPTIONS="dir=$dir" LD_PRELOAD="$baseline" "$workload" "${args[@]}") ;;
    base_depth1) out=$(HEAPGRAPH_OPTIONS="dir=$dir,depth=1" LD_PRELOAD="$baseline" "$workload" "${args[@]}") ;;
    hg_noscrub) out=$(HEAPGRAPH_OPTIONS="dir=$dir,scrub=0" LD_PRELOAD="$heapgraph" "$workload" "${args[@]}") ;;
    hg_sample) out=$(HEAPGRAPH_OPTIONS="dir=$dir,sample=1" LD_PRELOAD="$heapgraph" "$workload" "${args[@]}") ;;
    hg_sample64k) out=$(HEAPGRAPH_OPTIONS="dir=$dir,sample=64K" LD_PRELOAD="$heapgraph" "$workload" "${args[@]}") ;;
    heaptrack) out=$(heaptrack -o "$dir/ht" "$workload" "${args[@]}" 2>&1) ;;
    heaptrack_raw) out=$(heaptrack --raw -o "$dir/ht" "$workload" "${args[@]}" 2>&1) ;;
    lsan) out=$(LSAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$lsan" "$workload" "${args[@]}") ;;
    lsan_slow) out=$(LSAN_OPTIONS=detect_leaks=0:fast_unwind_on_malloc=0 LD_PRELOAD="$lsan" \
                       "$workload" "${args[@]}") ;;
  esac
  rm -rf "$dir"
  local line
  line=$(printf '%s\n' "$out" | grep '^churn ' | tail -1)
  [ -n "$line" ] || { echo "no churn line from $tool: $out" >&2; return 1; }
  local ns cpu
  ns=$(sed -n 's/.* ns_per_pair=\([0-9.]*\).*/\1/p' <<<"$line")
  cpu=$(sed -n 's/.* cpu_ns_per_pair=\([0-9.]*\).*/\1/p' <<<"$line")
  echo "$tool $threads $depth $rep $ns $cpu" >> "$results"
  echo "rep $rep: $tool threads=$threads depth=$depth ns/pair=$ns cpu=$cpu" >&2
}

for rep in $(seq 1 "$reps"); do
  for threads in 1 2; do
    for depth in 10 30; do
      for tool in $tools; do run_one "$tool" "$threads" "$depth" "$rep"; done
    done
  done
done
[ -n "$raw_out" ] && cp "$results" "$raw_out"

# median TOOL THREADS DEPTH COLUMN(5=wall ns, 6=cpu ns)
median() {
  awk -v t="$1" -v th="$2" -v d="$3" -v c="$4" '$1==t && $2==th && $3==d {print $c}' "$results" |
    sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}
# spread TOOL THREADS DEPTH COLUMN: "min-max"
spread() {
  awk -v t="$1" -v th="$2" -v d="$3" -v c="$4" '$1==t && $2==th && $3==d {print $c}' "$results" |
    sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.0f-%.0f", lo, hi}'
}

table() {
  local col=$1 what=$2
  echo
  echo "### $what: median of $reps runs, ns per malloc+free pair (min-max in parentheses)"
  echo
  local header="| threads | depth |" rule="|---|---|"
  for t in $tools; do header="$header $t |"; rule="$rule---|"; done
  echo "$header"
  echo "$rule"
  for threads in 1 2; do
    for depth in 10 30; do
      local row="| $threads | $depth |"
      for t in $tools; do
        row="$row $(median "$t" "$threads" "$depth" "$col" | awk '{printf "%.0f", $1}') ($(spread "$t" "$threads" "$depth" "$col")) |"
      done
      echo "$row"
    done
  done
  echo
  echo "### $what: added ns per pair vs no tool (ratio to no tool)"
  echo
  header="| threads | depth |"
  rule="|---|---|"
  for t in $tools; do [ "$t" = none ] || { header="$header $t |"; rule="$rule---|"; }; done
  local compare=0
  [[ " $tools " == *" heapgraph "* && " $tools " == *" heaptrack "* ]] && compare=1
  [ "$compare" = 1 ] && { header="$header heapgraph added / heaptrack added |"; rule="$rule---|"; }
  echo "$header"
  echo "$rule"
  for threads in 1 2; do
    for depth in 10 30; do
      local base row hg ht
      base=$(median none "$threads" "$depth" "$col")
      row="| $threads | $depth |"
      for t in $tools; do
        [ "$t" = none ] && continue
        row="$row $(median "$t" "$threads" "$depth" "$col" |
          awk -v b="$base" '{printf "%+.0f (%.2fx)", $1 - b, $1 / b}') |"
      done
      if [ "$compare" = 1 ]; then
        hg=$(median heapgraph "$threads" "$depth" "$col")
        ht=$(median heaptrack "$threads" "$depth" "$col")
        row="$row $(awk -v hg="$hg" -v ht="$ht" -v b="$base" \
          'BEGIN {if (ht - b > 0) printf "%.2f", (hg - b) / (ht - b); else print "n/a"}') |"
      fi
      echo "$row"
    done
  done
}

echo "churn_workload${fill[*]:+ --fill}: ops=$ops per thread, working set $working_set per thread, $(nproc) CPUs," \
     "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
table 5 "Wall time"
table 6 "Thread CPU time"
