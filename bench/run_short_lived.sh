#!/bin/bash
# bench/: short-lived and fork/exec-heavy processes under the recorder (issue 14): each WORKLOAD
# plain, with LD_PRELOAD=libheapgraph.so (record) and under `heapgraph run` (record + leak check at
# exit), for one or more builds (before/after a change), interleaved for ROUNDS rounds: round 1 of
# every workload, build and mode, then round 2... Prints per workload, build and mode the median,
# min and max wall seconds, the ratio of the medians to plain, and the disk the recordings took
# (du -s of the recording root after round 1, and the number of recording directories), with the
# load average before and after.
# Usage: run_short_lived.sh ROUNDS NAME=BUILD_DIR [NAME=BUILD_DIR ...]
# Workloads: `cmake --version` (one process), and 200 x /bin/true from bash (201 recorded
# processes, 200 forks of a recorded bash).
set -eu
rounds=$1; shift
declare -A builds=()
names=()
for arg in "$@"; do
  names+=("${arg%%=*}"); builds[${arg%%=*}]=$(cd "${arg#*=}" && pwd)
done
root=$(mktemp -d); trap 'rm -rf "$root"' EXIT
declare -A workloads=(
  [cmake_version]="cmake --version"
  [true_x200]="bash -c 'for i in \$(seq 200); do /bin/true; done'"
)
now() { date +%s.%N; }
run_mode() {  # run_mode MODE WORKLOAD DIR BUILD: runs once, prints the wall seconds
  local mode=$1 cmd=${workloads[$2]} dir=$3 start end
  local lib=$4/heap/libheapgraph.so cli=$4/tools/heapgraph
  start=$(now)
  case "$mode" in
    plain) eval "$cmd" >/dev/null 2>&1 ;;
    record) HEAPGRAPH_OPTIONS="dir=$dir" LD_PRELOAD="$lib" eval "$cmd" >/dev/null 2>&1 ;;
    run) eval "\"$cli\" run --dir \"$dir\" -- $cmd" >/dev/null 2>&1 || true ;;
  esac
  end=$(now)
  echo "$end - $start" | bc
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for w in "${!workloads[@]}"; do
    echo "$w plain $(run_mode plain "$w" "$root" "${builds[${names[0]}]}")"
    for b in "${names[@]}"; do
      for mode in record run; do
        dir=$root/$w-$b-$mode-$r; mkdir -p "$dir"
        echo "$w $b:$mode $(run_mode "$mode" "$w" "$dir" "${builds[$b]}")"
        if [ "$r" = 1 ]; then
          echo "disk $w $b:$mode $(du -sk "$dir" | cut -f1) $(find "$dir" -mindepth 1 -maxdepth 1 -type d | wc -l)"
        fi
        rm -rf "$dir"
      done
    done
  done
done > "$root/results"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for w in "${!workloads[@]}"; do
  base=""
  modes=(plain)
  for b in "${names[@]}"; do modes+=("$b:record" "$b:run"); done
  for mode in "${modes[@]}"; do
    sorted=$(awk -v w="$w" -v m="$mode" '$1 == w && $2 == m { print $3 }' "$root/results" | sort -n)
    n=$(echo "$sorted" | wc -l)
    med=$(echo "$sorted" | sed -n "$(((n + 1) / 2))p")
    [ -n "$base" ] || base=$med
    disk=$(awk -v w="$w" -v m="$mode" '$1 == "disk" && $2 == w && $3 == m { printf ", disk %d KiB in %d dirs", $4, $5 }' "$root/results")
    printf "%-14s %-16s wall median %.3f s (min %.3f, max %.3f), x%.2f plain%s\n" "$w" "$mode" \
      "$med" "$(echo "$sorted" | head -1)" "$(echo "$sorted" | tail -1)" \
      "$(echo "$med / $base" | bc -l)" "$disk"
  done
done
