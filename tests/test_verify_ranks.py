"""verify's new layouts, ranks and search branches on CPU (small budgets: each test is quick)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kvplan._util.errors import DeviceError
from kvplan._util.units import GiB, MiB
from kvplan.analysis.device.alloc import search_blocks
from kvplan.analysis.device.probe import CPU_GRANULARITY_BYTES, CpuDevice
from kvplan.cli.common import load_spec

torch = pytest.importorskip("torch")


class FakeDevice(CpuDevice):
    """Usage is what the test says: the pool's bytes times an overhead, plus what was added."""

    def __init__(self, *, pool: int, overhead: float = 1.0, oom_after: int | None = None):
        super().__init__()
        self.pool, self.overhead, self.added, self.oom_after = pool, overhead, 0, oom_after

    def usage(self) -> int:
        return int(self.pool * self.overhead) + self.added


def test_search_overhead_branch_shrinks_the_pool() -> None:
    dev = FakeDevice(pool=100 * 1000, overhead=1.05)  # 100 blocks of 1,000 B measure 105,000

    def shrink(blocks: int) -> None:
        dev.pool = blocks * 1000

    out = search_blocks(dev, pool_blocks=100, block_bytes=1000, budget=100_500,
                        shrink_pool=shrink, add_blocks=lambda n: [])
    assert out.pool_blocks < 100 and "allocator overhead" in out.limit
    assert dev.usage() <= 100_500


@pytest.mark.parametrize(("max_charged", "blocks", "charged"),
                         [(50_000, 100, 4096), (0, 96, 0), (1000, 97, 1000)])
def test_search_charges_use_beyond_the_pool_at_its_first_reading(max_charged, blocks,
                                                                 charged) -> None:
    # 100 blocks of 1,000 B held and 4,096 B more measured (a page of the interpreter's heap on
    # CPU); the budget 100,500 B fits the 100 blocks with 500 B to spare.
    # - charge up to 50,000: min(104,096 - 100,000, 50,000) = 4,096, budget 104,596 >= 104,096:
    #   no shrink, and 104,096 + 1,000 > 104,596: no block added: 100.
    # - charge 0: 104,096 > 100,500, shrink by cdiv(3,596, 1,000) = 4 to 96 (100,096 B); one
    #   more is 101,096 > 100,500: 96.
    # - charge up to 1,000: budget 101,500, shrink by cdiv(2,596, 1,000) = 3 to 97 (101,096 B);
    #   one more is 102,096 > 101,500: 97.
    dev = FakeDevice(pool=100 * 1000)
    dev.added = 4096

    def shrink(n: int) -> None:
        dev.pool = n * 1000

    out = search_blocks(dev, pool_blocks=100, block_bytes=1000, budget=100_500,
                        shrink_pool=shrink, add_blocks=lambda n: [],
                        max_charged_bytes=max_charged)
    assert (out.blocks, out.pool_blocks, out.charged_bytes) == (blocks, blocks, charged)


def test_search_oom_branch_is_a_measured_limit() -> None:
    dev = FakeDevice(pool=10_000)
    calls = {"n": 0}

    def add(n: int) -> list[int]:
        calls["n"] += 1
        if calls["n"] > 2:
            raise MemoryError("simulated")
        dev.added += n * 1000
        return [n]

    out = search_blocks(dev, pool_blocks=10, block_bytes=1000, budget=1_000_000,
                        shrink_pool=lambda n: None, add_blocks=add)
    assert out.limit == "an out-of-memory error" and out.blocks > 10


def test_search_refuses_when_nothing_fits() -> None:
    dev = FakeDevice(pool=1000, overhead=50.0)
    with pytest.raises(DeviceError):
        search_blocks(dev, pool_blocks=1, block_bytes=1000, budget=10,
                      shrink_pool=lambda n: None, add_blocks=lambda n: [])


@pytest.mark.parametrize(("model", "budget_mib", "context", "tp"),
                         [("qwen3-next-80b-a3b", 160, 512, 1),
                          ("nemotron-nano-9b-v2", 160, 512, 4),  # rank 0 of TP 4: its shard
                          ("deepseek-v3.2", 48, 256, 1), ("llama-4-scout", 64, 512, 1)])
def test_every_layout_measures_its_prediction_within_budget(model, budget_mib, context,
                                                            tp) -> None:
    from kvplan.analysis.device.verify import verify

    r = verify(load_spec(model), device="cpu", context=context, budget_bytes=budget_mib * MiB,
               max_decode_batch=1, tp=tp)
    assert r.tensor_bytes == r.predicted_bytes
    assert r.measured_num_blocks == r.predicted_num_blocks
    assert r.peak_bytes <= r.budget_bytes + 4 * MiB and r.peak_ok
    assert r.decode_batch == 1 and r.decode_output_finite and r.freed_ok


def test_fp8_ds_mla_rows_and_indexer_keys() -> None:
    from kvplan.analysis.device.verify import verify

    r = verify(load_spec("deepseek-v3.2"), device="cpu", context=256, kv_dtype="fp8",
               budget_bytes=32 * MiB, max_decode_batch=1)
    assert "ds_mla [64, 656] uint8" in r.slot_shape and "indexer [64, 132] uint8" in r.slot_shape
    assert r.measured_num_blocks == r.predicted_num_blocks and r.decode_output_finite


def test_tp2_ranks_on_gloo_agree_on_the_minimum() -> None:
    from kvplan.analysis.device.ranks import verify_ranks

    r = verify_ranks(load_spec("qwen3-next-80b-a3b"), tp=2, pp=1, device="cpu", context=256,
                     budget_bytes=96 * MiB, max_decode_batch=1)
    assert [x["rank"] for x in r.ranks] == [0, 1]
    for x in r.ranks:
        assert x["measured_num_blocks"] == x["predicted_num_blocks"]
    assert r.measured_num_blocks == min(x["measured_num_blocks"] for x in r.ranks)


# --- ranks: spawned, joined under torchrun, interrupted, failing ------------------------------
# A 7-layer spec: PP 2 gives stage 0 four layers and stage 1 three, so the ranks' predictions
# differ and the minimum is a real choice. Tiny budgets: each rank's run is well under a second;
# what the tests pay for is starting processes (torch's import in each).

TINY_YAML = """name: Tiny GQA 7
source: test
num_hidden_layers: 7
hidden_size: 256
vocab_size: 1000
attention: {kind: gqa, num_attention_heads: 8, num_key_value_heads: 4, head_dim: 32}
mlp: {intermediate_size: 512}
"""
TINY_ARGS = ["--device", "cpu", "--budget-gib", "0.004", "--context", "128"]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "kvplan", "verify", *args]


def _check_ranks(data: dict, world: int) -> None:
    ranks = data["ranks"]
    assert [x["rank"] for x in ranks] == list(range(world))
    for x in ranks:
        # Exact: the interpreter's heap pages a spawned rank touches after the pool's
        # measurement (its anonymous RSS on CPU) are charged with the allocator's overhead at
        # the search's first reading (alloc.search_blocks), not against the blocks; the budget
        # fits these pools by 2,359 B, less than a page.
        assert x["measured_num_blocks"] == x["predicted_num_blocks"], x
        assert x["peak_bytes"] <= data["budget_bytes"] + CPU_GRANULARITY_BYTES, x
        assert x["peak_ok"] and x["freed_ok"] and x["decode_output_finite"]
    assert data["predicted_num_blocks"] == min(x["predicted_num_blocks"] for x in ranks)
    assert data["measured_num_blocks"] == min(x["measured_num_blocks"] for x in ranks)


def test_pp2_cli_every_rank_measures_its_prediction(write_spec) -> None:
    path = write_spec(TINY_YAML)
    proc = subprocess.run(_cli(str(path), "--pp", "2", *TINY_ARGS, "-f", "json"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    _check_ranks(data, 2)
    stage0, stage1 = data["ranks"]
    assert (stage0["num_layers"], stage1["num_layers"]) == (4, 3)
    # 4 layers take 4/3 the bytes per block of 3 layers: fewer blocks in the same budget.
    assert stage0["predicted_num_blocks"] < stage1["predicted_num_blocks"]
    assert data["rank"] == 0 and data["predicted_num_blocks"] == stage0["predicted_num_blocks"]


def test_tp2_pp2_four_ranks(write_spec) -> None:
    from kvplan.analysis.device.ranks import verify_ranks

    spec = load_spec(str(write_spec(TINY_YAML)))
    # Four ranks on CI's two CPUs: past the one-rank-per-CPU bound, as --oversubscribe allows.
    r = verify_ranks(spec, tp=2, pp=2, device="cpu", context=128,
                     budget_bytes=int(0.004 * GiB), max_decode_batch=2, oversubscribe=True)
    data = r.to_dict()
    _check_ranks(data, 4)
    assert [(x["stage"], x["tp_rank"]) for x in r.ranks] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_torchrun_join_path(write_spec) -> None:
    """Two processes started as torchrun starts them (RANK, WORLD_SIZE, LOCAL_RANK,
    LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT): they join one gloo group, rank 0 reports."""
    from kvplan.analysis.device.ranks import _free_port

    path = write_spec(TINY_YAML)
    port = str(_free_port())
    procs = []
    for rank in range(2):
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": str(rank),
               "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
               "OMP_NUM_THREADS": "1"}
        procs.append(subprocess.Popen(_cli(str(path), "--tp", "2", *TINY_ARGS, "-f", "json"),
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    assert outs[1][0] == ""  # rank 1 reports nothing
    data = json.loads(outs[0][0])
    _check_ranks(data, 2)
    assert data["world_size"] == 2 and data["tp"] == 2


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has ended
    except FileNotFoundError:
        return True


def _wait_gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not all(_gone(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if not _gone(p)]


# How an interactive shell starts a foreground job: SIGINT at its default, unblocked. A process
# inherits an ignored SIGINT across exec, and Python then keeps ignoring it: a test suite run in the
# background by a non-interactive shell (`pytest &`, some CI runners) would start the CLI deaf to
# Ctrl-C, and it would finish its work with exit 0 (the flaky failure of issue 28).
_AS_A_TERMINAL_STARTS_IT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_stops_every_rank(write_spec) -> None:
    """SIGINT to the CLI's whole process group, as a terminal's Ctrl-C: exit 130, one line,
    and every rank it started gone within seconds."""
    path = write_spec(TINY_YAML)
    cmd = [sys.executable, "-c", _AS_A_TERMINAL_STARTS_IT, *_cli(str(path), "--tp", "2",
                                                                 *TINY_ARGS)[1:]]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        line = proc.stderr.readline()
        assert "started ranks" in line, line
        pids = [int(p) for p in line.split("started ranks", 1)[1].split()]
        assert len(pids) == 2
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [
        "kvplan: interrupted: every rank stopped and its memory freed"]
    assert _wait_gone(pids) == []


def _failing_child(rank, world, port, spec, kwargs, out) -> None:
    """A spawned rank whose rank 1 fails at once (as a rank's error would)."""
    from kvplan.analysis.device import ranks

    if rank == 1:
        ranks._exit_with(out, ("error", 1, "DeviceError", "simulated failure"), 1)
    ranks._child(rank, world, port, spec, kwargs, out)


def test_an_error_in_one_rank_ends_every_rank(monkeypatch, write_spec) -> None:
    import typer
    from typer.testing import CliRunner

    from kvplan.analysis.device import ranks
    from kvplan.cli.verify_cmd import verify_cmd

    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command("verify")(verify_cmd)
    app.command("noop")(lambda: None)
    monkeypatch.setattr(ranks, "_child", _failing_child)
    result = CliRunner().invoke(app, ["verify", str(write_spec(TINY_YAML)), "--tp", "2",
                                      *TINY_ARGS])
    assert result.exit_code == 1, result.output
    started, *rest = result.stderr.strip().splitlines()
    assert rest == ["kvplan: error: rank 1: simulated failure"]
    pids = [int(p) for p in started.split("started ranks", 1)[1].split()]
    assert _wait_gone(pids) == []


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_ctrl_c_while_the_ranks_start_is_not_lost(monkeypatch, write_spec) -> None:
    """A Ctrl-C that comes while the ranks are being started is held, not dropped: it stops
    the run once they are started (SIGINT was set to SIG_IGN over that window before)."""
    import multiprocessing.context as mpc

    from kvplan.analysis.device.ranks import verify_ranks

    started: list[int] = []
    real_start = mpc.SpawnProcess.start

    def start_then_ctrl_c(self) -> None:
        real_start(self)
        started.append(self.pid)
        os.kill(os.getpid(), signal.SIGINT)  # as if Ctrl-C came right now

    monkeypatch.setattr(mpc.SpawnProcess, "start", start_then_ctrl_c)
    spec = load_spec(str(write_spec(TINY_YAML)))
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        verify_ranks(spec, tp=2, device="cpu", context=128, budget_bytes=int(0.004 * GiB),
                     max_decode_batch=1)
    assert time.monotonic() - t0 < 15
    assert len(started) == 2 and _wait_gone(started) == []


def test_stray_torchrun_variables_are_refused_naming_them(monkeypatch, write_spec) -> None:
    """RANK=0 WORLD_SIZE=2 left in a shell made `verify --tp 2` join a group of ranks that
    never came, for the process group's 300 s (issue 32): without MASTER_ADDR it is refused at
    once; with it, after --rendezvous-timeout; one line naming the variables, exit 2."""
    from typer.testing import CliRunner

    from kvplan.analysis.device.ranks import RENDEZVOUS_TIMEOUT_S, _free_port
    from kvplan.cli import app
    from kvplan.cli.verify_cmd import RENDEZVOUS_TIMEOUT_S as CLI_DEFAULT

    assert CLI_DEFAULT == RENDEZVOUS_TIMEOUT_S
    path = str(write_spec(TINY_YAML))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    monkeypatch.delenv("MASTER_PORT", raising=False)
    result = CliRunner().invoke(app, ["verify", path, "--tp", "2", *TINY_ARGS])
    assert result.exit_code == 2 and result.stdout == "", result.stderr
    assert result.stderr.splitlines() == [
        "kvplan: error: RANK=0 and WORLD_SIZE=2 are set, as torchrun sets them, so verify joins "
        "a group of ranks, but MASTER_ADDR and MASTER_PORT are not: unset them to let verify "
        "start its own ranks, or start every rank with torchrun --nproc-per-node 2"]
    port = _free_port()
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(port))
    t0 = time.monotonic()
    result = CliRunner().invoke(app, ["verify", path, "--tp", "2", *TINY_ARGS,
                                      "--rendezvous-timeout", "1"])
    assert time.monotonic() - t0 < 30
    assert result.exit_code == 2 and result.stdout == "", result.stderr
    assert result.stderr.splitlines() == [
        f"kvplan: error: RANK=0 and WORLD_SIZE=2 are set (MASTER_ADDR=127.0.0.1, MASTER_PORT="
        f"{port}): verify joined that group as rank 0, and it did not form within 1 s "
        "(--rendezvous-timeout); unset them to let verify start its own ranks, or start every "
        "rank with torchrun --nproc-per-node 2"]
