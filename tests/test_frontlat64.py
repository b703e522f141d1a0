"""tests/benches/frontlat64.py: the decomposition of a closed loop's turn, on a run worked by hand
and on the measured data."""

from __future__ import annotations

import pytest

from tests.benches import frontlat64 as f

# Two requests of one user, ms. Engine steps end at 10, 20, 30, 40, 50. A: sent at 0, at the API
# process at 1, drained at 2, first token in the step ending 10, last in the one ending 20; the
# client sees them at 12 and 22 and its stream closes at 23. B: sent at 24, at the API at 26, the
# core busy: drained only after the step ending 40 (at 40.1; the earliest the code allows is the
# end of the step after A's last, 30), first and last token at 50, seen at 52.
HAND = {"concurrency": 1, "prompt": 8, "output": 1,
        "steps": [[10.0, 10.5], [20.0, 20.5], [30.0, 30.5], [40.0, 40.5], [50.0, 50.5]],
        "requests": [[0.0, 12.0, 22.0, 23.0, 1.0, 2.0, 2.0, 10.0, 20.0],
                     [24.0, 52.0, 52.0, 53.0, 26.0, 40.1, 40.1, 50.0, 50.0]]}


def test_turn_by_hand() -> None:
    (t,) = f.turns(HAND)
    assert t.out_last == pytest.approx(2.0)  # 22 - 20
    assert t.turnaround == pytest.approx(2.0)  # 24 - 22
    assert t.http_in == pytest.approx(2.0)  # 26 - 24
    assert t.to_api == pytest.approx(6.0)  # 26 - 20
    assert t.next_step == pytest.approx(10.0)  # 30 - 20
    assert t.extra_steps == 1  # drained after 40, not after 30
    assert not t.busy  # A had left the engine (last token at 20) before B was drained


def test_split_by_hand() -> None:
    s = f.split(HAND)
    assert s.client_ttft == pytest.approx(20.0)  # (12 + 28) / 2
    assert s.engine_ttft == pytest.approx(8.95)  # ((10 - 2) + (50 - 40.1)) / 2
    assert s.to_api == pytest.approx(1.5)  # (1 + 2) / 2
    assert s.api_to_core == pytest.approx(7.55)  # (1 + 14.1) / 2
    assert s.first_to_client == pytest.approx(2.0)  # (2 + 2) / 2
    # The parts add up to the difference: every time is on one clock.
    assert s.to_api + s.api_to_core + (s.engine_ttft) + s.first_to_client == pytest.approx(
        s.client_ttft)


def test_measured_pickup_follows_the_step_boundary() -> None:
    """The measured server never took a replacement before the end of the step after its
    predecessor's last token while another request was in the engine (the drain-at-the-boundary
    rule kvplan simulates; an idle core takes it at once), and took most at that first boundary
    at 1,024 and 4,096 tokens."""
    for run in f.load()["runs"] + f.load(f.REPEAT)["runs"]:
        if run["concurrency"] == 1:
            continue
        ts = f.turns(run)
        assert len(ts) >= run["concurrency"], run["prompt"]
        busy = [t for t in ts if t.busy]
        assert len(busy) > len(ts) / 2
        assert min(t.extra_steps for t in busy) >= 0, (run["prompt"], run["concurrency"])
        if run["prompt"] >= 1024:
            assert sum(t.extra_steps == 0 for t in ts) > len(ts) / 2


def test_measured_latency() -> None:
    """The FINDING's figures, and the interpolation between the measured prompt lengths."""
    assert [round(f.latency_point_ms(p), 1) for p in f.prompts()] == [8.9, 11.7, 14.3]
    assert [round(f.latency_point_ms(p, f.REPEAT), 1) for p in f.prompts(f.REPEAT)] == [
        18.8, 57.2, 28.3]
    mid = (1024 + 4096) // 2
    assert f.measured_latency_ms(mid) == pytest.approx(
        (f.latency_point_ms(1024) + f.latency_point_ms(4096)) / 2)
    assert f.measured_latency_ms(10) == f.latency_point_ms(128)
    assert f.measured_latency_ms(100_000) == f.latency_point_ms(4096)


def test_the_tie_moves_a_batcherless_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tie rule's mechanism (FINDING (1)), made a rule by frontlat64b (kvplan.analysis.
    simulate.step_boundary): without the tokenizer batcher a closed loop's replacement, sent at
    its predecessor's step end, is no longer taken by the scheduling at that instant, so the
    replay gives what a 1 us delay gave (171.2 ms async); with the rule turned off, the old
    131.9 ms comes back, and the 1 us delay still gives 171.2. (152.2 / 117.2 before
    hopperops65 charged the norms' bytes in every prefill step.)"""
    from dataclasses import replace

    from kvplan.analysis.simulate.scheduler import Simulator
    from kvplan.engines.vllm.frontend import ApiServerCost
    from tests.benches import wave63

    run = {r["id"]: r for r in wave63.runs()}[f.TIE_RUN]
    base = wave63._setup(run, frontend=False)
    # The engine alone (frontdef67 made vLLM serve's measured API stage the default: off here).
    sch = replace(base.scheduler, tokenizer_batching=None, api_server=None, api_output=None)
    ruled = wave63.replay(run, replace(base, scheduler=sch))
    monkeypatch.setattr(Simulator, "finish_reply_misses_next_step", False)
    tied = wave63.replay(run, replace(base, scheduler=sch))
    broken = wave63.replay(run, replace(base, scheduler=replace(sch, api_server=ApiServerCost(
        s_per_request=0.0, s_per_prompt_token=0.0, latency_s=f.TIE_S, source="test"))))
    assert round(tied.ttft_ms, 1) == 131.9 and round(broken.ttft_ms, 1) == 171.2
    assert round(ruled.ttft_ms, 1) == 171.2
