"""DeepSeek-V4 through `kvplan estimate` and `kvplan plan` on vLLM (issue 26, task dsv4wire).

The caches and vLLM's packed pool are tests/test_dsv4.py's (worked by hand from vLLM 0.32's
source and equal to its CPU build on every recorded oracle run). Here: the CLI reaches that
code with the JSON keys every model has, on the published configs (tests/data/configs/dsv4/,
sources in tests/data/configs/SOURCES-dsv4.md) and on the oracle cases; what kvplan cannot size
exactly is refused in one line, exit 2:

- the budget from the GPU: vLLM subtracts the loaded weights (counted since dsv4weights:
  kvplan.weights.csa, tests/test_weights_dsv4.py) and its profile's peak, whose V4 workspaces
  (sparse indexer, FlashMLA prefill gather, hyper-connection stream) kvplan does not model; so
  the reserve (--reserve-gib) or the budget (--kv-budget-gib) must be given;
- releases before 0.32 (0.20-0.31: registered, but another path kvplan has not checked), the
  other engines, compare's rewrites, sweep, simulate, verify, the offload tiers, plan --rate,
  pipeline stages and MTP draft layers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app

DATA = Path(__file__).parent / "data"
FLASH = DATA / "configs" / "dsv4" / "deepseek-v4-flash.json"
PRO = DATA / "configs" / "dsv4" / "deepseek-v4-pro.json"
ORACLE = DATA / "oracle" / "deepseek-v4"
HF = "https://huggingface.co/"

# The support row's golden (tests/test_support.py): no bytes per token to state (None), its
# pages by hand in tests/test_dsv4.py (test_flash_pages_by_hand, test_flash_pool_by_hand).
GOLDEN_DSV4: dict[str, tuple[Path, int | None, str]] = {
    "deepseek-v4-flash": (FLASH, None, HF + "deepseek-ai/DeepSeek-V4-Flash"),
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def estimate_json(*args: str) -> dict:
    code, out, err = run("estimate", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


# --- the published files, by hand ---------------------------------------------------------------

def test_flash_on_h200_tp8_by_hand() -> None:
    # V4-Flash, 1,048,576 tokens, 8 x H200 at TP 8, 100 GiB of KV per GPU given. Every rank
    # holds every layer's caches (the specs are replicated: max_tp_shards=1), so TP 8 sizes as
    # TP 1. An H200 (141 GiB) batches 8,192 tokens, two batches in flight: 10,778 blocks a
    # request (test_dsv4.py test_flash_pool_by_hand: 4,096 + 2 x 259 + 4,099 + 2,065), pool
    # blocks of 1,002,240 B. 100 GiB = 107,374,182,400 B // 1,002,240 = 107,134 blocks
    # (202,240 B left); 107,134 / 10,778 = 9.940 -> "9.94x"; int(9.94006 x 1,048,576) =
    # 10,422,911 tokens (vLLM 0.32 logs int(max_concurrency x max_model_len)).
    d = estimate_json(FLASH, "--gpu", "H200", "--tp", "8", "--kv-budget-gib", "100",
                      "--context", "1m")
    # The block vLLM reports is the groups' smallest, 4 (v1/engine/core.py, after allocation:
    # min over the prefix-cacheable groups' blocks); the cache block stays 256.
    assert (d["block_size"], d["requested_block_size"], d["kv_dtype"], d["engine"],
            d["engine_version"]) == (4, 256, "fp8", "vllm", "0.32")
    assert (d["num_blocks"], d["blocks_per_request"]) == (107_134, 10_778)
    assert f"{d['max_concurrency']:.2f}" == "9.94" and d["max_requests"] == 9
    assert d["reported_kv_cache_tokens"] == int(107_134 / 10_778 * 1_048_576) == 10_422_911
    # Groups as vLLM logs them ("kv cache group sizes (64, 64, 256, 4, 8)"), merged by kind.
    assert [(g["kind"], g["groups"], g["layers"], g["block_size"]) for g in
            d["kv_cache_groups"]] == [("sliding", 2, 43, 64), ("indexer+compressed", 1, 62, 256),
                                      ("compressor state", 1, 42, 4),
                                      ("compressor state", 1, 20, 8)]
    # No whole bytes per token: null, never a guess. The weights are counted (284.3B
    # parameters; 21,181,771,804 B a rank at TP 8: tests/test_weights_dsv4.py), the reserve
    # is not (the budget was given).
    assert d["bytes_per_token"] is None and d["per_gpu_bytes_per_token"] is None
    assert (d["params"], d["weights_bytes"]) == (284_334_567_511, 21_181_771_804)
    assert d["exact"] and d["attention_kind"] == "csa"


def test_flash_request_in_decode_by_hand() -> None:
    # Without a device: one request of 1,048,576 tokens in decode (nothing in flight) holds, per
    # packed group, its steady pages, each a whole pool block of 1,002,240 B (a narrower
    # group's pages are padded to the widest group's): the rows cdiv(1,048,576, 256) = 4,096;
    # each of the 2 window groups min(cdiv(1,048,576, 64), cdiv(127, 64) + 1) = 3; the CSA
    # states (window 8, block 4) cdiv(7, 4) + 1 = 3; the HCA states (window 128, block 8)
    # cdiv(127, 8) + 1 = 17: 4,096 + 6 + 3 + 17 = 4,122 blocks = 4,131,233,280 B.
    d = estimate_json(FLASH, "--context", "1m")
    assert d["blocks_per_sequence"] == 4_096 + 2 * 3 + 3 + 17 == 4_122
    assert d["bytes_per_sequence"] == 4_122 * 1_002_240 == 4_131_233_280
    # At admission vLLM charges more: the windows and states keep the tokens in flight too
    # (2 x 8,192 with async scheduling): 10,778 blocks (test_dsv4.py test_flash_pool_by_hand).
    assert d["blocks_per_request"] == 10_778


def test_flash_on_b200_by_hand() -> None:
    # A B200 (>= 160 GiB) batches 16,384 tokens: 17,434 blocks a request at 1,048,576 tokens
    # (test_dsv4.py test_default_layout_by_gpu). 150 GiB = 161,061,273,600 B // 1,002,240 =
    # 160,701 blocks; 160,701 / 17,434 = 9.218 -> "9.22x", 9 requests.
    d = estimate_json(FLASH, "--gpu", "B200", "--kv-budget-gib", "150", "--context", "1m")
    assert (d["max_num_batched_tokens"], d["num_blocks"], d["blocks_per_request"]) == (
        16_384, 160_701, 17_434)
    assert f"{d['max_concurrency']:.2f}" == "9.22" and d["max_requests"] == 9


def test_pro_on_h200_tp8_vllm_034_by_hand() -> None:
    # V4-Pro, 131,072 tokens, vLLM 0.34, 80 GiB given: pool blocks of 1,435,968 B and 7,194
    # blocks a request (test_dsv4.py test_pro_pool_by_hand, the same 8,192 x 2 in flight).
    # 85,899,345,920 // 1,435,968 = 59,819 blocks; 59,819 / 7,194 = 8.315 -> "8.32x".
    d = estimate_json(PRO, "--gpu", "H200", "--tp", "8", "--kv-budget-gib", "80",
                      "--context", "128k", "--engine-version", "0.34")
    assert (d["num_blocks"], d["blocks_per_request"]) == (59_819, 7_194)
    assert f"{d['max_concurrency']:.2f}" == "8.32"
    assert d["reported_kv_cache_tokens"] == int(59_819 / 7_194 * 131_072)


def test_json_keys_as_for_other_models() -> None:
    v4 = estimate_json(FLASH, "--kv-budget-gib", "60")
    other = estimate_json(DATA / "configs" / "deepseek-v3.2.json", "--kv-budget-gib", "60")
    assert set(v4) == set(other)
    plain = estimate_json(FLASH)
    assert set(plain) == set(estimate_json(DATA / "configs" / "deepseek-v3.2.json"))


def test_longest_context_for_requests_by_hand() -> None:
    # 60 GiB: 64,424,509,440 // 1,002,240 = 64,280 blocks; 6 requests may take 10,713 blocks
    # each. At 1,031,936 tokens a request takes cdiv(1,031,936, 256) = 4,031 row blocks + 2 x
    # 259 window + cdiv(7 + 16,384, 4) + 1 = 4,099 + cdiv(127 + 16,384, 8) + 1 = 2,065: 10,713;
    # one token more needs a 4,032nd row block.
    d = estimate_json(FLASH, "--gpu", "H100", "--kv-budget-gib", "60", "--concurrency", "6",
                      "--context", "1m")
    assert d["longest_context_for_requests"] == 1_031_936
    assert 4_031 + 2 * 259 + 4_099 + 2_065 == 10_713 <= 64_280 // 6


def test_budget_from_the_gpu_with_the_reserve_given() -> None:
    # 8 x H200 at TP 8, --reserve-gib 8: vLLM's budget is 0.92 x 150,119,844,413 B (the H200's
    # driver-reported total, 139.81 GiB) less kvplan's weights for a rank (21,181,771,804 B,
    # tests/test_weights_dsv4.py) less 8 GiB: 108,338,550,463 B (100.90 GiB), printed.
    d = estimate_json(FLASH, "--gpu", "H200", "--tp", "8", "--reserve-gib", "8", "--context",
                      "128k")
    assert d["weights_bytes"] == 21_181_771_804 and d["reserve_bytes"] == 8 << 30
    assert d["total_bytes"] == 150_119_844_413 and d["kv_budget_bytes"] == 108_338_550_463
    code, out, err = run("estimate", FLASH, "--gpu", "B200", "--tp", "8", "--reserve-gib", "8")
    assert code == 0 and "KV budget per GPU" in out and "19.73 GiB" in out, err


def test_plan_with_weights_and_reserve_given() -> None:
    # `plan` derives the budget from the device only with the weights and the reserve given;
    # it then agrees with `estimate` on that budget (the same pool code).
    code, out, err = run("plan", FLASH, "--gpu", "H200", "--concurrency", "4", "--context",
                         "32k", "--weights-gib", "40", "--reserve-gib", "5", "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    d = estimate_json(FLASH, "--gpu", "H200", "--kv-budget-gib",
                      repr(plan["kv_budget_bytes"] / (1 << 30)), "--context", "32k")
    assert plan["kv_budget_bytes"] == d["kv_budget_bytes"]
    assert (plan["num_blocks"], plan["block_size"]) == (d["num_blocks"], 4)
    assert f"{plan['max_concurrency']:.4f}" == f"{d['max_concurrency']:.4f}"
    assert plan["weights_bytes"] == 40 << 30 and plan["tpot_ms"] is None


# --- vLLM 0.32's CPU build, through the CLI -------------------------------------------------------

def _oracle_runs() -> list[tuple[str, dict]]:
    return [(p.parent.name, r["output"]) for p in sorted(ORACLE.glob("*/results.json"))
            for r in json.loads(p.read_text())]


RUNS = _oracle_runs()


@pytest.mark.parametrize(("case", "output"), RUNS,
                         ids=[f"{c}-{o['settings']['max_model_len']}-{i}"
                              for i, (c, o) in enumerate(RUNS)])
def test_cli_equals_vllm_cpu(case: str, output: dict) -> None:
    # Each recorded run as a user would ask it: the CPU platform, the budget vLLM was given
    # (--kv-cache-memory-bytes / "Explicitly set ... GiB for KV cache"), its flags.
    s = output["settings"]
    args = [ORACLE / case / "config.json", "--platform", "cpu", "--kv-budget-gib",
            str(output["kv_gib"]), "--context", str(s["max_model_len"]),
            "--max-num-batched-tokens", str(s["max_num_batched_tokens"])]
    if "kv_cache_dtype" in s:
        args += ["--kv-dtype", s["kv_cache_dtype"]]
    if "block_size" in s:
        args += ["--block-size", str(s["block_size"])]
    if not output["ok"]:
        code, _, err = run("estimate", *args)
        assert code == 2 and err.count("\n") == 1 and "fp8_ds_mla only" in err
        return
    d = estimate_json(*args)
    assert d["reported_kv_cache_tokens"] == output["kv_cache_tokens"]
    assert f"{d['max_concurrency']:.2f}" == f"{output['max_concurrency']:.2f}"


# --- refusals, one line, exit 2 ----------------------------------------------------------------

@pytest.mark.parametrize(("args", "text"), [
    (("estimate", FLASH, "--gpu", "H200", "--tp", "8"), "profile-run workspaces"),
    (("estimate", FLASH, "--gpu", "H200", "--tp", "8", "--weights-gib", "20"),
     "give --reserve-gib (kvplan counts the weights) or --kv-budget-gib"),
    (("plan", FLASH, "--gpu", "H200", "--concurrency", "4"), "profile-run workspaces"),
    (("estimate", FLASH, "--engine-version", "0.19"), "from 0.20"),
    (("estimate", FLASH, "--engine-version", "0.31"), "on vLLM 0.32 and later"),
    (("estimate", FLASH, "--kv-dtype", "bf16"), "fp8_ds_mla only"),
    (("estimate", FLASH, "--engine", "sglang"), "compressed sparse attention"),
    (("estimate", FLASH, "--engine", "trtllm"), "compressed sparse attention"),
    (("compare", FLASH), "compressed sparse attention"),
    (("sweep", FLASH), "sweep: "),
    (("simulate", FLASH, "--gpu", "H200", "--concurrency", "4", "--kv-budget-gib", "50"),
     "simulate: "),
    (("verify", FLASH, "--kv-dtype", "fp8"), "verify: "),
    (("estimate", FLASH, "--kv-budget-gib", "60", "--kv-offloading-size", "100"),
     "the offload tiers: "),
    (("plan", FLASH, "--gpu", "H200", "--concurrency", "4", "--weights-gib", "40",
      "--reserve-gib", "5", "--rate", "2", "--slo-ttft-ms", "1000"), "plan --rate: "),
    (("estimate", FLASH, "--kv-budget-gib", "60", "--pp", "2"), "pipeline parallelism"),
    (("estimate", FLASH, "--kv-budget-gib", "60", "--shared-prefix", "1000"), "--shared-prefix"),
    (("estimate", FLASH, "--gpu", "RTX-PRO-6000", "--kv-budget-gib", "60"), "SM 12.x"),
    (("estimate", FLASH, "--gpu", "MI300X", "--kv-budget-gib", "60"), "CUDA and CPU only"),
    (("estimate", FLASH, "--gpu", "H100", "--kv-budget-gib", "60", "--block-size", "128"),
     "block 256 only"),
    (("estimate", FLASH, "--kv-budget-gib", "60", "--speculative-method", "mtp"),
     "speculative decoding"),
])
def test_refused_in_one_line(args: tuple, text: str) -> None:
    code, out, err = run(*args)
    assert code == 2, (out, err)
    lines = [line for line in err.splitlines() if "warning" not in line]
    assert len(lines) == 1 and text in lines[0], err


LOGS = json.loads((DATA / "engine_logs" / "vllm_dsv4_logs.json").read_text())


@pytest.mark.parametrize("log", [log for log in LOGS if log["vllm_version"]],
                         ids=lambda log: log["url"].rsplit("/", 1)[-1])
def test_recorded_logs_still_not_replayable(log: dict) -> None:
    # The five public V4 logs (read before this wiring, by the dsv4 task, after its rule was
    # written; none shaped a rule): vLLM 0.22-0.26, or no version. Their releases size V4 with
    # group_and_unify_kv_cache_specs, which kvplan has not read: the CLI refuses the release in
    # one line rather than replaying it under 0.32's rule.
    version = log["vllm_version"].split()[0]
    code, _, err = run("estimate", FLASH, "--kv-budget-gib", "60", "--engine-version", version)
    assert code == 2 and "vLLM 0.32 and later" in err


def test_mtp_note_says_v4_mtp_is_refused() -> None:
    # V4-Flash's config.json states num_nextn_predict_layers 1; the generic note ("its KV counts
    # with --speculative-method mtp") would point at an option kvplan refuses for V4.
    code, _, err = run("estimate", FLASH, "--kv-budget-gib", "50", "-c", "100000")
    assert code == 0, err
    assert "does not size DeepSeek-V4 with --speculative-method mtp" in err
    assert "its KV counts with --speculative-method mtp" not in err
    code, _, err = run("estimate", FLASH, "--kv-budget-gib", "50", "-c", "100000",
                       "--speculative-method", "mtp")
    assert code == 2 and "speculative" in err
