"""aggwork64: the aggregated bench replays an InferenceX row under InferenceX's client workload
(tests.benches.aiconfig_agg_client) and a gap-analysis row at the fixed lengths."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.benches import aiconfig_agg_client as client
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_harness
from tests.benches.aiconfig_agg_loop import ROUNDS
from tests.benches.disagg_rows import stated_concurrency


def _first(prov: str, backend: str = "vllm") -> dict[str, str]:
    return next(r for r in agg.rows() if aiconfig_harness.provenance(r) == prov
                and r["backend"] == backend and not agg.why_not(r))


def _done(ttfts: list[float], tpot: float, out: int) -> list[SimpleNamespace]:
    """Finished requests sent at t = 0 in order, each with its TTFT (s) and a constant TPOT."""
    return [SimpleNamespace(rid=i, sent_s=0.0, first_token_s=t, output_len=out,
                            finish_s=t + tpot * (out - 1)) for i, t in enumerate(ttfts)]


def _replayed(row: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> list:  # type: ignore[type-arg]
    """The requests the bench's replay_on sends for the row (the simulator stubbed)."""
    sent: list = []  # type: ignore[type-arg]

    def fake_run(r: dict[str, str], sim: object, requests: list | None = None  # type: ignore[type-arg]
                 ) -> SimpleNamespace:
        conc = stated_concurrency(r) or 0
        n = len(requests) if requests is not None else ROUNDS * conc
        sent.append(requests)
        return SimpleNamespace(finished=_done([0.1] * n, 0.01, 10))

    monkeypatch.setattr(agg, "row_run", fake_run)
    got = agg.replay_on(row, lambda: None, "test")  # type: ignore[arg-type,return-value]
    assert got.ttft_ms == pytest.approx(100.0)
    return sent[0]


def test_inferencex_row_gets_the_clients_workload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agg, "CLIENT_WORKLOAD", True)  # off on the page (CI's time)
    row = _first(aiconfig_harness.INFERENCEX_ROWS)
    isl, osl, conc = int(row["isl"]), int(row["osl"]), stated_concurrency(row) or 0
    reqs = _replayed(row, monkeypatch)
    assert len(reqs) == 10 * conc
    assert all(int(0.8 * isl) <= q.prompt_len <= isl for q in reqs)
    assert all(int(0.8 * osl) <= q.output_len <= osl for q in reqs)
    assert len({q.prompt_len for q in reqs}) > 1  # spread, not fixed
    assert all(q.arrival_s == 0.0 for q in reqs)  # rate inf under --max-concurrency


def test_the_pages_replay_keeps_fixed_lengths(monkeypatch: pytest.MonkeyPatch) -> None:
    # CLIENT_WORKLOAD is off on the page: an InferenceX row is replayed at the fixed lengths.
    assert agg.CLIENT_WORKLOAD is False
    assert _replayed(_first(aiconfig_harness.INFERENCEX_ROWS), monkeypatch) is None


def test_gap_analysis_row_keeps_fixed_lengths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agg, "CLIENT_WORKLOAD", True)
    row = next(r for r in agg.rows() if aiconfig_harness.provenance(r)
               != aiconfig_harness.INFERENCEX_ROWS and not agg.why_not(r))
    assert _replayed(row, monkeypatch) is None  # row_run's ROUNDS x C fixed-length requests


def test_measure_every_request_for_inferencex() -> None:
    # C = conc users; TTFTs 1, 2, ..., 10 x C ms in send order. Every request measured: the
    # mean is (10 C + 1) / 2 ms; the steady state (first and last C dropped) would give the
    # mean of C + 1 .. 9 C, (10 C + 1) / 2 as well, so the ends are made unequal: the first C
    # at 1,000 ms. All: (1,000 C + sum_{k=C+1}^{10C} k) / 10 C; at C = 4: (4,000 + 820 - 10)
    # / 40 = 120.25 ms (sum 5..40 = 40 x 41 / 2 - 10 = 810). Steady: mean of 5..36 = 20.5 ms.
    ix = next(r for r in agg.rows() if client.inferencex(r) and stated_concurrency(r) == 4)
    ttfts = [1.0] * 4 + [k / 1e3 for k in range(5, 41)]
    ttft, tpot, n = client.measure(ix, _done(ttfts, 0.02, 11))
    assert (ttft, n) == (pytest.approx(120.25), 40)
    assert tpot == pytest.approx(20.0)
    gap = {**ix, "silicon_data_source":
           "source_file=x-gap-analysis.csv; dynamo_version=1; silicon_concurrency=4"}
    assert not client.inferencex(gap)
    ttft, _, n = client.measure(gap, _done(ttfts, 0.02, 11))
    assert (ttft, n) == (pytest.approx(20.5), 32)


def test_ignore_eos_only_for_sglang_scripts_disabling_radix() -> None:
    sg = next(r for r in agg.rows() if r["backend"] == "sglang"
              and r["model_path"] == "Qwen/Qwen3.5-397B-A17B" and r["precision"] == "fp8"
              and r["system"] == "b300_sxm" and r["backend_version"] == "0.5.10.post1"
              and client.inferencex(r))
    assert client.ignore_eos(sg)
    assert not client.ignore_eos({**sg, "backend_version": "0.5.4"})  # no script known
    assert not client.ignore_eos(_first(aiconfig_harness.INFERENCEX_ROWS))  # vLLM
