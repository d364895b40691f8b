"""torch.distributed's gloo all-reduce, timed as `collscope bench` times its calls, for
bench/mpi.sh's comparison of the mpi and cpu backends.

    python3 bench/torch_allreduce.py RANKS BYTES [-n ITERS] [-w WARMUP]

RANKS processes (torch.multiprocessing.spawn, gloo on 127.0.0.1) all-reduce a float32
tensor of BYTES bytes with SUM: WARMUP calls, a barrier, then ITERS back-to-back calls;
each rank's time per call is its elapsed time over ITERS, and the call's time is the
slowest rank's. Prints one line: bytes, time per call in microseconds, algbw and busbw
in GB/s (busbw = algbw * 2 (n - 1) / n, as nccl-tests and collscope bench count it).
torch's all_reduce works in place only. Exits 3 with a message when torch is missing.
"""

import os
import sys
import time


def worker(rank, size, port, nbytes, iters, warmup, queue):
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=size)
    x = torch.ones(max(1, nbytes // 4), dtype=torch.float32)
    for _ in range(warmup):
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
    per_call = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
    dist.all_reduce(per_call, op=dist.ReduceOp.MAX)  # the slowest rank's
    if rank == 0:
        queue.put(float(per_call[0]))
    dist.barrier()
    dist.destroy_process_group()


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    size, nbytes = int(args[0]), int(args[1])
    iters = int(args[args.index("-n") + 1]) if "-n" in args else 5
    warmup = int(args[args.index("-w") + 1]) if "-w" in args else 1
    try:
        import torch.multiprocessing as mp
    except ImportError:
        print("torch_allreduce.py: no torch in this python3 (apt-get install python3-torch)", file=sys.stderr)
        return 3
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    port = 29000 + os.getpid() % 500
    mp.spawn(worker, args=(size, port, nbytes, iters, warmup, queue), nprocs=size, join=True)
    seconds = queue.get()
    algbw = nbytes / seconds / 1e9
    busbw = algbw * 2 * (size - 1) / size
    print("%d %.2f %.3f %.3f" % (nbytes, seconds * 1e6, algbw, busbw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
