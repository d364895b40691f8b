#!/usr/bin/env bash
# Observable mode's own prediction against what it measures, step by step, recorded in
# bench/RESULTS.md: a ring all-reduce on 2 to 64 ranks, a small and a medium count, run
# with `collscope run --mode observable --json`, whose `step_times` give every step's
# measured time (from its start on every rank to the barrier that ends it) and the cost
# model's time for it (barrier, wake-ups of ranks beyond the cores, data). Each case runs
# ROUNDS times (default 5) with a calibration made first by this script (in OUT_DIR, the
# user's own is not touched) and as often with the model's defaults, taking turns.
# Prints a markdown table of medians and measured / predicted ratios.
#
#   bench/observable.sh [OUT_DIR]       (default build/bench-out/observable; ROUNDS=N)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/bench-out/observable}
rounds=${ROUNDS:-5}
bin=build/collscope
[ -x "$bin" ] || scripts/build.sh
mkdir -p "$out/calibrated" "$out/defaults" "$out/runs"
rm -f "$out"/runs/*.json

echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)" > "$out/meta.txt"
echo "# command: bench/observable.sh (ROUNDS=$rounds): collscope run --coll allreduce --algo ring --ranks R --count C --mode observable --json" >> "$out/meta.txt"
echo "== calibrating (10 s)" >&2
XDG_CONFIG_HOME="$out/calibrated" "$bin" calibrate --seconds 10 > "$out/calibration.txt" 2>&1

for ((i = 1; i <= rounds; ++i)); do
  echo "== round $i of $rounds" >&2
  for r in 2 4 8 16 64; do
    for c in 64 262144; do  # 256 B and 1 MiB of float32 per rank
      for model in calibrated defaults; do
        XDG_CONFIG_HOME="$out/$model" "$bin" run --coll allreduce --algo ring --ranks "$r" --count "$c" \
          --mode observable --json > "$out/runs/$model-$r-$c-$i.json"
      done
    done
  done
done

python3 - "$out" << 'EOF' | tee "$out/observable.md"
import glob, json, os, statistics, sys
out = sys.argv[1]
print(open(os.path.join(out, "meta.txt")).read().strip())
cases = {}
for path in glob.glob(os.path.join(out, "runs", "*.json")):
    model, ranks, count, _ = os.path.basename(path)[:-5].split("-")
    j = json.load(open(path))
    if not j["verified"]:
        sys.exit(f"{path}: not verified")
    steps = j["step_times"]
    # The first step of a run also wakes threads that slept and touches the buffers for
    # the first time: it is shown on its own, and the medians are of the steps after it.
    rest = steps[1:] or steps
    c = cases.setdefault((int(ranks), int(count), model), {"first": [], "measured": [], "predicted": [], "model": j["model"]})
    c["first"].append(steps[0]["measured_us"] / steps[0]["predicted_us"])
    c["measured"].append(statistics.median(s["measured_us"] for s in rest))
    c["predicted"].append(statistics.median(s["predicted_us"] for s in rest))
print()
print("| ranks | count (float32) | model | steps after the first: measured / predicted (us, medians) | ratio | first step's ratio |")
print("|---|---|---|---|---|---|")
for (ranks, count, model), c in sorted(cases.items()):
    m, p = statistics.median(c["measured"]), statistics.median(c["predicted"])
    print(f"| {ranks} | {count} | {model} | {m:.1f} / {p:.1f} | {m / p:.2f} | {statistics.median(c['first']):.1f} |")
print()
for model in ("calibrated", "defaults"):
    names = {c["model"] for (r, n, mo), c in cases.items() if mo == model}
    print(f"{model}: {', '.join(sorted(names))}")
EOF
