#!/usr/bin/env bash
# The import and analyze benchmarks of bench/RESULTS.md: a synthetic data-parallel job
# (bench/make_job.py) as Flight Recorder dumps,
#   64 ranks x 1000 entries:   collscope import (read, check, build, plan)  target 2 s
#   1024 ranks x 2000 entries: collscope analyze (about 1 GB of dumps)      target 5 s
# each timed three times, with the CPU time it took and the machine's load.
#   bench/import.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/bench-out/import}
bin=build/collscope
[ -x "$bin" ] || scripts/build.sh
mkdir -p "$out"
[ -d "$out/job64" ] || python3 bench/make_job.py --ranks 64 --calls 1000 "$out/job64"
[ -d "$out/job1024" ] || python3 bench/make_job.py --ranks 1024 --calls 2000 "$out/job1024"
echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "# dumps: job64 $(du -sh "$out/job64" | cut -f1), job1024 $(du -sh "$out/job1024" | cut -f1)"
for i in 1 2 3; do
  echo "import 64x1000, run $i: load $(cut -d' ' -f1 /proc/loadavg)"
  /usr/bin/time -f "  %e s wall, %U s user, %S s sys, %M KiB" "$bin" import "$out/job64" -o "$out/job64.json" > /dev/null
done
for i in 1 2 3; do
  echo "analyze 1024x2000, run $i: load $(cut -d' ' -f1 /proc/loadavg)"
  /usr/bin/time -f "  %e s wall, %U s user, %S s sys, %M KiB" "$bin" analyze "$out/job1024" > /dev/null
done
