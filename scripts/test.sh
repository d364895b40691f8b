#!/usr/bin/env bash
# Builds collscope and runs every test (unit, property, CLI and lesson tests) with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 900
