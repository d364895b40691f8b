#!/usr/bin/env bash
# The cost model's accuracy grid: every algorithm of all-reduce, broadcast, all-gather,
# reduce-scatter and all-to-all, on 2, 3, 4 and 8 ranks, from 8 B to 64 MiB, measured
# with `collscope bench` and priced with `collscope predict --algo all` (the cpu model,
# the one `auto` picks by). bench/model_grid.py reads what this writes.
#
#   bench/model_grid.sh [OUT]     (OUT defaults to build/bench-out/grid)
#
# Each cell is measured in GRID_ROUNDS passes over the whole grid (default 3), and
# bench/model_grid.py takes each cell's median: on a virtual machine the host moves the
# cores about for seconds to minutes at a time (one 3-rank all-gather read 75 us in one
# pass and 20-29 us in the next runs), and passes minutes apart rarely all meet it.
#
# Environment: COLLSCOPE (the binary, default build/collscope), GRID_COLLS, GRID_RANKS,
# GRID_SIZES (to run part of the grid), GRID_ROUNDS, GRID_CALIBRATE=0 to keep OUT/config's
# calibration instead of measuring a new one, GRID_CAL_SECONDS (default 20), and
# GRID_PREDICT_ONLY=1 to price OUT's measurements again (a changed model, the same
# runs: nothing is measured, the calibration is kept).
#
# The calibrations are taken one before each pass (GRID_CAL_EACH_PASS=1, the default;
# 0 takes them all before the first pass): the host moves the cores between the passes
# too, and a pass is priced once more with the calibration taken just before it
# (raw/round-N/predict-*.jsonl, from config-pass-N/), beside the median of all of them.
# Within a pass, before each (collective, ranks) group, `calibrate --placement` measures
# again what the cores' placement changes (GRID_PROBE=1, the default; about a second a
# group), and the group is priced a third time with that (raw/round-N/probed-predict-*).
#
# On a GPU: GRID_BACKEND=cuda (or nccl) measures on that backend and GRID_TOPOLOGY=NAME|FILE
# prices with that topology (no calibration then; a GPU backend is never priced with the cpu
# model). With a GPU backend each (collective, ranks) is one `bench` over all the sizes
# (-f 8 from the first size to the last, GRID_GPU_ITERS timed and warm-up calls, default
# "20 5"), split into the same cell files: a process per cell would spend more time
# starting the device than measuring (GRID_SWEEP=1 does the same on the cpu, 0 the opposite).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${COLLSCOPE:-$root/build/collscope}
out=${1:-$root/build/bench-out/grid}
colls=${GRID_COLLS:-allreduce broadcast allgather reduce_scatter alltoall}
ranks_list=${GRID_RANKS:-2 3 4 8}
# 8 B to 64 MiB by a factor of 8, and 64 MiB itself.
sizes=${GRID_SIZES:-8 64 512 4K 32K 256K 2M 16M 64M}
# On a device the sweep goes up by 8 all the way (its top is 128 MiB, not 64).
[ "${GRID_BACKEND:-cpu}" = cpu ] || sizes=${GRID_SIZES:-8 64 512 4K 32K 256K 2M 16M 128M}
[ -x "$bin" ] || { echo "model_grid: no collscope at $bin (build it, or set COLLSCOPE)" >&2; exit 2; }
mkdir -p "$out/raw"

# The calibration every prediction of the grid uses, in a config folder of its own.
export XDG_CONFIG_HOME="$out/config"
predict_only=${GRID_PREDICT_ONLY:-0}
probe=${GRID_PROBE:-1}
rounds=${GRID_ROUNDS:-3}
backend=${GRID_BACKEND:-cpu}
sweep=${GRID_SWEEP:-$([ "$backend" = cpu ] && echo 0 || echo 1)}
topology=()
[ -z "${GRID_TOPOLOGY:-}" ] || topology=(--topology "$GRID_TOPOLOGY")
if [ "$predict_only" = 1 ]; then GRID_CALIBRATE=0; fi
# A calibration is a best-of measurement, and on a virtual machine the host's placement
# of its cores moves some figures together from one calibration to the next (cores far
# apart: more memory bandwidth, and a 2-rank wake-up 3x slower). GRID_CAL_TRIES (default
# 3) calibrations, and the grid uses each figure's median over them (calibration.json;
# the tries are kept beside it as calibration-N.json).
calibrate_now=0
each_pass=0
if [ -n "${GRID_TOPOLOGY:-}" ]; then
  : # a topology prices the grid: nothing of this machine to calibrate
elif [ "${GRID_CALIBRATE:-1}" != 0 ] || [ ! -e "$XDG_CONFIG_HOME/collscope/calibration.json" ]; then
  calibrate_now=1
  [ "${GRID_CAL_EACH_PASS:-1}" = 0 ] || [ "$predict_only" = 1 ] || each_pass=1
fi
# calibrate TRY: one calibration, kept as calibration-TRY.json (and its text).
calibrate() {
  "$bin" calibrate --seconds "${GRID_CAL_SECONDS:-20}" -o "$out/calibration-$1.json" > "$out/calibrate-$1.txt"
}
# The median of the calibrations taken: the one every cell is priced with.
median_calibration() {
  mkdir -p "$XDG_CONFIG_HOME/collscope"
  python3 - "$XDG_CONFIG_HOME/collscope/calibration.json" "$out"/calibration-[0-9]*.json <<'PY'
import json, statistics, sys
tries = [json.load(open(f)) for f in sys.argv[2:]]
def median(values):
    if all(isinstance(v, dict) for v in values):
        return {k: median([v[k] for v in values]) for k in values[0]}
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        m = statistics.median(values)
        return int(m) if all(isinstance(v, int) for v in values) else m
    return values[0]
out = {k: median([t[k] for t in tries]) for k in tries[0]}
json.dump(out, open(sys.argv[1], "w"), indent=2)
PY
  cp "$out/calibrate-1.txt" "$out/calibrate.txt"
}
if [ "$calibrate_now" = 1 ] && [ "$each_pass" = 0 ]; then
  rm -f "$out"/calibration-[0-9]*.json
  for try in $(seq "${GRID_CAL_TRIES:-3}"); do calibrate "$try"; done
  median_calibration
fi

# Timed and warm-up iterations per size: many where a call takes microseconds, and
# enough for the algorithms to take turns (bench takes them in turns of at least 20
# calls: five rounds up to 2 MiB, two at 16 MiB; at 64 MiB turns of two calls after a
# warm-up call, five rounds, or two of five calls where the sessions' buffers are
# reopened each turn).
iters_for() {
  case $1 in
    8 | 64 | 512) echo "1000 100" ;;
    4K) echo "500 50" ;;
    32K) echo "200 20" ;;
    256K | 2M) echo "100 10" ;;
    16M) echo "40 4" ;;
    *) echo "10 5" ;;
  esac
}

[ "$predict_only" = 1 ] || {
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "load_start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "collscope: $("$bin" --version 2>/dev/null || echo unknown)"
  if [ -n "${GRID_TOPOLOGY:-}" ]; then
    echo "calibration: none (priced with --topology $GRID_TOPOLOGY)"
    echo "gpus: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd, - || echo none)"
  else
    if [ "$each_pass" = 1 ]; then
      echo "calibration: one before each pass, the median of them and each pass's own"
    else
      echo "calibration: $(head -1 "$out/calibrate.txt" 2>/dev/null || echo "kept from $XDG_CONFIG_HOME")"
    fi
  fi
  echo "calibration_each_pass: $each_pass"
  echo "command: bench --backend $backend --coll C --ranks R --algo ALL -b S -e S -n N -w W -c 0 --probe 0 --json"
  echo "rounds: $rounds"
} > "$out/meta.txt"

start=$(date +%s)
# grid ROUND|predict: one pass over the cells, measuring into raw/round-ROUND/ or pricing
# what was measured (at the count the first round's bench ran: its first row says).
grid() {
  for coll in $colls; do
    for r in $ranks_list; do
      # The algorithms come from the program: the ones predict prices for this call.
      one=$("$bin" predict --backend "$backend" --coll "$coll" --ranks "$r" --count 1 --algo all --json "${topology[@]}")
      algos=$(sed -n 's/.*"algorithm":"\([^"]*\)".*/\1/p' <<< "$one" | paste -sd, -)
      # The bytes of a call of count 1: no cell is smaller (8 B is below one element per
      # rank for some collectives and rank counts).
      unit=$(sed -n '1s/.*"bytes":\([0-9]*\).*/\1/p' <<< "$one")
      [ -n "$algos" ] || { echo "model_grid: no algorithm for $coll on $r ranks" >&2; exit 1; }
      # The cores' placement measured again before each group's cells (calibrate
      # --placement on this pass's calibration): the host moves the cores near each other
      # and apart for minutes at a time, and a group takes seconds.
      if [ "$1" != predict ] && [ "$probe" = 1 ] && [ -e "$out/config-pass-$1/collscope/calibration.json" ]; then
        here="$out/raw/round-$1/placement-$coll-$r"
        mkdir -p "$here/collscope"
        cp "$out/config-pass-$1/collscope/calibration.json" "$here/collscope/calibration.json"
        XDG_CONFIG_HOME=$here "$bin" calibrate --placement > "$here/calibrate.txt"
      fi
      for s in $sizes; do
        cell="$coll-$r-$s"
        if [ "$1" = predict ]; then
          measured="$out/raw/round-1/bench-$cell.jsonl"
          [ -e "$measured" ] || measured="$out/raw/bench-$cell.jsonl"  # a grid of one pass, before rounds
          if [ ! -s "$measured" ]; then
            [ "$sweep" = 0 ] || continue  # a size the sweep did not reach (said when it ran)
            echo "model_grid: $cell was not measured (run without GRID_PREDICT_ONLY)" >&2
            exit 1
          fi
          count=$(sed -n '1s/.*"count":\([0-9]*\).*/\1/p' "$measured")
          "$bin" predict --backend "$backend" --coll "$coll" --ranks "$r" --count "$count" --algo all --json "${topology[@]}" \
            > "$out/raw/predict-$cell.jsonl"
          # Each pass again with the calibration taken just before it.
          for cfg in "$out"/config-pass-*; do
            [ -e "$cfg/collscope/calibration.json" ] || continue
            k=${cfg##*-}
            [ -d "$out/raw/round-$k" ] || continue
            XDG_CONFIG_HOME=$cfg "$bin" predict --backend "$backend" --coll "$coll" --ranks "$r" --count "$count" \
              --algo all --json > "$out/raw/round-$k/predict-$cell.jsonl"
            # And with the placement measured just before the cell's group.
            here="$out/raw/round-$k/placement-$coll-$r"
            [ -e "$here/collscope/calibration.json" ] || continue
            XDG_CONFIG_HOME=$here "$bin" predict --backend "$backend" --coll "$coll" --ranks "$r" --count "$count" \
              --algo all --json > "$out/raw/round-$k/probed-predict-$cell.jsonl"
          done
          continue
        fi
        [ "$sweep" = 0 ] || continue  # one sweep for every size, below
        read -r n w <<< "$(iters_for "$s")"
        bytes=$(numfmt --from=iec "$s")
        [ "$bytes" -ge "$unit" ] || bytes=$unit
        "$bin" bench --coll "$coll" --ranks "$r" --algo "$algos" -b "$bytes" -e "$bytes" -n "$n" -w "$w" -c 0 \
          --probe 0 --json > "$out/raw/round-$1/bench-$cell.jsonl"
      done
      if [ "$1" != predict ] && [ "$sweep" = 1 ]; then
        # One sweep over every size, then a file per cell as on the cpu. It starts at
        # the first size that holds a call of count 1: sizes below it have no cell here.
        read -r n w <<< "${GRID_GPU_ITERS:-20 5}"
        first=""
        for s in $sizes; do
          bytes=$(numfmt --from=iec "$s")
          [ -n "$first" ] || [ "$bytes" -lt "$unit" ] || first=$bytes
        done
        [ -n "$first" ] || { echo "model_grid: every size is below one element a rank for $coll on $r ranks" >&2; continue; }
        "$bin" bench --backend "$backend" --coll "$coll" --ranks "$r" --algo "$algos" -b "$first" \
          -e "$(numfmt --from=iec "${sizes##* }")" -f 8 -n "$n" -w "$w" -c 0 --probe 0 --json \
          > "$out/raw/round-$1/sweep-$coll-$r.jsonl"
        for s in $sizes; do
          bytes=$(numfmt --from=iec "$s")
          [ "$bytes" -ge "$first" ] || continue
          # The sweep's sizes go up by 8 from the first: the cell is the size closest to s.
          python3 - "$out/raw/round-$1/sweep-$coll-$r.jsonl" "$bytes" > "$out/raw/round-$1/bench-$coll-$r-$s.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{") and '"size"' in l]
want = int(sys.argv[2])
if rows:
    near = min({r["size"] for r in rows}, key=lambda b: abs(b - want))
    for r in rows:
        if r["size"] == near and want / 2 < near < want * 2:
            print(json.dumps(r, separators=(",", ":")))  # as bench writes it: the predict step reads it with sed
PY
          if [ ! -s "$out/raw/round-$1/bench-$coll-$r-$s.jsonl" ]; then
            rm -f "$out/raw/round-$1/bench-$coll-$r-$s.jsonl"
            echo "model_grid: no $s in the sweep of $coll on $r ranks" >&2
          fi
        done
      fi
      [ "$1" = predict ] || echo "# round $1 of $rounds: $coll on $r ranks done, $(($(date +%s) - start)) s, load $(cut -d' ' -f1 /proc/loadavg)" >&2
    done
  done
}
if [ "$predict_only" != 1 ]; then
  rm -rf "$out/raw"/round-* "$out/raw"/bench-*.jsonl "$out"/config-pass-*
  [ "$each_pass" = 0 ] || rm -f "$out"/calibration-[0-9]*.json
  for round in $(seq "$rounds"); do
    mkdir -p "$out/raw/round-$round"
    if [ "$each_pass" = 1 ]; then
      calibrate "$round"
      mkdir -p "$out/config-pass-$round/collscope"
      cp "$out/calibration-$round.json" "$out/config-pass-$round/collscope/calibration.json"
    fi
    grid "$round"
  done
  [ "$each_pass" = 0 ] || median_calibration
fi
grid predict
[ "$predict_only" = 1 ] || {
  echo "load_end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "seconds: $(($(date +%s) - start))"
} >> "$out/meta.txt"
echo "model_grid: raw output in $out (read it with bench/model_grid.py $out)" >&2
