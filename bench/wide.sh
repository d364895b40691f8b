#!/usr/bin/env bash
# A kernel switch's two sides in one run of the same binary: by default the reductions in
# place 32 bytes at a time (AVX2) against the same loop built for any x86-64, with
# `collscope bench` of collectives whose steps add into a buffer (dst = dst op src: the
# pairwise reduce-scatter's later steps, the flat all-reduce's fan-in); bench/half.sh runs
# it for the half-precision kernels. The switch is set to 1 on one side and to 0 on the
# other (the same environment's size on both sides: it moves the stack, and an A/A run with
# one more variable on one side measured 64 MiB all-reduces up to 6% apart); the two sides
# take turns for ROUNDS rounds (default 3), which goes first alternating. Prints each
# (case, dtype, size)'s median time per side and the speed-up.
#
#   bench/wide.sh [OUT]        (OUT defaults to build/bench-out/wide)
#
# Environment: COLLSCOPE (default build/collscope), ROUNDS, SWITCH (the variable, default
# COLLSCOPE_NO_WIDE_SIMD), CASES (COLL:ALGO:RANKS, default "reduce_scatter:pairwise:8
# allreduce:flat:4"), DTYPES (default "float32 int8 float64"), SIZES (default "-b 64K -e 16M
# -f 4"), ITERS (timed and warm-up calls, default "20 4").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${COLLSCOPE:-$root/build/collscope}
out=${1:-$root/build/bench-out/wide}
rounds=${ROUNDS:-3}
switch=${SWITCH:-COLLSCOPE_NO_WIDE_SIMD}
read -r -a cases <<< "${CASES:-reduce_scatter:pairwise:8 allreduce:flat:4}"
read -r -a dtypes <<< "${DTYPES:-float32 int8 float64}"
read -r -a sizes <<< "${SIZES:--b 64K -e 16M -f 4}"
read -r n w <<< "${ITERS:-20 4}"
[ -x "$bin" ] || { echo "wide.sh: no collscope at $bin (build it, or set COLLSCOPE)" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out"/*.jsonl
for round in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    IFS=: read -r coll algo ranks <<< "$c"
    for dtype in "${dtypes[@]}"; do
      order="wide narrow"
      [ $((round % 2)) = 1 ] || order="narrow wide"
      for side in $order; do
        if [ "$side" = narrow ]; then export "$switch=1"; else export "$switch=0"; fi
        "$bin" bench --coll "$coll" --algo "$algo" --ranks "$ranks" -d "$dtype" "${sizes[@]}" -n "$n" -w "$w" -c 0 \
          --probe 0 --json >> "$out/$coll-$algo-$ranks-$dtype-$side.jsonl"
      done
    done
  done
  echo "# round $round of $rounds done" >&2
done
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
def read(path):
    times = {}
    for line in open(path):
        if line.startswith("{") and '"size"' in line:
            j = json.loads(line)
            times.setdefault(j["size"], []).append(j["out_of_place"]["time_us"])
    return {k: statistics.median(v) for k, v in times.items()}
print("| collective, algorithm, ranks | dtype | size | switched off / on (us) | speed-up |")
print("|---|---|---:|---:|---:|")
for path in sorted(glob.glob(os.path.join(out, "*-wide.jsonl"))):
    name = os.path.basename(path)[:-len("-wide.jsonl")]
    coll, algo, ranks, dtype = name.rsplit("-", 3)
    wide, narrow = read(path), read(path.replace("-wide.jsonl", "-narrow.jsonl"))
    for size in sorted(wide):
        if size in narrow:
            print("| %s, %s, %s | %s | %d | %.1f / %.1f | %.2f |" % (coll, algo, ranks, dtype, size, narrow[size], wide[size], narrow[size] / wide[size]))
PY
