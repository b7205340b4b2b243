#!/bin/sh
# bench/: the lag monitor's cost (issue 16): lag_busy off / idle / sampling under
# LD_PRELOAD=libheapgraph.so, interleaved for ROUNDS rounds of SECONDS each. Prints per mode the
# median, min and max of the loop steps done per CPU second (throughput of the busy loop), and
# its ratio to `off`, with the load average before and after.
# Usage: run_lag_overhead.sh LAG_BUSY LIBHEAPGRAPH [ROUNDS=5] [SECONDS=5] [EXTRA_OPTIONS]
set -eu
busy=$1; lib=$2; rounds=${3:-5}; seconds=${4:-5}; extra=${5:-}
root=$(mktemp -d); trap 'rm -rf "$root"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for mode in off idle sampling; do
    HEAPGRAPH_OPTIONS="dir=$root,heartbeat_ms=0,watch=0${extra:+,$extra}" LD_PRELOAD="$lib" \
      "$busy" "$mode" "$seconds" | awk -v m="$mode" '{ printf "%s %.1f\n", m, $4 / $2 }'
  done
done > "$root/results"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '{ v[$1] = v[$1] " " $2 }
     END { for (m in v) print m v[m] }' "$root/results" | while read -r mode values; do
  sorted=$(echo "$values" | tr ' ' '\n' | sort -n)
  n=$(echo "$sorted" | wc -l)
  med=$(echo "$sorted" | sed -n "$(( (n + 1) / 2 ))p")
  echo "$mode median $med min $(echo "$sorted" | head -1) max $(echo "$sorted" | tail -1)"
done | sort > "$root/summary"
base=$(awk '$1 == "off" { print $3 }' "$root/summary")
awk -v b="$base" '{ printf "%-9s steps/cpu-s median %s (min %s, max %s), ratio to off %.3f\n",
                    $1, $3, $5, $7, $3 / b }' "$root/summary"
