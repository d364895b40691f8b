#!/usr/bin/env bash
# SIGINT or SIGTERM while `collscope run` writes a large trace: the process ends with
# error[cli.interrupted] and exit status 128 + the signal's number, removes its
# temporary file and leaves the old trace as it was.
#   tests/signals.sh COLLSCOPE_BINARY INT|TERM
# The signal is sent the moment the temporary file appears. Should the write finish
# before the signal lands (the whole file already renamed into place), the attempt
# does not count and is run again; the test fails unless some attempt caught the
# write in progress, and fails at once on any attempt that leaves a temporary file,
# a half-written trace or the wrong exit status.
set -u
bin=$1
sig=$2
case "$sig" in INT) want=130 ;; TERM) want=143 ;; *) echo "usage: $0 COLLSCOPE INT|TERM" >&2; exit 2 ;; esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/collscope-signals.XXXXXX")
trap 'rm -rf "$dir"' EXIT
set -m  # background jobs in their own process group, with SIGINT not ignored
# A 2 ms nap without starting a process (read on a FIFO nobody writes), so that
# watching for the temporary file does not take a core from the run it watches.
mkfifo "$dir/nap"
exec 9<>"$dir/nap"
nap() { read -r -t 0.002 -u 9 || true; }

old='{"old": "trace"}'
for attempt in 1 2 3 4 5 6 7 8; do
  printf '%s\n' "$old" > "$dir/t.json"
  # About 60 MB of trace: 256 ranks gathering around a ring.
  "$bin" run --coll allgather --algo ring --ranks 256 --count 1 --trace "$dir/t.json" >"$dir/out" 2>"$dir/err" &
  pid=$!
  seen=0
  while kill -0 "$pid" 2>/dev/null; do
    if compgen -G "$dir/.t.json.tmp-*" >/dev/null; then
      seen=1
      kill -s "$sig" "$pid"
      break
    fi
    nap
  done
  wait "$pid"
  rc=$?
  if compgen -G "$dir/.t.json.tmp-*" >/dev/null; then
    echo "FAIL (attempt $attempt): a temporary file was left behind:"; ls -la "$dir"; exit 1
  fi
  if [ "$seen" = 0 ]; then
    echo "FAIL (attempt $attempt): the run ended (exit $rc) before its temporary file was seen"; cat "$dir/err"; exit 1
  fi
  if [ "$rc" != "$want" ]; then
    echo "FAIL (attempt $attempt): exit status $rc, expected $want"; cat "$dir/err"; exit 1
  fi
  if ! grep -q "error\[cli.interrupted\] interrupted by SIG$sig" "$dir/err"; then
    echo "FAIL (attempt $attempt): no error[cli.interrupted] message:"; cat "$dir/err"; exit 1
  fi
  if [ "$(cat "$dir/t.json")" = "$old" ]; then
    echo "ok: SIG$sig in the middle of the write (attempt $attempt): exit $rc, old trace intact, no temporary file"
    exit 0
  fi
  # The rename won the race: the trace must then be the whole new one.
  if [ "$(tail -c 2 "$dir/t.json")" != "}" ]; then  # "}\n", the newline dropped by $(...)
    echo "FAIL (attempt $attempt): the trace is neither the old one nor a whole new one"; exit 1
  fi
  echo "attempt $attempt: the write had finished when SIG$sig arrived; again"
done
echo "FAIL: no attempt caught the write in progress"
exit 1
