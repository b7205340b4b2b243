#!/usr/bin/env bash
# bench/: heapgraph's leak check against LeakSanitizer's on the same heaps (docs/performance.md,
# "Leak scan"). Runs leak_workload (bench/leak_workload.cc) for every configuration below, REPS
# times per tool, interleaved (rep 1 of everything, then rep 2, ...) so that load from other
# processes spreads over both tools, then prints markdown tables of the medians.
#
# Configurations: bigheap 1M, bigheap 4M, manyleaks 2M/4000, threads 4000.
# Tools (one process per run; each builds its heap, runs ONE check, prints a RESULT line):
#   heapgraph  leak_workload_heapgraph --heapgraph: heapgraph_check_leaks() (JSON + text files)
#   lsan       leak_workload_lsan --lsan (clang -fsanitize=leak): __lsan_do_recoverable_leak_check()
#              with its report sent to a file (symbolized by llvm-symbolizer when on PATH)
# Plus, PHASE_REPS times per configuration (their own tables):
#   phases     leak_workload_phases --phases --child-mem: the same check step by step with timers,
#              and the snapshot child's private memory sampled from /proc/<child>/smaps_rollup
#              (the check's own allocations unrecorded, as in heapgraph_check_leaks; tables of
#              older runs also had "phases_ignore", a what-if from before that was the default)
#
# Usage: run_leak_comparison.sh [--heapgraph BIN] [--phases BIN] [--lsan BIN] [--reps N]
#                               [--phase-reps N] [--only "CONFIG;CONFIG"] [--raw FILE]
#                               [--no-phases]
#   CONFIG is "bigheap 1000000", "manyleaks 2000000 4000", "threads 4000", ...
#   --raw FILE keeps every RESULT line (one per run) for later analysis.
# Defaults: binaries from $BUILD_DIR/bench (BUILD_DIR defaults to ../build-leakbench), REPS=3,
# PHASE_REPS=3. --reps 0 runs the phases only.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build-leakbench}
hg_bin=$build/bench/leak_workload_heapgraph
phases_bin=$build/bench/leak_workload_phases
lsan_bin=$build/bench/leak_workload_lsan
reps=3
phase_reps=3
raw_out=""
phases=1
configs=("bigheap 1000000" "bigheap 4000000" "manyleaks 2000000 4000" "threads 4000")
while [ $# -gt 0 ]; do
  case "$1" in
    --heapgraph) hg_bin=$2; shift 2 ;;
    --phases) phases_bin=$2; shift 2 ;;
    --lsan) lsan_bin=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --phase-reps) phase_reps=$2; shift 2 ;;
    --raw) raw_out=$2; shift 2 ;;
    --no-phases) phases=0; shift ;;
    --only) IFS=';' read -r -a configs <<< "$2"; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
for f in "$hg_bin" "$lsan_bin"; do
  [ -x "$f" ] || { echo "missing $f (build leak_workload_heapgraph and leak_workload_lsan)" >&2; exit 1; }
done
[ "$phases" = 0 ] || [ -x "$phases_bin" ] || { echo "missing $phases_bin (or pass --no-phases)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed for the tables" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/leakbench.XXXXXX")
trap 'rm -rf "$work"' EXIT
results=$work/results.txt
: > "$results"

# run TOOL CONFIG...: one process, its RESULT line appended to $results (with the tool's name).
run() {
  local tool=$1; shift
  local out=$work/out rec=$work/rec log=$work/log
  rm -rf "$out" "$rec"; mkdir -p "$out"
  local status=0
  case $tool in
    heapgraph)
      HEAPGRAPH_OPTIONS="dir=$rec,large_threshold=0" timeout 1200 "$hg_bin" --heapgraph "$@" \
        --out "$out" > "$log" 2> "$work/stderr" || status=$? ;;
    phases)
      HEAPGRAPH_OPTIONS="dir=$rec,large_threshold=0" timeout 1200 "$phases_bin" --phases "$@" \
        --out "$out" --child-mem > "$log" 2> "$work/stderr" || status=$? ;;
    lsan)
      LSAN_OPTIONS="detect_leaks=1" timeout 1200 "$lsan_bin" --lsan "$@" --out "$out" \
        > "$log" 2> "$work/stderr" || status=$? ;;
  esac
  if ! grep -q '^RESULT ' "$log"; then
    echo "  $tool $*: no result (exit $status); stderr:" >&2
    tail -5 "$work/stderr" >&2
    return 0
  fi
  sed -n 's/^RESULT tool=[a-z]* /RESULT tool='"$tool"' /p' "$log" >> "$results"
  grep '^RESULT ' "$log" | tail -1 | tr ' ' '\n' \
    | grep -E '^(leaks|expected|check_ms|stopped_ms|probe_gap_ms|extra_kb|load1)=' \
    | tr '\n' ' ' | sed "s/^/  $tool $* : /" >&2
  echo >&2
  rm -rf "$rec"
}

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)" >&2
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((rep = 1; rep <= reps; ++rep)); do
  echo "## repetition $rep/$reps" >&2
  for config in "${configs[@]}"; do
    # shellcheck disable=SC2086
    run heapgraph $config
    # shellcheck disable=SC2086
    run lsan $config
  done
done
if [ "$phases" = 1 ]; then
  for ((rep = 1; rep <= phase_reps; ++rep)); do
    echo "## phases, repetition $rep/$phase_reps" >&2
    for config in "${configs[@]}"; do
      # shellcheck disable=SC2086
      run phases $config
    done
  done
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
[ -z "$raw_out" ] || cp "$results" "$raw_out"

python3 - "$results" <<'EOF'
import collections, statistics, sys

runs = collections.defaultdict(list)  # (tool, config) -> [dict]
order = []
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
    config = kv["mode"] + " " + " ".join(
        kv[k] for k in ("n", "stacks", "threads") if k in kv)
    if config not in order:
        order.append(config)
    runs[(kv["tool"], config)].append(kv)

def med(tool, config, key):
    vals = [float(r[key]) for r in runs.get((tool, config), []) if key in r and float(r[key]) >= 0]
    return statistics.median(vals) if vals else None

def fmt(v, digits=0):
    return "–" if v is None else f"{v:,.{digits}f}"

def ratio(a, b):
    return "–" if a is None or not b else f"{a / b:.2f}"

def label(config):
    mode, *rest = config.split()
    nums = [int(x) for x in rest]
    def short(x):
        return f"{x / 1e6:g}M" if x >= 1e6 else (f"{x / 1e3:g}k" if x >= 1e4 else str(x))
    if mode == "manyleaks":
        return f"manyleaks {short(nums[0])} / {nums[1]} stacks"
    return f"{mode} {short(nums[0])}"

def leaks(tool, config):
    rs = runs.get((tool, config), [])
    found = sorted({int(r["leaks"]) for r in rs})
    expected = {int(r["expected"]) for r in rs}
    if not rs:
        return "–", None
    text = "/".join(f"{x:,}" for x in found)
    return text, (found, expected)

print("| workload | tool | runs | check total ms | world stopped ms | probe gap ms | CPU ms |"
      " extra peak MB | leaks found (expected) |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
mismatches = []
for config in order:
    for tool in ("heapgraph", "lsan"):
        rs = runs.get((tool, config), [])
        if not rs:
            continue
        total = med(tool, config, "check_ms")
        stopped = med(tool, config, "stopped_ms")
        gap = med(tool, config, "probe_gap_ms")
        cpu = med(tool, config, "cpu_ms")
        extra = med(tool, config, "extra_kb")
        extra_text = fmt(extra / 1024 if extra is not None else None)
        if tool == "heapgraph":
            child = med("phases", config, "child_private_kb")
            if child is not None:
                extra_text += f" + child {child / 1024:,.0f}"
        found, check = leaks(tool, config)
        expected = int(rs[0]["expected"])
        print(f"| {label(config)} | {tool} | {len(rs)} | {fmt(total)} | "
              f"{fmt(stopped, 1) if tool == 'heapgraph' else '(≈ probe gap)'} | {fmt(gap)} | "
              f"{fmt(cpu)} | {extra_text} | {found} ({expected:,}) |")
    hg = {int(r["leaks"]) for r in runs.get(("heapgraph", config), [])}
    ls = {int(r["leaks"]) for r in runs.get(("lsan", config), [])}
    if hg != ls:
        mismatches.append(f"{label(config)}: heapgraph {sorted(hg)}, LSan {sorted(ls)}")

print()
print("| workload | total hg/LSan | stopped hg/LSan (probe gaps) | stopped hg (own) / LSan probe gap |"
      " CPU hg/LSan |")
print("| --- | ---: | ---: | ---: | ---: |")
for config in order:
    print(f"| {label(config)} | {ratio(med('heapgraph', config, 'check_ms'), med('lsan', config, 'check_ms'))} | "
          f"{ratio(med('heapgraph', config, 'probe_gap_ms'), med('lsan', config, 'probe_gap_ms'))} | "
          f"{ratio(med('heapgraph', config, 'stopped_ms'), med('lsan', config, 'probe_gap_ms'))} | "
          f"{ratio(med('heapgraph', config, 'cpu_ms'), med('lsan', config, 'cpu_ms'))} |")
if mismatches:
    print()
    print("Leak counts differ: " + "; ".join(mismatches))

keys = [("p_scan_ms", "scan"), ("p_stopped_ms", "of which stopped"),
        ("p_alloc_pause_ms", "of which alloc pause"), ("p_graph_ms", "graph"),
        ("p_reader_ms", "reader"), ("p_report_ms", "report (group+stacks)"),
        ("p_json_ms", "JSON"), ("p_text_ms", "text"), ("p_write_ms", "write"),
        ("check_ms", "check total"), ("d_resolve_ms", "(stacks resolve alone)"),
        ("d_capture_ms", "(StopAll alone)"), ("d_clone_ms", "(clone alone)"),
        ("d_release_ms", "(ReleaseAll alone)")]
if any(t in ("phases", "phases_ignore") for t, _ in runs):
    print()
    print("| step (ms) | " + " | ".join(label(c) for c in order) + " |")
    print("| --- | " + " | ".join("---:" for _ in order) + " |")
    for tool, suffix in (("phases", ""), ("phases_ignore", " [check allocs ignored]")):
        if not any(t == tool for t, _ in runs):
            continue
        print(f"| runs{suffix} | " + " | ".join(str(len(runs.get((tool, c), []))) for c in order)
              + " |")
        for key, name in keys:
            if tool == "phases_ignore" and key.startswith("d_"):
                continue
            print(f"| {name}{suffix} | " +
                  " | ".join(fmt(med(tool, c, key), 1) for c in order) + " |")
        print(f"| extra peak MB (parent){suffix} | " +
              " | ".join(fmt((med(tool, c, 'extra_kb') or 0) / 1024) for c in order) + " |")
        if tool == "phases":
            print("| snapshot child private MB | " +
                  " | ".join(fmt((med(tool, c, 'child_private_kb') or 0) / 1024) for c in order)
                  + " |")
            print("| snapshot child max RSS MB | " +
                  " | ".join(fmt((med(tool, c, 'child_maxrss_kb') or 0) / 1024) for c in order)
                  + " |")
loads = [float(r["load1"]) for rs in runs.values() for r in rs if "load1" in r]
if loads:
    print()
    print(f"1-minute load average at the end of the runs: median {statistics.median(loads):.1f}, "
          f"min {min(loads):.1f}, max {max(loads):.1f} ({len(loads)} runs, 2 CPUs).")
EOF
