#!/usr/bin/env python3
"""Writes a synthetic job for the import and analyze benchmarks (bench/import.sh):
one Flight Recorder dump per rank (nccl_trace_rank_<R>), in the format PyTorch's
ProcessGroupNCCL dumps, as a data-parallel training loop would leave it:

  every step: the backward pass in buckets (an all-reduce per bucket, with compute
  in between), an all-gather and a reduce-scatter of optimizer state, a ring shift of
  activations (send right, recv left), and a barrier every 50 calls;
  times on one clock, each rank with its own jitter.

    bench/make_job.py --ranks 64 --calls 1000 OUT_DIR
    bench/make_job.py --ranks 1024 --calls 2000 OUT_DIR     # for analyze: about 1 GB

Standard library only; the text is written by hand (not json.dump) so that a
gigabyte of dumps takes a minute, not ten.
"""

import argparse
import os
import random

BASE_NS = 1718000000000000000


def entry(rid, pg, coll_seq, p2p_seq, name, t, dur_ms, n_in, n_out, is_p2p):
    return ('{"record_id": %d, "pg_id": 0, "process_group": ["%s", "default_pg"], "collective_seq_id": %d, '
            '"p2p_seq_id": %d, "op_id": %d, "profiling_name": "%s", "time_created_ns": %d, "duration_ms": %.4f, '
            '"input_sizes": [[%d]], "input_dtypes": ["Float"], "output_sizes": [[%d]], "output_dtypes": ["Float"], '
            '"state": "completed", "time_discovered_started_ns": %d, "time_discovered_completed_ns": %d, '
            '"retired": true, "timeout_ms": 600000, "is_p2p": %s}'
            % (rid, pg, coll_seq, p2p_seq, rid + 1, name, t, dur_ms, n_in, n_out, t + 5000,
               t + int(dur_ms * 1e6) + 5000, "true" if is_p2p else "false"))


def plan(entries):
    """The sequence of calls every rank makes, (kind, count), with `entries` entries in
    all (a ring shift is two: its send and its recv)."""
    buckets = [65536, 32768, 16384, 8192]  # elements per gradient bucket (256 KiB .. 32 KiB)
    step = [("allreduce", b) for b in buckets] + [("allgather", 4096), ("reduce_scatter", 4096), ("shift", 2048)]
    out, n = [], 0
    while n < entries:
        for call in step + ([("barrier", 0)] if len(out) % 50 < len(step) else []):
            width = 2 if call[0] == "shift" else 1
            if n + width > entries:
                call, width = ("allreduce", 8192), 1
            out.append(call)
            n += width
            if n >= entries:
                break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--calls", type=int, default=1000, help="entries per rank")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("out")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    seq = plan(a.calls)
    n = a.ranks
    ranks_text = "[" + ", ".join(str(r) for r in range(n)) + "]"
    # One clock: every call starts when its last member arrives.
    arrive = [[0] * len(seq) for _ in range(n)]
    t = BASE_NS
    durations = []
    for i, (kind, count) in enumerate(seq):
        dur = 0.05 + count * 4 / 5e9 * 1e3  # ms: latency plus bytes at 5 GB/s
        durations.append(dur)
        latest = t
        for r in range(n):
            compute = 300_000 + rng.randrange(0, 60_000)  # 300-360 us of compute before each call
            arrive[r][i] = t + compute
            latest = max(latest, arrive[r][i])
        t = latest + int(dur * 1e6)
    for r in range(n):
        parts = []
        coll = p2p = 0
        rid = 0
        for i, (kind, count) in enumerate(seq):
            at = arrive[r][i]
            if kind == "shift":
                right, left = (r + 1) % n, (r - 1) % n
                order = [("send", right), ("recv", left)] if r % 2 == 0 else [("recv", left), ("send", right)]
                for k, peer in order:
                    p2p += 1
                    name = "nccl:send %d->%d" % (r, peer) if k == "send" else "nccl:recv %d<-%d" % (r, peer)
                    parts.append(entry(rid, "0", coll, p2p, name, at, durations[i], count, count, True))
                    rid += 1
                    at += int(durations[i] * 1e6) + 1000
                continue
            coll += 1
            name = {"allreduce": "nccl:all_reduce", "allgather": "nccl:_allgather_base",
                    "reduce_scatter": "nccl:_reduce_scatter_base", "barrier": "nccl:all_reduce"}[kind]
            n_in = count if kind != "reduce_scatter" else count * n
            n_out = count if kind != "allgather" else count * n
            if kind == "barrier":
                n_in = n_out = 1  # torch's barrier is an all-reduce of one element on NCCL
            parts.append(entry(rid, "0", coll, p2p, name, at, durations[i], n_in, n_out, False))
            rid += 1
        with open(os.path.join(a.out, "nccl_trace_rank_%d" % r), "w") as f:
            f.write('{"version": "2.4", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "%s"}}, '
                    '"pg_status": {}, "entries": [\n' % ranks_text)
            f.write(",\n".join(parts))
            f.write("\n]}\n")


if __name__ == "__main__":
    main()
