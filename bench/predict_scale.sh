#!/usr/bin/env bash
# Times `collscope predict` on a cluster of 65536 ranks (8192 DGX H100 nodes) and more, per
# algorithm with a shape and for --algo all, and at 1024 ranks (128 nodes), where the
# schedule is lowered and priced transfer by transfer, for comparison, and all-to-all at
# 4096 ranks, lowered and priced transfer by transfer (flow level). Prints wall and
# user seconds and the peak memory of every command.
#   bench/predict_scale.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/collscope}
count=1048576  # 4 MiB of float32 per rank
run() {
  local label=$1
  shift
  /usr/bin/time -f "$label: %e s wall, %U s user, %M KiB peak" "$bin" predict "$@" >/dev/null
}
for algo in ring rings hierarchical double_tree rabenseifner recursive_doubling tree; do
  run "65536 ranks, $algo (shape)" --coll allreduce --algo "$algo" --ranks 65536 --count $count \
    --topology dgx-h100 --nodes 8192
done
run "65536 ranks, --algo all (shapes)" --coll allreduce --algo all --ranks 65536 --count $count \
  --topology dgx-h100 --nodes 8192
for algo in ring rabenseifner; do
  run "1024 ranks, $algo (schedule)" --coll allreduce --algo "$algo" --ranks 1024 --count $count \
    --topology dgx-h100 --nodes 128
done
# All-to-all at 4096 ranks (512 nodes): pairwise and linear from their shapes (the machine
# repeats every leaf group of 256 ranks), bruck from its shape (one transfer per rank and
# partner a round); and pairwise with a node left partly empty: no repeat, transfer by
# transfer (flow level).
for algo in pairwise bruck linear; do
  run "4096 ranks, alltoall $algo" --coll alltoall --algo "$algo" --ranks 4096 --count 256 \
    --topology dgx-h100 --nodes 512
done
run "4096 ranks, alltoall --algo all" --coll alltoall --algo all --ranks 4096 --count 256 \
  --topology dgx-h100 --nodes 512
run "4095 ranks, alltoall pairwise (flow)" --coll alltoall --algo pairwise --ranks 4095 --count 256 \
  --topology dgx-h100 --nodes 512
for coll in alltoall barrier; do
  run "65536 ranks, $coll --algo all (shapes)" --coll "$coll" --algo all --ranks 65536 --count 256 \
    --topology dgx-h100 --nodes 8192
done
# The other collectives: every algorithm with a shape, and those without left out.
for coll in allgather reduce_scatter broadcast reduce scatter gather; do
  run "65536 ranks, $coll --algo all (shapes)" --coll "$coll" --algo all --ranks 65536 --count $count \
    --topology dgx-h100 --nodes 8192
done
# Reduce-scatter's and all-to-all's pairwise and the chains of scatter and gather, every step its
# own: under dgx-h100's nested tiers from one node's transfers with the switch groups' loads
# counted, and from one leaf group of 128 ranks where the machine repeats every leaf (PCIe
# nodes under one spine).
run "65536 ranks, reduce_scatter pairwise (shape, groups counted)" --coll reduce_scatter --algo pairwise \
  --ranks 65536 --count $count --topology dgx-h100 --nodes 8192
for algo in pairwise linear; do
  run "65536 ranks, alltoall $algo (shape, groups counted)" --coll alltoall --algo "$algo" \
    --ranks 65536 --count 256 --topology dgx-h100 --nodes 8192
done
for coll in scatter gather; do
  run "65536 ranks, $coll chain (shape, groups counted)" --coll "$coll" --algo chain \
    --ranks 65536 --count 1024 --root 1000 --topology dgx-h100 --nodes 8192
done
run "65536 ranks, reduce_scatter pairwise on pcie-8gpu (shape)" --coll reduce_scatter --algo pairwise \
  --ranks 65536 --count $count --topology pcie-8gpu --nodes 8192
run "65536 ranks, reduce_scatter --algo all on pcie-8gpu (shapes)" --coll reduce_scatter --algo all \
  --ranks 65536 --count $count --topology pcie-8gpu --nodes 8192
run "65536 ranks, alltoall pairwise on pcie-8gpu (shape)" --coll alltoall --algo pairwise \
  --ranks 65536 --count 256 --topology pcie-8gpu --nodes 8192
for coll in scatter gather; do
  run "65536 ranks, $coll --algo all on pcie-8gpu (shapes, chain included)" --coll "$coll" --algo all \
    --ranks 65536 --count 1024 --root 1000 --topology pcie-8gpu --nodes 8192
done
# Beyond 65536: every collective's --algo all at 131072 and 262144 ranks on as many DGX nodes.
for n in 131072 262144; do
  for coll in allreduce allgather reduce_scatter broadcast alltoall; do
    run "$n ranks, $coll --algo all (shapes)" --coll "$coll" --algo all --ranks $n --count $count \
      --topology dgx-h100 --nodes $((n / 8))
  done
done
# Programs (point-to-point, custom algorithms) are lowered and priced as written, up to
# 4096 ranks: lessons of the repository with their ranks raised.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for lesson in 21-hybrid-parallel 22-custom-algorithm; do
  python3 - "scenarios/$lesson.json" "$tmp/$lesson.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["ranks"] = 4096
doc.pop("expect", None)  # the lesson's expectations name its own ranks
json.dump(doc, open(sys.argv[2], "w"))
PY
  run "4096 ranks, program $lesson (schedule)" "$tmp/$lesson.json" --topology dgx-h100 --nodes 512
done
