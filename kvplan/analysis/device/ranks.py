"""`kvplan verify --tp T --pp P`: T x P ranks on torch.distributed, each verifying its own shard.

Two ways to get ranks:

- spawned here: T x P local processes (``multiprocessing`` spawn), a gloo (CPU) or NCCL (CUDA)
  process group over a free localhost port; each child dies with its parent (Linux
  PR_SET_PDEATHSIG) and the parent terminates, then kills, every child on an error or Ctrl-C,
  so no process is left behind;
- joined: under ``torchrun`` (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE set) every process
  is one rank, the group is initialised from the environment (multi-node: torchrun's own
  ``--nnodes --node-rank --master-addr --master-port`` flags), and rank 0 reports.

Each rank measures independently, then the ranks agree on the number of blocks by an
all_reduce MIN, as vLLM takes the minimum over workers (``v1/core/kv_cache_utils.py:
get_kv_cache_configs`` unifies num_blocks across workers).
"""

from __future__ import annotations

import contextlib
import os
import queue as queue_mod
import signal
import socket
import sys
import threading
import time
from dataclasses import replace
from datetime import timedelta
from typing import Any

from kvplan._util.errors import DeviceError, InputError, KvplanError
from kvplan._util.progress import report
from kvplan._util.units import GiB, MiB
from kvplan.analysis.device.probe import make_device, resolve_budget, resolve_device
from kvplan.analysis.device.verify import VerifyResult, merge_ranks, plan_rank, verify
from kvplan.kv.cache import check_tp
from kvplan.model.spec import ModelSpec

PROCESS_GROUP_TIMEOUT_S = 300
# How long a rank joined through the environment (torchrun's RANK, WORLD_SIZE, MASTER_ADDR,
# MASTER_PORT) waits for the others to join (`verify --rendezvous-timeout`). torchrun starts
# every rank at once, so they meet within seconds; variables left in a shell by an earlier run
# would otherwise make verify wait the process group's 300 s for ranks that never come.
RENDEZVOUS_TIMEOUT_S = 60.0
# How long a stopped rank has to unwind (free its tensors, leave the process group) before it
# is killed. A rank blocked inside gloo/NCCL (waiting for a peer that failed) cannot run its
# Python SIGTERM handler and is killed after this; the OS frees its memory either way.
TERMINATE_GRACE_S = 2.0
_PR_SET_PDEATHSIG = 1
# One spawned CPU rank's own memory beyond its share of the KV budget: a Python process with
# torch and a gloo process group. Measured: 237 MiB peak RSS per rank (`verify --tp 2 --device
# cpu` of tests/test_verify_ranks.py's 7-layer spec, --budget-gib 0.004, torch 2.13.0+cpu,
# ps sampled every 0.2 s); 16 gpt2 ranks took 8.6 GiB in all (issue 32). Rounded up.
RANK_PROCESS_BYTES = 256 * MiB


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, as taskset and cgroups cpusets set it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_cpu_ranks(world: int, *, cpus: int, free_bytes: int, budget_bytes: int,
                    oversubscribe: bool = False, flags: str = "--tp x --pp") -> None:
    """Bounds on spawned CPU ranks, before any starts: at most one rank per usable CPU (each is
    a process with its own torch; --oversubscribe lets them share), and every rank's process
    and budget within the available memory."""
    if world > cpus and not oversubscribe:
        raise InputError(f"{flags}: {world} CPU ranks on {cpus} usable CPUs; at most {cpus} "
                         "(each rank is a process with its own torch): pass --oversubscribe to "
                         "let them share CPUs, or start them with torchrun across machines")
    need = world * (RANK_PROCESS_BYTES + budget_bytes)
    if need > free_bytes:
        most = max(1, free_bytes // (RANK_PROCESS_BYTES + budget_bytes))
        raise InputError(f"{flags}: {world} CPU ranks need about {need / GiB:.1f} GiB "
                         f"({RANK_PROCESS_BYTES // MiB} MiB per rank's process + its budget); "
                         f"{free_bytes / GiB:.1f} GiB is available: at most {most} ranks here "
                         "(or start them with torchrun across machines)")


def torchrun_env() -> dict[str, int] | None:
    """RANK / WORLD_SIZE / LOCAL_RANK / LOCAL_WORLD_SIZE when torchrun started this process."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return None
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local = int(os.environ.get("LOCAL_RANK", rank))
        local_world = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    except ValueError:
        raise InputError("RANK / WORLD_SIZE / LOCAL_RANK: expected integers (torchrun sets "
                         "them)") from None
    return {"rank": rank, "world": world, "local_rank": local, "local_world": local_world}


def _check_plan(spec: ModelSpec, kwargs: dict[str, Any], world: int, local_ranks: int, *,
                oversubscribe: bool = False) -> None:
    """Input errors before any process starts: every rank's plan and the shared CPU budget."""
    import torch  # noqa: F401  (resolve_device needs it)

    device = resolve_device(kwargs["device"])
    mem = make_device(device).probe() if device == "cpu" else None
    budget = kwargs.get("budget_bytes")
    if mem is not None:
        budget, _ = resolve_budget(mem, budget_bytes=budget,
                                   mem_fraction=kwargs.get("mem_fraction", 0.9),
                                   local_ranks=local_ranks)
        check_cpu_ranks(local_ranks, cpus=usable_cpus(), free_bytes=mem.free_bytes,
                        budget_bytes=budget, oversubscribe=oversubscribe,
                        flags=f"--tp {kwargs['tp']} --pp {kwargs['pp']}")
    if budget is None:
        return  # CUDA without --budget-gib: each rank reads its own GPU
    for rank in range(world):
        plan_rank(spec, rank=rank, tp=kwargs["tp"], pp=kwargs["pp"],
                  context=kwargs.get("context", 4096), kv_dtype=kwargs.get("kv_dtype", "bf16"),
                  block_size=kwargs.get("block_size"), budget=budget,
                  speculative_method=kwargs.get("speculative_method"),
                  num_speculative_tokens=kwargs.get("num_speculative_tokens", 0))


def _agree(result: VerifyResult, device: str) -> tuple[int, int]:
    """all_reduce MIN of (predicted, measured) blocks over the process group."""
    import torch
    import torch.distributed as dist

    t = torch.tensor([result.predicted_num_blocks, result.measured_num_blocks],
                     dtype=torch.int64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MIN)
    return int(t[0]), int(t[1])


def _backend(device: str) -> str:
    return "nccl" if device.startswith("cuda") else "gloo"


def _env_names(env: dict[str, int]) -> str:
    return f"RANK={env['rank']} and WORLD_SIZE={env['world']}"


def _join_store(env: dict[str, int], timeout_s: float) -> Any:
    """The rendezvous of a rank started by torchrun (or by anything that set its variables):
    torch's env:// store at MASTER_ADDR:MASTER_PORT; every rank waits at most `timeout_s` for
    all WORLD_SIZE ranks, then refuses, naming the variables that made this process join
    instead of starting its own ranks."""
    import torch.distributed as dist

    addr, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
    fix = ("unset them to let verify start its own ranks, or start every rank with torchrun "
           f"--nproc-per-node {env['world']}")
    if not addr or not port:
        raise InputError(f"{_env_names(env)} are set, as torchrun sets them, so verify joins "
                         "a group of ranks, but MASTER_ADDR and MASTER_PORT are not: " + fix)
    try:
        port_number = int(port)
        if not 0 < port_number < 65536:
            raise ValueError
    except ValueError:
        raise InputError(f"MASTER_PORT: expected a port number, got {port!r}") from None
    wait = timedelta(seconds=timeout_s)
    try:
        with _c_stderr_held():  # c10d logs each failed try, with a C++ stack, to fd 2
            # torch's own env:// rendezvous (a client of torchrun's agent store, or rank 0's
            # store), then a barrier: every rank has joined, or none goes on.
            store, _, _ = next(dist.rendezvous("env://", rank=env["rank"],
                                               world_size=env["world"], timeout=wait))
            key = f"kvplan/verify/joined/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}"
            if store.add(key, 1) == env["world"]:
                store.set(f"{key}/all", "1")
            store.wait([f"{key}/all"], wait)
            store.set_timeout(timedelta(seconds=PROCESS_GROUP_TIMEOUT_S))
            return store
    except Exception as exc:  # torch's DistStoreError, a timeout, an address in use, ...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:120]
        what = (f"it did not form within {timeout_s:g} s (--rendezvous-timeout)"
                if "timed out" in first.lower() else f"it could not form ({first})")
        raise InputError(f"{_env_names(env)} are set (MASTER_ADDR={addr}, MASTER_PORT={port}): "
                         f"verify joined that group as rank {env['rank']}, and {what}; {fix}"
                         ) from None


@contextlib.contextmanager
def _c_stderr_held() -> Any:
    """File descriptor 2 pointed at a temporary file for the block (what C++ code writes there
    is dropped); Python's sys.stderr is untouched."""
    import tempfile

    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def _rank_run(spec: ModelSpec, kwargs: dict[str, Any], *, rank: int, world: int,
              local_rank: int, local_world: int, init_method: str | None = None,
              store: Any = None, gather: bool = False,
              ) -> tuple[VerifyResult, tuple[int, int], list[VerifyResult] | None]:
    import torch
    import torch.distributed as dist

    device = resolve_device(kwargs["device"], local_rank=local_rank)
    if device.startswith("cuda"):
        torch.cuda.set_device(device)
    dist.init_process_group(_backend(device), init_method=init_method, store=store, rank=rank,
                            world_size=world, timeout=timedelta(seconds=PROCESS_GROUP_TIMEOUT_S))
    try:
        run_kwargs = {k: v for k, v in kwargs.items() if k != "device"}
        result = verify(spec, device=device, rank=rank, world_size=world,
                        local_rank=local_rank, local_ranks=local_world, **run_kwargs)
        agreed = _agree(result, device)
        everyone: list[Any] | None = None
        if gather:  # torchrun: every rank's result to every rank (rank 0 reports)
            everyone = [None] * world
            dist.all_gather_object(everyone, result)
        dist.barrier()
    finally:
        with contextlib.suppress(Exception):
            dist.destroy_process_group()
    return result, agreed, everyone


@contextlib.contextmanager
def _sigint_held_from_children() -> Any:
    """Start the ranks so that they never see Ctrl-C, without this process losing one.

    Ctrl-C reaches the whole foreground process group. Only this process acts on it (it turns
    it into KeyboardInterrupt, then stops the ranks with SIGTERM, which each handles by
    unwinding through verify's cleanup); a rank interrupted mid-import would print a traceback.
    While the ranks start, SIGINT is blocked in this thread (the mask survives fork and spawn's
    exec, so a rank starts with it blocked, and `_child` then ignores it) and a Ctrl-C that still
    reaches this process is only noted; it is acted on once every rank has started. (Setting
    SIGINT to SIG_IGN over that window, as before, dropped such a Ctrl-C: the run went on.)"""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are the main thread's; `_child` ignores SIGINT first thing
        return
    if not hasattr(signal, "pthread_sigmask"):  # no signal masks: the ranks inherit SIG_IGN
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)
        return
    noted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: noted.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a pending Ctrl-C arrives here
    if noted and callable(previous):  # (an inherited SIG_IGN stays ignored)
        previous(signal.SIGINT, None)


def _die_with_parent() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _child(rank: int, world: int, port: int, spec: ModelSpec, kwargs: dict[str, Any],
           out: Any) -> None:
    """One spawned rank: its verify, then the agreed minimum, reported through `out`."""
    # Started with SIGINT blocked (`_sigint_held_from_children`): ignoring it also drops a
    # Ctrl-C already pending; the parent alone answers Ctrl-C, with SIGTERM to each rank.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    import torch

    # The ranks share this machine's cores: one intra-op pool each of cores / ranks threads,
    # not `world` pools of every core spinning against each other (torchrun likewise sets
    # OMP_NUM_THREADS=1 when it starts several processes per node).
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # unwinds through verify's finally: tensors are freed

    signal.signal(signal.SIGTERM, on_term)
    try:
        result, agreed, _ = _rank_run(spec, kwargs, rank=rank, world=world, local_rank=rank,
                                      local_world=world, init_method=f"tcp://127.0.0.1:{port}")
        message, code = ("ok", rank, result, agreed), 0
    except KeyboardInterrupt:
        message, code = ("interrupted", rank, None, None), 130
    except KvplanError as exc:
        message, code = ("error", rank, type(exc).__name__, str(exc)), 1
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        message, code = ("error", rank, "DeviceError", f"{type(exc).__name__}: {first[:300]}"), 1
    _exit_with(out, message, code)


def _exit_with(out: Any, message: tuple[Any, ...], code: int) -> None:
    """Report, then leave at once: the tensors are freed and the process group destroyed, and
    the interpreter's own teardown (torch's and gloo's threads) took 1.3 s per rank."""
    with contextlib.suppress(Exception):
        out.put(message)
        out.close()
        out.join_thread()  # the message is in the pipe before the process ends
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(procs: list[Any]) -> None:
    """Terminate every child still running, wait, then kill what is left (a Ctrl-C while they
    started may leave some never started: nothing to stop)."""
    procs = [p for p in procs if p.pid is not None]
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + TERMINATE_GRACE_S
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(TERMINATE_GRACE_S)


def _raise(kind: str, rank: int, message: str) -> None:
    text = f"rank {rank}: {message}"
    if kind == "InputError":
        raise InputError(text)
    raise DeviceError(text)


def _spawn(spec: ModelSpec, kwargs: dict[str, Any], world: int,
           on_started: Any = None) -> list[tuple[VerifyResult, tuple[int, int]]]:
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_child, args=(r, world, port, spec, kwargs, out),
                         name=f"kvplan-verify-rank{r}", daemon=True) for r in range(world)]
    results: dict[int, tuple[VerifyResult, tuple[int, int]]] = {}
    try:
        with _sigint_held_from_children():
            for p in procs:
                p.start()
        if on_started is not None:
            on_started([p.pid for p in procs])
        while len(results) < world:
            report(f"verify: {world} ranks", len(results), world)
            try:
                status, rank, a, b = out.get(timeout=0.5)
            except queue_mod.Empty:
                dead = [(r, p.exitcode) for r, p in enumerate(procs)
                        if p.exitcode not in (None, 0) and r not in results]
                if dead:
                    raise DeviceError(f"rank {dead[0][0]} exited with code {dead[0][1]} "
                                      "without a result") from None
                continue
            if status == "ok":
                results[rank] = (a, b)
            elif status == "interrupted":
                raise KeyboardInterrupt
            else:
                _raise(a, rank, b)
        for p in procs:
            p.join(TERMINATE_GRACE_S)
    finally:
        _stop(procs)
        out.close()
        out.join_thread()
    return [results[r] for r in range(world)]


def verify_ranks(spec: ModelSpec, *, tp: int = 1, pp: int = 1, on_started: Any = None,
                 rendezvous_timeout_s: float = RENDEZVOUS_TIMEOUT_S,
                 oversubscribe: bool = False, **kwargs: Any) -> VerifyResult | None:
    """Verify every rank of a `tp` x `pp` layout: in this process (one rank), in spawned local
    ranks, or as this torchrun process's rank (joined within `rendezvous_timeout_s`). Returns
    the merged result (None on torchrun ranks other than 0, which report nothing)."""
    world = tp * pp
    # The heads' rule `estimate` applies (vLLM and SGLang refuse the layout), before any rank
    # starts: `verify gpt2 --tp 16` started 16 ranks for 12 heads (issue 32).
    check_tp(spec, tp)
    kwargs = {"device": "auto", **kwargs, "tp": tp, "pp": pp}
    env = torchrun_env()
    if env is not None:
        if env["world"] != world:
            raise InputError(f"--tp {tp} --pp {pp}: needs {world} ranks, torchrun started "
                             f"{env['world']} (WORLD_SIZE)")
        if not 0 <= env["rank"] < world:
            raise InputError(f"RANK={env['rank']}: must be >= 0 and < WORLD_SIZE={world}")
        store = _join_store(env, rendezvous_timeout_s)
        _, _, everyone = _rank_run(spec, kwargs, rank=env["rank"], world=world,
                                   local_rank=env["local_rank"],
                                   local_world=env["local_world"], store=store, gather=True)
        if env["rank"] != 0 or everyone is None:
            return None
        return merge_ranks(everyone)
    if world == 1:
        result = verify(spec, **kwargs)
        return replace(result, ranks=(result.rank_record(),))
    _check_plan(spec, kwargs, world, local_ranks=world, oversubscribe=oversubscribe)
    pairs = _spawn(spec, kwargs, world, on_started=on_started)
    merged = merge_ranks([r for r, _ in pairs])
    agreed = pairs[0][1]
    if (merged.predicted_num_blocks, merged.measured_num_blocks) != agreed:
        raise DeviceError(f"internal: all_reduce MIN gave {agreed}, the results "
                          f"{(merged.predicted_num_blocks, merged.measured_num_blocks)}")
    return merged

