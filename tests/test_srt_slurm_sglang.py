"""The srt-slurm recipes the SGLang disaggregated rows ran, and the TensorRT-LLM context servers'
recipe settings (sglseat58): the match by hand from the YAML, the version in force at the
measured date, and what the replay's setup takes from it, per rank."""

from __future__ import annotations

from tests.benches import disagg_rows, srt_slurm_recipes, srt_slurm_sglang


def _row(name: str) -> dict[str, str]:
    return next(r for r in disagg_rows.prospective_rows() if r["id"] == name)


def _recipe(row: dict[str, str]) -> srt_slurm_sglang.SglangRecipe | None:
    return srt_slurm_sglang.for_row(row, disagg_rows.stated_concurrency(row),
                                    disagg_rows.layout(row, "prefill"),
                                    disagg_rows.layout(row, "decode"))


def test_recipe_matched_by_hand() -> None:
    # dsr1_gb200_sglang_fp4_disagg_1024x1024_c2048_cfg483: 4 prefill workers of DP 4 (EP 4), 1
    # decode worker of DP 32 (EP 32), 2,048 users, measured 2026-02-08. NVIDIA/srt-slurm
    # recipes/gb200-fp4/1k1k/mid-curve.yaml at 686df21e (2026-02-04; versions 2026-01-27 and
    # 2026-03-03 besides): resources prefill_workers 4, decode_workers 1; prefill tp-size 4,
    # dp-size 4, ep-size 4, enable-dp-attention, max-running-requests 30000,
    # chunked-prefill-size 65536, max-prefill-tokens 32768, mem-fraction-static 0.84,
    # max-total-tokens 131072; decode tp-size / dp-size / ep-size 32, max-running-requests
    # 67584, mem-fraction-static 0.83, max-total-tokens 3122380; benchmark concurrencies
    # "512x2048x4096x8192x15000".
    row = _row("dsr1_gb200_sglang_fp4_disagg_1024x1024_c2048_cfg483")
    rec = _recipe(row)
    assert rec is not None
    assert rec.path == "recipes/gb200-fp4/1k1k/mid-curve.yaml"
    assert rec.commit.startswith("686df21e") and rec.date == "2026-02-04"
    assert (rec.prefill.max_running_requests, rec.prefill.chunked_prefill_size,
            rec.prefill.max_prefill_tokens) == (30000, 65536, 32768)
    assert (rec.decode.max_running_requests, rec.decode.max_total_tokens) == (67584, 3122380)
    # The row's batch sizes are the adapter's 2,048 / 32 ranks = 64, not the engine's flags.
    assert row["decode_batch_size"] == "64"
    # Per attention-DP rank: 65,536 / 4 = 16,384 tokens and 30,000 / 4 = 7,500 prompts a
    # prefill step; 67,584 / 32 = 2,112 running a decode rank; --max-prefill-tokens not
    # divided.
    assert rec.prefill.per_rank(rec.prefill.chunked_prefill_size) == 16384
    assert rec.prefill.per_rank(rec.prefill.max_running_requests) == 7500
    assert rec.decode.per_rank(rec.decode.max_running_requests) == 2112


def test_setup_takes_the_recipe_per_rank() -> None:
    row = _row("dsr1_gb200_sglang_fp4_disagg_1024x1024_c2048_cfg483")
    rec = _recipe(row)
    assert rec is not None
    st = disagg_rows._setup(disagg_rows._setup_key(row), sglang_recipe=(rec.path, rec.commit))
    b = st.batching
    assert b is not None and b.decode_admission is not None
    assert (b.token_budget, b.max_seqs, b.input_budget) == (16384, 7500, 32768)
    # The decode rank's cap: min(67,584 // 32, its pool's request slots); the pool at
    # --max-total-tokens 3,122,380 (kvplan's profiled pool is larger at 0.83).
    assert b.decode_max_seqs == b.decode_admission.max_running == 2112
    assert st.decode.capacity.token_capacity == 3122380
    assert st.decode.mem_fraction == 0.83 and st.prefill.mem_fraction == 0.84
    # Before sglseat58 (SGLang's defaults): the chunk 16,384 // 4 on a 186 GiB GB200, no cap
    # on a step's prompts but the KV, --max-prefill-tokens' default 16,384.
    old = disagg_rows._setup(disagg_rows._setup_key(row)).batching
    assert old is not None and (old.token_budget, old.input_budget) == (4096, 16384)


def test_version_in_force_and_renamed_files() -> None:
    # recipes/gb200-fp8/1k1k/low-latency.yaml: 4 decode workers (max-running-requests 512) at
    # 75f6e32a (2026-01-27), 1 decode worker (128) from 686df21e (2026-02-04). cfg502 (1
    # decode worker, measured 2026-02-09) ran the latter; cfg227 (measured 2025-12-21, before
    # any version, laid out with DP attention by the row) none.
    rec = _recipe(_row("dsr1_gb200_sglang_fp8_disagg_1024x1024_c4_cfg502"))
    assert rec is not None and rec.date == "2026-02-04"
    assert (rec.decode.workers, rec.decode.max_running_requests) == (1, 128)
    assert _recipe(_row("dsr1_gb200_sglang_fp8_disagg_1024x1024_c64_cfg227")) is None
    # gb200-fp8/1k1k/max-tpt-2p1d.yaml (2026-01-27) and max-tpt.yaml (2026-02-04) both in
    # force for cfg523 c1024 (measured 2026-02-09) with the same settings: taken, the earlier.
    both = srt_slurm_recipes.in_force(srt_slurm_sglang._matching(
        _row("dsr1_gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523"), 1024,
        disagg_rows.layout(_row("dsr1_gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523"),
                           "prefill"),
        disagg_rows.layout(_row("dsr1_gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523"),
                           "decode")), "2026-02-09")
    assert [r.path.rsplit("/", 1)[1] for r in both] == ["max-tpt-2p1d.yaml", "max-tpt.yaml"]
    rec = _recipe(_row("dsr1_gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523"))
    assert rec is not None and rec.path.endswith("max-tpt-2p1d.yaml")
    assert rec.decode.per_rank(rec.decode.max_running_requests) == 45000 // 32
    # The B200 FP4 rows (measured 2026-02-11) match only versions from 2026-03-03: none.
    assert _recipe(_row("dsr1_b200_sglang_fp4_disagg_8192x1024_c16_cfg535")) is None


def test_in_force_picks_each_files_latest_on_or_before() -> None:
    class V:
        def __init__(self, path: str, date: str) -> None:
            self.path, self.date = path, date

    a1, a2, a3, b1 = V("a", "2026-01-27"), V("a", "2026-02-04"), V("a", "2026-03-03"), \
        V("b", "2026-03-03")
    assert srt_slurm_recipes.in_force([a3, a1, a2, b1], "2026-02-08") == [a2]
    assert srt_slurm_recipes.in_force([a1, b1], "2026-03-03") == [a1, b1]
    assert srt_slurm_recipes.in_force([b1], "2026-01-01") == []


def test_trt_context_server_at_the_recipe() -> None:
    # dsr1_b200_trtllm_fp4_disagg_1024x1024_c180_cfg320 ran ctx1_gen5_tep8_batch32_eplb0_mtp0
    # at 75f6e32a: prefill max_batch_size 8, max_num_tokens 10240 (per rank); the generator's
    # was 1 prompt a step within TensorRT-LLM's default 8,192 tokens.
    row = _row("dsr1_b200_trtllm_fp4_disagg_1024x1024_c180_cfg320")
    rec = disagg_rows.trt_context_recipe(row)
    assert rec is not None
    assert (rec.prefill.max_batch_size, rec.prefill.max_num_tokens) == (8, 10240)
    st = disagg_rows._setup(disagg_rows._setup_key(row), trt_context=(rec.path, rec.commit))
    assert st.batching is not None
    assert (st.batching.token_budget, st.batching.max_seqs) == (10240, 8)
    old = disagg_rows._setup(disagg_rows._setup_key(row)).batching
    assert old is not None and (old.token_budget, old.max_seqs) == (8192, 1)


def test_deepep_roles_by_hand() -> None:
    # recipes/gb200-fp8/1k1k/max-tpt-2p1d.yaml at 75f6e32a (cfg523 c1024): prefill
    # moe-a2a-backend "deepep", deepep-mode "normal", moe-dense-tp-size 1, enable-dp-lm-head
    # true; decode the same with deepep-mode "low_latency"; no SGLANG_MOE_NVFP4_DISPATCH in
    # either environment (an FP8 checkpoint); both roles ep-num-redundant-experts 32 (read by
    # deepepx60). gb200-fp4/1k1k/mid-curve.yaml at 686df21e (cfg483 c2048): the prefill runs no
    # DeepEP; the decode low_latency with SGLANG_MOE_NVFP4_DISPATCH "1" in decode_environment,
    # ep-num-redundant-experts 32.
    fp8 = _recipe(_row("dsr1_gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523"))
    assert fp8 is not None and fp8.commit.startswith("75f6e32a")
    assert fp8.prefill.deepep_settings() == {
        "moe_a2a_backend": "deepep", "deepep_mode": "normal", "moe_dense_tp_size": 1,
        "enable_dp_lm_head": True, "moe_nvfp4_dispatch": False, "ep_num_redundant_experts": 32}
    assert fp8.decode.deepep_settings()["deepep_mode"] == "low_latency"
    fp4 = _recipe(_row("dsr1_gb200_sglang_fp4_disagg_1024x1024_c2048_cfg483"))
    assert fp4 is not None and fp4.prefill.deepep_settings() == {}
    assert fp4.decode.deepep_settings() == {
        "moe_a2a_backend": "deepep", "deepep_mode": "low_latency", "moe_dense_tp_size": 1,
        "enable_dp_lm_head": True, "moe_nvfp4_dispatch": True, "ep_num_redundant_experts": 32}
    # The setup hands them to both roles' requests (SGLang's options), and not without them.
    row = _row("dsr1_gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523")
    key = disagg_rows._setup_key(row)
    with_it = disagg_rows._setup(key, sglang_recipe=(fp8.path, fp8.commit))
    assert with_it.req.extra["moe_a2a_backend"] == "deepep"
    assert with_it.req.extra["deepep_mode"] == "low_latency"
    without = disagg_rows._setup(key, sglang_recipe=(fp8.path, fp8.commit), deepep=False)
    assert "moe_a2a_backend" not in without.req.extra
    # Its weights: the dense MLPs, shared experts and lm_head whole on each decode rank, so the
    # rank's pool holds fewer tokens than with them split over the 32 ranks.
    assert with_it.decode.capacity.token_capacity < without.decode.capacity.token_capacity


def test_decode_recv_interval_by_hand() -> None:
    # disagg63: recipes/gb200-fp8/8k1k/low-latency.yaml at 686df21e sets scheduler-recv-interval
    # 10 on both roles (TP 8, no DP attention); gb300-fp8/8k1k/stp/low-latency.yaml at 3c922355
    # 10 on the prefill and 1 on the decode; gb200-fp8/8k1k/mid-curve.yaml (DP attention) none.
    # The replay's decode admission takes the decode role's N where it is above 1 without DP
    # attention (disagg_rows._recipe_recv), else SGLang's default 1.
    gb200 = srt_slurm_sglang.by_version("recipes/gb200-fp8/8k1k/low-latency.yaml",
                                        "686df21eb78bcdf693d3cfdb8c78cbd100089b42")
    assert (gb200.prefill.scheduler_recv_interval, gb200.decode.scheduler_recv_interval) == (10, 10)
    gb300 = srt_slurm_sglang.by_version("recipes/gb300-fp8/8k1k/stp/low-latency.yaml",
                                        "3c922355ffcfcc62a7be30779934cefc45363ee6")
    assert gb300.decode.scheduler_recv_interval == 1
    row = _row("dsr1_gb200_sglang_fp8_disagg_8192x1024_c4_cfg536")
    assert _recipe(row) == gb200
    st = disagg_rows._setup(disagg_rows._setup_key(row), sglang_recipe=(gb200.path, gb200.commit))
    assert st.batching is not None and st.batching.decode_admission is not None
    assert st.batching.decode_admission.recv_interval == 1  # the setup: SGLang's default
    taken = disagg_rows._recipe_recv(st.batching, gb200).decode_admission
    assert taken is not None and taken.recv_interval == 10
    assert disagg_rows._recipe_recv(st.batching, gb300).decode_admission.recv_interval == 1
