#!/usr/bin/env python3
"""Summarises bench/run.sh output (bench/out/*.txt) as markdown tables:
8 B latency and busbw at 16 MiB and 64 MiB, best of out-of-place and in-place."""
import glob, os, re, sys

out = sys.argv[1] if len(sys.argv) > 1 else "bench/out"
rows = {}
probe = {}
for path in sorted(glob.glob(os.path.join(out, "allreduce-*.txt"))):
    name = os.path.basename(path)[len("allreduce-"):-4]
    algo, ranks = name.rsplit("-", 1)
    data = {}
    for line in open(path):
        m = re.search(r"1 thread ([\d.]+) GB/s, \d+ threads ([\d.]+) GB/s", line)
        if m:
            probe[ranks] = probe.get(ranks, []) + [(float(m.group(1)), float(m.group(2)))]
        f = line.split()
        if len(f) >= 14 and f[0].isdigit():
            size = int(f[0])
            t = min(float(f[5]), float(f[9]))
            bus = max(float(f[7]), float(f[11]))
            wrong = int(f[8]) + int(f[12]) if f[8] != "N/A" else 0
            data[size] = (t, bus, wrong)
    rows[(int(ranks), algo)] = data

print("| ranks | algorithm | 8 B time (us) | busbw 16 MiB (GB/s) | busbw 64 MiB (GB/s) | #wrong |")
print("|---|---|---|---|---|---|")
for (ranks, algo), d in sorted(rows.items()):
    lat = d.get(8, (float("nan"),))[0]
    b16 = d.get(16 << 20, (0, float("nan")))[1]
    b64 = d.get(64 << 20, (0, float("nan")))[1]
    wrong = sum(v[2] for v in d.values())
    print(f"| {ranks} | {algo} | {lat:.2f} | {b16:.2f} | {b64:.2f} | {wrong} |")
print()
for r, ps in sorted(probe.items()):
    one = sum(p[0] for p in ps) / len(ps)
    two = sum(p[1] for p in ps) / len(ps)
    print(f"memcpy probe during the {r}-rank sweeps: 1 thread {one:.2f} GB/s, all cores {two:.2f} GB/s (mean of {len(ps)})")
