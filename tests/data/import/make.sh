#!/usr/bin/env bash
# Regenerates the real traces of tests/data/import/: every program of tutorial.py on
# 2 to 4 gloo ranks, once under the profiler (profiled/PROGRAM/rank<R>.json) and once
# under `collscope record` (recorded/PROGRAM/rank<R>.json). Needs Debian's
# python3-torch (scripts/deps.sh installs it) and a built collscope.
#   tests/data/import/make.sh [build/collscope [PROGRAM...]]   (default: every program)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
collscope="${1:-$here/../../../build/collscope}"
shift $(( $# > 0 ? 1 : 0 ))
only=("$@")
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for p in python3 /usr/bin/python3; do
    if "$p" -c 'import torch' 2>/dev/null; then python="$p"; break; fi
  done
fi
[ -n "$python" ] || { echo "no python3 with torch (apt-get install python3-torch)" >&2; exit 2; }
programs=("blocking 2" "nonblocking 2" "allreduce 4" "collectives 4" "ring 4" "ddp 4" "moe 4")
for entry in "${programs[@]}"; do
  set -- $entry
  name=$1 ranks=$2
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then continue; fi
  echo "== $name on $ranks ranks"
  rm -rf "$here/profiled/$name" "$here/recorded/$name"
  "$python" "$here/tutorial.py" "$name" "$ranks" --profile "$here/profiled/$name"
  "$collscope" record -o "$here/recorded/$name" -- "$python" "$here/tutorial.py" "$name" "$ranks"
done
