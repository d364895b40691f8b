#!/usr/bin/env bash
# The mpi backend (one process per rank) recorded in bench/RESULTS.md: our algorithms
# against MPI's own collectives (--algo ...,mpi: the same sweep, the same processes and
# buffers, taking turns at every size), and the mpi backend against the cpu backend
# (threads) on large sizes, the two alternating.
#
#   bench/mpi.sh [OUT_DIR [all|sweeps|pages|latency]]   (default build/bench-out/mpi, all;
#                                                        ROUNDS=N for pages and latency)
#
# For 2, 4 and 8 processes, allreduce float32 sum, out of place and in place:
#   8 B .. 64 KiB    every algorithm and mpi, -n 1000 -w 100
#   1 MiB .. 256 MiB ring, rabenseifner and mpi, -n 5 -w 1 (checked up to 64 MiB of buffers in all)
#   16 MiB .. 256 MiB the cpu backend's ring and rabenseifner, right after
# collscope starts the processes itself (no launcher needed, root and more ranks than
# cores included).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/bench-out/mpi}
mkdir -p "$out"
bin=build/collscope
[ -x "$bin" ] || scripts/build.sh
stamp() { echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"; }
phase=${2:-all}
for r in 2 4 8; do
  [ "$phase" = all ] || [ "$phase" = sweeps ] || break
  echo "== $r processes" >&2
  {
    stamp
    echo "# command: collscope bench --backend mpi --ranks $r --algo flat,tree,ring,recursive_doubling,rabenseifner,mpi -b 8 -e 64K -f 8 -n 1000 -w 100"
    "$bin" bench --backend mpi --ranks "$r" --algo flat,tree,ring,recursive_doubling,rabenseifner,mpi -b 8 -e 64K -f 8 -n 1000 -w 100
  } > "$out/small-$r.txt"
  {
    stamp
    echo "# command: collscope bench --backend mpi --ranks $r --algo ring,rabenseifner,mpi -b 1M -e 256M -f 4 -n 5 -w 1"
    "$bin" bench --backend mpi --ranks "$r" --algo ring,rabenseifner,mpi -b 1M -e 256M -f 4 -n 5 -w 1
    stamp
    echo "# command: collscope bench --backend cpu --ranks $r --algo ring,rabenseifner -b 16M -e 256M -f 4 -n 5 -w 1 --probe 0"
    "$bin" bench --backend cpu --ranks "$r" --algo ring,rabenseifner -b 16M -e 256M -f 4 -n 5 -w 1 --probe 0
  } > "$out/large-$r.txt"
done
torch_python=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import torch.distributed' 2>/dev/null; then torch_python=$p; break; fi
done
rounds=${ROUNDS:-3}
if [ "$phase" = all ] || [ "$phase" = latency ]; then
  # 8 B all-reduce, taking turns: our best algorithm on the mpi backend and on the cpu
  # backend (each row's fastest of flat, recursive_doubling and ring, out of place or in
  # place), and torch.distributed's gloo on as many processes (in place), -n 200 -w 20.
  {
    stamp
    echo "# columns: round ranks backend time_us (8 B allreduce float32 sum, -n 200 -w 20; ours: the best of flat, recursive_doubling, ring, out of or in place)"
    [ -n "$torch_python" ] || echo "# torch-gloo skipped: no python3 with torch.distributed (apt-get install python3-torch)"
    for round in $(seq 1 "$rounds"); do
      for r in 2 4 8; do
        for backend in mpi cpu; do
          "$bin" bench --backend "$backend" --ranks "$r" --algo flat,recursive_doubling,ring -b 8 -e 8 -n 200 -w 20 --probe 0 |
            awk -v round="$round" -v r="$r" -v b="$backend" '$1 ~ /^[0-9]+$/ {
                t = ($6 < $10 ? $6 : $10); if (best == "" || t < best) best = t }
              END { print round, r, b, best }'
        done
        if [ -n "$torch_python" ]; then
          "$torch_python" bench/torch_allreduce.py "$r" 8 -n 200 -w 20 |
            awk -v round="$round" -v r="$r" '{ print round, r, "torch-gloo", $2 }'
        fi
      done
    done
  } > "$out/latency.txt"
fi
[ "$phase" = all ] || [ "$phase" = pages ] || exit 0
# The mpi backend against threads with and without huge pages, taking turns: the threads'
# buffers sit on 2 MiB pages where the kernel allows it (madvise); shared memory between
# processes can use them only when /sys/kernel/mm/transparent_hugepage/shmem_enabled allows.
# torch.distributed's gloo all-reduce (bench/torch_allreduce.py: the same processes count,
# float32 sum, slowest rank over -n calls after -w) is a third side, when torch is there.
# -n 20 -w 3: a handful of calls at these sizes is too few for a ratio (one preempted
# call moves it by a fifth on a shared machine).
{
  stamp
  echo "# shmem_enabled: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null)  enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
  echo "# columns: round ranks size backend busbw_out_of_place busbw_in_place (ring, -n 20 -w 3 -c 0; torch-gloo: in place only)"
  [ -n "$torch_python" ] || echo "# torch-gloo skipped: no python3 with torch.distributed (apt-get install python3-torch)"
  for round in $(seq 1 "$rounds"); do
    for r in 2 4 8; do
      for size in 16M 64M; do
        for how in mpi cpu cpu-4k torch-gloo; do
          if [ "$how" = torch-gloo ]; then
            [ -n "$torch_python" ] || continue
            bytes=$(( ${size%M} * 1048576 ))
            "$torch_python" bench/torch_allreduce.py "$r" "$bytes" -n 20 -w 3 |
              awk -v round="$round" -v r="$r" '{ print round, r, $1, "torch-gloo", "-", $4 }'
            continue
          fi
          backend=${how%-4k}
          env $([ "$how" = cpu-4k ] && echo COLLSCOPE_NO_HUGE=1) "$bin" bench --backend "$backend" --ranks "$r" --algo ring \
            -b "$size" -e "$size" -n 20 -w 3 -c 0 --probe 0 |
            awk -v round="$round" -v r="$r" -v how="$how" '$1 ~ /^[0-9]+$/ { print round, r, $1, how, $8, $12 }'
        done
      done
    done
  done
} > "$out/pages.txt"
