#!/usr/bin/env bash
# bench/yaml_cpp/per_test.sh: issue 13, item 2 on a real GoogleTest suite nobody on the project
# wrote. Relinks yaml-cpp's own test objects with heapgraph::gtest's main (gtest/, compiled here
# against yaml-cpp's bundled googletest) instead of yaml-cpp's test/main.cpp, runs the suite under
# LD_PRELOAD=libheapgraph.so with the per-test listener and without it (HEAPGRAPH_GTEST_CHECK=0),
# interleaved, and prints: the suite times (median of RUNS each, same machine, same run), their
# ratio, and the table of tests failed for leaks (name, blocks, first application frame).
# Fetches nothing: give it a yaml-cpp checkout (git clone https://github.com/jbeder/yaml-cpp) and
# its build directory with yaml-cpp-tests built (cmake -DYAML_CPP_BUILD_TESTS=ON, Ninja or Make).
# Usage: bench/yaml_cpp/per_test.sh YAML_CPP_SRC YAML_CPP_BUILD [HEAPGRAPH_BUILD_DIR] [WORK_DIR]
#   RUNS=N       runs of each form (default 3)
#   RUN_TWICE=1  also one run with HEAPGRAPH_GTEST_RUN_TWICE=1 (its failures are listed too)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="${1:?usage: per_test.sh YAML_CPP_SRC YAML_CPP_BUILD [HEAPGRAPH_BUILD_DIR] [WORK_DIR]}"
ybuild="${2:?usage: per_test.sh YAML_CPP_SRC YAML_CPP_BUILD [HEAPGRAPH_BUILD_DIR] [WORK_DIR]}"
build="$(cd "${3:-$root/build}" && pwd)"
work="${4:-/tmp/heapgraph-yaml-per-test}"
runs="${RUNS:-3}"
preload="$build/heap/libheapgraph.so"
[ -f "$preload" ] || { echo "per_test.sh: no $preload (build heapgraph first)" >&2; exit 1; }
objects="$ybuild/test/CMakeFiles/yaml-cpp-tests.dir"
[ -d "$objects" ] || { echo "per_test.sh: no yaml-cpp-tests objects in $ybuild" >&2; exit 1; }

mkdir -p "$work"
gtest_include="$src/test/googletest-1.16.0/googletest/include"
flags=(-std=c++17 -O2 -g -I"$gtest_include" -I"$root/gtest/include" -I"$root/include" -I"$root")
for f in LeakCheckApi LeakCheckListener GtestMain MainEntry; do
  g++ "${flags[@]}" -c "$root/gtest/$f.cc" -o "$work/$f.o"
done
mapfile -t test_objects < <(find "$objects" -name '*.o' ! -name 'main.cpp.o' | sort)
tests="$work/yaml-cpp-tests-heapgraph"
g++ -o "$tests" "${test_objects[@]}" "$work"/{LeakCheckApi,LeakCheckListener,GtestMain,MainEntry}.o \
  "$ybuild/libyaml-cpp.a" "$ybuild/lib/libgmock.a" "$ybuild/lib/libgtest.a" -lpthread -ldl

# Seconds of one run of the suite; its output in $work/<name>.out.
run_suite() {  # name check(0|1) [extra env...]
  local name="$1" check="$2"
  shift 2
  rm -rf "$work/reports-$name" "$work/rec-$name"
  local start end
  start=$(date +%s.%N)
  env LD_PRELOAD="$preload" HEAPGRAPH_OPTIONS="dir=$work/rec-$name" HEAPGRAPH_GTEST_CHECK="$check" \
    HEAPGRAPH_GTEST_DIR="$work/reports-$name" "$@" "$tests" >"$work/$name.out" 2>&1 || true
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

: >"$work/plain.times"
: >"$work/checked.times"
for i in $(seq "$runs"); do
  run_suite plain 0 >>"$work/plain.times"
  run_suite checked 1 >>"$work/checked.times"
done
plain=$(median <"$work/plain.times")
checked=$(median <"$work/checked.times")
count=$(sed -n 's/^\[==========\] \([0-9]*\) tests from .* ran.*/\1/p' "$work/checked.out")
echo "yaml-cpp-tests: $count tests; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "suite under LD_PRELOAD=libheapgraph.so, median of $runs: without the listener ${plain} s," \
  "with per-test checks ${checked} s, ratio $(echo "scale=2; $checked / $plain" | bc)"

# The table of one run's leak failures: test, blocks, first frame in the application (the first
# frame of the text report outside libc, libstdc++, GoogleTest and yaml-cpp's allocation helpers).
leak_table() {  # name
  echo
  echo "| test | leaked blocks | first application frame |"
  echo "| --- | --- | --- |"
  sed -n 's/^heapgraph: \([^ ]*\) leaked \([0-9]*\) block(s).*/\1 \2/p' "$work/$1.out" |
    while read -r test blocks; do
      local file frame
      file="$work/reports-$1/$(echo "$test" | tr -c 'A-Za-z0-9._\n-' '_').txt"
      frame=$(grep -m1 -E '^ +#[0-9]+ .* in .*(_test|Test|test/)' "$file" 2>/dev/null |
        sed 's/^ *#[0-9]* 0x[0-9a-f]* in //; s/ (yaml-cpp-tests-heapgraph.*//' || true)
      echo "| $test | $blocks | \`${frame:-?}\` |"
    done
}
echo
echo "Tests failed for leaks (one run, per-test checks):"
leak_table checked
if [ "${RUN_TWICE:-0}" = 1 ]; then
  run_suite twice 1 HEAPGRAPH_GTEST_RUN_TWICE=1 >"$work/twice.time"
  echo
  echo "Run-twice mode (second pass judged), $(cat "$work/twice.time") s:"
  leak_table twice
fi
