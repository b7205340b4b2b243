#!/usr/bin/env bash
# bench/yaml_cpp/run.sh: issue 11's reproduction on a real GoogleTest suite. yaml-cpp's own test
# suite plus two planted leaks (planted_leak_test.cpp: a forgotten YAML::Node tree, a
# shared_ptr cycle), run under heapgraph (scrub on, and off for comparison), LeakSanitizer (gcc's
# liblsan preloaded) and Valgrind memcheck, the same runs interleaved. Prints one markdown table of
# "bytes / blocks" leaked per run and the sizes of heapgraph's reports. Fetches nothing: give it a
# yaml-cpp checkout (e.g. git clone https://github.com/jbeder/yaml-cpp, tested at c3f8112).
# Usage: bench/yaml_cpp/run.sh YAML_CPP_SRC [HEAPGRAPH_BUILD_DIR] [WORK_DIR]
#   RUNS=N      heapgraph runs of the whole suite (default 4)
#   VALGRIND=0  skip Valgrind (the whole suite takes minutes under it)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:?usage: run.sh YAML_CPP_SRC [HEAPGRAPH_BUILD_DIR] [WORK_DIR]}"
build="$(cd "${2:-$here/../../build}" && pwd)"
work="${3:-/tmp/heapgraph-yaml-cpp}"
runs="${RUNS:-4}"
heapgraph="$build/tools/heapgraph"
lsan="$(g++ -print-file-name=liblsan.so)"
[ -x "$heapgraph" ] || { echo "run.sh: no $heapgraph (build heapgraph first)" >&2; exit 1; }
[ -f "$src/test/CMakeLists.txt" ] || { echo "run.sh: $src is no yaml-cpp checkout" >&2; exit 1; }

mkdir -p "$work"
rm -rf "$work/src"
cp -r "$src" "$work/src"
cp "$here/planted_leak_test.cpp" "$work/src/test/"
cmake -S "$work/src" -B "$work/build" -DYAML_CPP_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >"$work/configure.log"
cmake --build "$work/build" -j "$(nproc)" --target yaml-cpp-tests >"$work/build.log"
tests="$work/build/test/yaml-cpp-tests"

# "bytes / blocks" from one tool's output.
heapgraph_total() {
  sed -n 's/^SUMMARY: heapgraph: \([0-9]*\) byte(s) leaked in \([0-9]*\) .*/\1 \/ \2/p' "$1"
}
lsan_total() {
  local line
  line="$(sed -n 's/^SUMMARY: LeakSanitizer: \([0-9]*\) byte(s) leaked in \([0-9]*\) .*/\1 \/ \2/p' "$1")"
  echo "${line:-0 / 0}"
}
valgrind_total() {
  awk '/(definitely|indirectly) lost:/ { gsub(",", "", $4); gsub(",", "", $7); b += $4; n += $7 }
       END { print b " / " n }' "$1"
}

run_heapgraph() {  # name options filter
  local out="$work/$1"
  "$heapgraph" run --exitcode 0 --options "$2" --text "$out.txt" --json "$out.json" -- \
    "$tests" --gtest_filter="$3" >/dev/null 2>"$out.err" || true
  heapgraph_total "$out.txt"
}
run_lsan() {  # log filter
  LD_PRELOAD="$lsan" LSAN_OPTIONS=exitcode=0 "$tests" --gtest_filter="$2" >/dev/null 2>"$work/$1" ||
    true
  lsan_total "$work/$1"
}
run_valgrind() {  # log filter
  if [ "${VALGRIND:-1}" = 0 ]; then
    echo "(skipped)"
    return
  fi
  valgrind --leak-check=full --log-file="$work/$1" "$tests" --gtest_filter="$2" >/dev/null 2>&1 ||
    true
  valgrind_total "$work/$1"
}

echo "| run of yaml-cpp-tests | heapgraph run | heapgraph, scrub=0 | LSan (gcc liblsan preloaded) | Valgrind memcheck |"
echo "|---|---|---|---|---|"
for i in $(seq 1 "$runs"); do
  row="| whole suite, run $i | $(run_heapgraph "hg-all-$i" scrub=1 '*') |"
  row+=" $(run_heapgraph "hg-noscrub-all-$i" scrub=0 '*') | $(run_lsan "lsan-all-$i.txt" '*') |"
  if [ "$i" = 1 ]; then row+=" $(run_valgrind vg-all.txt '*') |"; else row+=" |"; fi
  echo "$row"
done
for filter in 'NodeEmitterTest.*:PlantedLeak.*' 'PlantedLeak.*'; do
  tag="$(echo "$filter" | tr -c 'A-Za-z0-9\n' '_')"
  echo "| \`--gtest_filter='$filter'\` | $(run_heapgraph "hg-$tag" scrub=1 "$filter") |" \
    "$(run_heapgraph "hg-noscrub-$tag" scrub=0 "$filter") | $(run_lsan "lsan-$tag.txt" "$filter") |" \
    "$(run_valgrind "vg-$tag.txt" "$filter") |"
done
echo
echo "heapgraph's reports of the whole suite (run 1): text $(stat -c %s "$work/hg-all-1.txt") bytes," \
  "JSON $(stat -c %s "$work/hg-all-1.json") bytes; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
