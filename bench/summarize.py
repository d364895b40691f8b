#!/usr/bin/env python3
"""Summarises bench/run.sh output (OUT_DIR/*.txt) as a markdown table: the time of
the smallest non-empty size and busbw at 16, 64 and 256 MiB, best of out-of-place and
in-place, plus the memory-bandwidth probes of the same runs.

    bench/summarize.py [OUT_DIR] [PREFIX]
"""
import glob, os, re, sys

out = sys.argv[1] if len(sys.argv) > 1 else "build/bench-out/run"
prefix = sys.argv[2] if len(sys.argv) > 2 else ""
rows = {}
probes = []
for path in sorted(glob.glob(os.path.join(out, prefix + "*.txt"))):
    name = os.path.basename(path)[:-4]
    if "-" not in name:
        continue
    sweep, ranks = name.rsplit("-", 1)
    if not ranks.isdigit():
        continue  # e.g. dry-run.txt
    data = {}
    for line in open(path):
        m = re.search(r"1 thread ([\d.]+) GB/s, \d+ threads ([\d.]+) GB/s", line)
        if m:
            probes.append((float(m.group(1)), float(m.group(2))))
        f = line.split()
        if len(f) >= 10 and f[0].isdigit():
            size = int(f[0])
            cols = [f[5:9]] + ([f[9:13]] if len(f) >= 14 else [])
            t = min(float(c[0]) for c in cols)
            bus = max(float(c[2]) for c in cols)
            wrong = sum(int(c[3]) for c in cols if c[3] != "N/A")
            data[size] = (t, bus, wrong)
    rows[(int(ranks), sweep)] = data

print("| ranks | sweep | smallest size (B) | time (us) | busbw 16 MiB | busbw 64 MiB | busbw 256 MiB | #wrong |")
print("|---|---|---|---|---|---|---|---|")
for (ranks, sweep), d in sorted(rows.items()):
    small = min((s for s in d if s > 0), default=None)
    lat = f"{d[small][0]:.2f}" if small else "-"
    bw = [f"{d[s][1]:.2f}" if s in d else "-" for s in (16 << 20, 64 << 20, 256 << 20)]
    wrong = sum(v[2] for v in d.values())
    print(f"| {ranks} | {sweep} | {small or '-'} | {lat} | {bw[0]} | {bw[1]} | {bw[2]} | {wrong} |")
if probes:
    one = sum(p[0] for p in probes) / len(probes)
    two = sum(p[1] for p in probes) / len(probes)
    print()
    print(f"memcpy probe in the same runs: 1 thread {one:.2f} GB/s, all cores {two:.2f} GB/s (mean of {len(probes)})")
