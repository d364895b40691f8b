#!/usr/bin/env bash
# Builds collscope with CUDA and runs every GPU test, then a short benchmark (our
# kernels against device memcpy; the ring out of place, with reduce-copy, and in place,
# with reduce; our ring against NCCL's own allreduce) and prints a summary table. One
# command on a GPU machine; finishes within a few minutes.
#   tests/gpu/run.sh                    # build in build-gpu/, test, benchmark
#   tests/gpu/run.sh --no-bench         # build and test only
#   tests/gpu/run.sh --prebuilt DIR     # use collscope and collscope_gpu_tests already built in DIR
#   tests/gpu/run.sh --grid             # also the cost model's grid on the cuda backend (every
#                                       # algorithm of five collectives on 2, 3, 4 and 8 ranks sharing
#                                       # the first GPU, 8 B to 16 MiB), priced with one H200's topology
# Results (logs, tables, summary.txt) go to $OUT, else build-gpu/results. Every test case
# and benchmark runs under a time limit; a failing test case does not stop the others or
# the benchmark, but the script then exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=1
grid=0
bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-bench) bench=0 ;;
    --grid) grid=1 ;;
    --prebuilt) bin="${2:?--prebuilt needs a directory}"; shift ;;
    *) echo "tests/gpu/run.sh: unknown argument '$1' (use --no-bench, --grid or --prebuilt DIR)" >&2; exit 2 ;;
  esac
  shift
done
out="${OUT:-build-gpu/results}"
mkdir -p "$out"
rm -f "$out/bench-errors.txt"
t_start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t_start )) s] $*"; }

stamp "== GPUs"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader || true

# NCCL: next to the CUDA toolkit, on the system's library path, or from the nvidia-nccl
# Python wheel (as PyTorch installs it).
nccl_dir() {
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu; do
    [ -e "$d/libnccl.so.2" ] && { echo "$d"; return; }
  done
  d=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 / { print $NF; exit }')
  [ -n "$d" ] && { dirname "$d"; return; }
  python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true
}

if [ -z "$bin" ]; then
  stamp "== build (CUDA on)"
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCOLLSCOPE_CUDA=ON -DCOLLSCOPE_GUI=OFF >/dev/null
  cmake --build build-gpu -j "$(nproc)" --target collscope collscope_gpu_tests
  bin=build-gpu
else
  stamp "== prebuilt binaries in $bin"
  for f in collscope collscope_gpu_tests; do
    [ -x "$bin/$f" ] || { echo "tests/gpu/run.sh: $bin/$f is missing; build it with -DCOLLSCOPE_CUDA=ON" >&2; exit 2; }
  done
  if ldd "$bin/collscope" | grep -q 'not found'; then
    extra="$(nccl_dir)"
    export LD_LIBRARY_PATH="${extra:+$extra:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  fi
  ldd "$bin/collscope" | grep -E 'cudart|nccl' || true
  # The lessons the GPU tests load come from this checkout.
  export COLLSCOPE_SOURCE_DIR="$PWD"
fi

stamp "== list"
"$bin/collscope" list | sed -n '/backends:/,/lessons/p' | tee "$out/list.txt"

stamp "== GPU tests (each test case under a 240 s limit)"
failed=0
skipped=0
total=0
: >"$out/gpu-tests.txt"
while IFS= read -r tc; do
  total=$((total + 1))
  stamp "-- $tc" | tee -a "$out/gpu-tests.txt"
  set +e
  timeout -k 5 240 "$bin/collscope_gpu_tests" --test-case="$tc" 2>&1 | tee -a "$out/gpu-tests.txt"
  status=${PIPESTATUS[0]}
  set -e
  if [ "$status" -eq 77 ]; then
    skipped=$((skipped + 1))
    echo "skipped: no GPU" | tee -a "$out/gpu-tests.txt"
  elif [ "$status" -ne 0 ]; then
    failed=$((failed + 1))
    echo "FAILED (exit $status): $tc" | tee -a "$out/gpu-tests.txt"
  fi
done < <("$bin/collscope_gpu_tests" --list-test-cases --no-intro=true 2>/dev/null | grep '^gpu:' | sed 's/[*?,\\[]/?/g')
stamp "GPU tests: $((total - failed - skipped)) of $total test cases passed, $skipped skipped (no GPU)"
[ "$total" -gt 0 ] || { echo "no GPU test cases found" >&2; failed=1; }

# busbw per size (best of out-of-place and in-place) from `collscope bench` tables.
busbw() { awk '!/^#/ && NF >= 9 { b = $8; if (NF >= 13 && $12 > b) b = $12; print $1, b }' "$@"; }
# busbw per size, out of place and in place side by side.
busbw_modes() { awk '!/^#/ && NF >= 13 { print $1, $8, $12 }' "$@"; }
# One size sweep: results are checked up to 64 MiB; above that the host's reference
# takes minutes, so those sizes are timed only (the tests above check every path).
bench_failed() { echo "benchmark failed or timed out: collscope bench $*" | tee -a "$out/bench-errors.txt"; }
# sweep FILE LO HI PROBE BENCH-FLAGS...: PROBE = 1 measures memory bandwidth first.
sweep() {
  local file="$1" lo="$2" hi="$3" probe="$4"
  shift 4
  : >"$file"
  if [ "$(numfmt --from=iec "$lo")" -le $((64 << 20)) ]; then
    local top="$hi"
    [ "$(numfmt --from=iec "$hi")" -gt $((64 << 20)) ] && top=64M
    timeout -k 5 240 "$bin/collscope" bench "$@" -b "$lo" -e "$top" -f 4 -n 10 -w 3 -c 1 --probe "$probe" | tee -a "$file" || bench_failed "$@"
    probe=0
  fi
  if [ "$(numfmt --from=iec "$hi")" -gt $((64 << 20)) ]; then
    local from="$lo"
    [ "$(numfmt --from=iec "$lo")" -le $((64 << 20)) ] && from=256M
    timeout -k 5 240 "$bin/collscope" bench "$@" -b "$from" -e "$hi" -f 4 -n 10 -w 3 -c 0 --probe "$probe" | tee -a "$file" || bench_failed "$@"
  fi
}

if [ "$bench" = 1 ]; then
  g=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  stamp "== benchmark: allreduce ring, 8 ranks on the GPUs present (our kernels), with the device memory probe"
  sweep "$out/bench-cuda-ring.txt" 1M 1G 1 --backend cuda --coll allreduce --algo ring --ranks 8
  stamp "== benchmark: copy kernel, broadcast flat with 8 ranks on the GPUs present"
  sweep "$out/bench-cuda-copy.txt" 64M 256M 0 --backend cuda --coll broadcast --algo flat --ranks 8
  if [ "$g" -ge 2 ]; then
    stamp "== benchmark: allreduce, one rank per GPU: our ring (cuda, nccl send/recv) vs NCCL's own allreduce"
    sweep "$out/bench-cuda-ring-g.txt" 1M 1G 0 --backend cuda --coll allreduce --algo ring --ranks "$g"
    sweep "$out/bench-nccl-ring-g.txt" 1M 1G 0 --backend nccl --coll allreduce --algo ring --ranks "$g"
    sweep "$out/bench-nccl-native-g.txt" 1M 1G 0 --backend nccl --coll allreduce --algo nccl --ranks "$g"
  fi

  stamp "== summary"
  {
    echo "GPUs: $g ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)); GPU tests: $((total - failed - skipped)) of $total test cases passed"
    grep '^# device memory probe' "$out/bench-cuda-ring.txt" | sed 's/^# //' || true
    # Our kernels with 8 ranks sharing the GPUs, against cudaMemcpy's memory traffic (2
    # bytes per byte copied): the ring moves 5(n-1) x size per all-reduce (n-1 reduce
    # steps reading 2 and writing 1 block each, n-1 copy steps), the flat broadcast
    # 2(n-1) x size.
    memcpy=$(grep -o 'cudaMemcpy D2D [0-9.]*' "$out/bench-cuda-ring.txt" | awk '{ print $3; exit }')
    echo "size(B) | cuda ring 8 ranks busbw | its memory traffic, % of memcpy's | cuda broadcast flat 8 ranks busbw | its traffic, % of memcpy's"
    join -a 1 <(busbw "$out/bench-cuda-ring.txt" | sort) <(busbw "$out/bench-cuda-copy.txt" | sort) | sort -n \
      | awk -v m="${memcpy:-0}" '{ n = 8; r = $2 / (2 * (n - 1) / n); c = $3;
          pr = m > 0 ? sprintf("%.0f%%", 100 * r * 5 * (n - 1) / (2 * m)) : "-";
          pc = (m > 0 && c != "") ? sprintf("%.0f%%", 100 * c * (n - 1) / m) : "-";
          printf "%s | %s | %s | %s | %s\n", $1, $2, pr, (c == "" ? "-" : c), pc }'
    echo "size(B) | cuda ring 8 ranks busbw: out of place (reduce-copy kernel) | in place (reduce kernel) (GB/s)"
    busbw_modes "$out/bench-cuda-ring.txt" | sort -n | sed 's/ / | /g'
    if [ "$g" -ge 2 ]; then
      echo "size(B) | $g ranks, one per GPU: cuda ring | nccl backend ring | NCCL's own allreduce | ring/NCCL (GB/s)"
      join <(busbw "$out/bench-cuda-ring-g.txt" | sort) <(busbw "$out/bench-nccl-ring-g.txt" | sort) \
        | join - <(busbw "$out/bench-nccl-native-g.txt" | sort) | sort -n \
        | awk '{ r = ($4 > 0) ? $2 / $4 : 0; printf "%s | %s | %s | %s | %.2f\n", $1, $2, $3, $4, r }'
    else
      echo "one GPU: NCCL puts one rank per GPU, so our ring against NCCL's own allreduce needs two or more"
    fi
  } | tee "$out/summary.txt"
fi
if [ "$grid" = 1 ]; then
  # What the model says against what ran: bench/model_grid.sh on the cuda backend, each
  # (collective, ranks) one sweep, priced with dgx-h200 reduced to one device (the ranks
  # share it, as here); bench/model_grid.py reads it. The raw cells stay in $out/grid.
  stamp "== the cost model's grid on the cuda backend (one H200's topology)"
  python3 bench/realworld.py --one-gpu-topology "$out/h200-one-gpu.json"
  set +e
  COLLSCOPE="$bin/collscope" GRID_BACKEND=cuda GRID_TOPOLOGY="$out/h200-one-gpu.json" GRID_ROUNDS=1 \
    GRID_SIZES="${GRID_SIZES:-8 64 512 4K 32K 256K 2M 16M}" timeout -k 5 "${GRID_LIMIT_S:-300}" \
    bench/model_grid.sh "$out/grid" || echo "model grid failed or timed out" | tee -a "$out/bench-errors.txt"
  python3 bench/model_grid.py "$out/grid" --csv "$out/gpu-grid.csv" > "$out/gpu-grid.md"
  set -e
  head -40 "$out/gpu-grid.md"
fi
[ -s "$out/bench-errors.txt" ] && cat "$out/bench-errors.txt"
stamp "== done; results in $out"
[ "$failed" -eq 0 ] || { echo "GPU tests failed: $failed of $total test cases" >&2; exit 1; }
