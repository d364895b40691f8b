#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, and run the
# default lesson (all-reduce on a ring), printing its report and every step.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
exec build/collscope run scenarios/00-allreduce-ring.json --explain
