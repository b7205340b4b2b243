#!/bin/sh
# bench/: the lag monitor's cost (issue 16): the modes of one bench program under
# LD_PRELOAD=libheapgraph.so (heartbeat_ms=0,watch=0), interleaved for ROUNDS rounds. PROGRAM is
#   build/bench/lag_busy     a busy loop: off / idle / sampling, ARG seconds each (default 5)
#   build/bench/lag_uv_loop  a libuv loop: off / adapter, ARG iterations each (default 1000000)
# `PROGRAM modes` lists its modes, the baseline first; each run prints
# "cpu_s <CPU s> wall_s <wall s> work <units of work>". Prints per mode the median, min and max of
# the work done per CPU second and its ratio to the baseline's median, then the CPU and wall
# nanoseconds per unit of work added to the baseline's (paired within each round: median, min,
# max), with the load average before and after.
# Usage: run_lag_overhead.sh PROGRAM LIBHEAPGRAPH [ROUNDS=5] [ARG] [EXTRA_OPTIONS]
set -eu
program=$1; lib=$2; rounds=${3:-5}; arg=${4:-}; extra=${5:-}
root=$(mktemp -d); trap 'rm -rf "$root"' EXIT
modes=$("$program" modes)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for mode in $modes; do
    HEAPGRAPH_OPTIONS="dir=$root,heartbeat_ms=0,watch=0${extra:+,$extra}" LD_PRELOAD="$lib" \
      "$program" "$mode" $arg | awk -v r="$r" -v m="$mode" '{ print r, m, $2, $4, $6 }'
  done
done > "$root/results"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# results: round mode cpu_s wall_s work
awk -v modes="$modes" '
  function stats(list,   n, v, i, j, t) {  # "median (min, max)" of a space-separated list
    n = split(list, v, " ")
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; --j) {
      t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
    }
    return sprintf("%.1f (min %.1f, max %.1f)", v[int((n + 1) / 2)], v[1], v[n])
  }
  function median(list,   s) { s = stats(list); sub(/ .*/, "", s); return s }
  { rate[$2] = rate[$2] " " $5 / $3
    cpu_ns[$1, $2] = $3 * 1e9 / $5; wall_ns[$1, $2] = $4 * 1e9 / $5; last = $1 }
  END {
    count = split(modes, m, " "); base = m[1]
    for (i = 1; i <= count; ++i) {
      printf "%-9s work/cpu-s median %s, ratio to %s %.3f\n", m[i], stats(rate[m[i]]), base,
             median(rate[m[i]]) / median(rate[base])
    }
    for (i = 2; i <= count; ++i) {
      cpu = ""; wall = ""
      for (r = 1; r <= last; ++r) {
        cpu = cpu " " cpu_ns[r, m[i]] - cpu_ns[r, base]
        wall = wall " " wall_ns[r, m[i]] - wall_ns[r, base]
      }
      printf "%-9s ns per unit of work added to %s: cpu %s, wall %s\n", m[i], base, stats(cpu),
             stats(wall)
    }
  }' "$root/results"
