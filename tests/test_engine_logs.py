"""vLLM's KV budget and SGLang's KV token count against public start-up logs (issue #13),
replayed through the CLI by tests/benches/engine_bench.py: given the model, GPU name, fraction (vLLM
always, SGLang where the user set one), TP/PP, engine version and the logged weights, kvplan's
`kv_budget_bytes` against "Available KV cache memory" and its token count against SGLang's
"max_total_num_tokens"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benches import engine_bench as bench

ROOT = Path(__file__).resolve().parent.parent


ROWS = [bench.compare(log) for log in bench.load_logs()]
SGLANG_ROWS = bench.sglang_rows()
GiB = 1 << 30


def test_every_log_names_its_source_and_quotes_the_lines() -> None:
    for row in ROWS:
        log = row["log"]
        assert log["url"] and "Available KV cache memory" in log["quote"]
        assert f"{log['available_kv_cache_gib']}" in log["quote"].replace("GiB", " GiB"), log["url"]


def test_vllm_budget_median_within_two_percent() -> None:
    # Issue #13's target: median within 2 %, 90 % of logs within max(2 %, 0.25 GiB). Over the
    # 88 replayed logs the median is 0.35 % and 83 of 88 (94.3 %) are within; the misses
    # (vLLM 0.10.1.1 on A100s at a 0.25 fraction and with TP 2 across nodes, Qwen3-32B at TP 1
    # and PP 2 on RTX PRO 6000s at 0.27.1, Llama-3.1-8B on an A40 at 0.26.0) are listed in
    # examples/engine-bench.md with their causes where found. The Qwen3.5-9B L40S miss (+3.9 %)
    # is within since the vllm-mm session counts vLLM's multimodal encoder profile (-0.6 %).
    # The unified-memory GB10 log (+4.9 % when it was replayed) is refused now and not counted.
    # This test holds what is achieved. Issue #26: the fitted Qwen3-Next-80B-A3B 0.10.2 log
    # (+1.9 % -> +2.8 %) is a miss since 0.10.2's fused-MoE caches are freed before the sampler
    # warm-up (kvplan.engines.vllm.moe), its 0.43 GiB not explained; the issue's two H200 0.11.2
    # logs are misses (test_issue_26_logs): 83 of 91. The startup26 session added 18 logs
    # (examples/engine-bench.md: 9 prospective, 7 within; 9 llm-d-benchmark H100 0.11.0 runs
    # read before the last rule change, 6 within): 96 of 109 (88.1 %), median 0.40 %; 97 since
    # gpustackfi61 recorded the Mistral-Small-3.2 run's FlashInfer sampler (no test of it).
    s = bench.summary(ROWS)
    assert s["logs"] >= 109
    assert s["median_error"] <= 0.02
    assert sum(r["within"] for r in ROWS) >= 96


def test_issue_26_logs() -> None:
    # The FP8 MoE and dense FP8 logs of issue #26 (tests/data/engine_logs/vllm_startup_logs.json,
    # weights pinned to the logged figures), before -> after its two rules (kvplan.engines.vllm.
    # moe, the non-torch figure held at TP 4's beyond the measured TP):
    # - DeepSeek-R1-0528 FP8, TP 8, H200, 0.11.2: 36.30 -> 39.85 GiB against 41.60 (-12.7 % ->
    #   -4.2 %): 0.97 GiB of MoE caches no longer stacked on the sampler, 4.42 -> 1.84 GiB of
    #   non-torch memory; the rest (1.75 GiB) fits FlashInfer's sampler (2.1 GiB lighter) if that
    #   build ran it, which the quoted lines do not say;
    # - Qwen3-235B-A22B-FP8, TP 8 + EP, 8 x L40S, 0.10.2: 10.58 -> 10.72 GiB against 10.68 (-1.0 %
    #   -> +0.4 %); its logged torch peak 1.40 GiB, kvplan's 1.52 -> 1.38;
    # - Llama-3.3-70B-FP8, TP 4, H200, 0.11.2 (Red Hat's build): 102.66 GiB against 106.17, -3.3 %
    #   either way; the budget implies a 2.7 GiB reserve at the default 0.9, below the sort
    #   sampler's 4.4 GiB alone.
    def row(log_id: str) -> dict:
        (r,) = [r for r in ROWS if r["log"]["id"] == log_id]
        return r

    assert -0.05 < row("index-54698501030-deepseek")["error"] < -0.035
    qwen = row("index-38962983769")
    assert abs(qwen["error"]) < 0.01 and abs(qwen["peak_gib"] - 1.40) < 0.03
    assert -0.04 < row("index-54698501030-llama")["error"] < -0.025


def test_held_out_logs() -> None:
    # The logs not used to fit the sampler rules (other models, versions 0.10-0.31 and GPUs
    # other than the H100): the median still within 2 %; 58 of 64 (90.6 %) within the
    # tolerance. Before the vllm-heldout session 51 of 57 (89.5 %); it refused the GB10 miss
    # and added eight logs: Qwen2.5-7B at 0.22.0 (within), Llama-3.1-8B on an A40 at 0.26.0 (a
    # miss) and six H100 runs of llm-d-planner not used to fit anything (gemma-3-12b/4b at
    # 0.19.0, the Qwen3-14B version sweep at 0.15-0.18), all within. Those six come from the lab
    # whose other logs fitted the constants: without them, 52 of 58 (89.7 %).
    # The vllm-mm session added three (OmniCoder-9B-AWQ and Qwen3.5-9B-AWQ at 0.17.1, Qwen3.5-9B
    # at 0.18.0, all within) and brought the Qwen3.5-9B L40S log within: 62 of 67 (92.5 %);
    # without the six lab runs, 56 of 61 (91.8 %).
    # Issue #26 added three (Qwen3-235B-A22B-FP8 at TP 8 + EP, within; the DeepSeek-R1-0528
    # TP 8 and Llama-3.3-70B-FP8 TP 4 H200 0.11.2 logs, misses: test_issue_26_logs): 63 of 70.
    # The startup26 session added 18 (13 within; its misses: the GLM-4.7-NVFP4 report's 0.80
    # fraction that cannot have produced its lines, the Qwen3-VL-30B-A3B H100 NVL log, and the
    # llm-d-benchmark gpt-oss-120b, Qwen3-32B TP 1 and Mistral-Small-3.2 runs): 76 of 88.
    held = [r for r in ROWS if not r["log"]["fitted"]]
    s = bench.summary(held)
    assert s["logs"] >= 88
    assert s["median_error"] <= 0.02
    assert sum(r["within"] for r in held) >= 76


def test_unified_memory_logs_are_refused_in_one_line() -> None:
    # utils/mem_utils.py MemorySnapshot.measure (0.19-0.32): on Orin, Thor and Spark free memory
    # is the host's available RAM, so the budget takes in what the host allocates meanwhile
    # (one DGX Spark config run three times: 16.93 / 17.59 / 18.13 GiB). kvplan refuses it
    # without --reserve-gib; with the logged reserve given it reproduces the log.
    refused = bench.refused_logs()
    assert refused and all(log["gpu"] == "GB10" for log in refused)
    for log in refused:
        message = bench.refusal(log)
        assert "unified-memory" in message and len(message.splitlines()) == 1
        total = bench.run_kvplan(["estimate", bench.model_arg(log), "--gpu", log["gpu"],
                                  "--format", "json", "--reserve-gib", "0"], log["url"])
        total_gib = total["total_bytes"] / GiB
        reserve = log["gpu_memory_utilization"] * total_gib - log["model_loading_gib"] \
            - log["available_kv_cache_gib"]
        out = bench.run_kvplan([*bench.cli_args(log), "--reserve-gib", f"{reserve:.4f}"],
                               log["url"])
        assert abs(out["kv_budget_bytes"] / GiB - log["available_kv_cache_gib"]) < 0.01


def test_sort_and_triton_samplers_on_the_qwen3_14b_version_sweep() -> None:
    # llm-d-planner's version sweep (H100, Qwen3-14B, 1,024 rows x 151,936 logits), held out.
    # 0.15 and 0.16 run PyTorch's sort: logged peak 5.64 GiB, by the 34.64 B rule 0.13 + 1,024 x
    # 151,936 x 34.64 / 2^30 = 5.15 GiB (0.49 low: 38.0 B per logit would match; the rule was
    # fitted on one Qwen3-Next log), budget +1.2 %; 0.17 and 0.18 the Triton kernel: 2.23 logged,
    # 0.13 + 1,024 x 151,936 x 14.37 / 2^30 = 2.21, budget +0.1 % and +0.3 %.
    rows = {r["log"]["vllm_version"]: r for r in ROWS if "version-sweep" in r["log"]["url"]}
    assert sorted(rows) == ["0.15.0", "0.16.0", "0.17.0", "0.18.0"]
    for version, r in rows.items():
        assert r["within"], version
        sort = version in ("0.15.0", "0.16.0")
        assert r["peak_gib"] == pytest.approx(5.15 if sort else 2.21, abs=0.01), version
        assert r["log"]["activation_peak_gib"] == (5.64 if sort else 2.23), version


def test_logs_added_in_the_vllm_heldout_session() -> None:
    # Held out, added with their URLs / index ids (tests/data/engine_logs/vllm_startup_logs.json):
    # - Qwen2.5-7B, 0.22.0, model runner V1, a 48-GB GDDR6 card (L40S preset), fraction 0.95,
    #   128 requests / 2,048 tokens (AsyncEngineArgs' own defaults, confirmed by the capture
    #   list): 26.67 predicted vs 26.32 GiB logged (+1.3 %, within); the log's 492,912 tokens x
    #   57,344 B = 26.32 GiB; its CUDA-graph estimate 0.37 GiB against kvplan's 0.57;
    # - Llama-3.1-8B, 0.26.0, model runner V2, an A40 (L40S total), fraction 0.9: 24.50 vs
    #   23.90 GiB (+2.5 %, a miss: 1.06 GiB of logged reserve against kvplan's 0.46; the weights
    #   pinned to the 14.99 GiB other logs of this checkpoint print, the excerpt has none).
    def row(fragment: str) -> dict:
        (r,) = [r for r in ROWS if fragment in r["log"]["url"]]
        return r

    qwen = row("67144197265")
    assert qwen["within"] and abs(qwen["error"] - 0.013) < 0.005
    assert qwen["log"]["gpu_kv_cache_tokens"] * 57_344 / GiB == pytest.approx(26.32, abs=0.005)
    llama = row("70947466353")
    assert not llama["within"] and abs(llama["error"] - 0.025) < 0.005
    assert llama["log"]["gpu_kv_cache_tokens"] * 131_072 / GiB == pytest.approx(23.9, abs=0.005)


@pytest.mark.parametrize("model", ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct"])
def test_sampler_peak_matches_the_logged_activation_peak(model: str) -> None:
    # The rule was fitted on these bf16 runs; float32 logits add 2 B each (2.13 vs 2.21 GiB).
    rows = [r for r in ROWS if r["log"]["model"] == model and r["log"]["activation_peak_gib"]
            and r["log"]["pp"] == 1 and r["log"]["fitted"]]
    assert rows
    for r in rows:
        assert abs(r["peak_gib"] - r["log"]["activation_peak_gib"]) < 0.05, r["log"]["url"]


def test_vllm_v1_sort_sampler_on_held_out_logs() -> None:
    # PyTorch's sort top-k/top-p (vLLM V1 0.10-0.16 without FlashInfer): 34.64 B per logit,
    # fitted on one Qwen3-Next-80B-A3B H200 log (0.10.2, the fallback logged). Held out:
    # - Qwen3-8B-FP8, 0.10.2, 24 GB card, 256 rows (index file id 34681159919): "torch peak memory
    #   increase: 1.40GiB"; by this rule 0.13 + 256 x 151,936 x 34.64 B = 1.38 GiB (the light
    #   rule: 0.65); budget +7.5 % -> -1.1 %;
    # - Llama-3.1-8B on an L4, 0.11.0, 128 rows, "FlashInfer is not available. Falling back to the
    #   PyTorch-native implementation" (abinavChandar/demo_env_l4): +10.0 % -> +3.5 %;
    # - Llama-3.1-8B on an A100-40GB, 0.15.1 (ilseokoh/vllm-gce), where the sort's peak (1.19
    #   GiB) now exceeds the eager forward's (0.84): +1.1 % -> -0.7 %.
    # The dennislee22 0.10.1.1 A100 logs print "Using FlashInfer for top-p & top-k sampling" and
    # are replayed with --flashinfer-sampler: unchanged (-5.0 % to +6.9 %).
    def row(fragment: str) -> dict:
        (r,) = [r for r in ROWS if fragment in r["log"]["url"]]
        return r

    fp8 = row("index file id 34681159919")
    assert abs(fp8["peak_gib"] - fp8["log"]["activation_peak_gib"]) < 0.03
    assert abs(fp8["error"]) < 0.015
    assert abs(row("abinavChandar/demo_env_l4")["error"]) < 0.04
    assert abs(row("ilseokoh/vllm-gce")["error"]) < 0.01
    # The fitted Qwen3-Next log (5.58 GiB) was read as 0.43 GiB of fused-MoE buffers + this
    # rule; 0.10.2's fused_experts_impl frees those caches before the warm-up (issue #26,
    # kvplan.engines.vllm.moe), so kvplan's peak there is the rule alone, 0.13 + 1,024 x 151,936
    # x 34.64 B = 5.15 GiB, and 0.43 GiB are unexplained.
    fitted = row("file id 7292846353")
    assert fitted["log"]["fitted"]
    assert abs(fitted["peak_gib"] - (0.13 + 1024 * 151_936 * 34.64 / GiB)) < 0.01
    flashinfer = [r for r in ROWS if r["log"].get("flashinfer_sampler")]
    # The dennislee22 logs and (gpustackfi61, recorded after its evaluation: no test of it)
    # llm-d-benchmark's Mistral-Small-3.2-24B run on vllm/vllm-openai:v0.11.0, which installs
    # FlashInfer: 1,024 rows x 131,072 logits x 14.37 B + 0.13 GiB = 1.93 GiB against the
    # logged 2.12 (the sort's 4.46 made its budget -8.2 %).
    assert len(flashinfer) == 7
    assert sum("dennislee22" in r["log"]["url"] for r in flashinfer) == 6
    mistral = next(r for r in flashinfer
                   if r["log"]["id"] == "llm-d-benchmark-mistral-small-3-2-24b-tp1-16000")
    assert abs(mistral["peak_gib"] - (0.13 + 1024 * 131_072 * 14.37 / GiB)) < 0.01
    assert abs(mistral["error"]) < 0.01
    assert all(abs(r["peak_gib"] - 0.13 - 256 * 152_064 * 14.37 / GiB) < 0.01
               for r in flashinfer if r["log"]["spec"] == "qwen2.5-7b")


def test_logs_from_vllm_0_20_on() -> None:
    # The versions kvplan models by default, none used to fit: model-runner-V2 logs (0.26.0,
    # 0.27.1 twice, 0.28.1rc1, 0.31.0: -1.5 %, +1.8 %, -0.2 %, -0.6 %, -1.3 %; on the first four
    # the former 0.20+ rules, 24 B per logit and CUDA graphs on every runner, gave -4.5 %,
    # -3.6 %, -4.2 %, -2.0 %), two V1 logs (0.24.0, -0.4 %; 0.20.1 on an RTX PRO 6000, -0.2 %)
    # and Qwen3-32B on RTX PRO 6000s at 0.27.1: TP 2 over PCIe exact (-0.05 %; -22 % with the
    # NVLink non-torch figure kvplan used for two PCIe GPUs before), TP 1 and PP 2 the two
    # misses (-6.6 %, +13.9 %: 1.6 and 0.95 GiB more reserve than kvplan's, not explained).
    from kvplan._util.versions import version_key

    # The vllm-heldout session added Qwen2.5-7B at 0.22.0 (+1.3 %) and Llama-3.1-8B on an A40
    # at 0.26.0 (+2.5 %, a third miss): 9 of 12.
    new = [r for r in ROWS if version_key(r["log"]["vllm_version"]) >= (0, 20)]
    assert len(new) >= 12 and not any(r["log"]["fitted"] for r in new)
    misses = [r for r in new if not r["within"]]
    assert len(misses) <= 3, [(r["log"]["url"], r["error"]) for r in misses]
    pcie_tp2 = [r for r in new if r["log"]["model"] == "Qwen/Qwen3-32B" and r["log"]["tp"] == 2]
    assert len(pcie_tp2) == 1 and abs(pcie_tp2[0]["error"]) < 0.01


def test_multimodal_encoder_profile_on_held_out_logs() -> None:
    # vLLM's profile run pushes its largest dummy items through the vision encoder first and
    # keeps the outputs through the language model's profile (kvplan.engines.vllm.mm; no
    # constant fitted). Replayed with and without it (--skip-mm-profiling gives the former
    # reserve). None of these logs fitted the encoder rule, but the gemma-3 0.19.0 H100 logs set
    # the non-torch medians (VLLM_NON_TORCH_GIB_0_19_FIT) and the rule was written after the
    # Qwen3.5-9B, gemma-3-27b and -12b logs were in the bench (engine-bench.md, "shaped"):
    # - Qwen3.5-9B, L40S: 0.19.0 +3.9 % -> -0.6 %, 0.18.0 (index file id 57489989625, the same
    #   20.27 GiB budget) +4.5 % -> +0.04 %; one 16,384-token image ("Encoder cache
    #   will be initialized with a budget of 16384 tokens, and profiled with 1 image items" in
    #   the 0.17 logs below and the Qwen3.5 logs of the index) peaks at 1.88 GiB;
    # - OmniCoder-9B-AWQ and Qwen3.5-9B-AWQ, 0.17.1rc1, one 48-GB card (index file id
    #   65752137241; the GPU inferred from the pair): +10.0 % -> -0.1 %, +35.2 % -> -0.4 %;
    # - Gemma-3-27B / 12B, 0.19.0, H100: 32 images of 256 tokens through SigLIP peak at 2.81 GiB,
    #   under the sampler's 3.72; their outputs (0.08 / 0.06 GiB) add to it: +1.4 -> +1.0 %,
    #   +0.5 -> +0.4 %, the logged peaks still 0.18 / 0.16 GiB above kvplan's.
    # Gemma-3-4B's config copy lacks the vision tower: nothing added, as before.
    # - Llama-4-Scout, 0.19.0, H100, TP 4 (read since commit a571d7e; a log in the non-torch
    #   medians' fit, so not held out): 3 images of 17 tiles (8,192 // 2,448) peak at 0.44 GiB,
    #   under the sampler's; their outputs, 3 x 2,448 x 5,120 x 2 B = 0.07 GiB, add to it:
    #   +0.8 % -> +0.4 % (kvplan's peak 3.06 -> 3.13 GiB, the log's 3.19).
    expected = {  # (model, version): (error before, error after), within 0.2 points
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "0.19.0"): (0.008, 0.004),
        ("Qwen/Qwen3.5-9B", "0.19.0"): (0.039, -0.006),
        ("Qwen/Qwen3.5-9B", "0.18.0"): (0.045, 0.000),
        ("cyankiwi/OmniCoder-9B-AWQ-4bit", "0.17.1rc1.dev126+gbc2c0c86e"): (0.100, -0.001),
        ("cyankiwi/Qwen3.5-9B-AWQ-4bit", "0.17.1rc1.dev126+gbc2c0c86e"): (0.352, -0.004),
        ("google/gemma-3-27b-it", "0.19.0"): (0.014, 0.010),
        ("google/gemma-3-12b-it", "0.19.0"): (0.005, 0.004),
    }
    # The startup26 logs (added in c9999d3, prospective; their figures are in the page's
    # prospective lines) are not part of this rule's check: of them only the Qwen3-VL-30B-A3B
    # H100 NVL log profiles an encoder (0.25 GiB; +3.2 % on the H100-NVL preset's reported total,
    # +7.4 % on its datasheet figure before: a miss).
    rows = {(r["log"]["model"], r["log"]["vllm_version"]): r for r in ROWS
            if r["mm_encoder_gib"] > 0 and not r["log"]["added_in"].startswith("c9999d3")}
    assert sorted(rows) == sorted(expected)
    for model, (before, after) in expected.items():
        r = rows[model]
        old = bench.run_kvplan([*bench.cli_args(r["log"]), "--skip-mm-profiling"], model[0])
        old_error = old["kv_budget_bytes"] / GiB / r["logged_gib"] - 1
        assert abs(old_error - before) < 0.002, model
        assert abs(r["error"] - after) < 0.002, model
        assert r["within"] and not r["log"]["fitted"], model
    scout = rows[("meta-llama/Llama-4-Scout-17B-16E-Instruct", "0.19.0")]
    assert abs(scout["mm_encoder_gib"] * GiB - 75_202_560) < 1 << 20
    gemma = rows[("google/gemma-3-27b-it", "0.19.0")]
    assert gemma["peak_gib"] < gemma["log"]["activation_peak_gib"]


def test_every_sglang_log_names_its_source_and_quotes_the_lines() -> None:
    for row in SGLANG_ROWS:
        log = row["log"]
        assert log["url"] or log["file_id"], log["id"]
        assert log["spec"] and log["gpu"] and log["tp"] and log["quote"], log["id"]
        if log["weights_gib"] is not None:
            assert f"{log['weights_gib']:.2f}" in log["quote"] or \
                f"{log['load_weight_end_avail_gib']:.2f}" in log["quote"], log["id"]
        if log["replay"]:
            assert f"{log['max_total_num_tokens']}" in log["quote"], log["id"]
            if log["k_size_gib"] is None:  # no KV line in the log: say so, and mark it inferred
                assert any("K size" in item for item in log["inferred"]), log["id"]
                continue
            # The spec's cell reproduces the logged K size: #tokens x cell / 2 / 2^30 (GiB).
            k_gib = log["max_total_num_tokens"] * row["cell_bytes"] / 2 / GiB
            assert f"{k_gib:.2f}" == f"{log['k_size_gib']:.2f}", log["id"]


def test_sglang_tokens_against_the_logs() -> None:
    # Honest threshold: 19 replayed logs (one hybrid, two with an EAGLE draft, a VLM), median
    # |error| 0.52 %, 19 of 19 within max(2 %, 0.25 GiB); 14 of 14 of the earlier logs were within
    # since the TP1 preload point moved from 0.38 to 0.71 GiB (fitted on seven
    # TP1 logs; the two held-out TP1 logs added with it, H100 sglang-kt and MI300X, are -0.04 %
    # and +0.02 %). Largest: the Windows/WSL2 desktop sharing its RTX 3090 (+3.6 %, 0.94 GiB in
    # use before the weights) and QwQ-32B on 4 x L4 (+4.3 %, within by the 0.25 GiB floor).
    # With the 9 prospective startsgl logs (cd15e16, 610b696; first evaluated after they were
    # committed, no rule changed): 28 logs, median 0.53 %, 26 of 28 within. Their misses are
    # test_sglang_prospective_logs' below.
    s = bench.sglang_summary(SGLANG_ROWS)
    assert s["logs"] >= 28
    assert s["median_error"] <= 0.01
    assert s["within_share"] >= 0.85


def test_sglang_prospective_logs() -> None:
    # The startsgl logs as first evaluated (examples/engine-bench.md's prospective lines; no
    # rule or constant changed for them): 9 logs, median |error| 0.75 %, 7 of 9 within.
    # - SGLang 0.5.9, B200, DeepSeek-R1-NVFP4 (zufayu/ClaudeSkillsE2EPerf): TP 4 +0.75 %, TP 8
    #   -0.33 %; the logged preload is 1.79 GiB at both TP sizes (kvplan 1.32 / 2.14).
    # - gemma-3-4b-it, H200, 0.4.4 (sglang PR #4826): +5.6 %; that SGLang's model runner
    #   multiplied the fraction by 0.95 for multimodal models after ServerArgs printed 0.88
    #   (0.836 gives 833,907 tokens, -0.08 %), a step kvplan's 0.4.4 profile lacks.
    # - Qwen2.5-7B-Instruct-AWQ, 16 GB card, newest: -14.8 %, the fraction (logged 0.82,
    #   kvplan's default 0.743; 0.82 gives +1.6 %); granite-4.0-h-micro bench_one_batch -7.2 %
    #   (within the 0.25 GiB band of its small cell; fraction not printed).
    new = [r for r in SGLANG_ROWS if r["log"]["added_in"] in ("cd15e16f6049", "610b69609454")]
    assert len(new) == 9
    s = bench.sglang_summary(new)
    assert s["median_error"] == pytest.approx(0.0075, abs=0.0005)
    assert sum(r["within"] for r in new) == 7
    errors = {r["log"]["id"]: r["error"] for r in new}
    assert errors["gemma-3-4b-it-h200-pr4826"] == pytest.approx(0.0557, abs=0.001)
    assert errors["qwen2.5-7b-instruct-awq-16gb-workflow-aware-prompt-cache"] == pytest.approx(
        -0.148, abs=0.002)
    assert all(abs(e) < 0.01 for i, e in errors.items() if i.startswith("zufayu-"))


def test_sglang_hybrid_pools_against_the_logs() -> None:
    # The hybrids' own pool (kvplan.engines.sglang.pools) beside the log: Qwen3.5-9B on 2 x RTX
    # 4090, "max_mamba_cache_size: 186" (kvplan 187: SGLang takes the tighter rank's free
    # memory) and "max_running_requests=62" (186 // 3 and 187 // 3 alike).
    # The prospective granite-4.0-h-micro bench_one_batch log (35 slots vs its 38; its
    # fraction is not printed, its tokens are test_sglang_prospective_logs') is not this
    # rule's check.
    rows = [r for r in SGLANG_ROWS if r["pool"] != "token" and r["log"]["replay"]
            and r["log"]["id"] != "granite-4.0-h-micro-16gb-bench-one-batch"]
    assert rows
    for r in rows:
        log = r["log"]
        if log.get("max_mamba_cache_size"):
            assert abs(r["predicted_mamba_slots"] / log["max_mamba_cache_size"] - 1) <= 0.01
        if log.get("max_running_requests"):
            assert abs(r["predicted_running"] / log["max_running_requests"] - 1) <= 0.01


def test_sglang_kv_rest_is_begin_avail_times_fraction_less_weights() -> None:
    # QwQ-32B on 4 x L4, 0.4.3.post4 (didier-durand/llms-in-clouds docs/sglang.md): "Load weight
    # begin. avail mem=21.63 GB", "mem usage=15.54 GB", default 0.85, "#tokens: 46611, K size:
    # 1.42 GB". By hand: 21.63 x 0.85 - 15.54 = 2.8455 GiB; cell 64 layers x 2 KV heads/rank x
    # 128 x 2 (K, V) x 2 B = 65,536 B -> 46,620 tokens; the two-decimal figures allow
    # +-(0.005 x 0.85 + 0.005) GiB = +-152 tokens. K: 46,611 x 32,768 / 2^30 = 1.42 (GiB, not GB:
    # 1.53 in 10^9).
    from kvplan.engines.sglang.budget import SglangBudget

    total = int(22.49 * GiB)
    kv = SglangBudget.kv_bytes(total, 0.85, int(15.54 * GiB), total - int(21.63 * GiB))
    assert abs(kv // 65_536 - 46_611) <= 152
    assert f"{46_611 * 32_768 / GiB:.2f}" == "1.42" != f"{46_611 * 32_768 / 1e9:.2f}"


def test_sglang_preload_rule() -> None:
    # In use before the weights load = device total - "Load weight begin. avail mem":
    # 8 x H100 (grok-2, v0.5.2rc2): 79.19 - 77.43 = 1.76; 8 x H200 (sglang PR #11716):
    # 139.81 - 137.29 = 2.52 -> TP8 point 2.14 (mean). TP1: the median of the seven fitted TP1
    # logs (H100 0.38, 0.60, 0.71, 0.72, 0.72; B200 0.78; L40S 0.28; sorted, the fourth) = 0.71.
    # TP4 on NVSwitch: 0.71 + (2.14 - 0.71) x 3 / 7 = 1.3229. PCIe cards under 60 GiB:
    # 2 x RTX 4090 23.65 - 22.93 = 0.72, 4 x RTX 4090 23.65 - (16.00 + 7.08) = 0.57, 4 x L4
    # 22.49 - 21.63 = 0.86 -> 0.72 (median) at any TP >= 2. MI355X TP8: 288 - 283.50 = 4.5.
    from kvplan.engines.sglang.budget import sglang_preload_gib
    from kvplan.hardware.gpus import get_gpu

    h100, l4, rtx4090 = (get_gpu(n).total_bytes for n in ("H100-80GB", "L4", "RTX-4090"))
    assert sglang_preload_gib(tp=1, total_bytes=h100)[0] == 0.71
    assert sglang_preload_gib(tp=4, total_bytes=h100)[0] == pytest.approx(1.3229, abs=1e-4)
    assert sglang_preload_gib(tp=8, total_bytes=h100)[0] == pytest.approx(2.14)
    assert sglang_preload_gib(tp=4, total_bytes=l4)[0] == 0.72
    assert sglang_preload_gib(tp=2, total_bytes=rtx4090)[0] == 0.72
    assert sglang_preload_gib(tp=1, total_bytes=rtx4090)[0] == 0.71
    assert sglang_preload_gib(tp=8, platform="rocm", total_bytes=288 * GiB)[0] == 4.5
    startsgl = ("cd15e16f6049", "610b69609454")
    for row in SGLANG_ROWS:  # every logged TP >= 2 preload within 0.4 GiB of the rule
        if row["logged_preload_gib"] is not None and row["log"]["tp"] > 1:
            miss = abs(row["predicted_preload_gib"] - row["logged_preload_gib"])
            # The prospective startsgl logs (not used by the rule) beside it: SGLang 0.5.9 on 4
            # and 8 B200s logs 1.79 GiB in use before the weights at both TP sizes; the TP 4
            # interpolation (1.32) is 0.47 GiB under it, the TP 8 point (2.14) 0.35 over.
            assert miss <= (0.5 if row["log"]["added_in"] in startsgl else 0.4)


def test_sglang_tp1_preload_point_on_held_out_logs() -> None:
    # The TP1 point (0.71 GiB) was fitted on seven logs; the two TP1 logs added with it were
    # held out: H100 80GB, sglang-kt 0.7.0: 79.19 - (62.08 + 16.41) = 0.70; MI300X (ROCm), a
    # 2024-10 build: 191.98 - 191.33 = 0.65. Both within 0.1 GiB of the point, and their tokens
    # within 0.1 % of the logged count.
    held_out = {"qwen3-30b-a3b-kt-amxint8-h100", "llama-3-8b-mi300x-bench-latency-2024-10"}
    rows = [r for r in SGLANG_ROWS if r["log"]["id"] in held_out]
    assert len(rows) == 2
    for r in rows:
        assert abs(r["predicted_preload_gib"] - r["logged_preload_gib"]) <= 0.1, r["log"]["id"]
        assert abs(r["error"]) <= 0.001, (r["log"]["id"], r["error"])


@pytest.mark.parametrize(("version", "gpu", "tp", "logged"), [
    # grok-2, 8 x H100, v0.5.2rc2, ServerArgs mem_fraction_static=0.831. By hand (0.4.8-0.5.2):
    # nvidia-smi 81,559 MiB < 90 GiB -> reserved (9.5 + 8 / 2) x 1024 = 13,824 MiB;
    # (81,559 - 13,824) / 81,559 = 0.8305 -> 0.831.
    ("0.5.2rc2", "H100-80GB", 8, 0.831),
    # QwQ-32B, 4 x L4, 0.4.3.post4: the TP table's TP4 row, 0.85.
    ("0.4.3.post4", "L4", 4, 0.85),
    # R1-Distill-Qwen-7B, RTX 3090, ~0.4.2: TP1 row, 0.88.
    ("0.4.2", "RTX-3090", 1, 0.88),
    # GLM-5-FP8, 8 x MI355X, v0.5.8.post1, 0.908. By hand (0.5.3+): 288 GiB = 294,912 MiB ->
    # chunked prefill 16,384, cuda_graph_max_bs 512; reserved 512 + 1.5 x 16,384 + 2 x 512 +
    # 8 x 128 = 27,136 MiB; (294,912 - 27,136) / 294,912 = 0.9080.
    ("0.5.8.post1", "MI355X", 8, 0.908),
])
def test_sglang_default_fraction_matches_logged_server_args(version, gpu, tp, logged) -> None:
    from kvplan.engines.sglang.budget import sglang_default_fraction
    from kvplan.hardware.gpus import get_gpu

    g = get_gpu(gpu)
    mem = g.smi_total_bytes or g.total_bytes
    assert sglang_default_fraction(version=version, gpu_mem_bytes=mem, tp=tp)[0] == logged


def test_engine_bench_md_is_current() -> None:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main()
    assert out.getvalue() == (ROOT / "examples" / "engine-bench.md").read_text()


def test_vllm_default_fraction_matches_the_logs_that_did_not_set_it() -> None:
    # Where the user left gpu_memory_utilization unset the log shows vLLM's default: 0.9 up to
    # 0.19 (nine logs, 0.10.2-0.19.1) as kvplan's VllmBudget.default_fraction gives. None of the
    # 0.20+ logs leaves it unset (two that print 0.9 set it: 0.92 is the 0.20+ default of
    # config/cache.py and entrypoints/llm.py), so 0.92 rests on the wheels' source.
    from kvplan.engines.base import Engine, plan_inputs

    unset = [r["log"] for r in ROWS if not r["log"]["gpu_memory_utilization_set_by_user"]]
    assert len(unset) >= 9
    for log in unset:
        inputs = plan_inputs(context=4096, engine=Engine.vllm, engine_version=log["vllm_version"])
        assert inputs.resolved_mem_fraction == log["gpu_memory_utilization"], log["url"]


def test_kv_token_runs() -> None:
    # inference-sim's vLLM 0.15.1 H100 runs (tests/data/engine_logs/vllm_kv_token_runs.json):
    # the logged "GPU KV cache size" // 16 against kvplan's reported_kv_cache_tokens with its own
    # weights (no weights line is public). Each run names its source and the block count it
    # quotes. The dense TP 1 / TP 2 runs agree within max(2 %, 0.25 GiB); the two Llama-3.1-70B
    # TP 4 runs are 2.9 % / 3.4 % short (1.09 / 1.26 GiB: the pre-0.19 TP 4 non-torch figure,
    # 1.84 GiB from a 0.10.2 log, is the largest reserve part; not refitted to these runs);
    # Llama-4-Scout FP8 TP 2 (issue #26: kvplan 10,929 blocks vs 8,253, +32.4 %) is +13.9 %
    # after the Llama-4 vision weights, its encoder profile and the bf16 attention of its
    # prefixed ignore list (commit a571d7e), 1.68 GiB over, the rest unexplained.
    from tests.benches import kv_token_runs

    compared = {r["run"]["id"].split("-")[2]: r for r in kv_token_runs.rows()}
    for r in compared.values():
        run = r["run"]
        assert run["url"].startswith("https://github.com/") and run["added_in"] != "PENDING"
        assert f"\"total_kv_blocks\": {run['logged_kv_blocks']}" in run["quote"]
        assert (ROOT / run["spec"]).exists()
    assert set(compared) == {"17", "60", "61", "62", "63", "64", "65", "66"}
    for exp in ("62", "63", "64", "65", "66"):
        assert compared[exp]["within"], exp
    for exp, error in (("60", -0.0295), ("61", -0.0338), ("17", 0.1389)):
        assert abs(compared[exp]["error"] - error) < 0.001, exp
        assert not compared[exp]["within"]
    split = kv_token_runs.split(list(compared.values()))
    assert len(split.held_out) == 8 and split.unshaped == tuple(
        r for r in split.held_out if "scout" not in r)
