"""The SGLang DeepSeek aggregated rows' counterfactual (tests.benches.aiconfig_sglang_flags,
issue 30, sglmoe56): the InferenceX script flags each row is replayed at, its layout, the
rows and the record of the rule they shaped."""

from __future__ import annotations

import collections

from tests.benches import aiconfig_agg_runs
from tests.benches import aiconfig_sglang_flags as flags
from tests.benches.disagg_rows import PREFIX


def _row(suffix: str) -> dict[str, str]:
    return next(r for r in aiconfig_agg_runs.rows() if r["id"].endswith(suffix))


def test_the_scripts_flags_by_row() -> None:
    # dsr1_fp8_h200.sh at 41aff0afc, lines 30-44: 8,192 / 1,024 takes the `else` launch
    # (--max-running-requests 256); chunk and input budget 32,768, 0.82, no recv interval.
    h200 = flags.script_flags(_row("h200_sxm_sglang_fp8_agg_8192x1024_c64_tp8_0_ep1_0_305"))
    assert h200 == flags.ScriptFlags(source=h200.source, chunked_prefill_size=32768,
                                     max_prefill_tokens=32768, max_running_requests=256,
                                     mem_fraction_static=0.82, kv_fp8=False, recv_interval=1)
    # dsr1_fp8_b200.sh at 64c20b6b5, lines 29-43: TP 8 from concurrency 16: interval 30.
    b200 = flags.script_flags(_row("b200_sxm_sglang_fp8_agg_8192x1024_c16_tp8_0_ep1_0_254"))
    assert not isinstance(b200, str)
    assert (b200.recv_interval, b200.max_running_requests, b200.chunked_prefill_size,
            b200.max_prefill_tokens, b200.mem_fraction_static, b200.kv_fp8) == (
        30, 128, 32768, 32768, 0.82, True)
    # Lines 44-59: TP 4 runs only 8,192 / 1,024, interval 10 at any concurrency.
    tp4 = next(r for r in flags.studied() if r["system"] == "b200_sxm"
               and r["precision"] == "fp8" and aiconfig_agg_runs.layout(r)[0] == 4)
    got = flags.script_flags(tp4)
    assert not isinstance(got, str)
    assert (got.recv_interval, got.max_running_requests, got.chunked_prefill_size,
            got.max_prefill_tokens, got.mem_fraction_static) == (10, 32, 8192, 8192, 0.95)
    # dsr1_fp4_b300.sh at 9ebeafb4e, lines 31-51: interval 10 below concurrency 16; no
    # --max-prefill-tokens. The row states tp_size 16, MoE TP 4, EP 4: the TP 4 EP 4 run.
    b300 = _row("b300_sglang_fp4_agg_8192x1024_c8_cfg717")
    assert aiconfig_agg_runs.layout(b300) == (16, 1, 4, 4)
    assert flags.real_layout(b300) == (4, 4)
    got = flags.script_flags(b300)
    assert not isinstance(got, str)
    assert (got.recv_interval, got.chunked_prefill_size, got.max_prefill_tokens,
            got.max_running_requests, got.mem_fraction_static, got.kv_fp8) == (
        10, 16384, None, 256, 0.85, True)


def test_the_rows_and_their_record() -> None:
    rows = flags.studied()
    # 143 SGLang DeepSeek rows pass the frozen bench's checks (133 replayed, 10 B200 FP8 TP 4
    # refused at replay: no KV pool at the default fraction), all InferenceX's; the SGLang
    # 0.5.6 one is left out (its script not read).
    assert len(rows) == 142
    assert collections.Counter(r["system"] for r in rows) == {
        "b200_sxm": 72, "h200_sxm": 39, "b300_sxm": 31}
    # Every row's MoE TP x EP layout is InferenceX's TP m EP m (moehybrid55's 21 B300 rows).
    hybrid = [r for r in rows if flags.real_layout(r) != (aiconfig_agg_runs.layout(r)[0],
                                                          aiconfig_agg_runs.layout(r)[3])]
    assert len(hybrid) == 21
    assert {flags.real_layout(r) for r in hybrid} == {(4, 4), (8, 8)}
    assert all(not isinstance(flags.script_flags(r), str) for r in rows)
    record = flags.recv_shaped()
    assert record.commit == flags.RECV_RULE_COMMIT
    assert len(record.rows) == len(set(record.rows)) == 142
    assert set(record.rows) <= {PREFIX + r["id"] for r in aiconfig_agg_runs.rows()}
