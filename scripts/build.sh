#!/usr/bin/env bash
# Configures and builds collscope into build/ (Release). Extra arguments go to cmake,
# e.g. scripts/build.sh -DCOLLSCOPE_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B build "$@"
fi
cmake --build build -j "$(nproc)"
