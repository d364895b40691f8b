#!/usr/bin/env bash
# The benchmark sweeps recorded in bench/RESULTS.md. Each sweep prints the memory
# bandwidth probe of the same run, so results can be read as ratios to it.
#
#   bench/run.sh [quick|full|collectives] [OUT_DIR]
#
# quick:       allreduce (every algorithm) with 2, 4 and 8 ranks, 8 B .. 64 MiB
# full:        also broadcast, allgather, reduce_scatter and alltoall, up to 256 MiB
# collectives: only broadcast, allgather, reduce_scatter and alltoall, up to 256 MiB
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quick}
out=${2:-build/bench-out/run}
mkdir -p "$out"
bin=build/collscope
[ -x "$bin" ] || scripts/build.sh
max=64M
[ "$mode" != quick ] && max=256M

sweep() {  # name, then collscope bench arguments
  local name=$1; shift
  echo "== $name" >&2
  {
    echo "# command: collscope bench $* (small sizes -n 2000 -w 200, large -n 5 -w 1)"
    echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    "$bin" bench "$@" -b 8 -e 64K -f 8 -n 2000 -w 200
    "$bin" bench "$@" -b 1M -e "$max" -f 4 -n 5 -w 1 --probe 0
  } > "$out/$name.txt"
}

for r in 2 4 8; do
  if [ "$mode" != collectives ]; then
    for a in flat tree ring recursive_doubling rabenseifner; do
      sweep "allreduce-$a-$r" --coll allreduce --algo "$a" --ranks "$r"
    done
  fi
  if [ "$mode" != quick ]; then
    sweep "broadcast-$r" --coll broadcast --ranks "$r"
    sweep "allgather-$r" --coll allgather --ranks "$r"
    sweep "reduce_scatter-$r" --coll reduce_scatter --ranks "$r"
    sweep "alltoall-$r" --coll alltoall --ranks "$r"
  fi
done
# Planning and symbolic verification of a very large world.
/usr/bin/time -f "dry-run 1024 ranks x 1 Mi elements: %e s, %M KiB peak" \
  "$bin" run --coll allreduce --algo ring --ranks 1024 --count 1048576 --dry-run > /dev/null 2> "$out/dry-run.txt" || true
cat "$out/dry-run.txt" >&2
