"""The disaggregated simulation of decode workers without a KV connector
(kvplan.analysis.simulate.disagg_local, dynnocon67) on hand-worked timelines, and the rule
that gives it (kvplan.engines.vllm.nixl_hold)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.bench_client import genai_perf
from kvplan.analysis.simulate.disagg_local import LocalPrefillFlow, simulate_disagg_local
from kvplan.analysis.simulate.disagg_sim import DisaggSimInputs
from kvplan.analysis.simulate.sim_types import SchedulerConfig
from kvplan.cli import app
from kvplan.engines.vllm.connectors import vllm_connector


def _inputs(concurrency: int, *, budget: int = 100) -> DisaggSimInputs:
    return DisaggSimInputs(
        concurrency=concurrency, input_len=100, output_len=2, prefill_workers=1,
        prefill_ranks=1, decode_workers=1, decode_ranks=1,
        prefill=SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=budget,
                                max_model_len=100),
        chunked_prefill=True, decode_max_seqs=8, transfer_s=0.25, first_token_steps=1.5,
        rounds=1, measure_all_rounds=True)


def _flow(hold_s: float, *, pool: int = 2, decode_budget: int = 1000,
          at_prefill: bool = True) -> LocalPrefillFlow:
    return LocalPrefillFlow(hold_s=hold_s, pool_blocks=pool, block_tokens=100,
                            decode_token_budget=decode_budget,
                            decode_mixed_s=lambda decodes, chunks: 0.5,
                            first_token_at_prefill=at_prefill)


def _run(inp: DisaggSimInputs, flow: LocalPrefillFlow) -> tuple[float, float]:
    res = simulate_disagg_local(inp, flow, prefill_step_s=lambda tokens, prompts: 1.0,
                                decode_step_s=lambda batch: 0.1)
    return res.ttft_ms, res.tpot_ms


def test_a_full_prefill_pool_admits_the_next_prompt_when_a_hold_expires() -> None:
    # 3 users at once, one 100-token prompt (1 block) a 1 s prefill step (budget 100), a pool
    # of 2 blocks held 10 s: prompt 0 ends at 1 s, prompt 1 at 2 s; prompt 2 waits for prompt
    # 0's block, freed at 1 + 10 = 11 s, and ends at 12 s. TTFT (the prefill's return) =
    # (1 + 2 + 12) / 3 = 5 s. Each decode: its local prefill step 0.5 s (from the handover, its
    # engine's first token), then one 0.1 s step for the second: last - first = 0.6 s, TPOT
    # 600 ms over O - 1 = 1 token. No transfer: nothing is pulled.
    assert _run(_inputs(3), _flow(10.0)) == pytest.approx((5000.0, 600.0))
    # Freed at once: prompt 2 joins the step after prompt 1's and ends at 3 s: (1+2+3)/3 = 2 s.
    assert _run(_inputs(3), _flow(0.0)) == pytest.approx((2000.0, 600.0))


def test_the_first_token_from_the_decode_engine_after_its_local_prefill() -> None:
    # One user: prefill ends at 1 s; the decode's budget of 60 tokens takes the prompt in two
    # 0.5 s chunks (1.5 s, 2.0 s), its engine's first token at 2.0 s, the second after one
    # 0.1 s step: TTFT 2.0 s, TPOT 100 ms (first_token_at_prefill False).
    flow = _flow(480.0, decode_budget=60, at_prefill=False)
    assert _run(_inputs(1), flow) == pytest.approx((2000.0, 100.0))
    # At the prefill's return: TTFT 1.0 s, TPOT (2.1 - 1.0) / 1 = 1,100 ms.
    assert _run(_inputs(1), _flow(480.0, decode_budget=60)) == pytest.approx((1000.0, 1100.0))


def test_a_prompt_larger_than_the_prefill_pool_is_refused() -> None:
    # 100 tokens in blocks of 50: 2 blocks, against a pool of 1 (it would never be admitted).
    flow = LocalPrefillFlow(hold_s=0.0, pool_blocks=1, block_tokens=50, decode_token_budget=60,
                            decode_mixed_s=lambda decodes, chunks: 0.5)
    with pytest.raises(InputError, match="needs 2 blocks; a prefill rank's pool has 1"):
        _run(_inputs(1), flow)


def test_vllm_nixl_holds_480_s_at_0_20_with_the_environment_override() -> None:
    nixl = vllm_connector("NixlConnector")
    assert nixl.no_decode_connector("0.20.1").hold_s == 480.0  # envs.py 0.20.1:1461-1465
    assert nixl.no_decode_connector("0.20.1", 60.9).hold_s == 60.0  # int() of the variable
    assert nixl.no_decode_connector("0.32.0") is None  # not read there: no such variable
    assert vllm_connector("MooncakeConnector").no_decode_connector("0.20.1") is None
    with pytest.raises(InputError, match="VLLM_NIXL_ABORT_REQUEST_TIMEOUT"):
        nixl.no_decode_connector("0.20.1", -1)


def test_genai_perf_runs_warm_up_and_measured_requests_as_whole_rounds() -> None:
    # 30 + 600 requests at C 16: ceil(630 / 16) = 40 requests a user, all averaged.
    c = genai_perf(630, 16)
    assert (c.rounds, c.measures_first_round) == (40, True)
    with pytest.raises(InputError, match="genai-perf"):
        genai_perf(8, 16)


@pytest.mark.parametrize("connector", ["NixlConnector", "MooncakeConnector"])
def test_plan_disagg_never_prints_a_vllm_decode_line_without_its_connector(connector: str
                                                                           ) -> None:
    # prospdis66's Dynamo deployment ran its decode workers without --kv-transfer-config
    # (issue 29): kvplan prints `vllm serve` lines (no Dynamo launch line), and vLLM's decode
    # worker needs the connector to read the prefill's KV (scheduler.py 0.20.1:620-636), so
    # both roles' lines carry it, with the connector's kv_role for that role.
    result = CliRunner().invoke(app, [
        "plan", "llama-3.1-8b", "--disagg", "--engine", "vllm", "--gpu", "H100",
        "--input-len", "4k", "--output-len", "512", "--connector", connector, "-f", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    roles = {"NixlConnector": ("kv_both", "kv_both"),
             "MooncakeConnector": ("kv_producer", "kv_consumer")}[connector]
    for role, kv_role in zip(("prefill", "decode"), roles, strict=True):
        assert (f'--kv-transfer-config \'{{"kv_connector":"{connector}","kv_role":"{kv_role}"}}\''
                in data[role]["command"]), data[role]["command"]


def test_the_replay_builds_the_flow_from_the_row_and_prices_decode_steps_as_its_tpot() -> None:
    # prospdis66's Llama-3.1-70B FP8 8,000 / 150 run (4 x TP 1 prefill : 1 x TP 4 decode, vLLM
    # 0.20.1): the row states no decode connector, so the replay takes NIXL 0.20's 480 s hold,
    # the prefill candidate's pool in its blocks, and the decode role's mixed steps; one with no
    # chunk is the replay's TPOT at the same batch (the same cost model at I + O / 2).
    from tests.benches import disagg_rows
    from tests.benches.prospdis66_runs import load

    run = next(r for r in load()["runs"] if r["id"].endswith("8000x150-doc13"))
    row = {**run["row"], "silicon_data_source": ""}
    st = disagg_rows.replay_setup(row)
    flow = disagg_rows.local_flow(row, st)
    assert flow is not None and flow.hold_s == 480.0 and flow.first_token_at_prefill
    cap = st.prefill.capacity
    assert (flow.block_tokens, flow.pool_blocks) == (cap.block_size,
                                                     cap.token_capacity // cap.block_size)
    for batch in (1, 16):
        assert flow.decode_mixed_s(batch, ()) == pytest.approx(st.tpot_ms(batch) / 1e3)
    # A chunk costs more than the decodes alone; and a row with its connector gets no flow.
    assert flow.decode_mixed_s(16, ((0, 8000),)) > flow.decode_mixed_s(16, ())
    assert disagg_rows.local_flow({**row, "decode_kv_connector": ""}, st) is None
