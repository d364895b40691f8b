#!/usr/bin/env python3
"""`collscope predict` against published nccl-tests results.

Every row below is one published bus bandwidth (nccl-tests' busbw, GB/s, at a large size) with
its source. The script reruns `collscope predict --json` for the matching collective, algorithm,
ranks, nodes and size, and prints a markdown table: published, predicted, error.

    bench/realworld.py [path/to/collscope]      (default: build/collscope)
    bench/realworld.py --one-gpu-topology FILE  (writes the topology of ranks sharing one H200)

Standard library only. The published runs are NCCL's own collectives, so each is priced as
`--algo nccl` (collscope's model of NCCL's algorithms: chunks streaming through a ring, trees or
the switch's reductions), with NCCL_ALGO set as the run had it. One more row prices collscope's
own `auto` at 248 nodes, step by step as collscope's engine would run it: a contrast, not what ran.
"""
import json
import os
import subprocess
import sys
import tempfile

GIB = 1 << 30
MIB = 1 << 20

# (what, hardware, NCCL, collective, NCCL algorithm, ranks, nodes, bytes, published busbw,
#  collscope algorithm, topology, modelled, source)
# `modelled` False: not a prediction of what ran (collscope's own algorithms, for contrast).
ROWS = [
    ("8 GPUs, ring", "8 x H100 SXM, NVSwitch", "", "allreduce", "RING", 8, 1, 2 * GIB, 367.5,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl/issues/1455"),
    ("4 GPUs, ring", "8 x H100 SXM, NVSwitch", "", "allreduce", "RING", 4, 1, 2 * GIB, 367.5,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl/issues/1455"),
    ("2 GPUs, ring", "8 x H100 SXM, NVSwitch", "", "allreduce", "RING", 2, 1, 2 * GIB, 367.5,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl/issues/1455"),
    ("8 GPUs, ring (NVIDIA's figure)", "H100 NVLink 4", "", "allreduce", "RING", 8, 1, 4 * GIB, 370,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl-tests/issues/212"),
    ("8 GPUs, all-gather (NVIDIA's figure)", "H100 NVLink 4", "", "allgather", "RING", 8, 1, 4 * GIB, 370,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl-tests/issues/212"),
    ("8 GPUs, reduce-scatter (NVIDIA's figure)", "H100 NVLink 4", "", "reduce_scatter", "RING", 8, 1, 4 * GIB,
     370, "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl-tests/issues/212"),
    ("8 GPUs, NVLS", "8 x H100 SXM, NVSwitch", "", "allreduce", "NVLS", 8, 1, 2 * GIB, 480,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl/issues/1455"),
    ("4 GPUs, NVLS", "8 x H100 SXM, NVSwitch", "", "allreduce", "NVLS", 4, 1, 2 * GIB, 370,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl/issues/1455"),
    ("8 GPUs, NVLS peak (NVIDIA's figure)", "H100 NVLink 4", "", "allreduce", "NVLS", 8, 1, 4 * GIB, 480,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl-tests/issues/212"),
    ("8 GPUs, default (NVLS)", "8 x H100 80GB HBM3", "", "allreduce", "default", 8, 1, 4 * GIB, 476,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl-tests/issues/290"),
    ("2 nodes, ring: 8 NICs x 46-48 GB/s", "H100, 8 x CX-7 NDR 400 Gb/s", "", "allreduce", "RING", 16, 2,
     4 * GIB, 376, "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl-tests/issues/290"),
    ("2 nodes, DGX H100 multi-host", "DGX H100, 8 x NDR", "", "allreduce", "default", 16, 2, 4 * GIB, 380,
     "nccl", "dgx-h100", True, "https://github.com/NVIDIA/nccl-tests/issues/309"),
    ("248 nodes, default", "248 x 8 H200, 8 x NDR", "", "allreduce", "default", 1984, 248, 512 * MIB, 350,
     "nccl", "dgx-h200", True, "https://github.com/NVIDIA/nccl-tests/issues/283"),
    ("248 nodes, default; collscope's own auto, step by step", "248 x 8 H200, 8 x NDR", "", "allreduce", "default",
     1984, 248, 512 * MIB, 350, "auto", "dgx-h200", False, "https://github.com/NVIDIA/nccl-tests/issues/283"),
]

# collscope's own runs on one H200, 8 ranks sharing the GPU (bench/RESULTS.md, tests/gpu/run.sh):
# ring all-reduce busbw, best of out of place and in place; (date, bytes, busbw). Priced as the
# cuda backend runs them (`--backend cuda`: a kernel launch per transfer from one host thread).
H200_ONE_GPU = [("2026-11-30", 64 * MIB, 202.37), ("2026-11-30", 256 * MIB, 211.75), ("2026-11-30", 1 * GIB, 213.56),
                ("2026-12-04", 64 * MIB, 145.17), ("2026-12-04", 256 * MIB, 209.19), ("2026-12-04", 1 * GIB, 212.46),
                ("2026-12-04, again", 64 * MIB, 190.15), ("2026-12-04, again", 256 * MIB, 207.26),
                ("2026-12-04, again", 1 * GIB, 213.07)]


def predict(exe, coll, algo, ranks, nodes, nbytes, topology, backend="cpu", nccl_algo=""):
    elems = nbytes // 4  # float32
    # --count has NCCL's meaning: all-gather and reduce-scatter count one rank's block.
    count = elems // ranks if coll in ("allgather", "reduce_scatter") else elems
    cmd = [exe, "predict", "--backend", backend, "--coll", coll, "--algo", algo, "--ranks", str(ranks), "--count", str(count),
           "--topology", topology, "--nodes", str(nodes), "--json"]
    env = dict(os.environ)
    env.pop("NCCL_ALGO", None)
    if nccl_algo in ("RING", "TREE", "NVLS", "NVLS_TREE"):
        env["NCCL_ALGO"] = nccl_algo  # as the published run had it; "default": NCCL's own choice
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode == 2 and "scenario.out_of_range" in r.stderr and nbytes > MIB:
        # Over the scenario size limit: price the largest size that fits (busbw is flat there).
        return predict(exe, coll, algo, ranks, nodes, nbytes // 2, topology, backend, nccl_algo)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    row = json.loads(r.stdout.strip().splitlines()[0])
    return row, nbytes


def one_gpu_topology(path=None):
    """dgx-h200 with one device per node: the model of ranks sharing one H200 (in a
    temporary file, or at `path`)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "assets", "topologies", "dgx-h200.json")) as f:
        t = json.load(f)
    t["name"] = "h200-one-gpu"
    t["title"] = "one H200: the dgx-h200 preset with one device per node"
    t["devices"]["per_node"] = 1
    t["nic"]["per_node"] = 1
    if path:
        with open(path, "w") as f:
            json.dump(t, f, indent=2)
        return path
    fd, path = tempfile.mkstemp(suffix=".json", prefix="h200-one-gpu-")
    with os.fdopen(fd, "w") as f:
        json.dump(t, f)
    return path


def fmt_size(n):
    return f"{n // GIB} GiB" if n >= GIB else f"{n // MIB} MiB"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--one-gpu-topology":
        one_gpu_topology(sys.argv[2])
        return
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "collscope")
    print("| what | hardware | collective | NCCL algorithm | ranks / nodes | size | published busbw | "
          "collscope algorithm, size priced | predicted busbw | error | bound by | source |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    covered = within = 0
    for (what, hw, _nccl, coll, nalgo, ranks, nodes, nbytes, pub, algo, topo, modelled, url) in ROWS:
        row, priced = predict(exe, coll, algo, ranks, nodes, nbytes, topo, nccl_algo=nalgo)
        bus = row["busbw_gbps"]
        err = (bus - pub) / pub * 100
        if modelled:
            worst = max(worst, abs(err))
        bound = max(row["levels"].items(), key=lambda kv: kv[1])[0] if row["levels"] else ""
        mark = "" if modelled else " (not what ran)"
        shown = algo if algo == row["algorithm"] else f"{algo}: {row['algorithm']}"
        if row.get("library_algorithm"):
            shown += f" ({row['library_algorithm']})"
        if modelled:
            covered += 1
            within += abs(err) <= 15
        print(f"| {what} | {hw} | {coll} | {nalgo}{mark} | {ranks} / {nodes} | {fmt_size(nbytes)} | "
              f"{pub:.0f} | {shown} ({topo}), {fmt_size(priced)} | {bus:.1f} | {err:+.1f}% | {bound} | {url} |")
    path = one_gpu_topology()
    try:
        for date, nbytes, pub in H200_ONE_GPU:
            row, _ = predict(exe, "allreduce", "ring", 8, 1, nbytes, path, "cuda")
            bus = row["busbw_gbps"]
            err = (bus - pub) / pub * 100
            worst = max(worst, abs(err))
            covered += 1
            within += abs(err) <= 15
            bound = max(row["levels"].items(), key=lambda kv: kv[1])[0] if row["levels"] else ""
            print(f"| 8 ranks on one GPU, collscope's ring | 1 x H200 | allreduce | (collscope cuda backend) | "
                  f"8 / 1 | {fmt_size(nbytes)} | {pub:.0f} | ring (dgx-h200, 1 device) | {bus:.1f} | "
                  f"{err:+.1f}% | {bound} | bench/RESULTS.md, {date} |")
    finally:
        os.unlink(path)
    print()
    print(f"Rows that predict what ran: {within} of {covered} within 15%; largest error {worst:.1f}%")


if __name__ == "__main__":
    main()
