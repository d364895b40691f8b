"""Writes the small files of tests/data/import/ that no local run can make: newer
PyTorch's profiler traces (Kineto, with record_param_comms), Flight Recorder dumps as
ProcessGroupNCCL writes them, and an NCCL_DEBUG=INFO log. Every field is one the
formats document; the values are chosen so that the tests can check each call.

    python3 handwritten.py      # rewrites kineto/, fr/, nccl/ and a2a/ next to this file
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 4
BASE_NS = 1718000000000000000


def write(path, doc):
    full = os.path.join(HERE, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        if isinstance(doc, str):
            f.write(doc)
        else:
            json.dump(doc, f, indent=1)
            f.write("\n")


# One job, four ranks: the calls every rank makes, in order. Rank 2 is late at every
# collective (a straggler); sends go round a ring.
def job_calls(rank):
    calls = [
        ("allreduce", "0", 262144, 262144, None),
        ("broadcast", "0", 1024, 1024, None),
        ("allgather", "0", 1024, 4096, None),
        ("reduce_scatter", "0", 4096, 1024, None),
        ("allreduce", "1" if rank < 2 else "2", 2048, 2048, None),
    ]
    right, left = (rank + 1) % WORLD, (rank - 1) % WORLD
    p2p = [("send", right), ("recv", left)] if rank % 2 == 0 else [("recv", left), ("send", right)]
    for kind, peer in p2p:
        calls.append((kind, "0", 4096, 4096, peer))
    calls.append(("allreduce", "0", 1024, 1024, None))
    return calls


GROUPS = {"0": ("default_pg", [0, 1, 2, 3]), "1": ("left", [0, 1]), "2": ("right", [2, 3])}


# --- newer profiler traces ---------------------------------------------------------
KINETO_NAMES = {"allreduce": "allreduce", "broadcast": "broadcast", "allgather": "_allgather_base",
                "reduce_scatter": "_reduce_scatter_base", "send": "send", "recv": "recv"}


def kineto(rank):
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100 + rank, "tid": 1, "ts": 10.0, "dur": 500.0,
               "args": {"External id": 1}}]
    seq = {}
    t = 1000.0
    for i, (kind, pg, n_in, n_out, peer) in enumerate(job_calls(rank)):
        t += 2000.0  # compute before it
        arrive = t + (5000.0 if rank == 2 and peer is None else 0.0)  # rank 2 comes late, the others wait
        if peer is None:
            t += 5000.0
        desc, ranks = GROUPS[pg]
        p2p = kind in ("send", "recv")
        key = (pg, p2p)
        seq[key] = seq.get(key, 0) + 1
        args = {"External id": 10 + i, "Collective name": KINETO_NAMES[kind], "dtype": "Float",
                "In msg nelems": n_in, "Out msg nelems": n_out, "In split size": "[]", "Out split size": "[]",
                "Global rank start": 0, "Global rank stride": 1, "Group size": len(ranks),
                "Process Group Name": pg, "Process Group Description": desc,
                "Process Group Ranks": str(ranks),
                "Rank": ranks.index(peer) if p2p else ranks.index(rank), "Seq": seq[key]}
        events.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 100 + rank, "tid": 1,
                       "ts": arrive, "dur": 20.0, "args": args})
        kernel = dict(args)
        kernel.update({"device": rank, "stream": 7})
        name = {"allreduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "broadcast": "ncclDevKernel_Broadcast_RING_LL",
                "allgather": "ncclDevKernel_AllGather_RING_LL", "reduce_scatter": "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL",
                "send": "ncclDevKernel_SendRecv", "recv": "ncclDevKernel_SendRecv"}[kind]
        events.append({"ph": "X", "cat": "kernel", "name": name + "(ncclDevComm*, unsigned long, ncclWork*)",
                       "pid": rank, "tid": 7, "ts": arrive + 30.0, "dur": t + 330.0 - arrive, "args": kernel})
        t += 400.0
    return {"schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": WORLD, "pg_count": 3,
                                "pg_config": [{"pg_name": pg, "pg_desc": d, "backend_config": "cuda:nccl",
                                               "pg_size": len(r), "ranks": r} for pg, (d, r) in GROUPS.items()],
                                "nccl_version": "2.21.5"},
            "baseTimeNanoseconds": BASE_NS,
            "traceEvents": events,
            "traceName": "rank%d.pt.trace.json" % rank}


# --- Flight Recorder dumps -----------------------------------------------------------
FR_NAMES = {"allreduce": "nccl:all_reduce", "broadcast": "nccl:broadcast", "allgather": "nccl:_allgather_base",
            "reduce_scatter": "nccl:_reduce_scatter_base"}


def fr(rank, variant):
    entries = []
    coll, p2p_seq = {}, {}
    t = BASE_NS
    late = {"straggler": 1}.get(variant, -1)
    calls = job_calls(rank)
    for i, (kind, pg, n_in, n_out, peer) in enumerate(calls):
        # One clock for all ranks: a late rank enters a collective 30 ms after the
        # others, who wait for it; everyone leaves it together.
        t += 2_000_000
        arrive = t + (30_000_000 if rank == late and peer is None else 0)
        if peer is None and late >= 0:
            t += 30_000_000
        desc, ranks = GROUPS[pg]
        is_p2p = kind in ("send", "recv")
        if is_p2p:
            p2p_seq[pg] = p2p_seq.get(pg, 0) + 1
        else:
            coll[pg] = coll.get(pg, 0) + 1
        if variant == "desync" and rank == 2 and not is_p2p and coll[pg] == 3 and pg == "0":
            n_in = n_out = 2048  # rank 2 gathers the wrong slice
        state = "completed"
        if variant == "hang":
            # rank 3 never gets past the last all-reduce's predecessor; the others wait in it
            if rank == 3 and i == len(calls) - 1:
                break
            if i == len(calls) - 1:
                state = "started"
        me, other = ranks.index(rank), ranks.index(peer) if is_p2p else -1
        name = ("nccl:send %d->%d" % (me, other) if kind == "send" else "nccl:recv %d<-%d" % (me, other)) if is_p2p \
            else FR_NAMES[kind]
        done = t + 400_000
        entries.append({
            "record_id": i, "pg_id": int(pg), "process_group": [pg, desc],
            "collective_seq_id": coll.get(pg, 0), "p2p_seq_id": p2p_seq.get(pg, 0), "op_id": i + 1,
            "profiling_name": name, "time_created_ns": arrive,
            "duration_ms": (done - arrive - 10_000) / 1e6 if state == "completed" else None,
            "input_sizes": [[n_in]], "input_dtypes": ["Float"], "output_sizes": [[n_out]], "output_dtypes": ["Float"],
            "state": state, "time_discovered_started_ns": arrive + 10_000,
            "time_discovered_completed_ns": done if state == "completed" else 0,
            "retired": state == "completed", "timeout_ms": 600000, "is_p2p": is_p2p})
        if entries[-1]["duration_ms"] is None:
            del entries[-1]["duration_ms"]
        t = done
    return {"version": "2.4",
            "pg_config": {pg: {"name": pg, "desc": d, "ranks": str(r)} for pg, (d, r) in GROUPS.items()},
            "pg_status": {pg: {"last_enqueued_collective": str(coll.get(pg, 0)), "last_started_collective": str(coll.get(pg, 0)),
                               "last_completed_collective": str(coll.get(pg, 0))} for pg in GROUPS},
            "entries": entries}


# --- an NCCL log -------------------------------------------------------------------
def nccl_log(with_calls):
    lines = []
    comm = {r: "0x55d0c8a%02x00" % r for r in range(WORLD)}
    pre = {r: "node-01:%d:%d [%d] " % (4200 + r, 4200 + r, r) for r in range(WORLD)}
    for r in range(WORLD):
        lines.append(pre[r] + "NCCL INFO cudaDriverVersion 12040")
    lines.append(pre[0] + "NCCL INFO NCCL version 2.21.5+cuda12.4")
    for r in range(WORLD):
        lines.append(pre[r] + "NCCL INFO ncclCommInitRank comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %d000 "
                              "commId 0x9f3c1d2e7a55b001 - Init START" % (comm[r], r, WORLD, r, r, r + 1))
    lines.append(pre[0] + "NCCL INFO Channel 00/02 :    0   1   2   3")
    lines.append(pre[0] + "NCCL INFO Channel 01/02 :    0   3   2   1")
    for r in range(WORLD):
        up = (r - 1) if r > 0 else -1
        down = r + 1 if r + 1 < WORLD else -1
        lines.append(pre[r] + "NCCL INFO Trees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d" % (down, r, up, down, r, up))
        lines.append(pre[r] + "NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read" % (r, r, (r + 1) % 4, (r + 1) % 4))
    for r in range(WORLD):
        lines.append(pre[r] + "NCCL INFO comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %d000 commId "
                              "0x9f3c1d2e7a55b001 - Init COMPLETE" % (comm[r], r, WORLD, r, r, r + 1))
    # A second communicator, of world ranks 1 and 3 (ncclCommSplit), with its own ring.
    sub = {1: "0x55d0c8b100", 3: "0x55d0c8b300"}
    for r, sr in ((1, 0), (3, 1)):
        lines.append(pre[r] + "NCCL INFO ncclCommSplit comm %s rank %d nranks 2 cudaDev %d nvmlDev %d busId %d000 "
                              "commId 0x51e7a0c3d2b4f009 - Init START" % (sub[r], sr, r, r, r + 1))
    lines.append(pre[1] + "NCCL INFO Channel 00/01 :    0   1")
    for r, sr in ((1, 0), (3, 1)):
        lines.append(pre[r] + "NCCL INFO comm %s rank %d nranks 2 cudaDev %d nvmlDev %d busId %d000 commId "
                              "0x51e7a0c3d2b4f009 - Init COMPLETE" % (sub[r], sr, r, r, r + 1))
    if with_calls:
        ops = [("AllReduce", 1048576, 7, 0, 0), ("Broadcast", 4096, 7, 0, 1), ("AllGather", 1024, 9, 0, 0),
               ("AllReduce", 65536, 7, 2, 0)]
        for i, (op, count, dt, red, root) in enumerate(ops):
            for r in range(WORLD):
                lines.append(pre[r] + "NCCL INFO %s: opCount %x sendbuff 0x7f00%04x recvbuff 0x7f01%04x count %d datatype %d "
                                      "op %d root %d comm %s [nranks=%d] stream 0x5611aa" % (op, i, i, i, count, dt, red, root,
                                                                                             comm[r], WORLD))
        # a ring exchange in one group: everyone sends right and receives from the left
        for r in range(WORLD):
            for op, peer in (("Send", (r + 1) % WORLD), ("Recv", (r - 1) % WORLD)):
                lines.append(pre[r] + "NCCL INFO %s: opCount %x sendbuff 0x7f02 recvbuff 0x7f03 count 2048 datatype 7 "
                                      "op 0 root %d comm %s [nranks=%d] stream 0x5611aa" % (op, len(ops), peer, comm[r], WORLD))
        for r in (1, 3):
            lines.append(pre[r] + "NCCL INFO AllReduce: opCount 0 sendbuff 0x7f04 recvbuff 0x7f04 count 8192 datatype 7 "
                                  "op 0 root 0 comm %s [nranks=2] stream 0x5611aa" % sub[r])
    return "\n".join(lines) + "\n"


# --- all-to-all with split sizes ------------------------------------------------------
# Three ranks route tokens of A2A_ROW elements unevenly: rank r sends A2A_TABLE[r][p]
# tokens to rank p (a mixture of experts' dispatch), then all three exchange two tokens
# each (an even all-to-all) and all-reduce.
A2A_RANKS = 3
A2A_ROW = 4
A2A_TABLE = [[2, 0, 5], [1, 3, 1], [4, 2, 0]]
A2A_GROUP = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2]"}}


def a2a_entry(i, seq, name, ins, outs, extra=None):
    t = BASE_NS + i * 1_000_000
    e = {"record_id": i, "pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": seq,
         "p2p_seq_id": 0, "op_id": seq, "profiling_name": name, "time_created_ns": t, "duration_ms": 0.2,
         "input_sizes": ins, "input_dtypes": ["Float"] * len(ins), "output_sizes": outs,
         "output_dtypes": ["Float"] * len(outs), "state": "completed", "time_discovered_started_ns": t + 1000,
         "time_discovered_completed_ns": t + 300_000, "retired": True, "timeout_ms": 600000, "is_p2p": False}
    e.update(extra or {})
    return e


def a2a_fr(rank, variant):
    """variant "list": all_to_all with one tensor per peer, as ProcessGroupNCCL records
    it; "single": all_to_all_single, whose dump has the whole tensors only; "mismatch":
    the split sizes `collscope record` adds, with rank 2 expecting 3 tokens from rank 0
    where rank 0 sends 5."""
    row = A2A_TABLE[rank]
    col = [A2A_TABLE[p][rank] for p in range(A2A_RANKS)]
    if variant == "list":
        first = a2a_entry(0, 1, "nccl:all_to_all", [[n, A2A_ROW] for n in row], [[n, A2A_ROW] for n in col])
    else:
        extra = None
        if variant == "mismatch":
            out_split = list(col)
            if rank == 2:
                out_split[0] = 3
            extra = {"input_split_sizes": row, "output_split_sizes": out_split}
        first = a2a_entry(0, 1, "nccl:all_to_all", [[sum(row), A2A_ROW]], [[sum(col), A2A_ROW]], extra)
    even = a2a_entry(1, 2, "nccl:all_to_all", [[2, A2A_ROW]] * A2A_RANKS, [[2, A2A_ROW]] * A2A_RANKS)
    last = a2a_entry(2, 3, "nccl:all_reduce", [[1024]], [[1024]])
    return {"version": "2.4", "pg_config": A2A_GROUP, "entries": [first, even, last]}


def a2a_kineto(rank):
    """Newer PyTorch's profiler: record_param_comms with "In split size" and "Out split
    size" (rows per peer, as text), and "[]" for the even all-to-all."""
    row = A2A_TABLE[rank]
    col = [A2A_TABLE[p][rank] for p in range(A2A_RANKS)]
    calls = [("all_to_allv", sum(row) * A2A_ROW, sum(col) * A2A_ROW, str(row), str(col)),
             ("all_to_all", 6 * A2A_ROW, 6 * A2A_ROW, "[]", "[]"),
             ("allreduce", 1024, 1024, "[]", "[]")]
    events = []
    for i, (name, n_in, n_out, in_split, out_split) in enumerate(calls):
        args = {"External id": 10 + i, "Collective name": name, "dtype": "Float", "In msg nelems": n_in,
                "Out msg nelems": n_out, "In split size": in_split, "Out split size": out_split,
                "Global rank start": 0, "Global rank stride": 1, "Group size": A2A_RANKS,
                "Process Group Name": "0", "Process Group Description": "default_pg",
                "Process Group Ranks": "[0, 1, 2]", "Rank": rank, "Seq": i + 1}
        events.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 100 + rank, "tid": 1,
                       "ts": 1000.0 + 1000.0 * i, "dur": 20.0, "args": args})
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": A2A_RANKS},
            "baseTimeNanoseconds": BASE_NS, "traceEvents": events}


def main():
    for r in range(A2A_RANKS):
        for variant in ("list", "single", "mismatch"):
            write("a2a/fr_%s/nccl_trace_rank_%d" % (variant, r), a2a_fr(r, variant))
        write("a2a/kineto/rank%d.json" % r, a2a_kineto(r))
    for r in range(WORLD):
        write("kineto/rank%d.json" % r, kineto(r))
        for variant in ("ok", "desync", "hang", "straggler"):
            write("fr/%s/nccl_trace_rank_%d" % (variant, r), fr(r, variant))
    write("nccl/job.log", nccl_log(True))
    write("nccl/init.log", nccl_log(False))


if __name__ == "__main__":
    main()
