#!/usr/bin/env bash
# collscope's cpu allreduce against Open MPI's MPI_Allreduce on the same machine,
# in the same run: the two alternate, round after round, so background load hits
# both alike. Prints medians over the rounds and their ratios. Where Debian's
# python3-torch is installed, PyTorch's gloo all-reduce takes its turn too
# (bench/torch_allreduce.py, in place, -n 200 -w 20 at 8 B), in a second table.
#
#   bench/peer.sh [ROUNDS] [OUT_DIR] [ALGO]
#
# ROUNDS defaults to 5, OUT_DIR to build/bench-out/peer, ALGO (collscope's algorithm) to
# auto. Each round, for 2, 4 and 8 ranks: 8 B (-n 3000 -w 200) and 16, 64 and
# 256 MiB (-n 5 -w 1), float32 sum, out of place and in place, results checked on
# both sides. Needs Open MPI (Debian: openmpi-bin libopenmpi-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
out=${2:-build/bench-out/peer}
algo=${3:-auto}
if ! command -v mpicc > /dev/null || ! command -v mpirun > /dev/null; then
  echo "error: Open MPI is not installed; as root run: apt-get install -y openmpi-bin libopenmpi-dev" >&2
  exit 2
fi
bin=build/collscope
[ -x "$bin" ] || scripts/build.sh
mkdir -p "$out" build/bench
mpicc -O2 -o build/bench/mpi_allreduce bench/mpi_allreduce.c
# mpirun refuses root unless told; more ranks than cores needs --oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
raw=$out/peer-raw.txt
{
  echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)  machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  echo "# collscope algorithm: $algo; columns: who ranks bytes oop_us ip_us oop_busbw ip_busbw wrong"
} > "$raw"

# Both programs print one line per size whose first field is the size in bytes;
# collscope's has count, type, op and root before the timings.
ompi() {  # ranks, then mpi_allreduce arguments
  local r=$1; shift
  mpirun --oversubscribe -np "$r" build/bench/mpi_allreduce "$@" |
    awk -v r="$r" '$1 ~ /^[0-9]+$/ { print "ompi", r, $1, $2, $6, $4, $8, $5 + $9 }'
}
ours() {  # ranks, then collscope bench size arguments
  local r=$1; shift
  "$bin" bench --coll allreduce --algo "$algo" --ranks "$r" --probe 0 "$@" |
    awk -v r="$r" '$1 ~ /^[0-9]+$/ { print "collscope", r, $1, $6, $10, $8, $12, $9 + $13, $NF }'
}

torch_python=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import torch.distributed' 2> /dev/null; then torch_python=$p; break; fi
done
[ -n "$torch_python" ] || echo "peer: gloo skipped: no python3 with torch.distributed (apt-get install python3-torch)" >&2
gloo() {  # ranks, bytes, iterations, warm-ups: one line, its time and busbw for both modes
  [ -n "$torch_python" ] || return 0
  "$torch_python" bench/torch_allreduce.py "$1" "$2" -n "$3" -w "$4" |
    awk -v r="$1" '{ print "gloo", r, $1, $2, $2, $4, $4, 0 }'
}

for ((i = 1; i <= rounds; ++i)); do
  echo "== round $i of $rounds" >&2
  for r in 2 4 8; do
    ompi "$r" 8 8 2 3000 200 >> "$raw"
    ours "$r" -b 8 -e 8 -n 3000 -w 200 >> "$raw"
    gloo "$r" 8 200 20 >> "$raw"
    ompi "$r" 16777216 268435456 4 5 1 >> "$raw"
    ours "$r" -b 16M -e 256M -f 4 -n 5 -w 1 >> "$raw"
    for b in 16777216 67108864 268435456; do gloo "$r" "$b" 5 1 >> "$raw"; done
  done
done
python3 - "$raw" << 'EOF' | tee "$out/peer.md"
import statistics, sys
rows = {}
picks = {}
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    f = line.split()
    key = (int(f[1]), int(f[2]))
    oop, ip, boop, bip, wrong = map(float, f[3:8])
    if wrong:
        sys.exit(f"{f[0]} reported {wrong:.0f} wrong elements at {key}")
    rows.setdefault((f[0],) + key, []).append((oop, ip, boop, bip))
    if f[0] == "collscope" and len(f) > 8:
        picks.setdefault(key, set()).add(f[8])
def med(who, key, col):
    return statistics.median(v[col] for v in rows[(who,) + key])
n = len(next(iter(rows.values())))
print(f"medians of {n} rounds; time in us, busbw in GB/s; ratio = Open MPI time / collscope time "
      "(or collscope busbw / Open MPI busbw): above 1 means collscope is faster")
print()
print("| ranks | size | Open MPI out / in place | collscope out / in place | collscope picked | ratio out / in place |")
print("|---|---|---|---|---|---|")
for (r, b) in sorted({k[1:] for k in rows}):
    if b <= 64:
        o = [med("ompi", (r, b), c) for c in (0, 1)]
        c = [med("collscope", (r, b), c) for c in (0, 1)]
        ratio = [o[i] / c[i] for i in (0, 1)]
        unit = "us"
    else:
        o = [med("ompi", (r, b), c) for c in (2, 3)]
        c = [med("collscope", (r, b), c) for c in (2, 3)]
        ratio = [c[i] / o[i] if o[i] else float("inf") for i in (0, 1)]
        unit = "GB/s"
    size = f"{b} B" if b < 1 << 20 else f"{b >> 20} MiB"
    print(f"| {r} | {size} | {o[0]:.2f} / {o[1]:.2f} {unit} | {c[0]:.2f} / {c[1]:.2f} {unit} | "
          f"{', '.join(sorted(picks.get((r, b), {'-'})))} | {ratio[0]:.2f}× / {ratio[1]:.2f}× |")
if any(k[0] == "gloo" for k in rows):
    print()
    print("PyTorch's gloo (in place) in the same rounds; collscope: the better of out of place and in place;")
    print("ratio = gloo time / collscope time (or collscope busbw / gloo busbw)")
    print()
    print("| ranks | size | gloo | collscope | ratio |")
    print("|---|---|---|---|---|")
    for (r, b) in sorted({k[1:] for k in rows if k[0] == "gloo"}):
        size = f"{b} B" if b < 1 << 20 else f"{b >> 20} MiB"
        if b <= 64:
            g, c = med("gloo", (r, b), 0), min(med("collscope", (r, b), 0), med("collscope", (r, b), 1))
            print(f"| {r} | {size} | {g:.2f} us | {c:.2f} us | {g / c:.0f}× |")
        else:
            g, c = med("gloo", (r, b), 2), max(med("collscope", (r, b), 2), med("collscope", (r, b), 3))
            print(f"| {r} | {size} | {g:.3f} GB/s | {c:.2f} GB/s | {c / g:.1f}× |")
EOF
