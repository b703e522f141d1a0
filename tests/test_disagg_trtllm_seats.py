"""Section 3j's seating lens and the srt-slurm recipes the TensorRT-LLM rows ran (trtseat58):
the recipe match by hand from the YAML, the version in force at the measured date, the seats
the replay takes, and Little's seated count worked by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.benches import disagg_rows, srt_slurm_recipes
from tests.benches.disagg_trtllm_seats import implied_seated


def _row(name: str) -> dict[str, str]:
    return next(r for r in disagg_rows.prospective_rows() if r["id"] == name)


def _recipe(row: dict[str, str]) -> srt_slurm_recipes.SrtRecipe | None:
    return srt_slurm_recipes.for_row(row, disagg_rows.stated_concurrency(row),
                                     disagg_rows.layout(row, "prefill"),
                                     disagg_rows.layout(row, "decode"))


def test_recipe_matched_by_hand() -> None:
    # dsr1_b200_trtllm_fp4_disagg_1024x1024_c180_cfg320: 1 prefill worker of 4 GPUs with
    # attention DP (EP 4), 5 decode workers of TP 8 EP 8, 180 users, measured 2026-01-29.
    # NVIDIA/srt-slurm recipes/trtllm/b200-fp4/1k1k/stp/ctx1_gen5_tep8_batch32_eplb0_mtp0.yaml
    # at 75f6e32a (2026-01-27): prefill_workers 1, tensor_parallel_size 4,
    # moe_expert_parallel_size 4, enable_attention_dp true; decode_workers 5, 8 / 8 / false;
    # benchmark concurrencies 10x15x25x45x90x180; decode max_batch_size 32.
    row = _row("dsr1_b200_trtllm_fp4_disagg_1024x1024_c180_cfg320")
    rec = _recipe(row)
    assert rec is not None
    assert rec.path.endswith("b200-fp4/1k1k/stp/ctx1_gen5_tep8_batch32_eplb0_mtp0.yaml")
    assert rec.commit.startswith("75f6e32a") and rec.date == "2026-01-27"
    assert (rec.decode.max_batch_size, rec.prefill.max_batch_size) == (32, 8)
    # The row's own decode batch size is 180 / 5 = 36, the adapter's, not the engine's.
    assert row["decode_batch_size"] == "36"
    assert disagg_rows.recipe_decode_seats(row) == 32


def test_version_in_force_at_the_measured_date() -> None:
    # b200-fp8/8k1k/stp/ctx1_gen4_tp8_batch32_eplb0_mtp0_32.yaml states decode max_batch_size
    # 32 at 75f6e32a (2026-01-27) and 8 from 2026-03-03; cfg661 c32 was measured 2026-03-23.
    row = _row("dsr1_b200_trtllm_fp8_disagg_8192x1024_c32_cfg661")
    assert srt_slurm_recipes.measured_date(row) == "2026-03-23"
    rec = _recipe(row)
    assert rec is not None and rec.date == "2026-03-03" and rec.decode.max_batch_size == 8
    # The H100 rows (measured 2026-02-08) match only versions from 2026-03-03, but InferenceX
    # named their files on 2026-02-07 (trtttft61, srt_slurm_recipes.NAMED_BEFORE): the first
    # srt-slurm version, whose decode max_batch_size 8 is the name's batch8, is taken.
    h100 = _row("dsr1_h100_trtllm_fp8_disagg_1024x1024_c30_cfg494")
    rec = _recipe(h100)
    assert rec is not None and rec.commit.startswith("5063eb43") and rec.date == "2026-03-03"
    assert rec.path.endswith("h100-fp8/1k1k/stp/ctx1_gen3_tep16_batch8_eplb0_mtp0.yaml")
    assert disagg_rows.recipe_decode_seats(h100) == 8
    assert srt_slurm_recipes.later(h100, 30, disagg_rows.layout(h100, "prefill"),
                                   disagg_rows.layout(h100, "decode")) is None
    # A row no recipe fits (an older image's run): none.
    assert _recipe(_row("dsr1_gb200_trtllm_fp4_disagg_1024x1024_c16_cfg237")) is None


def test_named_before_by_hand() -> None:
    # Every H100 STP file InferenceX 32a48459 named (nvidia-master.yaml :1732-:1995): its
    # first NVIDIA/srt-slurm version's decode max_batch_size is its name's batch.
    assert len(srt_slurm_recipes.NAMED_BEFORE) == 8
    for path in srt_slurm_recipes.NAMED_BEFORE:
        versions = [r for r in srt_slurm_recipes.recipes() if r.path == path]
        assert versions, path
        first = min(versions, key=lambda r: r.date)
        assert srt_slurm_recipes.named_batch(path) == first.decode.max_batch_size
    assert srt_slurm_recipes.named_batch("ctx1_gen2_tep16_batch64_eplb0_mtp0.yaml") == 64
    assert srt_slurm_recipes.named_batch("ctx1_gen2_tep16_eplb0_mtp0.yaml") is None
    v = next(r for r in srt_slurm_recipes.recipes()
             if r.path.endswith("h100-fp8/8k1k/stp/ctx1_gen3_tep16_batch2_eplb0_mtp0.yaml"))
    named = {v.path: "2026-02-07"}
    # Named the day before the measurement: taken; named after it: not.
    assert srt_slurm_recipes.named_first([v], "2026-02-08", named) == [v]
    assert srt_slurm_recipes.named_first([v], "2026-02-06", named) == []
    # A file not named: not taken; a version whose seats are not its name's batch: not taken.
    assert srt_slurm_recipes.named_first([v], "2026-02-08", {}) == []
    odd = replace(v, decode=replace(v.decode, max_batch_size=4))
    assert srt_slurm_recipes.named_first([odd], "2026-02-08", named) == []


def test_seats_per_rank_under_attention_dp() -> None:
    # dsr1_b200_trtllm_fp4_disagg_1024x1024_c2192_cfg346: 2 decode workers of DP 8: 16 ranks,
    # 2,192 / 16 = 137 users a rank (the row's decode batch size); the recipe
    # ctx1_gen2_dep8_batch128 seats 128 a rank (TensorRT-LLM's max_batch_size is per rank
    # under attention DP), within kvplan's pool there.
    row = _row("dsr1_b200_trtllm_fp4_disagg_1024x1024_c2192_cfg346")
    assert row["decode_batch_size"] == "137"
    st = disagg_rows._setup(disagg_rows._setup_key(row))
    assert st.decode.requests // st.req.decode.replicas >= 128
    assert disagg_rows.decode_max_seqs(row, st) == 128
    # Before trtseat58 the replay seated the row's 137.
    assert st.batching is not None and st.batching.decode_max_seqs == 137


def test_implied_seated_by_hand() -> None:
    # 10 users, TTFT 100 ms, TPOT 10 ms, O 11: 100 ms decoding of 200 in flight: 5 at once.
    assert implied_seated(10, 100.0, 10.0, 11) == pytest.approx(5.0)
    # dsr1_b200_trtllm_fp4_disagg_1024x1024_c180_cfg320 (the frozen file): TTFT 1,416.51 ms,
    # TPOT 10.9762 ms; 1,023 steps decode 11,228.64 ms of 12,645.15 in flight, so 180 x
    # 0.88798 = 159.84 decode at once, 31.97 a worker over 5: the recipe's 32 seats a worker,
    # not the 36 users.
    row = _row("dsr1_b200_trtllm_fp4_disagg_1024x1024_c180_cfg320")
    ttft, tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
    assert implied_seated(180, ttft, tpot, 1024) / 5 == pytest.approx(31.97, abs=0.01)
