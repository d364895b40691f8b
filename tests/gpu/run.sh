#!/usr/bin/env bash
# Builds collscope with CUDA and runs every GPU test, then a short benchmark, and
# prints a summary. One command on a GPU machine; finishes within a few minutes.
#   tests/gpu/run.sh            # build in build-gpu/, test, benchmark
#   tests/gpu/run.sh --no-bench
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=1
[ "${1:-}" = "--no-bench" ] && bench=0
out="${OUT:-build-gpu/results}"
mkdir -p "$out"

echo "== GPUs"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader || true

echo "== build (CUDA on)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLLSCOPE_CUDA=ON -DCOLLSCOPE_GUI=OFF >/dev/null
cmake --build build-gpu -j "$(nproc)"

echo "== list"
build-gpu/collscope list | sed -n '/backends:/,/lessons/p' | tee "$out/list.txt"

echo "== GPU tests"
set +e
build-gpu/collscope_gpu_tests 2>&1 | tee "$out/gpu-tests.txt"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "GPU tests failed (exit $status)"
  exit "$status"
fi

if [ "$bench" = 1 ]; then
  echo "== benchmark: allreduce, 8 ranks on the GPUs present (our kernels)"
  build-gpu/collscope bench --backend cuda --coll allreduce --algo ring --ranks 8 -b 1M -e 1G -f 4 -n 10 -w 3 \
    | tee "$out/bench-cuda-ring.txt"
  g=$(nvidia-smi -L | wc -l)
  if [ "$g" -ge 2 ]; then
    echo "== benchmark: allreduce, one rank per GPU: our ring on cuda vs on nccl send/recv"
    build-gpu/collscope bench --backend cuda --coll allreduce --algo ring --ranks "$g" -b 1M -e 1G -f 4 -n 10 -w 3 \
      | tee "$out/bench-cuda-ring-g.txt"
    build-gpu/collscope bench --backend nccl --coll allreduce --algo ring --ranks "$g" -b 1M -e 1G -f 4 -n 10 -w 3 \
      | tee "$out/bench-nccl-ring-g.txt"
  fi
  echo "== benchmark: copy kernel, broadcast flat with 8 ranks on the GPUs present"
  build-gpu/collscope bench --backend cuda --coll broadcast --algo flat --ranks 8 -b 64M -e 1G -f 4 -n 10 -w 3 \
    | tee "$out/bench-cuda-copy.txt"
fi
echo "== done; results in $out"
