#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, and open the
# default lesson (all-reduce on a ring) in the window when there is a display and the
# window was built; otherwise run it in the terminal, printing its report and every step.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
if { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; } &&
   build/collscope gui --help 2>/dev/null | grep -q -- --screenshot; then
  exec build/collscope gui scenarios/00-allreduce-ring.json
fi
exec build/collscope run scenarios/00-allreduce-ring.json --explain
