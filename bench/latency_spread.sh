#!/usr/bin/env bash
# Small-message latency from run to run, recorded in bench/RESULTS.md: for 2, 4 and 8
# ranks and each all-reduce algorithm, RUNS back-to-back invocations (default 20) of
#   collscope bench --coll allreduce --algo A --ranks R -b 8 -e 8 -n 200 -w 20
# and, per column (ranks x algorithm x out of place / in place), the median and the
# slowest run and their ratio (the target: the slowest within 2x the median).
# Before each invocation bench/pingpong.c times a cache-line round trip between the
# first two cores: where the host has moved the virtual cores apart (the round trip
# 2x its median or more), the run is flagged, and a second count leaves flagged runs out.
#   bench/latency_spread.sh [OUT_DIR]      (default build/bench-out/latency; RUNS=N)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/bench-out/latency}
mkdir -p "$out"
bin=build/collscope
[ -x "$bin" ] || scripts/build.sh
runs=${RUNS:-20}
raw="$out/spread.txt"
pingpong="$out/pingpong"
cc -O2 -pthread bench/pingpong.c -o "$pingpong"
{
  echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# columns: ranks algorithm run time_out_of_place_us time_in_place_us round_trip_ns"
  for r in 2 4 8; do
    for a in flat tree ring recursive_doubling rabenseifner; do
      for i in $(seq 1 "$runs"); do
        rt=$("$pingpong" 20000)
        "$bin" bench --coll allreduce --algo "$a" --ranks "$r" -b 8 -e 8 -n 200 -w 20 --probe 0 |
          awk -v r="$r" -v a="$a" -v i="$i" -v rt="$rt" '$1 ~ /^[0-9]+$/ { print r, a, i, $6, $10, rt }'
      done
    done
  done
} > "$raw"
python3 - "$raw" <<'PY'
import collections, statistics, sys
cols = collections.defaultdict(list)
trips = []
for line in open(sys.argv[1]):
    if line.startswith("#"):
        print(line.rstrip())
        continue
    r, a, _, oop, ip, rt = line.split()
    trips.append(float(rt))
    cols[(int(r), a, "out of place")].append((float(oop), float(rt)))
    cols[(int(r), a, "in place")].append((float(ip), float(rt)))
far = 2 * statistics.median(trips)
print(f"# cache-line round trip between the first two cores: median {statistics.median(trips):.0f} ns, "
      f"{sum(t >= far for t in trips)} of {len(trips)} runs at {far:.0f} ns or more (flagged)")
print("| ranks | algorithm | mode | median (us) | slowest (us) | slowest / median | flagged runs | slowest / median, flagged left out |")
print("|---|---|---|---|---|---|---|---|")
within = within_near = 0
for (r, a, m), v in sorted(cols.items()):
    times = [t for t, _ in v]
    near = [t for t, rt in v if rt < far] or times
    med, worst = statistics.median(times), max(times)
    near_med, near_worst = statistics.median(near), max(near)
    within += worst <= 2 * med
    within_near += near_worst <= 2 * near_med
    print(f"| {r} | {a} | {m} | {med:.2f} | {worst:.2f} | {worst / med:.2f} | {len(v) - len(near)} | "
          f"{near_worst / near_med:.2f} |")
print(f"\n{within} of {len(cols)} columns have their slowest run within 2x of the median")
print(f"{within_near} of {len(cols)} with the flagged runs left out")
PY
