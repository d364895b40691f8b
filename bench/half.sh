#!/usr/bin/env bash
# Half-precision reductions eight at a time against the element-wise loop, in one run of
# the same binary: bench/wide.sh with COLLSCOPE_NO_HALF_SIMD as the switch, a 2-rank ring
# all-reduce (sum) in float16 and bfloat16, and float32 beside them for scale (the switch
# does not touch it: its two sides measure the noise).
#
#   bench/half.sh [OUT]        (OUT defaults to build/bench-out/half)
#
# Environment: as bench/wide.sh's (ROUNDS, SIZES, ITERS, ...), here with SIZES defaulting to
# "-b 256K -e 64M -f 4" and ITERS to "50 10".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SWITCH=COLLSCOPE_NO_HALF_SIMD CASES="${CASES:-allreduce:ring:2}" DTYPES="${DTYPES:-float16 bfloat16 float32}" \
  SIZES="${SIZES:--b 256K -e 64M -f 4}" ITERS="${ITERS:-50 10}" exec "$root/bench/wide.sh" "${1:-$root/build/bench-out/half}"
