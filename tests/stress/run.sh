#!/usr/bin/env bash
# shellcheck disable=SC2317  # the run_* functions are called through "run_$s"
# tests/stress/run.sh: issue 12's long reliability scenarios, on real processes of a build. Not in
# the README's test command: `cmake --build build --target stress` (or `stress_quick`) runs it.
#
#   tests/stress/run.sh BUILD_DIR [--quick] [SCENARIO...]
#
# Scenarios (all by default, one after the other, never two at once):
#   churn        STRESS_CHECKS (1,000) leak checks while 2 threads churn the heap and a third
#                starts and joins threads; one block leaked before each: each check must run and
#                report exactly the planted leaks (tests/programs/stress_checks churn)
#   kills        STRESS_KILLS (100) SIGKILLs at a random moment (0-1.5 s after the start) of a
#                recording process, alternately hg_churn (preloaded: heap and mmap churn) and
#                stress_checks churn (linked: checks under churn, killed mid-check too); then
#                `heapgraph dump` of its recording directory must read it (exit 0) or refuse it
#                in one line (one "heapgraph: ..." line on stderr, exit 1), within 60 s
#   forkdlopen   STRESS_FORKS (1,000) forks of a process that dlopen()s/dlclose()s in one thread
#                and allocates inside dl_iterate_phdr callbacks in another: every child must
#                allocate (malloc, realloc, calloc, posix_memalign) and exit within 10 s
#                (tests/programs/stress_fork_dlopen)
#   threads      STRESS_THREAD_CHECKS (10) processes of STRESS_THREADS (10,000) threads: a leak
#                check and a signal-suspension stop each must capture every thread and report
#                the planted leaks exactly (tests/programs/many_threads_check); skipped where
#                ulimit -u, threads-max or pid_max forbid that many threads
#   overlap      STRESS_OVERLAPS (200) rounds of two API checks at once, a signal check and a
#                forked child's check during them: every API check exact, every child's check
#                exact and done within 30 s (tests/programs/stress_checks overlap)
# --quick divides the counts by 10 (threads: 2 processes). Each scenario prints
#   <scenario>: N tries, N ok, N failed (<s> s, load <1-min load average> at the end)
# and up to 5 distinct failure reasons with their counts. A try that never reported (the process
# hung past its time limit, or crashed) counts as failed. Exit status: 0 when nothing failed, 1
# otherwise, 64 on a bad argument.
set -u

usage() {
  echo "usage: $0 BUILD_DIR [--quick] [churn|kills|forkdlopen|threads|overlap ...]" >&2
  exit 64
}

[ $# -ge 1 ] || usage
build=$(cd "$1" && pwd) || usage
shift
quick=0
scenarios=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    churn | kills | forkdlopen | threads | overlap) scenarios+=("$arg") ;;
    *) usage ;;
  esac
done
[ ${#scenarios[@]} -gt 0 ] || scenarios=(churn kills forkdlopen threads overlap)

programs=$build/tests/programs
preload=$build/heap/libheapgraph.so
cli=$build/tools/heapgraph
scale() {  # scale DEFAULT: the count for this run
  if [ "$quick" = 1 ]; then echo $(($1 / 10 > 0 ? $1 / 10 : 1)); else echo "$1"; fi
}
checks=${STRESS_CHECKS:-$(scale 1000)}
kills=${STRESS_KILLS:-$(scale 100)}
forks=${STRESS_FORKS:-$(scale 1000)}
threads=${STRESS_THREADS:-10000}
if [ "$quick" = 1 ]; then thread_checks=${STRESS_THREAD_CHECKS:-2}; else
  thread_checks=${STRESS_THREAD_CHECKS:-10}; fi
overlaps=${STRESS_OVERLAPS:-$(scale 200)}

work=$(mktemp -d /tmp/heapgraph-stress-XXXXXX)
trap 'rm -rf "$work"' EXIT
any_failed=0

load() { cut -d' ' -f1 /proc/loadavg; }

# report NAME TRIES OK STARTED_AT FAILURES_FILE: the scenario's line and its failure reasons.
report() {
  local name=$1 tries=$2 ok=$3 started=$4 reasons=$5
  local failed=$((tries - ok))
  printf '%s: %d tries, %d ok, %d failed (%d s, load %s at the end)\n' "$name" "$tries" "$ok" \
    "$failed" $(($(date +%s) - started)) "$(load)"
  if [ -s "$reasons" ]; then sort "$reasons" | uniq -c | sort -rn | head -5 | sed 's/^/    /'; fi
  [ "$failed" = 0 ] || any_failed=1
}

# tally NAME TRIES STARTED_AT OUTPUT STATUS: a run that prints "try <i> ok|failed <why>" lines;
# tries without a line failed (the status says why: 124 = time limit).
tally() {
  local name=$1 tries=$2 started=$3 out=$4 status=$5
  local ok reported reasons=$work/$name.reasons
  ok=$(grep -cE '^try [0-9]+ ok( |$)' "$out")
  reported=$(grep -c '^try [0-9]* ' "$out")
  grep '^try [0-9]* failed ' "$out" | sed 's/^try [0-9]* failed //' >"$reasons"
  grep '^baseline failed' "$out" >>"$reasons"
  local missing=$((tries - reported))
  if [ "$missing" -gt 0 ]; then
    local why="exit status $status"
    [ "$status" = 137 ] && why="killed at the time limit"
    for _ in $(seq "$missing"); do echo "no report ($why)"; done >>"$reasons"
  fi
  report "$name" "$tries" "$ok" "$started" "$reasons"
  times "$out"
}

# times OUTPUT: the median and range of the checks' times the ok lines carry, if any.
times() {
  local key
  for key in total_ms world_stopped_ms; do
    grep -oE "^try [0-9]+ ok .*\b$key=[0-9]+" "$1" | sed "s/.*$key=//" | sort -n |
      awk -v key="$key" '{ v[NR] = $1 } END {
        if (NR > 0) printf "    check %s: median %d, %d-%d\n", key, v[int((NR + 1) / 2)], v[1], v[NR] }'
  done
}

# run_program NAME TRIES SECONDS_PER_TRY COMMAND...: one process that prints a "try" line a try,
# under a time limit of 60 s plus SECONDS_PER_TRY a try; its recordings go to a root of its own.
run_program() {
  local name=$1 tries=$2 per_try=$3 started out=$work/$1.out status
  shift 3
  started=$(date +%s)
  HEAPGRAPH_OPTIONS=dir=$work/$name-root timeout -s KILL $((60 + tries * per_try)) "$@" >"$out" \
    2>"$work/$name.err"
  status=$?
  tally "$name" "$tries" "$started" "$out" "$status"
}

run_churn() { run_program churn "$checks" 10 "$programs/stress_checks" churn "$checks"; }
run_overlap() { run_program overlap "$overlaps" 40 "$programs/stress_checks" overlap "$overlaps"; }
run_forkdlopen() {
  run_program forkdlopen "$forks" 20 env LD_PRELOAD="$preload" "$programs/stress_fork_dlopen" \
    "$programs/libhg_dl_lib.so" "$forks"
}

# One killed run: prints "ok", "ok no recording" or "failed <why>".
kill_once() {
  local i=$1 root=$work/kill-$1 pid delay_ms dirs status lines
  mkdir -p "$root"
  if [ $((i % 2)) = 0 ]; then
    sleep 30 | LD_PRELOAD=$preload HEAPGRAPH_OPTIONS=dir=$root "$programs/hg_churn" 4 \
      >/dev/null 2>&1 &
  else
    HEAPGRAPH_OPTIONS=dir=$root "$programs/stress_checks" churn 100000 >/dev/null 2>&1 &
  fi
  pid=$!
  delay_ms=$((RANDOM % 1500))
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  mapfile -t dirs < <(find "$root" -mindepth 1 -maxdepth 1 -type d)
  if [ ${#dirs[@]} = 0 ]; then
    echo "ok no recording (killed after $delay_ms ms)"
    return
  fi
  timeout -s KILL 60 "$cli" dump "${dirs[0]}" --top 5 >/dev/null 2>"$root/dump.err"
  status=$?
  lines=$(wc -l <"$root/dump.err")
  if [ "$status" = 0 ]; then
    echo ok
  elif [ "$status" = 1 ] && [ "$lines" = 1 ] && grep -q '^heapgraph: ' "$root/dump.err"; then
    echo "ok refused: $(sed 's/[0-9][0-9]*/N/g' "$root/dump.err")"
  else
    echo "failed dump exit status $status, $lines lines on stderr: $(head -c 200 "$root/dump.err" |
      tr '\n' ' ')"
  fi
  rm -rf "$root"
}

run_kills() {
  local started ok=0 result reasons=$work/kills.reasons notes=$work/kills.notes
  started=$(date +%s)
  : >"$reasons"
  : >"$notes"
  for i in $(seq "$kills"); do
    result=$(kill_once "$i")
    case "$result" in
      ok*) ok=$((ok + 1)) ;;
      *) echo "${result#failed }" >>"$reasons" ;;
    esac
    case "$result" in ok\ *) echo "${result#ok }" | sed 's/after [0-9]* ms/after N ms/' >>"$notes" ;; esac
  done
  report kills "$kills" "$ok" "$started" "$reasons"
  if [ -s "$notes" ]; then sort "$notes" | uniq -c | sort -rn | head -5 | sed 's/^/    ok, /'; fi
}

run_threads() {
  local started ok=0 tries=0 out status reasons=$work/threads.reasons
  started=$(date +%s)
  : >"$reasons"
  for i in $(seq "$thread_checks"); do
    out=$work/threads-$i.out
    HEAPGRAPH_OPTIONS=dir=$work/threads-root timeout -s KILL 600 "$programs/many_threads_check" \
      "$threads" >"$out" 2>/dev/null
    status=$?
    if grep -q '^skip=' "$out"; then
      echo "threads: skipped ($(grep '^skip=' "$out"))"
      return
    fi
    tries=$((tries + 1))
    if [ "$status" = 0 ] && grep -q '^scan ok=1 .* leaked=25 kept_leaked=0 other_leaked=0 ' "$out" &&
      grep -q '^signals ok=1 ' "$out"; then
      ok=$((ok + 1))
      grep '^scan ' "$out" | sed 's/.*threads=\([0-9]*\).*world_stopped_ms=\([0-9]*\) scan_ms=\([0-9]*\)/    threads=\1 world_stopped_ms=\2 scan_ms=\3/'
    else
      echo "exit status $status: $(grep -E '^(scan|signals) ' "$out" | tr '\n' ' ')" >>"$reasons"
    fi
    rm -rf "$work/threads-root"
  done
  report "threads ($threads each)" "$tries" "$ok" "$started" "$reasons"
}

for s in "${scenarios[@]}"; do "run_$s"; done
exit "$any_failed"
