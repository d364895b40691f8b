#!/usr/bin/env bash
# Regenerates the README's screenshots of the window (docs/screenshots/*.png),
# rendered headless under a private X server with Mesa's software OpenGL.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v xvfb-run >/dev/null 2>&1 || { echo "needs xvfb-run: apt-get install xvfb xauth" >&2; exit 2; }
[ -x build/collscope ] || scripts/build.sh
out=docs/screenshots
mkdir -p "$out"
shot() {  # shot NAME SCENARIO STEP [extra flags...]
  local name=$1 file=$2 step=$3
  shift 3
  xvfb-run -a build/collscope gui "scenarios/$file" --step "$step" --size 1600x900 --screenshot "$out/$name.png" "$@"
}
shot allreduce-ring      00-allreduce-ring.json      2
shot allreduce-ring-done 00-allreduce-ring.json      6
shot broadcast-binomial  09-broadcast-algorithms.json 1 --presenter
shot alltoall            07-alltoall.json            1
shot quiz               30-quiz-allreduce-ring.json 2 --quiz
shot matrix-ring-256     31-matrix-ring-256.json     100
