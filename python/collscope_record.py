"""Records the torch.distributed calls of a program, one JSON file per rank.

`collscope record -o DIR -- python3 train.py` puts this module in every Python process
the command starts (through sitecustomize.py next to it, so that spawned children and
launcher workers are covered too). In a notebook:

    import collscope_record
    collscope_record.install("traces/")   # before or after init_process_group
    ...                                     # the distributed code
    collscope_record.dump()                 # also done at exit

It wraps send, recv, isend, irecv, batch_isend_irecv, every collective, new_group and
the wait() of the requests they return, and writes DIR/rank<R>.json in the format of
PyTorch's Flight Recorder dumps: entries with collective_seq_id, p2p_seq_id,
profiling_name ("gloo:all_reduce", "gloo:send 0->1"), input_sizes, input_dtypes,
output_sizes, output_dtypes, state, time_created_ns, time_discovered_started_ns,
time_discovered_completed_ns, duration_ms, is_p2p, plus pg_config. So any PyTorch
version on any backend (gloo on a laptop included) gives files that `collscope import`
and `collscope analyze` read. It adds what the Flight Recorder leaves out: "rank",
"world_size" and "backend" at the top, and per entry "peer" and "root" (world ranks),
"reduce_op", "async_op", "time_returned_ns", "time_wait_started_ns",
"time_wait_completed_ns", "call_site" (the program line that made the call) and, for
all_to_all_single with split sizes, "input_split_sizes" and "output_split_sizes" (rows
of the first dimension per peer, as given; all_to_all's list of tensors already shows
each peer's block in input_sizes and output_sizes).

Only calls made through torch.distributed's Python functions are seen: collectives
that C++ makes directly (DistributedDataParallel's gradient buckets) are not; the
Flight Recorder itself (TORCH_NCCL_TRACE_BUFFER_SIZE) or the profiler sees those.

Python's standard library and torch only.
"""

import atexit
import inspect
import json
import os
import sys
import threading
import time

__all__ = ["install", "dump", "recording"]

_VERSION = "2.4"  # the Flight Recorder dump format it follows
_THIS_FILE = os.path.abspath(__file__)

_COLLECTIVES = {
    # function: (profiling name, kind)
    "all_reduce": "all_reduce",
    "all_reduce_coalesced": "all_reduce_coalesced",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "all_gather": "all_gather",
    "all_gather_into_tensor": "_allgather_base",
    "_all_gather_base": "_allgather_base",
    "reduce_scatter": "reduce_scatter",
    "reduce_scatter_tensor": "_reduce_scatter_base",
    "_reduce_scatter_base": "_reduce_scatter_base",
    "all_to_all": "all_to_all",
    "all_to_all_single": "all_to_all",
    "gather": "gather",
    "scatter": "scatter",
    "barrier": "barrier",
    "monitored_barrier": "barrier",
}
_P2P = {"send": "send", "recv": "recv", "isend": "send", "irecv": "recv"}

_DTYPE_NAMES = {
    "torch.float32": "Float", "torch.float64": "Double", "torch.float16": "Half",
    "torch.bfloat16": "BFloat16", "torch.int64": "Long", "torch.int32": "Int",
    "torch.int16": "Short", "torch.int8": "Char", "torch.uint8": "Byte", "torch.bool": "Bool",
    "torch.complex64": "ComplexFloat", "torch.complex128": "ComplexDouble",
}

_state = None
_state_lock = threading.Lock()


def _dtype_name(t):
    return _DTYPE_NAMES.get(str(t.dtype), str(t.dtype).replace("torch.", ""))


def _reduce_name(op):
    names = (("PREMUL_SUM", "sum"), ("SUM", "sum"), ("PRODUCT", "prod"), ("MIN", "min"), ("MAX", "max"),
             ("AVG", "avg"))
    # ReduceOp members compare equal to themselves; their text differs between versions.
    try:
        import torch.distributed as dist

        for key, name in names:
            member = getattr(dist.ReduceOp, key, None)
            if member is not None and op == member:
                return name
    except Exception:  # noqa: BLE001
        pass
    text = str(op).upper()
    for key, name in names:
        if key in text:
            return name
    return ""


def _tensors(value):
    """The tensors in an argument: a tensor, or a list of them (or of lists)."""
    if value is None:
        return []
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return [value]
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            out.extend(_tensors(v))
        return out
    return []


def _call_site():
    frame = sys._getframe(2)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if name != _THIS_FILE and os.sep + "torch" + os.sep not in name and "<frozen" not in name:
            return "%s:%d" % (os.path.basename(name), frame.f_lineno)
        frame = frame.f_back
    return ""


class _Recorder:
    def __init__(self, out_dir):
        self.out_dir = os.path.abspath(out_dir)
        self.lock = threading.RLock()
        self.local = threading.local()
        self.entries = []
        self.groups = {}         # id(process group) -> [name, desc, ranks, group object]
        self.default_group = None
        self.seq = {}            # group name -> [collective seq, p2p seq, op id]
        self.rank = None
        self.world = None
        self.backend = ""
        self.dirty = False
        self.next_group = 1
        self.dist = None
        self.writer = None

    # --- groups ----------------------------------------------------------------------
    def _world_info(self):
        dist = self.dist
        if self.rank is None and dist is not None and dist.is_initialized():
            self.rank = dist.get_rank()
            self.world = dist.get_world_size()
            try:
                self.backend = str(dist.get_backend())
            except Exception:  # noqa: BLE001 - any backend name will do
                self.backend = ""
            self.default_group = ["0", "default_pg", list(range(self.world)), None]
            self._start_writer()

    def group_of(self, group):
        self._world_info()
        if group is None:
            return self.default_group
        dist = self.dist
        try:
            if group is dist.group.WORLD:
                return self.default_group
        except Exception:  # noqa: BLE001
            pass
        default = getattr(dist, "_get_default_group", None)
        try:
            if default is not None and group is default():
                return self.default_group
        except Exception:  # noqa: BLE001
            pass
        info = self.groups.get(id(group))
        if info is not None and info[3] is group:
            return info
        # A group made before recording began: ask torch for its ranks.
        try:
            ranks = list(dist.get_process_group_ranks(group))
        except Exception:  # noqa: BLE001
            try:
                mapping = dist._pg_group_ranks[group]
                ranks = [g for g, _ in sorted(mapping.items(), key=lambda kv: kv[1])]
            except Exception:  # noqa: BLE001
                ranks = []
        name = getattr(group, "group_name", None) or str(self.next_group)
        self.next_group += 1
        info = [str(name), "", ranks, group]
        self.groups[id(group)] = info
        return info

    def new_group(self, group, ranks, desc):
        self._world_info()
        if group is None or self.world is None:
            return
        name = str(self.next_group)
        self.next_group += 1
        try:
            torch_name = getattr(group, "group_name", None)
            if torch_name:
                name = str(torch_name)
        except Exception:  # noqa: BLE001
            pass
        member_ranks = sorted(ranks) if ranks else list(range(self.world))
        self.groups[id(group)] = [name, desc or "new_group", member_ranks, group]
        self.dirty = True

    # --- entries ---------------------------------------------------------------------
    def begin(self, kind, func_name, args):
        """Records the start of a call; `args` are its arguments by name."""
        self._world_info()
        if self.rank is None:
            return None
        group = self.group_of(args.get("group"))
        ranks = group[2]

        def group_rank(world_rank):
            if world_rank is None:
                return -1
            try:
                return ranks.index(world_rank)
            except ValueError:
                return world_rank

        def world_rank(name, group_name):
            if args.get(name) is not None:
                return int(args[name])
            if args.get(group_name) is not None and ranks:
                return ranks[int(args[group_name])]
            return None

        inputs, outputs, peer, root, op, splits = [], [], None, None, "", {}
        p2p = func_name in _P2P
        if p2p:
            t = _tensors(args.get("tensor"))
            inputs, outputs = t, t
            peer = world_rank("dst", "group_dst") if _P2P[func_name] == "send" else world_rank("src", "group_src")
        elif kind == "all_reduce" or kind == "all_reduce_coalesced":
            inputs = outputs = _tensors(args.get("tensor", args.get("tensors")))
        elif kind == "broadcast":
            inputs = outputs = _tensors(args.get("tensor"))
            root = world_rank("src", "group_src")
        elif kind == "reduce":
            inputs = outputs = _tensors(args.get("tensor"))
            root = world_rank("dst", "group_dst")
        elif func_name == "all_gather":
            inputs, outputs = _tensors(args.get("tensor")), _tensors(args.get("tensor_list"))
        elif kind == "_allgather_base":
            inputs, outputs = _tensors(args.get("input_tensor")), _tensors(args.get("output_tensor"))
        elif func_name == "reduce_scatter":
            inputs, outputs = _tensors(args.get("input_list")), _tensors(args.get("output"))
        elif kind == "_reduce_scatter_base":
            inputs, outputs = _tensors(args.get("input")), _tensors(args.get("output"))
        elif func_name == "all_to_all":
            inputs, outputs = _tensors(args.get("input_tensor_list")), _tensors(args.get("output_tensor_list"))
        elif func_name == "all_to_all_single":
            inputs, outputs = _tensors(args.get("input")), _tensors(args.get("output"))
            for key in ("input_split_sizes", "output_split_sizes"):
                sizes = args.get(key)
                if sizes is not None and len(sizes) > 0:  # none or []: an even split
                    splits[key] = [int(x) for x in sizes]
        elif kind == "gather":
            inputs, outputs = _tensors(args.get("tensor")), _tensors(args.get("gather_list"))
            root = world_rank("dst", "group_dst")
        elif kind == "scatter":
            inputs, outputs = _tensors(args.get("scatter_list")), _tensors(args.get("tensor"))
            root = world_rank("src", "group_src")
        if "op" in args and args.get("op") is not None:
            op = _reduce_name(args["op"])
        elif kind in ("all_reduce", "reduce", "reduce_scatter", "_reduce_scatter_base", "all_reduce_coalesced"):
            op = "sum"
        asynchronous = func_name in ("isend", "irecv") or bool(args.get("async_op", False))

        with self.lock:
            counters = self.seq.setdefault(group[0], [0, 0, 0])
            if p2p:
                counters[1] += 1
            else:
                counters[0] += 1
            counters[2] += 1
            backend = self.backend or "c10d"
            name = backend + ":" + (_P2P[func_name] if p2p else kind)
            me = group_rank(self.rank)
            if p2p and peer is not None:
                other = group_rank(peer)
                name += " %d->%d" % (me, other) if _P2P[func_name] == "send" else " %d<-%d" % (me, other)
            now = time.time_ns()
            entry = {
                "record_id": len(self.entries),
                "pg_id": 0 if group is self.default_group else 1 + list(self.groups).index(id(group[3])),
                "process_group": [group[0], group[1]],
                "collective_seq_id": counters[0],
                "p2p_seq_id": counters[1],
                "op_id": counters[2],
                "profiling_name": name,
                "time_created_ns": now,
                "input_sizes": [list(t.shape) for t in inputs],
                "input_dtypes": [_dtype_name(t) for t in inputs],
                "output_sizes": [list(t.shape) for t in outputs],
                "output_dtypes": [_dtype_name(t) for t in outputs],
                "state": "started",
                "time_discovered_started_ns": now,
                "time_discovered_completed_ns": None,
                "retired": False,
                "timeout_ms": 0,
                "is_p2p": p2p,
                "async_op": asynchronous,
                "call_site": _call_site(),
            }
            if peer is not None:
                entry["peer"] = int(peer)
            if root is not None:
                entry["root"] = int(root)
            if op:
                entry["reduce_op"] = op
            entry.update(splits)
            self.entries.append(entry)
            self.dirty = True
        return entry

    def returned(self, entry, result, asynchronous):
        now = time.time_ns()
        with self.lock:
            entry["time_returned_ns"] = now
            if not asynchronous:
                self.complete(entry, now)
            self.dirty = True
        if entry.get("is_p2p") and entry.get("peer") is None and isinstance(result, int):
            entry["peer"] = result  # recv from any source returns the sender

    def complete(self, entry, now):
        entry["state"] = "completed"
        entry["retired"] = True
        entry["time_discovered_completed_ns"] = now
        entry["duration_ms"] = (now - entry["time_created_ns"]) / 1e6

    # --- writing ---------------------------------------------------------------------
    def snapshot(self):
        with self.lock:
            if self.rank is None:
                return None
            pg_config = {"0": {"name": "0", "desc": "default_pg", "ranks": str(list(range(self.world)))}}
            for info in self.groups.values():
                pg_config[info[0]] = {"name": info[0], "desc": info[1], "ranks": str(list(info[2]))}
            status = {}
            for name, c in self.seq.items():
                status[name] = {"last_enqueued_collective": str(c[0])}
            return {
                "version": _VERSION,
                "recorder": "collscope record",
                "rank": self.rank,
                "world_size": self.world,
                "backend": self.backend,
                "pg_config": pg_config,
                "pg_status": status,
                "entries": [dict(e) for e in self.entries],
            }

    def write(self):
        doc = self.snapshot()
        if doc is None:
            return None
        with self.lock:
            self.dirty = False
        os.makedirs(self.out_dir, exist_ok=True)
        path = os.path.join(self.out_dir, "rank%d.json" % doc["rank"])
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(doc, f)
        os.replace(tmp, path)  # readers see the old file or the whole new one
        return path

    def _start_writer(self):
        # Every second while there is news, so that a job that hangs and is killed
        # still leaves what it did behind.
        def loop():
            while True:
                time.sleep(1.0)
                try:
                    if self.dirty:
                        self.write()
                except Exception:  # noqa: BLE001 - never disturb the program
                    pass
        if self.writer is None:
            self.writer = threading.Thread(target=loop, name="collscope-record", daemon=True)
            self.writer.start()


class _Request:
    """Stands in for the request an asynchronous call returns, to see its wait()."""

    def __init__(self, work, entry, recorder):
        self._work = work
        self._entry = entry
        self._recorder = recorder

    def wait(self, *args, **kwargs):
        rec, entry = self._recorder, self._entry
        started = time.time_ns()
        result = self._work.wait(*args, **kwargs)
        now = time.time_ns()
        with rec.lock:
            if entry.get("state") != "completed":
                entry["time_wait_started_ns"] = started
                entry["time_wait_completed_ns"] = now
                rec.complete(entry, now)
                rec.dirty = True
        return result

    def is_completed(self, *args, **kwargs):
        done = self._work.is_completed(*args, **kwargs)
        if done:
            rec, entry = self._recorder, self._entry
            with rec.lock:
                if entry.get("state") != "completed":
                    rec.complete(entry, time.time_ns())
                    rec.dirty = True
        return done

    def __getattr__(self, name):
        return getattr(self._work, name)


def _wrap(rec, module, func_name, kind):
    fn = getattr(module, func_name, None)
    if fn is None or getattr(fn, "_collscope_wrapped", False):
        return
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return

    def wrapper(*args, **kwargs):
        depth = getattr(rec.local, "depth", 0)
        if depth:
            return fn(*args, **kwargs)  # a call torch makes inside another one
        rec.local.depth = 1
        try:
            entry = None
            try:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                entry = rec.begin(kind, func_name, dict(bound.arguments))
            except Exception:  # noqa: BLE001 - recording must never break the program
                entry = None
            result = fn(*args, **kwargs)
            if entry is None:
                return result
            asynchronous = entry["async_op"] and result is not None
            if entry["async_op"] and result is None:
                entry["async_op"] = False
            rec.returned(entry, result, asynchronous)
            if asynchronous and hasattr(result, "wait"):
                return _Request(result, entry, rec)
            return result
        finally:
            rec.local.depth = 0

    wrapper.__name__ = getattr(fn, "__name__", func_name)
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    wrapper.__wrapped__ = fn
    wrapper._collscope_wrapped = True
    setattr(module, func_name, wrapper)


def _wrap_batch(rec, module):
    fn = getattr(module, "batch_isend_irecv", None)
    if fn is None or getattr(fn, "_collscope_wrapped", False):
        return

    def wrapper(p2p_op_list):
        if getattr(rec.local, "depth", 0):
            return fn(p2p_op_list)
        rec.local.depth = 1
        try:
            entries = []
            try:
                for p in p2p_op_list:
                    name = getattr(getattr(p, "op", None), "__name__", "")
                    if name not in ("isend", "irecv"):
                        entries.append(None)
                        continue
                    peer = getattr(p, "peer", None)
                    args = {"tensor": p.tensor, "group": getattr(p, "group", None)}
                    args["dst" if name == "isend" else "src"] = peer
                    entries.append(rec.begin(None, name, args))
            except Exception:  # noqa: BLE001
                entries = []
            works = fn(p2p_op_list)
            if not entries or works is None:
                return works
            out = []
            for work, entry in zip(works, entries):
                if entry is None:
                    out.append(work)
                    continue
                rec.returned(entry, work, True)
                out.append(_Request(work, entry, rec))
            return out
        finally:
            rec.local.depth = 0

    wrapper._collscope_wrapped = True
    wrapper.__wrapped__ = fn
    setattr(module, "batch_isend_irecv", wrapper)


def _patch(rec, c10d):
    """Wraps torch.distributed's functions in the module and in torch.distributed."""
    import torch.distributed as dist_pkg  # the package re-exports them: patch both

    rec.dist = dist_pkg if hasattr(dist_pkg, "is_initialized") else c10d
    modules = [c10d]
    if dist_pkg is not c10d:
        modules.append(dist_pkg)
    for module in modules:
        for func_name, kind in _COLLECTIVES.items():
            _wrap(rec, module, func_name, kind)
        for func_name in _P2P:
            _wrap(rec, module, func_name, None)
        _wrap_batch(rec, module)
        _wrap_new_group(rec, module)
        _wrap_lifecycle(rec, module)


def _wrap_new_group(rec, module):
    fn = getattr(module, "new_group", None)
    if fn is None or getattr(fn, "_collscope_wrapped", False):
        return

    def wrapper(*args, **kwargs):
        group = fn(*args, **kwargs)
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
            ranks = bound.arguments.get("ranks")
            desc = bound.arguments.get("group_desc") or ""
            rec.new_group(group, list(ranks) if ranks is not None else None, desc)
        except Exception:  # noqa: BLE001
            pass
        return group

    wrapper._collscope_wrapped = True
    wrapper.__wrapped__ = fn
    setattr(module, "new_group", wrapper)


def _wrap_lifecycle(rec, module):
    for func_name in ("init_process_group", "destroy_process_group"):
        fn = getattr(module, func_name, None)
        if fn is None or getattr(fn, "_collscope_wrapped", False):
            continue

        def make(fn, func_name):
            def wrapper(*args, **kwargs):
                if func_name == "destroy_process_group":
                    try:
                        rec.write()
                    except Exception:  # noqa: BLE001
                        pass
                result = fn(*args, **kwargs)
                if func_name == "init_process_group":
                    rec._world_info()
                return result
            wrapper._collscope_wrapped = True
            wrapper.__wrapped__ = fn
            return wrapper

        setattr(module, func_name, make(fn, func_name))


def _exit_write():
    rec = _state
    if rec is not None:
        try:
            rec.write()
        except Exception:  # noqa: BLE001
            pass


def install(out_dir=None):
    """Starts recording this process's torch.distributed calls into out_dir
    (default: $COLLSCOPE_RECORD_DIR). Returns the recorder; calling it again is harmless."""
    global _state
    out_dir = out_dir or os.environ.get("COLLSCOPE_RECORD_DIR")
    if not out_dir:
        raise ValueError("collscope_record.install needs a folder (or $COLLSCOPE_RECORD_DIR)")
    with _state_lock:
        if _state is None:
            _state = _Recorder(out_dir)
            atexit.register(_exit_write)
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=_after_fork)
        elif os.path.abspath(out_dir) != _state.out_dir:
            _state.out_dir = os.path.abspath(out_dir)
    if "torch.distributed.distributed_c10d" in sys.modules:
        _patch(_state, sys.modules["torch.distributed.distributed_c10d"])
    else:
        _install_import_hook()
    return _state


def _after_fork():
    # A forked child starts its own record: the parent's entries are not its calls.
    global _state
    if _state is not None:
        out = _state.out_dir
        _state = _Recorder(out)


def dump():
    """Writes this rank's file now; returns its path (None before init_process_group)."""
    return _state.write() if _state is not None else None


def recording():
    """Whether this process records."""
    return _state is not None


def _install_import_hook():
    """Patches torch.distributed when (and if) the program imports it: processes that
    never use torch pay nothing."""
    import importlib.abc
    import importlib.machinery

    target = "torch.distributed.distributed_c10d"

    class _Loader(importlib.abc.Loader):
        def __init__(self, inner):
            self.inner = inner

        def create_module(self, spec):
            return self.inner.create_module(spec)

        def exec_module(self, module):
            self.inner.exec_module(module)
            try:
                if _state is not None:
                    _patch(_state, module)
            except Exception:  # noqa: BLE001 - never break the import
                pass

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target_module=None):
            if name != target:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return None
            spec.loader = _Loader(spec.loader)
            return spec

    if not any(type(f).__name__ == "_Finder" and getattr(f, "_collscope", False) for f in sys.meta_path):
        finder = _Finder()
        finder._collscope = True
        sys.meta_path.insert(0, finder)
