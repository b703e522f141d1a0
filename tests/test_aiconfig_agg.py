"""The frozen aggregated rows of aiconfigurator (tests/data/sim_to_real/aiconfigurator_agg.csv.gz,
issue 30): complete by the selection rule of tests/data/sim_to_real/SOURCES.md, each either
replayable or counted with why; the replay's steady state worked by hand (the full replay is
tests.benches.aiconfig_agg_runs)."""

from __future__ import annotations

import collections
import json
import re
from types import SimpleNamespace

import pytest

from kvplan._util.errors import InputError
from kvplan.sources.resolve import load_model
from tests.benches import aiconfig_agg_dp, aiconfig_agg_runs, disagg_rows

# aiconfigurator's silicon CSV header at 095f58a5 (both files share it).
HEADER = ["id", "silicon_data_source", "backend", "backend_version", "model_path", "system",
          "precision", "mode", "isl", "osl", "gemm_quant_mode", "moe_quant_mode", "batch_size",
          "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size",
          *(f"{role}_{field}" for role in ("prefill", "decode")
            for field in ("batch_size", "num_workers", "tp_size", "pp_size",
                          "attention_dp_size", "moe_tp_size", "moe_ep_size")),
          "silicon_ttft_ms", "silicon_tpot_ms"]
STATED = ("backend", "backend_version", "model_path", "system", "precision", "isl", "osl",
          "tp_size", "pp_size")


def test_frozen_file_is_complete() -> None:
    rows = aiconfig_agg_runs.rows()
    assert list(rows[0]) == HEADER
    # 2,482 of the 3,619 agg rows: vLLM 986, SGLang 747, TensorRT-LLM 749 (SOURCES.md).
    assert len(rows) == 2482
    assert collections.Counter(r["backend"] for r in rows) == {
        "vllm": 986, "sglang": 747, "trtllm": 749}
    ids = [r["id"] for r in rows]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for r in rows:
        assert r["mode"] == "agg"
        assert all(r[f].strip() for f in STATED), r["id"]
        assert re.search(r"silicon_concurrency=\d+", r["silicon_data_source"]), r["id"]
        assert float(r["silicon_ttft_ms"]) > 0 and float(r["silicon_tpot_ms"]) > 0
        # No disaggregated field is set on an aggregated row.
        assert not any(r[f] for f in HEADER if f.startswith(("prefill_", "decode_")))


def test_no_row_is_a_disaggregated_bench_row() -> None:
    agg = {r["id"] for r in aiconfig_agg_runs.rows()}
    disagg = {r["id"] for r in (*disagg_rows.rows(), *disagg_rows.prospective_rows())}
    assert not agg & disagg


def test_every_row_is_replayable_or_says_why() -> None:
    whys = collections.Counter(aiconfig_agg_runs.why_not(r) for r in aiconfig_agg_runs.rows())
    # Replayable: 1,513 (vLLM 687, SGLang 339, and from the stop-54 merge, with `simulate
    # --engine trtllm`, TensorRT-LLM 487, of which simulate refused the 319 of releases 1.0.0rc3
    # and 1.1.0rc2.post2 until trt10 (stop 55) read the 1.0 and 1.1 lines); 217 more pass
    # every kvplan check but the bench's CPU bound (3 x
    # concurrency x OSL decode tokens over 2^19): 174 vLLM / SGLang, 43 TensorRT-LLM.
    # aggmore54's checkpoints (`COHORTS`) made 320 of the 1,513 replayable (Qwen3.5-397B FP8
    # 161 and NVFP4 12 on SGLang, MiniMax-M2.5 NVFP4 69 and Kimi-K2.5 INT4 78 on vLLM) and 56
    # of the 217 (31 / 13 / 12); 93 rows of 7 checkpoints stay unsized (NOT_SIZED says why).
    # aggdp55 (attention DP through `simulate --dp-attention`, tests.benches.aiconfig_agg_dp)
    # made 76 of the 169 attention-DP rows replayable (vLLM TP x DP EP 67, TensorRT-LLM DP x
    # EP 9) and 46 more pass every check but the CPU bound (30 / 16); the other 47 run an MoE
    # TP x EP hybrid under attention DP (not simulated).
    # nightly55 placed vLLM's nightly 5b8c30d6 (tests.benches.aiconfig_nightly): 62 more
    # replayable (MiniMax-M2.5 NVFP4 46, FP8 16), 1,575 in all; its 7 other rows are over the
    # CPU bound, 224 in all.
    # moehybrid55 (MoE TP x EP, `HYBRID_COHORT`: the 221 rows refused until then for "EP e
    # with MoE TP m under TP t") made 58 more replayable (SGLang 33, TensorRT-LLM 25, all of
    # whose releases are before simulate's 1.2 line) and 4 more pass every check but the CPU
    # bound; 159 are TP m, EP m runs written with tp_size m x m (`tp_times_ep`). sglmoe56: 21
    # more are (SGLang 0.5.10.post1 DeepSeek NVFP4 B300, InferenceX's config: INFERENCEX_TP_EP),
    # leaving 37 replayable (SGLang 12, TensorRT-LLM 25).
    # sglnightly62 placed SGLang's nightlies d3bae71e, 1eea7448, b6fe0cca and d7256eb6 between
    # releases (tests.benches.aiconfig_sglang_nightly): 91 of their 103 rows more replayable,
    # 12 over the CPU bound.
    assert whys[""] == 1575 + 76 + 37 + 91
    assert sum(aiconfig_agg_runs.release(r) is None for r in aiconfig_agg_runs.rows()
               if not aiconfig_agg_runs.why_not(r)) == 62 + 91
    # vllmdpep56 (the InferenceX single-node vLLM rows at the layout they ran: aiconfig_agg_dp.
    # as_run): 3 of aggdp55's 46 over the CPU bound (MiniMax-M2.5 FP8 B300, InferenceX TP 2
    # EP 2, config_id 735 and 827, listed with and without dp-attn) are refused first for it.
    assert sum(n for why, n in whys.items() if "CPU bound" in why) == 224 + 46 + 4 - 3 + 12
    assert sum(n for why, n in whys.items() if "config_id is not read" in why) == 3
    assert sum(n for why, n in whys.items() if "MoE TP x EP hybrid" in why) == 47
    # trtdp56 (read after aggdp55's first evaluation): 40 of those 47 are attention-DP m, EP e
    # runs written with attention_dp_size m x e and MoE TP m (`aiconfig_agg_dp.dp_times_ep`:
    # the id names tp{m}_ep{e}, or a TP 1 x DP m EP e row states the same measurement); 7
    # remain stated hybrids (2 of MoE TP 4 x EP 1, a real MoE TP under attention DP; 5
    # db-dump rows with nothing saying otherwise).
    assert sum(n for why, n in whys.items() if "written as attention_dp_size" in why) == 40
    assert sum(n for why, n in whys.items() if "hybrid, not simulated" in why) == 7
    assert sum(n for why, n in whys.items() if "not sized" in why) == 93
    assert sum(n for why, n in whys.items() if "written as tp_size" in why) == 159 + 21
    rows = aiconfig_agg_runs.rows()
    trt = [r for r in rows if r["backend"] == "trtllm"]
    assert sum(aiconfig_agg_runs.why_not(r) == "" for r in trt) == 487 + 9 + 25
    hybrid = collections.Counter(
        (r["backend"], aiconfig_agg_runs.why_not(r) == "") for r in rows
        if aiconfig_agg_runs.cohort_of(r) == aiconfig_agg_runs.HYBRID_COHORT)
    assert hybrid == {("sglang", True): 12, ("trtllm", True): 25, ("sglang", False): 130,
                      ("trtllm", False): 54}
    cohort = collections.Counter(
        r["backend"] for r in rows if aiconfig_agg_runs.why_not(r) == ""
        and aiconfig_agg_runs.release(r) is not None
        and (r["model_path"], r["precision"]) in aiconfig_agg_runs.COHORTS
        and aiconfig_agg_runs.layout(r)[1] == 1
        and aiconfig_agg_runs.cohort_of(r) != aiconfig_agg_runs.HYBRID_COHORT)
    assert cohort == {"sglang": 173, "vllm": 147}
    # trt10's cohort: TensorRT-LLM's 1.0.0rc3 (302) and 1.1.0rc2.post2 (112) rows, 319 of them
    # past every check of the bench (simulate's line gate is not one of them); the 20
    # 1.1.0rc2.post2 rows under attention DP are aggdp55's (3 of them replayable) and the 70
    # stating a MoE TP x EP layout moehybrid55's (2 of 1.0.0rc3, 68 of 1.1.0rc2.post2).
    lines = [r for r in rows if aiconfig_agg_runs.cohort_of(r) == "trt10"]
    assert collections.Counter(r["backend_version"] for r in lines) == {
        "1.0.0rc3": 300, "1.1.0rc2.post2": 24}
    assert sum(aiconfig_agg_runs.why_not(r) == "" for r in lines) == 319
    dp = collections.Counter(r["backend"] for r in rows if aiconfig_agg_runs.why_not(r) == ""
                             and aiconfig_agg_runs.layout(r)[1] > 1)
    assert dp == {"vllm": 67, "trtllm": 9}


@pytest.mark.parametrize("key", sorted(set(aiconfig_agg_runs.AGG_MODELS)
                                       - set(disagg_rows.MODELS)))
def test_added_checkpoints_load(key: tuple[str, str]) -> None:
    config, _, _ = aiconfig_agg_runs.AGG_MODELS[key]
    spec, _ = load_model(str(aiconfig_agg_runs.ROOT / config))
    assert spec.num_hidden_layers > 0


def test_layout_reads_empty_as_one() -> None:
    row = {"tp_size": "8", "attention_dp_size": "", "moe_tp_size": "0", "moe_ep_size": "8"}
    assert aiconfig_agg_runs.layout(row) == (8, 1, 1, 8)


def test_release() -> None:
    for version, expected in (("0.19.0", "0.19.0"), ("0.5.10.post1", "0.5.10.post1"),
                              ("1.2.0rc6.post3", "1.2.0rc6.post3"), ("nightly-dev", None),
                              ("glm5-hopper", None), ("nightly-5b8c30d62b754b57", None)):
        assert aiconfig_agg_runs.release({"backend_version": version}) == expected


def test_steady_state_drops_each_users_first_and_last() -> None:
    # Two users, three requests each (ROUNDS), sent at 0, 0 (the burst), 1, 1.5, then 2, 2.5
    # (the drain): only the middle two are measured. TTFT 0.1 and 0.3 s -> 200 ms; TPOT over
    # 11 output tokens: (1.1 - 0.1) / 10 = 0.1 s and (2.3 - 0.3) / 10 = 0.2 s -> 150 ms.
    def req(rid: int, sent: float, first: float, finish: float) -> SimpleNamespace:
        return SimpleNamespace(rid=rid, sent_s=sent, first_token_s=sent + first,
                               finish_s=sent + finish, output_len=11)
    done = [req(0, 0.0, 9.0, 9.0), req(1, 0.0, 9.0, 9.0), req(2, 1.0, 0.1, 1.1),
            req(3, 1.5, 0.3, 2.3), req(4, 2.0, 9.0, 9.0), req(5, 2.5, 9.0, 9.0)]
    ttft, tpot, n = aiconfig_agg_runs.steady(done, 2)
    assert n == 2
    assert ttft == pytest.approx(200.0) and tpot == pytest.approx(150.0)


def test_qwen35_fp8_config_is_the_bf16_one_plus_its_quantization() -> None:
    # aggmore54: Qwen/Qwen3.5-397B-A17B-FP8's config.json (HF revision ea5b4f81) is the bf16
    # checkpoint's (aiconfigurator's bundled copy) field for field, plus a block-FP8
    # quantization_config (SOURCES.md).
    base = aiconfig_agg_runs.ROOT / aiconfig_agg_runs.CONFIGS
    fp8 = json.loads((base / "Qwen--Qwen3.5-397B-A17B-FP8.json").read_text())
    bf16 = json.loads((base / "Qwen--Qwen3.5-397B-A17B.json").read_text())
    qc = fp8.pop("quantization_config")
    assert fp8 == bf16
    assert (qc["quant_method"], qc["weight_block_size"]) == ("fp8", [128, 128])
    assert len(qc["modules_to_not_convert"]) == 372


def test_cohort_lines_split_the_new_checkpoints() -> None:
    # One row of the first cohort and one of aggmore54's (a Kimi-K2.5 INT4 row), made-up
    # predictions: TTFT ratio 1.0 and 2.0, TPOT 1.0 and 1.0.
    rows = aiconfig_agg_runs.rows()
    old = next(r for r in rows if r["model_path"] == "Qwen/Qwen3-32B")
    new = next(r for r in rows if (r["model_path"], r["precision"]) == ("moonshotai/Kimi-K2.5",
                                                                         "int4"))

    def rep(row: dict[str, str], cohort: str, factor: float) -> disagg_rows.Replay:
        ttft, tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
        return disagg_rows.Replay(id=disagg_rows.PREFIX + row["id"], label="", cohort=cohort,
                                  measured_ttft_ms=ttft, measured_tpot_ms=tpot, concurrency=1,
                                  input_len=1, output_len=2, ttft_ms=factor * ttft,
                                  tpot_ms=tpot)
    # trt10's cohort (a TensorRT-LLM 1.0.0rc3 row), TTFT ratio 0.5.
    trt = next(r for r in rows if r["backend_version"] == "1.0.0rc3")
    assert aiconfig_agg_runs.cohort_of(trt) == "trt10"
    lines = aiconfig_agg_runs.cohort_lines([rep(old, "aggmeas54", 1.0),
                                            rep(new, "aggmore54", 2.0), rep(trt, "trt10", 0.5)])
    assert lines == [
        "| cohort aggmeas54 | 1 | 1 | 1 | 1 | 1 | 0.0% | 0.0% | 1.00 | 1.00 |",
        "| cohort aggmore54 | 1 | 1 | 0 | 1 | 0 | 100.0% | 0.0% | 2.00 | 1.00 |",
        "| cohort moehybrid55 (first replayed at stop 55: MoE TP x EP) | 0 | 0 | 0 | 0 | 0 | - | "
        "- | - | - |",
        "| cohort trt10 | 1 | 1 | 0 | 1 | 0 | 50.0% | 0.0% | 0.50 | 1.00 |",
        "| cohort aggmore54: backend vllm | 1 | 1 | 0 | 1 | 0 | 100.0% | 0.0% | 2.00 | 1.00 |",
        "| cohort aggmore54: moonshotai/Kimi-K2.5 int4 | 1 | 1 | 0 | 1 | 0 | 100.0% | 0.0% | "
        "2.00 | 1.00 |",
        "| cohort trt10: backend trtllm | 1 | 1 | 0 | 1 | 0 | 50.0% | 0.0% | 0.50 | 1.00 |",
        f"| cohort trt10: {trt['model_path']} {trt['precision']} | 1 | 1 | 0 | 1 | 0 | 50.0% | "
        "0.0% | 0.50 | 1.00 |"]


def test_attention_dp_rows_are_a_cohort_of_their_own() -> None:
    # aggdp55: a vLLM TP 2 x DP 2 EP 4 row (MiniMax-M2.5 fp8) replays through `simulate
    # --dp-attention` and is reported as its own cohort, by backend and by layout; made-up
    # predictions: TTFT ratio 2.0, TPOT 1.0.
    row = next(r for r in aiconfig_agg_runs.rows() if aiconfig_agg_runs.layout(r) == (2, 2, 1, 4)
               and aiconfig_agg_runs.why_not(r) == "")
    assert "DP2 x TP2 EP4" in aiconfig_agg_runs.label(row)
    ttft, tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
    rep = disagg_rows.Replay(id=disagg_rows.PREFIX + row["id"], label="", cohort="aggdp55",
                             measured_ttft_ms=ttft, measured_tpot_ms=tpot, concurrency=1,
                             input_len=1, output_len=2, ttft_ms=2 * ttft, tpot_ms=tpot)
    lines = aiconfig_agg_runs.cohort_lines([rep])
    assert lines[-3:] == [
        "| cohort aggdp55 (first replayed at stop 55: attention DP) | 1 | 1 | 0 | 1 | 0 | "
        "100.0% | 0.0% | 2.00 | 1.00 |",
        "| cohort aggdp55: backend vllm | 1 | 1 | 0 | 1 | 0 | 100.0% | 0.0% | 2.00 | 1.00 |",
        "| cohort aggdp55: vllm TP2 x DP2 EP4 | 1 | 1 | 0 | 1 | 0 | 100.0% | 0.0% | 2.00 | "
        "1.00 |"]
    # The TensorRT-LLM rows whose MoE runs TP x EP under attention DP say so (a db-dump row
    # with no twin and no layout in its id).
    by_id = {r["id"]: r for r in aiconfig_agg_runs.rows()}
    hybrid = by_id["dsr1_h200_trtllm_fp8_agg_8192x1024_c64_cfg183"]
    assert aiconfig_agg_runs.layout(hybrid)[1:] == (64, 8, 8)
    assert "MoE TP 8 x EP 8 under attention DP 64" in aiconfig_agg_runs.why_not(hybrid)


def test_an_attention_dp_run_written_as_dp_times_ep_is_not_a_hybrid() -> None:
    # trtdp56: the same TensorRT-LLM 1.2.0rc6.post3 DeepSeek-R1 NVFP4 B200 measurement
    # (8192/1024 at 128 users) twice: ..._tp8_0_ep8_0_987 states TP 1 x DP 8, EP 8;
    # ..._tp8_ep8_942 attention DP 64, MoE TP 8, EP 8 -- InferenceX's TP 8 EP 8 run with DP
    # attention (8 GPUs) with attention_dp_size written 8 x 8.
    by_id = {r["id"]: r for r in aiconfig_agg_runs.rows()}
    plain = by_id["2026_03_25_deepseek_r1_b200_sxm_trtllm_fp4_agg_8192x1024_c128_tp8_0_ep8_0_987"]
    written = by_id["2026_04_06_deepseek_r1_b200_sxm_trtllm_fp4_agg_8192x1024_c128_tp8_ep8_942"]
    assert (plain["silicon_ttft_ms"], plain["silicon_tpot_ms"]) == (
        written["silicon_ttft_ms"], written["silicon_tpot_ms"])
    assert aiconfig_agg_runs.layout(plain) == (1, 8, 1, 8)
    assert aiconfig_agg_runs.layout(written) == (1, 64, 8, 8)
    assert aiconfig_agg_runs.why_not(plain) == ""
    assert aiconfig_agg_runs.why_not(written).startswith(
        "attention DP 8 x EP 8 written as attention_dp_size 64 with MoE TP 8")
    # MoE TP 4, EP 1 under attention DP 4 (tp4_ep1: InferenceX's TP 4, EP 1, DP attention, 4
    # GPUs) is what it says: an MoE TP under attention DP, still refused as one.
    tp4 = by_id["2026_04_06_gpt_oss_120b_b200_sxm_trtllm_fp4_agg_1024x1024_c32_tp4_ep1_296"]
    assert "MoE TP 4 x EP 1 under attention DP 4" in aiconfig_agg_runs.why_not(tp4)


def test_a_tp_ep_run_written_as_tp_times_ep_is_not_moe_tp_x_ep() -> None:
    # The same SGLang 0.5.9 DeepSeek-R1 NVFP4 B200 measurement (759.947... / 25.288... ms at
    # 128 users, 1024/1024) twice: ..._tp4_0_ep4_0_291 states TP 4, EP 4; ..._tp4_ep4_1035
    # tp_size 16, MoE TP 4, EP 4 -- the TP 4 EP 4 run with tp_size written 4 x 4.
    by_id = {r["id"]: r for r in aiconfig_agg_runs.rows()}
    plain = next(r for i, r in by_id.items() if i.endswith("_c128_tp4_0_ep4_0_291"))
    written = next(r for i, r in by_id.items() if i.endswith("_c128_tp4_ep4_1035"))
    assert (plain["silicon_ttft_ms"], plain["silicon_tpot_ms"]) == (
        written["silicon_ttft_ms"], written["silicon_tpot_ms"])
    assert aiconfig_agg_runs.layout(plain) == (4, 1, 1, 4)
    assert aiconfig_agg_runs.layout(written) == (16, 1, 4, 4)
    assert aiconfig_agg_runs.tp_times_ep(written)
    assert aiconfig_agg_runs.why_not(written).startswith("TP 4 x EP 4 written as tp_size 16")
    assert aiconfig_agg_runs.cohort_of(written) == aiconfig_agg_runs.HYBRID_COHORT
    # A B300 row of a MoE TP x EP layout with no such twin: InferenceX's config for its runs
    # (dsr1-fp4-b300-sglang at 9ebeafb4e) lists TP 4 EP 4 and TP 8 EP 8 only (sglmoe56).
    b300 = next(r for i, r in by_id.items()
                if i.endswith("b300_sglang_fp4_agg_1024x1024_c16_cfg717"))
    assert aiconfig_agg_runs.layout(b300) == (16, 1, 4, 4)
    assert aiconfig_agg_runs.tp_times_ep(b300)
    assert aiconfig_agg_runs.why_not(b300).startswith("TP 4 x EP 4 written as tp_size 16")
    assert aiconfig_agg_runs.cohort_of(b300) == aiconfig_agg_runs.HYBRID_COHORT
    # A MoE TP x EP layout that config does not list is still replayed (Qwen3.5-397B NVFP4,
    # TP 4 = MoE TP 2 x EP 2, on the same image and GPU: another config).
    qwen = next(r for r in by_id.values() if r["system"] == "b300_sxm"
                and r["model_path"] == "Qwen/Qwen3.5-397B-A17B" and r["precision"] == "fp4"
                and aiconfig_agg_runs.layout(r) == (4, 1, 2, 2))
    assert not aiconfig_agg_runs.tp_times_ep(qwen) and aiconfig_agg_runs.why_not(qwen) == ""


def _as_run(row: dict[str, str]) -> tuple[int, int, int, int]:
    return aiconfig_agg_dp.as_run(row, aiconfig_agg_runs.layout(row))


def _row(row_id: str) -> dict[str, str]:
    return next(r for r in aiconfig_agg_runs.rows() if r["id"] == row_id)


def test_inferencex_single_node_vllm_rows_at_the_layout_they_ran() -> None:
    # vllmdpep56: InferenceX's `tp 4, ep 4` MiniMax-M2.5 FP8 B200 run (config 691, conc. 16)
    # launched `vllm serve --tensor-parallel-size=4 --enable-expert-parallel` on 4 GPUs; its
    # database filled the GPUs as tp x ep = 16 and aiconfigurator's vLLM adapter took attention
    # DP = 16 / 4 = 4 and MoE EP = 16: the row states (4, 4, 1, 16). As run: TP 4, no DP, EP
    # = TP x DP = 4.
    row = _row("minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c16_cfg691")
    assert aiconfig_agg_runs.layout(row) == (4, 4, 1, 16)
    assert _as_run(row) == (4, 1, 1, 4)
    assert "(InferenceX TP4 EP4 on 4 GPUs)" in aiconfig_agg_runs.label(row)
    assert aiconfig_agg_runs.cohort_of(row) == aiconfig_agg_dp.COHORT  # first replayed there
    rep = disagg_rows.Replay(id=disagg_rows.PREFIX + row["id"], label="", cohort="aggdp55",
                             measured_ttft_ms=1.0, measured_tpot_ms=1.0, concurrency=16,
                             input_len=1024, output_len=1024, ttft_ms=1.0, tpot_ms=1.0)
    assert aiconfig_agg_runs.split_of(rep) == "shaped by b8b24713"  # the layout as run
    # The same measurement in the 2026-04-06 export (its id names tp4_ep4): the same reading.
    same = _row("2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c16_tp4_ep4_1397")
    assert _as_run(same) == (4, 1, 1, 4)
    # Kimi-K2.5 NVFP4 B200 (v0.17.0, 2026-03-27): the script passes no --enable-expert-parallel,
    # so the experts split TP-wise over the 4 GPUs: MoE TP 4, EP 1.
    kimi = _row("kimik2_5_b200_vllm_fp4_agg_1024x1024_c16_cfg635")
    assert aiconfig_agg_runs.layout(kimi) == (4, 4, 1, 16)
    assert _as_run(kimi) == (4, 1, 4, 1)
    # `tp 2, ep 2` stated (2, 2, 1, 4): config 706 is the entry without dp-attn (TP 2 EP 2 on
    # 2 GPUs), 707 the one with it (`--tensor-parallel-size=1 --data-parallel-size=2
    # --enable-expert-parallel`: TP 1 x DP 2, EP 2); 735 / 827 (FP8 B300) are not read.
    assert _as_run(
        _row("minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c128_cfg706")) == (2, 1, 1, 2)
    assert _as_run(
        _row("minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c256_cfg707")) == (1, 2, 1, 2)
    refused = _row("minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c512_cfg735")
    with pytest.raises(InputError, match="config_id is not read"):
        _as_run(refused)
    assert "config_id is not read" in aiconfig_agg_runs.why_not(refused)


def test_other_attention_dp_rows_keep_their_stated_layout() -> None:
    # A TensorRT-LLM attention-DP row (no adapter rule for it) and a gap-analysis vLLM row keep
    # the layout they state; so does every row without attention DP.
    trt = next(r for r in aiconfig_agg_runs.rows() if r["backend"] == "trtllm"
               and aiconfig_agg_runs.layout(r)[1] > 1)
    assert _as_run(trt) == aiconfig_agg_runs.layout(trt)
    gap = dict(_row("minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c16_cfg691"),
               silicon_data_source="source_file=x-gap-analysis.csv")
    assert _as_run(gap) == (4, 4, 1, 16)
    assert all(_as_run(r) == aiconfig_agg_runs.layout(r)
               for r in aiconfig_agg_runs.rows() if aiconfig_agg_runs.layout(r)[1] == 1)
    # The rows it moves: aggdp55's 97 vLLM rows, every one an InferenceX run.
    moved = [r for r in aiconfig_agg_runs.rows() if aiconfig_agg_runs.layout(r)[1] > 1
             and aiconfig_agg_dp.inferencex_single_node(r, aiconfig_agg_runs.layout(r))]
    assert len(moved) == 97 and {r["backend"] for r in moved} == {"vllm"}
