#!/usr/bin/env bash
# Half-precision reductions eight at a time against the element-wise loop, in one run of
# the same binary: `collscope bench` of a ring all-reduce in float16 and bfloat16 (sum),
# with and without COLLSCOPE_NO_HALF_SIMD=1, the two sides taking turns for ROUNDS rounds
# (default 3), and float32 beside them for scale. Prints each size's median time per
# side and the speed-up.
#
#   bench/half.sh [OUT]        (OUT defaults to build/bench-out/half)
#
# Environment: COLLSCOPE (default build/collscope), ROUNDS, RANKS (default 2: one rank a
# core on the 2-core machine of bench/RESULTS.md), SIZES (default "-b 256K -e 64M -f 4"),
# ITERS (timed and warm-up calls, default "50 10").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${COLLSCOPE:-$root/build/collscope}
out=${1:-$root/build/bench-out/half}
rounds=${ROUNDS:-3}
ranks=${RANKS:-2}
read -r -a sizes <<< "${SIZES:--b 256K -e 64M -f 4}"
read -r n w <<< "${ITERS:-50 10}"
[ -x "$bin" ] || { echo "half.sh: no collscope at $bin (build it, or set COLLSCOPE)" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out"/*.jsonl
for round in $(seq "$rounds"); do
  for dtype in float16 bfloat16 float32; do
    for side in simd loop; do
      [ "$dtype" != float32 ] || [ "$side" = simd ] || continue
      if [ "$side" = loop ]; then export COLLSCOPE_NO_HALF_SIMD=1; else unset COLLSCOPE_NO_HALF_SIMD; fi
      "$bin" bench --coll allreduce \
        --algo ring --ranks "$ranks" -d "$dtype" "${sizes[@]}" -n "$n" -w "$w" -c 0 --probe 0 --json \
        >> "$out/$dtype-$side.jsonl"
    done
  done
  echo "# round $round of $rounds done" >&2
done
python3 - "$out" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
def read(name):
    times = {}
    path = os.path.join(out, name + ".jsonl")
    if not os.path.exists(path):
        return times
    for line in open(path):
        if line.startswith("{") and '"size"' in line:
            j = json.loads(line)
            times.setdefault(j["size"], []).append(j["out_of_place"]["time_us"])
    return {k: statistics.median(v) for k, v in times.items()}
f32 = read("float32-simd")
print("| size | float16: loop / eight at a time (us) | speed-up | bfloat16: loop / eight at a time (us) | speed-up | float32 (us) |")
print("|---:|---:|---:|---:|---:|---:|")
h, hl, b, bl = read("float16-simd"), read("float16-loop"), read("bfloat16-simd"), read("bfloat16-loop")
for size in sorted(h):
    print("| %d | %.1f / %.1f | %.2f | %.1f / %.1f | %.2f | %.1f |" % (
        size, hl[size], h[size], hl[size] / h[size], bl[size], b[size], bl[size] / b[size], f32.get(size, float("nan"))))
PY
