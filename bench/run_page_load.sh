#!/usr/bin/env bash
# bench/: how long a browser takes to load heapgraph's largest HTML pages (issue 15: "the page
# must stay usable"). Writes the pages of report_render_bench's synthetic reports (2M leaked blocks
# over 4,000 records with 1,000 cycles; a FOOM report of 50,000 stacks), then loads each, and a
# one-line page as the baseline, in headless Chromium (`--dump-dom`: loaded, script run, DOM
# serialized), interleaved round by round. Prints per page the median wall and CPU seconds (the
# browser's processes, user + system) with min-max, the ratio to the baseline's median, the page's
# size, and the load average before and after.
# Usage: bench/run_page_load.sh build/bench/report_render_bench [ROUNDS] [BROWSER]
set -euo pipefail
bench="${1:?usage: run_page_load.sh REPORT_RENDER_BENCH [ROUNDS] [BROWSER]}"
rounds="${2:-5}"
browser="${3:-chromium}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
"$bench" 1 "$dir" >/dev/null
echo '<!DOCTYPE html><html><body><p>baseline</p></body></html>' >"$dir/baseline.html"
python3 - "$dir" "$rounds" "$browser" <<'PY'
import os, resource, statistics, subprocess, sys, time
d, rounds, browser = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pages = ["baseline.html", "leak.html", "foom.html"]
wall = {p: [] for p in pages}
cpu = {p: [] for p in pages}
print("load average before:", open("/proc/loadavg").read().split()[:3])
for _ in range(rounds):
    for p in pages:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--user-data-dir=" + d + "/profile", "--dump-dom",
                        "file://" + d + "/" + p],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        wall[p].append(time.monotonic() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[p].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
base = statistics.median(wall["baseline.html"])
print("| page | bytes | wall s median (min-max) | CPU s median (min-max) | x baseline (wall) |")
print("| --- | --- | --- | --- | --- |")
for p in pages:
    w, c = wall[p], cpu[p]
    print(f"| {p} | {os.path.getsize(d + '/' + p):,} | {statistics.median(w):.2f} "
          f"({min(w):.2f}-{max(w):.2f}) | {statistics.median(c):.2f} ({min(c):.2f}-{max(c):.2f}) "
          f"| {statistics.median(w) / base:.2f} |")
print("rounds:", rounds, "; load average after:", open("/proc/loadavg").read().split()[:3])
PY
