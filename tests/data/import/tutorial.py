"""The programs of PyTorch's tutorial "Writing Distributed Applications with PyTorch",
run on the gloo backend, for collscope's import tests (tests/data/import/make.sh).

    python3 tutorial.py PROGRAM RANKS [--profile DIR]

PROGRAM is one of the functions below. With --profile every rank runs under the
profiler (record_shapes=True) and writes DIR/rank<R>.json; under `collscope record`
the recorder writes its own files. Sizes are small and fixed so that the tests can
check every call: the point is what each rank sends where, not speed.
"""

import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

N = 1024  # elements per tensor


def blocking(rank, size):
    """Point-to-point, blocking: rank 0 sends a tensor to rank 1."""
    tensor = torch.zeros(N)
    if rank == 0:
        tensor += 1
        dist.send(tensor=tensor, dst=1)
    else:
        dist.recv(tensor=tensor, src=0)


def nonblocking(rank, size):
    """Point-to-point, non-blocking: isend and irecv, then wait."""
    tensor = torch.zeros(N)
    if rank == 0:
        tensor += 1
        req = dist.isend(tensor=tensor, dst=1)
    else:
        req = dist.irecv(tensor=tensor, src=0)
    time.sleep(0.002)  # work while the message moves
    req.wait()


def allreduce(rank, size):
    """All-reduce on two groups of two, then on everyone."""
    left = dist.new_group([0, 1])
    right = dist.new_group([2, 3])
    tensor = torch.ones(N)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=left if rank < 2 else right)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)


def collectives(rank, size):
    """Broadcast, reduce, all-gather, scatter and gather, as the tutorial lists them."""
    tensor = torch.full((N,), float(rank))
    dist.broadcast(tensor, src=1)
    dist.reduce(tensor, dst=2, op=dist.ReduceOp.SUM)
    gathered = [torch.zeros(N) for _ in range(size)]
    dist.all_gather(gathered, tensor)
    piece = torch.zeros(N // size)
    dist.scatter(piece, [torch.ones(N // size) * i for i in range(size)] if rank == 0 else None, src=0)
    dist.gather(piece, [torch.zeros(N // size) for _ in range(size)] if rank == 3 else None, dst=3)
    dist.barrier()


def ring(rank, size):
    """The tutorial's all-reduce by hand: isend to the right, recv from the left."""
    send = torch.full((N,), float(rank + 1))
    recv = torch.zeros(N)
    send_buff = send.clone()
    recv_buff = send.clone()
    accum = send.clone()
    left = ((rank - 1) + size) % size
    right = (rank + 1) % size
    for i in range(size - 1):
        if i % 2 == 0:
            send_req = dist.isend(send_buff, right)
            dist.recv(recv_buff, left)
            accum[:] += recv_buff[:]
        else:
            send_req = dist.isend(recv_buff, right)
            dist.recv(send_buff, left)
            accum[:] += send_buff[:]
        send_req.wait()
    recv[:] = accum[:]
    assert float(recv[0]) == size * (size + 1) / 2


def ddp(rank, size):
    """Gradient averaging as DistributedDataParallel does it: the backward pass
    produces buckets of gradients, last layers first; each bucket's all-reduce starts
    as soon as it is ready and runs while the backward pass goes on."""
    buckets = [torch.zeros(N * (i + 1)) for i in range(3)]
    works = []
    for b in reversed(buckets):
        time.sleep(0.003)  # the backward pass of these layers
        b += rank
        works.append(dist.all_reduce(b, async_op=True))
    for w in works:
        w.wait()
    for b in buckets:
        b /= size


TOKEN = 8  # elements per token of the mixture of experts


def moe_table(size):
    """Tokens rank r's router sends to expert p: uneven, some none at all."""
    return [[(3 * r + 2 * p + 1) % 5 for p in range(size)] for r in range(size)]


def moe(rank, size):
    """A mixture of experts' layer, as MoE tutorials write it: every rank routes its
    tokens to the experts (all_to_all_single with split sizes: rank r sends
    moe_table[r][p] tokens to rank p), each expert works on what it received, and a
    second all_to_all_single with the transposed splits brings every token home. Then
    an all-to-all without split sizes (an even one)."""
    table = moe_table(size)
    send = table[rank]
    recv = [table[p][rank] for p in range(size)]
    tokens = torch.arange(sum(send) * TOKEN, dtype=torch.float32).reshape(-1, TOKEN) + 1000 * rank
    expert_in = torch.empty(sum(recv), TOKEN)
    dist.all_to_all_single(expert_in, tokens, output_split_sizes=recv, input_split_sizes=send)
    expert_in *= 2  # the expert
    home = torch.empty_like(tokens)
    dist.all_to_all_single(home, expert_in, output_split_sizes=send, input_split_sizes=recv)
    assert torch.equal(home, tokens * 2)
    even = torch.full((size * 4,), float(rank))
    mixed = torch.empty_like(even)
    dist.all_to_all_single(mixed, even)
    assert [float(x) for x in mixed[::4]] == [float(p) for p in range(size)]


def run(rank, size, program, port, profile_dir):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=size)
    fn = globals()[program]
    if profile_dir:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            fn(rank, size)
        os.makedirs(profile_dir, exist_ok=True)
        prof.export_chrome_trace(os.path.join(profile_dir, "rank%d.json" % rank))
    else:
        fn(rank, size)
    dist.barrier()
    dist.destroy_process_group()


def main():
    program, size = sys.argv[1], int(sys.argv[2])
    profile_dir = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--profile" else None
    port = 29600 + (os.getpid() % 300)
    mp.spawn(run, args=(size, program, port, profile_dir), nprocs=size, join=True)


if __name__ == "__main__":
    main()
