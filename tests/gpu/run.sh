#!/usr/bin/env bash
# Builds collscope with CUDA and runs every GPU test, then a short benchmark (our
# kernels against device memcpy; the ring out of place, with reduce-copy, and in place,
# with reduce; our ring against NCCL's own allreduce) and prints a summary table. One
# command on a GPU machine; finishes within a few minutes.
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
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCOLLSCOPE_CUDA=ON -DCOLLSCOPE_GUI=OFF >/dev/null
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

# busbw per size (best of out-of-place and in-place) from a `collscope bench` table.
busbw() { awk '!/^#/ && NF >= 9 { b = $8; if (NF >= 13 && $12 > b) b = $12; print $1, b }' "$1"; }
# busbw per size, out of place and in place side by side.
busbw_modes() { awk '!/^#/ && NF >= 13 { print $1, $8, $12 }' "$1"; }

if [ "$bench" = 1 ]; then
  g=$(nvidia-smi -L | wc -l)
  echo "== benchmark: allreduce, 8 ranks on the GPUs present (our kernels), with the device memory probe"
  build-gpu/collscope bench --backend cuda --coll allreduce --algo ring --ranks 8 -b 1M -e 1G -f 4 -n 10 -w 3 \
    | tee "$out/bench-cuda-ring.txt"
  echo "== benchmark: copy kernel, broadcast flat with 8 ranks on the GPUs present"
  build-gpu/collscope bench --backend cuda --coll broadcast --algo flat --ranks 8 -b 64M -e 1G -f 4 -n 10 -w 3 --probe 0 \
    | tee "$out/bench-cuda-copy.txt"
  echo "== benchmark: allreduce, one rank per GPU: our ring (cuda, nccl send/recv) vs NCCL's own allreduce"
  build-gpu/collscope bench --backend cuda --coll allreduce --algo ring --ranks "$g" -b 1M -e 1G -f 4 -n 10 -w 3 --probe 0 \
    | tee "$out/bench-cuda-ring-g.txt"
  build-gpu/collscope bench --backend nccl --coll allreduce --algo ring --ranks "$g" -b 1M -e 1G -f 4 -n 10 -w 3 --probe 0 \
    | tee "$out/bench-nccl-ring-g.txt"
  build-gpu/collscope bench --backend nccl --coll allreduce --algo nccl --ranks "$g" -b 1M -e 1G -f 4 -n 10 -w 3 --probe 0 \
    | tee "$out/bench-nccl-native-g.txt"

  echo "== summary"
  {
    echo "GPUs: $g ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
    grep '^# device memory probe' "$out/bench-cuda-ring.txt" | sed 's/^# //'
    echo "size(B) | cuda ring 8 ranks busbw | cuda broadcast flat 8 ranks busbw (GB/s)"
    join <(busbw "$out/bench-cuda-ring.txt" | sort) <(busbw "$out/bench-cuda-copy.txt" | sort) | sort -n | sed 's/ / | /g'
    echo "size(B) | cuda ring 8 ranks busbw: out of place (reduce-copy kernel) | in place (reduce kernel) (GB/s)"
    busbw_modes "$out/bench-cuda-ring.txt" | sort -n | sed 's/ / | /g'
    echo "size(B) | $g rank(s), one per GPU: cuda ring | nccl backend ring | NCCL's own allreduce | ring/NCCL (GB/s)"
    join <(busbw "$out/bench-cuda-ring-g.txt" | sort) <(busbw "$out/bench-nccl-ring-g.txt" | sort) \
      | join - <(busbw "$out/bench-nccl-native-g.txt" | sort) | sort -n \
      | awk '{ r = ($4 > 0) ? $2 / $4 : 0; printf "%s | %s | %s | %s | %.2f\n", $1, $2, $3, $4, r }'
  } | tee "$out/summary.txt"
fi
echo "== done; results in $out"
