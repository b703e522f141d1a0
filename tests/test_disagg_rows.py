"""The disagg bench's row replay (tests/benches/disagg_rows.py) and the time-model rules it leans
on (issue 29): concurrency read from the row, layouts from the row or its public recipe, an
--enforce-eager prefill's launch time, vLLM's EP without DP attention."""

from __future__ import annotations

import inspect
from dataclasses import replace

import pytest

from kvplan.hardware.gpus import get_gpu
from kvplan.perf.costmodel import CostInputs, predict
from kvplan.perf.efficiency import PREFILL_LAUNCH_FIT, device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.op_counts import eager_prefill_ops
from kvplan.sources.resolve import load_model
from tests.benches import disagg_rows

KIMI = "tests/data/disagg/kimi-k2.5-nvfp4-text.json"


def _row(suffix: str) -> dict[str, str]:
    return next(r for r in disagg_rows.rows() if r["id"].endswith(suffix))


def test_concurrency_is_the_stated_one_or_none() -> None:
    # db-dump rows carry "silicon_concurrency=N"; gtl rows do not (their decode_batch_size is
    # the engine's max batch, not the load).
    assert disagg_rows.stated_concurrency(_row("1024x1024_c256_cfg697")) == 256
    assert disagg_rows.stated_concurrency(
        _row("qwen3_32b_h100_sxm_vllm_disagg_4000x1000_c_tp_epnone_2")) is None


def test_layouts_from_the_row_or_its_recipe() -> None:
    # A row without a public recipe: tp_size x attention_dp_size, DP attention when > 1.
    row = _row("dsr1_gb200_sglang_fp8_disagg_1024x1024_c16_cfg227")
    lay = disagg_rows.layout(row, "decode")
    assert (lay.tp, lay.dp, lay.dp_attention, lay.ep) == (4, 4, True, 1)
    # Config 697 ran srt-slurm's 1p1d-dep4-dep16: DP4 + EP4 prefill, DP16 + EP16 decode,
    # though its fields say tp 4 / tp 16 with attention_dp 1.
    row = _row("1024x1024_c256_cfg697")
    assert row["decode_tp_size"] == "16" and row["decode_attention_dp_size"] == "1"
    p, d = disagg_rows.layout(row, "prefill"), disagg_rows.layout(row, "decode")
    assert (p.dp, p.ep, p.dp_attention) == (4, 4, True)
    assert (d.dp, d.ep, d.dp_attention) == (16, 16, True)


def test_rows_not_replayed_say_why() -> None:
    why = {r.id: r.why_not for r in disagg_rows.replays()}
    assert "handover" in why["aiconfigurator dsr1_b200_sglang_fp8_disagg_1024x1024_c4_cfg455"]
    assert why["aiconfigurator qwen3_32b_qwen3_32b_h100_sxm_vllm_disagg_4000x1000_c_tp_epnone_2"
               ].startswith("concurrency unstated")


def test_enforce_eager_prefill_pays_the_launch_time() -> None:
    # vLLM replays prefills from piecewise graphs: no launch time; with --enforce-eager every
    # op is launched from Python: ops x prefill_launch_s is added to the prefill (as SGLang's).
    spec, _ = load_model(KIMI)
    gpu = get_gpu("GB200")
    layout = Layout(tp=4, ep=4, dp_attention=True)
    graphs = engine_efficiency("vllm", device_efficiency(gpu))
    eager = engine_efficiency("vllm", device_efficiency(gpu), enforce_eager=True)
    assert graphs.prefill_launch_s == 0 and eager.prefill_launch_s == PREFILL_LAUNCH_FIT.value
    inputs = CostInputs(context=1024, kv_dtype="fp8", layout=layout)
    diff = (predict(spec, gpu, replace(inputs, efficiency=eager)).ttft_ms
            - predict(spec, gpu, replace(inputs, efficiency=graphs)).ttft_ms)
    ops = eager_prefill_ops(spec, layout, None, platform="cuda", fused_norms=False)
    assert diff == pytest.approx(ops * PREFILL_LAUNCH_FIT.value * 1e3)


def test_vllm_ep_without_dp_attention_has_no_all_to_all() -> None:
    # vllm FusedMoEParallelConfig.use_all2all_kernels = use_ep and dp_size > 1: TEP4 reduces
    # the experts in the TP all-reduce; SGLang's without DeepEP too (its decode gather,
    # tests/test_decode_gather.py); TensorRT-LLM's too (CutlassFusedMoE's
    # select_alltoall_method_type: NotEnabled where dp_size == 1, the 1.2 line).
    spec, _ = load_model(KIMI)
    gpu = get_gpu("GB200")
    tep = CostInputs(context=1536, kv_dtype="fp8", layout=Layout(tp=4, ep=4))
    for engine, has_a2a in (("vllm", False), ("sglang", False), ("trtllm", False)):
        eff = engine_efficiency(engine, device_efficiency(gpu))
        by_op = predict(spec, gpu, replace(tep, efficiency=eff)).decode_ms_by_op
        assert ("ep_all_to_all" in by_op) is has_a2a
    dep = replace(tep, layout=Layout(tp=4, ep=4, dp_attention=True),
                  efficiency=engine_efficiency("vllm", device_efficiency(gpu)))
    assert "ep_all_to_all" in predict(spec, gpu, dep).decode_ms_by_op


def test_the_prospective_set_is_the_frozen_file() -> None:
    # Frozen at c72d9db before the disaggregated simulator was written (issue 29's honest
    # split): every aiconfigurator disaggregated row at 095f58a5 but the vLLM rows above.
    from collections import Counter

    rows = disagg_rows.prospective_rows()
    assert len(rows) == 1585
    assert Counter(r["backend"] for r in rows) == {"sglang": 534, "trtllm": 1051}
    vllm = {r["id"] for r in disagg_rows.rows() if r["backend"] == "vllm"}
    assert not vllm & {r["id"] for r in rows}


def test_generator_prefill_flags_by_hand() -> None:
    # aiconfigurator's generated SGLang prefill flags (GENERATOR_PREFILL_PAD), the bench's
    # counterfactual (issue 29, prefill29b). --max-prefill-tokens = ISL + 1,500: SGLang
    # 0.5.8.post1 schedule_policy.py:715-716 admits a prompt after the first only while its
    # input is below what is left: ISL 1,024: 2,524 -> 1,500 -> 476, so 2 prompts (2,048
    # tokens) a step; ISL 8,192: 9,692 -> 1,500, 1 prompt (8,192). --max-running-requests 1
    # seats 1 on a TP-attention worker; a DP-attention one keeps its default seats.
    def rows(suffix: str) -> dict[str, str]:
        return next(r for r in disagg_rows.prospective_rows() if r["id"].endswith(suffix))

    # cfg527: DeepSeek-R1 NVFP4 on B200, prefill DP4 EP4, 1,024-token prompts: SGLang's chunk
    # 16,384 (B200, >= 160 GiB) // dp 4 = 4,096 a rank -> 2,048 at the generator's flags.
    dp = rows("_c512_cfg527")
    key = disagg_rows._setup_key(dp)
    base = disagg_rows._setup(key).batching
    gen = disagg_rows._setup(key, generator=True).batching
    assert base is not None and gen is not None
    assert (base.token_budget, gen.token_budget) == (4096, 2048)
    assert gen.max_seqs == base.max_seqs > 1
    # cfg455: DeepSeek-R1 FP8 on B200, prefill TP8, 8,192-token prompts: chunk 16,384 ->
    # 8,192 (one prompt), one seat.
    tp = rows("8192x1024_c4_cfg455")
    key = disagg_rows._setup_key(tp)
    base = disagg_rows._setup(key).batching
    gen = disagg_rows._setup(key, generator=True).batching
    assert base is not None and gen is not None
    assert (base.token_budget, gen.token_budget, gen.max_seqs) == (16384, 8192, 1)


def test_replayed_with_takes_predicts_switches_only() -> None:
    # One replay for every counterfactual of the bench (speed52): its switches are `predict`'s
    # keyword flags, and a misspelt one is refused rather than ignored.
    flags = [p for p, v in inspect.signature(disagg_rows.predict).parameters.items()
             if v.kind is inspect.Parameter.KEYWORD_ONLY]
    assert sorted(disagg_rows.SWITCHES) == sorted(flags)
    with pytest.raises(TypeError, match="unknown switch fp8"):
        disagg_rows.replayed_with([], fp8=False)


def test_trtllm_rows_release_seats_and_cohort() -> None:
    # The image's TensorRT-LLM release by aiconfigurator's dynamo matrix (facts/runtimes/
    # dynamo.yaml at 095f58a5: 0.8.1.post1 -> 1.2.0rc6.post1); an image it does not list is
    # not replayed. The engines' max_batch_size as the generator writes them: the context
    # server's the row's prefill batch size (1), the generation server's its decode batch size.
    by_id = {r["id"]: r for r in disagg_rows.prospective_rows()}
    h200 = by_id["dsr1_h200_trtllm_fp8_disagg_1024x1024_c36_cfg303"]
    assert disagg_rows.trtllm_release(h200) == "1.2.0rc6.post1"
    assert disagg_rows._trtllm_seats(h200) == (1, 4)
    old = by_id["dsr1_gb200_trtllm_fp4_disagg_1024x1024_c16_cfg237"]
    assert disagg_rows.trtllm_release(old) is None
    assert "release it ships is not stated" in disagg_rows._why_not(old, 16, prospective=True)
    assert disagg_rows._why_not(h200, 36, prospective=True) == ""
    sg = next(r for r in by_id.values() if r["backend"] == "sglang")
    assert disagg_rows.trtllm_release(sg) == sg["backend_version"]
    assert disagg_rows._trtllm_seats(sg) == (None, None)
    # Their max_num_tokens (trtllm.rule at 095f58a5): prefill ISL 1,024 + 500 = 1,524 -> 1,536;
    # decode max_batch_size 4 -> 32 (tokens_per_block); SGLang's rows: none passed.
    assert disagg_rows._request(h200, 36, "prefill").extra == {"max_num_batched_tokens": 1536}
    assert disagg_rows._request(h200, 36).extra == {"max_num_batched_tokens": 32}
    assert "max_num_batched_tokens" not in disagg_rows._request(sg, 1).extra
    # Section 3j's second cohort: the full rows with an attention-DP role (113 with a known
    # release, replayed since trtdep54, and 16 without).
    from tests.benches import disagg_trtllm
    assert len(disagg_trtllm.dp_attention_rows()) == 129
    assert disagg_rows.PREFIX + h200["id"] not in disagg_trtllm.dp_attention_rows()


def test_trtllm_gap_lines_by_hand() -> None:
    """Section 3j's gap diagnostics (trtdisttft55) on three made-up rows of one deployment (an
    attention-DP context server) and one of another (TP8 context server), worked by hand."""
    from tests.benches.disagg_trtllm import gap_lines

    def row(name: str, conc: int, osl: int, ttft: float, tpot: float, ours: float, label: str
            ) -> disagg_rows.Replay:
        return disagg_rows.Replay(
            id=f"{disagg_rows.PREFIX}dsr1_x_trtllm_fp8_disagg_1024x{osl}_c{conc}_{name}",
            label=label, measured_ttft_ms=ttft, measured_tpot_ms=tpot, concurrency=conc,
            input_len=1024, output_len=osl, ttft_ms=ours, tpot_ms=tpot)

    adp, tp = "1P DP8 EP8 : 3D TP8 EP8, ...", "1P TP8 EP8 : 9D TP8 EP8, ..."
    rows = [row("cfg1", 4, 1024, 500.0, 10.0, 100.0, adp),    # (500 - 100) / 10 = 40 steps
            row("cfg1", 8, 1024, 250.0, 10.0, 110.0, adp),    # 14 steps; 500 -> 250: a fall of 2
            row("cfg1", 16, 1024, 300.0, 12.0, 120.0, adp),   # 15 steps; 250 -> 300: a rise
            row("cfg1", 4, 8192, 900.0, 10.0, 100.0, adp),    # alone in its lengths: no pair
            row("cfg2", 36, 1024, 200.0, 10.0, 250.0, tp),    # -5 steps: kvplan above
            row("cfg2", 72, 1024, 300.0, 20.0, 260.0, tp)]    # 2 steps; rises only
    text = "\n".join(gap_lines(rows))
    # Steps sorted: -5, 2, 14, 15, 40, 80 (the OSL 8,192 row: (900 - 100) / 10); median
    # (14 + 15) / 2 = 14.5 -> "14" (round half to even), quartiles steps[1] = 2, steps[4] = 40.
    assert ("median 14 over 6 rows (quartiles 2 and 40); kvplan above the measured TTFT "
            "on 1.") in text
    # The largest fall of cfg1 (1024x1024) is c4 500 -> c8 250; cfg2 never falls; cfg1's OSL
    # 8,192 row is a deployment of one row, not counted.
    assert ("1 of 2 deployments with two or more rows (the largest falls: "
            "dsr1_x_trtllm_fp8_disagg_1024x1024_cfg1 c4 500 ms -> c8 250 ms); 1 of these 1 have "
            "an attention-DP context server, as 1 of the 2 do.") in text
    # The two c4 rows of cfg1 differ only in OSL: measured 500 vs 900, kvplan 100 and 100.
    assert ("Same deployment, ISL 1,024 and 4 users, OSL 1,024 vs 8,192: measured TTFT 500 vs "
            "900 ms (kvplan 100 vs 100, one prefill and one transfer each).") in text


def test_trtllm_roles_at_their_recipe_fraction_and_queued_transfers() -> None:
    # trtctx68: each role's pool at the matched srt-slurm recipe's free_gpu_memory_fraction
    # (h200 cfg590: recipes/trtllm/h200/1k1k/stp/c8_ctx1_gen9_tep8_batch256_eplb0_mtp0.yaml at
    # 75f6e32a, prefill 0.6, decode 0.9), the generator's template's 0.80 on an unmatched row
    # (b200 cfg553: extra_engine_args.1.2.0rc6.post1.yaml.j2:28 `default(0.80)`); kvplan's 0.9
    # with the switch off.
    rows = {r["id"]: r for r in disagg_rows.prospective_rows()}
    matched = rows["dsr1_h200_trtllm_fp8_disagg_1024x1024_c72_cfg590"]
    st = disagg_rows.replay_setup(matched)
    assert (st.prefill.mem_fraction, st.decode.mem_fraction) == (0.6, 0.9)
    gen = disagg_rows.replay_setup(rows["dsr1_b200_trtllm_fp8_disagg_8192x1024_c128_cfg553"])
    assert (gen.prefill.mem_fraction, gen.decode.mem_fraction) == (0.8, 0.8)
    trt = disagg_rows.trt_context_recipe(matched)
    assert trt is not None
    off = disagg_rows._setup(disagg_rows._setup_key(matched), trt_context=(trt.path, trt.commit),
                             trt_fraction=False)
    assert (off.prefill.mem_fraction, off.decode.mem_fraction) == (0.9, 0.9)
    # The pool is (total - weights - reserve) x fraction (kvplan.engines.trtllm.budget): H200,
    # 150,119,844,413 - 102,908,539,232 - 14,458,264,121 = 32,753,041,060 bytes a rank;
    # x 0.6 = 19,651,824,636, / 35,136 bytes a token = 559,307 tokens, 17,478 whole blocks of 32
    # = 559,296 tokens (x 0.9: 838,944).
    cap = st.prefill.capacity
    assert (cap.total_bytes, cap.weights_bytes, cap.reserve_bytes) == (
        150_119_844_413, 102_908_539_232, 14_458_264_121)
    assert cap.kv_budget_bytes == 19_651_824_636 and cap.token_capacity == 559_296
    assert off.prefill.capacity.token_capacity == 838_944
    # The transceiver's queues: one transfer at a time a rank, the context pool in 32-token
    # blocks of the replay's prefill pool.
    q = disagg_rows.queued_flow(disagg_rows.replay_setup(matched))
    assert q is not None and (q.send_slots, q.recv_slots, q.block_tokens) == (1, 1, 32)
    assert q.pool_blocks == 17_478 and q.held_extra_tokens == 1
