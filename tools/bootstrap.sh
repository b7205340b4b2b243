#!/usr/bin/env bash
# The README's two set-up commands: `bash tools/bootstrap.sh demo` and `bash tools/bootstrap.sh test`.
# Installs missing Debian packages (apt-get, as root), configures and builds, then runs the demo or
# the test suite. Environment: BUILD_DIR (default build), JOBS (default nproc).
set -euo pipefail
mode="${1:-}"
case "$mode" in demo | test) ;; *) echo "usage: bash tools/bootstrap.sh demo|test" >&2; exit 2 ;; esac
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
jobs="${JOBS:-$(nproc)}"

packages=(build-essential cmake ninja-build pkg-config clang lld libclang-rt-14-dev libunwind-dev libcapstone-dev
  libboost-graph-dev libdw-dev libelf-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libfmt-dev libcli11-dev valgrind heaptrack gobjc libgnustep-base-dev
  libblocksruntime-dev libuv1-dev libglib2.0-dev
  python3-jsonschema libgraphviz-dev libdebuginfod-dev)
packages+=(git python3)  # StackOracleTest's real-program workloads (skipped when absent)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: missing Debian packages and not root; run as root or install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The test suite loads the HTML reports in a real headless browser (tests/tools/
# ReportPagesBrowserTest); without one that test is skipped, saying why, so a failed install is
# one line, not a failed set-up.
if [ "$mode" = test ] && ! command -v chromium >/dev/null && [ "$(id -u)" -eq 0 ]; then
  echo "bootstrap: installing chromium (headless, for the HTML report test)"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; } ||
    echo "bootstrap: chromium could not be installed; ReportPagesBrowserTest will be skipped" >&2
fi

# The test command compiles each test once: the tests that run under ASan+UBSan (label
# `sanitizable`) are built and run in the second pass only; this pass builds the rest.
# The libFuzzer targets and their smoke runs are not part of it (a separate step, as the long
# fuzz campaigns are: `ctest -R fuzz_smoke` in a default build, docs/reliability.md).
# Ninja schedules by file rather than by target (a test batch compiles while the libraries it
# links to are still linking) and costs less than recursive make: a build directory that an
# earlier run configured with make keeps it (CMake refuses to change a directory's generator).
# The test pass's objects carry no location lists of local variables (-fno-var-tracking: about
# a quarter of an optimized file's compilation; code, lines and types are the same) as tests/
# and bench/ never do. The flag stays in that directory's cache: a demo run in a directory of
# its own keeps the location lists, one in a directory the test command configured does not.
generator_for() {  # DIR: the -G arguments for a build directory (none for a configured one)
  [ -f "$1/CMakeCache.txt" ] || echo "-G Ninja"
}
sanitizable_here=ON fuzzers_here=ON flags=()
if [ "$mode" = test ]; then
  sanitizable_here=OFF fuzzers_here=OFF flags=(-DCMAKE_CXX_FLAGS=-fno-var-tracking)
fi
# shellcheck disable=SC2046  # the -G arguments are two words or none
cmake $(generator_for "$build") -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHEAPGRAPH_WERROR=ON "${flags[@]}" \
  -DHEAPGRAPH_SANITIZABLE_TESTS="$sanitizable_here" -DHEAPGRAPH_FUZZERS="$fuzzers_here" >/dev/null
cmake --build "$build" -j "$jobs"

if [ "$mode" = demo ]; then
  echo "== Live allocations of examples/demo_app, grouped by stack (heapgraph record)"
  "$build/tools/heapgraph" record --top 8 -- "$build/examples/demo_app"
  echo
  echo "== Leak check of examples/demo_app at exit (heapgraph run), with its HTML page"
  page="$build/demo-leaks.html"
  "$build/tools/heapgraph" run --exitcode 0 --html "$page" -- "$build/examples/demo_app"
  echo
  echo "bootstrap: the demo's leak report, one self-contained page for a ticket: $page"
  exit 0
fi
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 600)

# Second pass: everything that does not interpose malloc, under ASan + UBSan.
asan="${build}-asan"
# shellcheck disable=SC2046
cmake $(generator_for "$asan") -S "$root" -B "$asan" -DCMAKE_BUILD_TYPE=Debug -DHEAPGRAPH_WERROR=ON \
  -DHEAPGRAPH_SANITIZE=ON -DHEAPGRAPH_BUILD_BENCH=OFF >/dev/null
cmake --build "$asan" -j "$jobs" --target sanitizable_tests heapgraph
cd "$asan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j "$jobs" --timeout 600 -L sanitizable
