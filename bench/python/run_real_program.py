#!/usr/bin/env python3
# bench/python: what the recorder adds to a real program, part by part (docs/performance.md,
# "Session 15"). Runs COMMAND plain, under LeakSanitizer preloaded (detect_leaks=0: its allocator
# and frame-pointer stack recording), and under each given libheapgraph.so with its default
# options, scrub=0 and depth=1, interleaved for ROUNDS rounds (odd rounds in reverse order), and
# prints the child's CPU seconds (user + system, from wait4) and wall seconds: medians (min-max)
# and ratios to plain. Recordings go to fresh directories under $TMPDIR, removed after each run.
# Usage: run_real_program.py ROUNDS NAME=LIBHEAPGRAPH.so [NAME=...] -- COMMAND [ARGS...]
# e.g.   PYTHONMALLOC=malloc run_real_program.py 7 main=build/heap/libheapgraph.so -- \
#            python3 bench/python/json_workload.py
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

LSAN = "/usr/lib/x86_64-linux-gnu/liblsan.so.0"


def configurations(libraries):
    configs = {"plain": ({}, None)}
    if os.path.exists(LSAN):
        configs["lsan"] = ({"LD_PRELOAD": LSAN, "LSAN_OPTIONS": "detect_leaks=0"}, None)
    for name, path in libraries:
        for options in ("", "scrub=0", "depth=1"):
            label = name + (" " + options if options else "")
            configs[label] = ({"LD_PRELOAD": os.path.abspath(path)}, options)
    return configs


def run_once(command, env_extra, options):
    env = dict(os.environ)
    env.update(env_extra)
    directory = tempfile.mkdtemp(prefix="hg-real-")
    if options is not None:
        env["HEAPGRAPH_OPTIONS"] = "dir=" + directory + ("," + options if options else "")
    started = time.monotonic()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - started
    shutil.rmtree(directory, ignore_errors=True)
    if status != 0:
        sys.exit(f"{command[0]} failed (wait status {status}) with {env_extra}")
    return usage.ru_utime + usage.ru_stime, wall


def main():
    if "--" not in sys.argv or len(sys.argv) < 4:
        sys.exit(__doc__ or "usage: run_real_program.py ROUNDS NAME=LIB [...] -- COMMAND [ARGS...]")
    split = sys.argv.index("--")
    rounds = int(sys.argv[1])
    libraries = [arg.split("=", 1) for arg in sys.argv[2:split]]
    command = sys.argv[split + 1:]
    configs = configurations(libraries)
    results = {label: ([], []) for label in configs}
    print("load before:", " ".join(open("/proc/loadavg").read().split()[:3]))
    for r in range(rounds):
        labels = list(configs) if r % 2 == 0 else list(reversed(configs))
        for label in labels:
            cpu, wall = run_once(command, *configs[label])
            results[label][0].append(cpu)
            results[label][1].append(wall)
    print("load after:", " ".join(open("/proc/loadavg").read().split()[:3]))
    plain_cpu = statistics.median(results["plain"][0])
    plain_wall = statistics.median(results["plain"][1])
    print("| configuration | CPU s | vs plain | wall s | vs plain |")
    print("|---|---|---|---|---|")
    for label, (cpu, wall) in results.items():
        print(f"| {label} | {statistics.median(cpu):.3f} ({min(cpu):.3f}-{max(cpu):.3f}) | "
              f"{statistics.median(cpu) / plain_cpu:.2f}x | {statistics.median(wall):.3f} "
              f"({min(wall):.3f}-{max(wall):.3f}) | {statistics.median(wall) / plain_wall:.2f}x |")


if __name__ == "__main__":
    main()
