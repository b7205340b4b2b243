#!/usr/bin/env python3
# bench/: the stall a client of `python3 -m http.server` feels while the server is leak-checked on
# a signal (issue 14: 114-206 ms, normal worst case 21.5 ms). Starts the server under LIB
# (LD_PRELOAD, HEAPGRAPH_OPTIONS=dir=<tmp>,scan_signal=12), requests its index in a loop for 2 s
# (the normal worst case), then 5 times: SIGUSR2 (one check) and 2 s more of requests. Prints the
# client's worst latency per window, the server's minor faults and CPU ticks per window, and each
# check's world-stopped, allocations-paused and longest-allocation-wait figures from its text
# report (-1 where the library predates the figure). Usage: http_server_stall.py LIB LABEL
import os, signal, subprocess, sys, time, urllib.request, glob, re, tempfile, socket
lib, label = sys.argv[1], sys.argv[2]
rec = tempfile.mkdtemp(prefix='hg-http-')
s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()
env = dict(os.environ, LD_PRELOAD=lib, HEAPGRAPH_OPTIONS=f'dir={rec},scan_signal=12')
srv = subprocess.Popen([sys.executable, '-m', 'http.server', str(port), '--bind', '127.0.0.1', '--directory', '/usr/share/doc'], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
url = f'http://127.0.0.1:{port}/'
for _ in range(100):
    try: urllib.request.urlopen(url).read(); break
    except Exception: time.sleep(0.1)
def flt():
    f=open(f'/proc/{srv.pid}/stat').read().rsplit(')',1)[1].split()
    return int(f[7]), int(f[11])+int(f[12])
def lat(seconds):
    worst = 0; end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic(); urllib.request.urlopen(url).read(); worst = max(worst, time.monotonic() - t)
    return worst * 1e3
f0=flt(); base = lat(2.0); f1=flt()
print('baseline window: minflt', f1[0]-f0[0], 'cpu ticks', f1[1]-f0[1])
during = []
for i in range(5):
    srv.send_signal(signal.SIGUSR2)
    a=flt(); during.append(lat(2.0)); b=flt(); print('check window: minflt', b[0]-a[0], 'cpu ticks', b[1]-a[1], 'stall %.1f ms' % during[-1])
srv.terminate(); srv.wait()
scans = []
for f in sorted(glob.glob(f'{rec}/*/leaks-*.txt')):
    m = re.search(r'world stopped ([\d.]+) ms, allocations paused ([\d.]+) ms(?:, longest allocation wait ([\d.]+) ms)?', open(f).read())
    if m: scans.append(tuple(float(x) if x else -1 for x in m.groups()))
print(label, 'client worst before %.1f ms; during checks %s ms; checks (stopped, paused, wait): %s; load %s' % (base, [round(x,1) for x in during], scans, open('/proc/loadavg').read().split()[0]))
subprocess.run(['rm', '-rf', rec])
