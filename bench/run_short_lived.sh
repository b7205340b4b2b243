#!/bin/bash
# bench/: short-lived and fork/exec-heavy processes under the recorder (issue 14): each WORKLOAD
# plain, with LD_PRELOAD=libheapgraph.so (record) and under `heapgraph run` (record + leak check at
# exit), for one or more builds (before/after a change), interleaved for ROUNDS rounds: round 1 of
# every workload, build and mode, then round 2... (even rounds take the builds in reverse order:
# each run deletes its recordings, and ext4 without a journal makes the next inode creations skip
# recently deleted inodes, so the build that runs second pays for the first one's deletions) Prints per workload, build and mode the median,
# min and max wall seconds, the ratio of the medians to plain, and the disk the recordings took
# (du -s of the recording root after round 1, and the number of recording directories), with the
# load average before and after.
# Usage: [HEAPGRAPH_BENCH_OPTIONS=a=b,c=d] run_short_lived.sh ROUNDS NAME=BUILD_DIR [NAME=BUILD_DIR ...]
# HEAPGRAPH_BENCH_OPTIONS: more recorder options for every build and mode (e.g. watch=0), given to
# record as HEAPGRAPH_OPTIONS and to run as --options. Each line also gives the CPU seconds (user +
# system of the workload's processes, from bash's `times`).
# Workloads: `cmake --version` (one process), 200 x /bin/true from bash (201 recorded processes,
# 200 forks of a recorded bash; /bin/true allocates nothing, so its check scans nothing), 200 x
# /bin/echo from bash (the same, with the ~140 blocks of glibc's locale data every coreutils
# command holds at exit under LANG=C.UTF-8: each check stops and scans), and the configure of a
# one-file C++ project by cmake (the issue's
# example: about 25 processes, a dozen of them compilers and linkers that leak at exit). Beside
# them, mode `lsan`: LeakSanitizer preloaded (liblsan.so.0, its at-exit check on, exitcode=0 so a
# compiler's leak does not fail the configure), when the library is installed.
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
  [echo_x200]="bash -c 'for i in \$(seq 200); do LANG=C.UTF-8 /bin/echo \$i; done'"
  [cmake_configure]="bash -c 'rm -rf $root/configure && cmake -S $root/project -B $root/configure'"
)
mkdir "$root/project"
printf 'cmake_minimum_required(VERSION 3.20)\nproject(one CXX)\nadd_executable(one main.cc)\n' \
  > "$root/project/CMakeLists.txt"
echo 'int main() { return 0; }' > "$root/project/main.cc"
lsan=/usr/lib/x86_64-linux-gnu/liblsan.so.0
extra=${HEAPGRAPH_BENCH_OPTIONS:-}
run_mode() {  # run_mode MODE WORKLOAD DIR BUILD: runs once, prints wall and CPU (user + sys) seconds
  local mode=$1 cmd=${workloads[$2]} dir=$3 TIMEFORMAT='%3R %3U %3S'
  local lib=$4/heap/libheapgraph.so cli=$4/tools/heapgraph
  { time case "$mode" in
      plain) eval "$cmd" >/dev/null 2>&1 ;;
      lsan) LSAN_OPTIONS=exitcode=0 LD_PRELOAD="$lsan" eval "$cmd" >/dev/null 2>&1 || true ;;
      record) HEAPGRAPH_OPTIONS="dir=$dir${extra:+,$extra}" LD_PRELOAD="$lib" eval "$cmd" >/dev/null 2>&1 ;;
      run) eval "\"$cli\" run --dir \"$dir\" ${extra:+--options $extra} -- $cmd" >/dev/null 2>&1 || true ;;
    esac; } 2>&1 | awk '{ printf "%s %.3f\n", $1, $2 + $3 }'
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)${extra:+; options $extra}"
for r in $(seq "$rounds"); do
  for w in "${!workloads[@]}"; do
    echo "$w plain $(run_mode plain "$w" "$root" "${builds[${names[0]}]}")"
    [ -e "$lsan" ] && echo "$w lsan $(run_mode lsan "$w" "$root" "${builds[${names[0]}]}")"
    order=("${names[@]}")
    if [ $((r % 2)) = 0 ]; then  # even rounds run the builds in reverse order (file system state)
      order=(); for ((i = ${#names[@]} - 1; i >= 0; i--)); do order+=("${names[$i]}"); done
    fi
    for b in "${order[@]}"; do
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
  [ -e "$lsan" ] && modes+=(lsan)
  for b in "${names[@]}"; do modes+=("$b:record" "$b:run"); done
  for mode in "${modes[@]}"; do
    sorted=$(awk -v w="$w" -v m="$mode" '$1 == w && $2 == m { print $3 }' "$root/results" | sort -n)
    cpu=$(awk -v w="$w" -v m="$mode" '$1 == w && $2 == m { print $4 }' "$root/results" | sort -n)
    n=$(echo "$sorted" | wc -l)
    med=$(echo "$sorted" | sed -n "$(((n + 1) / 2))p")
    cpu_med=$(echo "$cpu" | sed -n "$(((n + 1) / 2))p")
    [ -n "$base" ] || base=$med
    disk=$(awk -v w="$w" -v m="$mode" '$1 == "disk" && $2 == w && $3 == m { printf ", disk %d KiB in %d dirs", $4, $5 }' "$root/results")
    printf "%-14s %-16s wall median %.3f s (min %.3f, max %.3f), x%.2f plain; CPU median %.3f s (min %.3f, max %.3f)%s\n" \
      "$w" "$mode" "$med" "$(echo "$sorted" | head -1)" "$(echo "$sorted" | tail -1)" \
      "$(echo "$med / $base" | bc -l)" "$cpu_med" "$(echo "$cpu" | head -1)" "$(echo "$cpu" | tail -1)" "$disk"
  done
done
