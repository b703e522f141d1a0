"""The collector paused over a simulation (kvplan.analysis.simulate.gc_scope) and a run's page
objects freed by reference counting when it returns (run.let_go): speed only (gcspeed66); the
outputs themselves are checked byte for byte by tests.benches.gcspeed66."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest

from kvplan.analysis.simulate import run as run_mod
from kvplan.analysis.simulate.gc_scope import collector_paused
from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.sglang_mamba_radix import MambaRadixTree
from tests.sglang_radix import three_requests
from tests.test_simulate_sglang_mamba_radix import _qwen3_next_sim


@pytest.fixture
def collector_on():  # type: ignore[no-untyped-def]
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_scope_is_reentrant_and_restores(collector_on) -> None:  # type: ignore[no-untyped-def]
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner scope does not turn it back on
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()  # restored on an exception too


def test_scope_leaves_an_off_collector_off(collector_on) -> None:  # type: ignore[no-untyped-def]
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_scope_across_threads(collector_on) -> None:  # type: ignore[no-untyped-def]
    """Two overlapping scopes in two threads: on again only when the last one closes."""
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            entered.set()
            release.wait()

    t = threading.Thread(target=other)
    with collector_paused():
        t.start()
        entered.wait()
    assert not gc.isenabled()  # the other thread's scope is still open
    release.set()
    t.join()
    assert gc.isenabled()


def test_simulate_pauses_the_collector_and_frees_its_pool(  # type: ignore[no-untyped-def]
        collector_on, monkeypatch, tmp_path: Path) -> None:
    """SGLang 0.5.9, Qwen3-Next (page 1, the mamba radix tree on the pool: the tree holds the
    pool and the pool the tree's eviction hook). Inside `simulate` the collector is off; with
    it off, every KVPool and tree of the run is gone once `simulate` returns (reference
    counting alone: the hook taken off, the finished requests holding no page), and the
    collector is on again."""
    seen: list[bool] = []
    inner = run_mod.metrics

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return inner(*args, **kwargs)

    monkeypatch.setattr(run_mod, "metrics", spy)
    sim, _ = _qwen3_next_sim()

    made: list[weakref.ref[object]] = []  # every pool and tree this run builds
    for cls in (KVPool, MambaRadixTree):
        init = cls.__init__

        def recording(self, *a, _init=init, **kw):  # type: ignore[no-untyped-def]
            made.append(weakref.ref(self))
            _init(self, *a, **kw)

        monkeypatch.setattr(cls, "__init__", recording)

    gc.collect()
    gc.disable()
    out = run_mod.simulate(sim, three_requests(tmp_path))
    assert seen == [False]
    assert not gc.isenabled()  # it was off when simulate was called: left off
    # Reference counting alone freed them (the collector is off): only this run's objects
    # are counted, whatever earlier tests in the process left alive.
    assert made and all(r() is None for r in made)
    assert out.finished and all(r.blocks == [] and r.kept == [] for r in out.finished)
    gc.enable()
    run_mod.simulate(sim, three_requests(tmp_path))
    assert gc.isenabled()
