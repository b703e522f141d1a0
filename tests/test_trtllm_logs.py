"""TensorRT-LLM's KV budget (PyTorch backend) against public start-up logs (issue #13), replayed
through the CLI by tests/benches/trtllm_bench.py, and the source rules behind it checked on the
logged numbers: the budget formula of `_torch/pyexecutor/_util.py: KvCacheCreator`, the block
rounding by version, the non-torch constants re-derived from the logs that set them, and the
settings kvplan refuses (unified memory, the engine path, releases before 0.20)."""

from __future__ import annotations

import json
import re
import statistics

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.capacity.plan import plan_capacity
from kvplan.cli import app
from kvplan.engines.base import Engine, plan_inputs
from kvplan.engines.reserve import activation_bytes, moe_workspace_bytes
from kvplan.engines.trtllm.budget import (
    TRTLLM_CUDA_GRAPH_MIB_PER_BATCH_LAYER,
    TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER,
    TRTLLM_MOE_EP_GIB,
    TRTLLM_MOE_GIB_PER_TP_RANK,
    TRTLLM_NCCL_GIB,
    TRTLLM_NON_TORCH_TP1_GIB,
    TrtllmBudget,
    trtllm_allreduce_workspace_bytes,
    trtllm_cuda_graph_batch_sizes,
    trtllm_cuda_graph_bytes,
    trtllm_non_torch,
    trtllm_non_torch_gib,
    trtllm_profile,
)
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.resolve import load_spec
from tests.benches import trtllm_bench as bench

GiB = 1 << 30
runner = CliRunner()


LOGS = bench.load_trtllm_logs()
ROWS = bench.trtllm_rows()
RAW = [log for log in LOGS if log["tmp_kv_gib"] is not None]
POINT_ROWS = bench.trtllm_point_rows()


def _log(log_id: str) -> dict:
    return next(log for log in LOGS if log["id"] == log_id)


def test_every_log_names_its_source_and_quotes_its_numbers() -> None:
    ids = [log["id"] for log in LOGS]
    assert len(ids) == len(set(ids))
    for log in LOGS:
        assert log["url"] or log["file_id"], log["id"]
        assert log["quote"], log["id"]
        if log["replay"]:
            assert log["spec"] and log["gpu"] and log["tp"] and log["trtllm_version"], log["id"]
            # An inferred field names itself in `inferred` (the SmolLM2 write-up quotes neither
            # its weights nor its estimated max_tokens, only the pool it allocated).
            if not any(i.startswith("weights_gib") for i in log["inferred"]):
                assert f"{log['weights_gib']:.2f}" in log["quote"], log["id"]
            tokens = log["estimated_max_tokens"] or log["allocated_tokens"]
            assert f"{tokens}" in log["quote"], log["id"]
            if "available_kv_gib" not in log["inferred"]:
                assert f"{log['available_kv_gib']:.2f}" in log["quote"], log["id"]
        else:
            assert log["why_not_replayed"], log["id"]


@pytest.mark.parametrize("log", RAW, ids=lambda log: log["id"])
def test_budget_is_total_less_peak_plus_temporary_kv_times_fraction(log) -> None:
    # KvCacheCreator._cal_max_memory: (total - peak + temporary KV) x fraction, where peak =
    # weights + torch activation + memory outside torch (the logged parts add up to it). E.g.
    # 1.3.0rc10, DeepSeek-R1 NVFP4 TP 4 on B200: (178.35 - 106.46 + 2.14) x 0.8 = 59.226, logged
    # 59.23. kvplan's form: (total - weights - reserve) x f with reserve = peak - weights - tmp.
    # Each figure is printed to 2 decimals: +-0.005 GiB each.
    if log["activation_gib"] is not None:  # the CI logs print only the peak
        parts = log["weights_gib"] + log["activation_gib"] + log["non_torch_gib"]
        assert abs(parts - log["peak_profiling_gib"]) <= 0.015, log["id"]
    reserve = log["peak_profiling_gib"] - log["weights_gib"] - log["tmp_kv_gib"]
    kv = TrtllmBudget.kv_bytes(int(log["total_gib"] * GiB), log["free_gpu_memory_fraction"],
                               int(log["weights_gib"] * GiB), int(reserve * GiB))
    assert abs(kv / GiB - log["available_kv_gib"]) <= 0.005 + 4 * 0.005, log["id"]


def test_budget_formula_on_the_unified_memory_log_with_the_reserve_given() -> None:
    # The DGX Spark log (GB10, 1.1.0rc3): (119.70 - 113.65 + 0.56) x 0.9 = 5.949 GiB; with the
    # reserve the log implies (113.65 - 63.52 - 0.56 = 49.57 GiB, mostly the OS's memory) kvplan
    # gives the same budget and TRT-LLM's pool: 5.949 GiB // 73,728 B = 86,638 tokens, rounded up
    # to whole blocks of 32 (1.1: C++ manager) = 86,656; logged 86,711 -> 86,720, the 2-decimal
    # inputs allowing +-(4 x 0.005 x 0.9) GiB = +-262 tokens.
    log = _log("dgx-spark-gptoss120b-gb10-1.1.0rc3")
    reserve = log["peak_profiling_gib"] - log["weights_gib"] - log["tmp_kv_gib"]
    result = runner.invoke(app, [
        "estimate", "gpt-oss-120b", "--engine", "trtllm", "--gpu-mem-gib",
        str(log["total_gib"]), "--weights-gib", str(log["weights_gib"]), "--reserve-gib",
        f"{reserve:.2f}", "--engine-version", "1.1.0rc3", "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["per_gpu_bytes_per_token"] == 73_728
    assert f"{out['kv_budget_bytes'] / GiB:.2f}" == "5.95"
    assert out["token_capacity"] % 32 == 0
    assert abs(out["token_capacity"] - log["allocated_tokens"]) <= 262 + 32


def test_unified_memory_is_refused_without_a_reserve() -> None:
    result = runner.invoke(app, ["estimate", "gpt-oss-120b", "--engine", "trtllm", "--gpu",
                                 "GB10", "--weights-gib", "63.52"])
    assert result.exit_code == 2
    assert "unified-memory" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_engine_path_is_refused_without_a_reserve() -> None:
    base = ["estimate", "llama-3.1-8b", "--engine", "trtllm", "--gpu", "A100-80GB",
            "--trtllm-backend", "engine"]
    result = runner.invoke(app, base)
    assert result.exit_code == 2 and "engine path" in result.stderr
    ok = runner.invoke(app, [*base, "--reserve-gib", "6", "--format", "json"])
    assert ok.exit_code == 0, ok.output


def test_releases_before_0_20_are_refused() -> None:
    with pytest.raises(InputError, match="from 0.20"):
        trtllm_profile("0.19.0")
    assert trtllm_profile("0.20.0").blocks_rounding == "up"
    assert trtllm_profile("1.1.0rc3").blocks_rounding == "up"
    assert trtllm_profile("1.2.0rc6.post2").blocks_rounding == "down"
    assert trtllm_profile(None).blocks_rounding == "down"


@pytest.mark.parametrize("log", [log for log in LOGS
                                 if log["allocated_tokens"] and log["estimated_max_tokens"]],
                         ids=lambda log: log["id"])
def test_blocks_from_the_logged_max_tokens(log) -> None:
    # The pool from the estimated max_tokens: 0.20.0 860,308 -> 860,320 and 1.1.0rc3 86,711 ->
    # 86,720 (rounded up: C++ KVCacheManager, ceilDiv); 1.2.0rc6.post2 2,851,669 -> 2,851,648
    # ("primary blocks=89114") and 1.3.0rc10 1,809,966 -> 1,809,952 (floored:
    # resource_manager.py, int(max_tokens // tokens_per_block)).
    per_token = 1 << 16  # any per-token size: max_tokens x it is an exact budget
    inputs = plan_inputs(context=1, engine=Engine.trtllm, engine_version=log["trtllm_version"])
    blocks = TrtllmBudget.num_blocks(inputs, log["estimated_max_tokens"] * per_token, per_token,
                                     log["tokens_per_block"])
    assert blocks * log["tokens_per_block"] == log["allocated_tokens"], log["id"]
    if log["primary_blocks"]:
        assert blocks == log["primary_blocks"]


def _residual_gib(log: dict) -> float:
    """peak - weights - temporary KV - kvplan's activation estimate: what the log leaves to the
    memory outside torch. The temporary pool where the log does not print it: from the logged
    budget, available / fraction - total + peak (e.g. gpt-oss-120b on a B200: 88.13 / 0.8 -
    178.35 + 70.44 = 2.25 GiB)."""
    spec = load_spec(log["spec"])
    total = log["total_gib"] or get_gpu(log["gpu"]).total_bytes / GiB
    tmp = log["tmp_kv_gib"] if log["tmp_kv_gib"] is not None else (
        log["available_kv_gib"] / log["free_gpu_memory_fraction"] - total
        + log["peak_profiling_gib"])
    act = (activation_bytes(spec, max_num_batched_tokens=log["max_num_tokens"], tp=log["tp"])
           + moe_workspace_bytes(spec, max_num_batched_tokens=log["max_num_tokens"],
                                 tp=log["tp"])) / GiB
    return log["peak_profiling_gib"] - log["weights_gib"] - tmp - act


def _graphs_gib(log: dict) -> float:
    """kvplan's decode CUDA-graph part for the log's cuda_graph_config."""
    sizes = trtllm_cuda_graph_batch_sizes(log["cuda_graph_max_batch_size"],
                                          bool(log["cuda_graph_padding"]))
    layers = load_spec(log["spec"]).num_hidden_layers
    return trtllm_cuda_graph_bytes(layers=layers, batch_sizes=sizes) / GiB


def test_allreduce_workspace_follows_the_source() -> None:
    # allocate_allreduce_fusion_workspace: size x TP + 256 x TP + 3 x size x TP bytes per rank.
    # From 1.2 size = 64 MiB (PR #9145): TP 2 -> 4 x 67,108,864 x 2 + 512 = 536,871,424 B
    # (0.50 GiB), TP 8 -> 2,147,485,696 B (2.00 GiB). Up to 1.1 (plugin.py) 16,000,000 at TP <= 2
    # and 8,000,000 above: TP 2 -> 128,000,512 B, TP 8 -> 256,002,048 B. None at TP 1.
    assert trtllm_allreduce_workspace_bytes(1, "1.3.0rc10") == 0
    assert trtllm_allreduce_workspace_bytes(2, "1.3.0rc10") == 536_871_424
    assert trtllm_allreduce_workspace_bytes(8, "1.2.0rc6.post2") == 2_147_485_696
    assert trtllm_allreduce_workspace_bytes(2, "1.1.0") == 128_000_512
    assert trtllm_allreduce_workspace_bytes(8, "1.1.0") == 256_002_048
    assert trtllm_allreduce_workspace_bytes(4, None) == trtllm_allreduce_workspace_bytes(4, "1.3")


def test_non_torch_base_and_moe_rule_follow_from_the_fitted_logs() -> None:
    # Fitted logs, each residual less its decode CUDA graphs: TP 1 gpt-oss-120b (B200,
    # 1.3.0rc10, 11 graphs to 64 x 36 layers = 0.14 GiB) sets the base, 1.95 - 0.14 = 1.81 GiB.
    # The MoE extra is what the fitted DeepSeek-R1 logs leave beyond the dense parts (base +
    # all-reduce workspace + NCCL + graphs): TP 8 / EP 1 (FP8, 1.2.0rc6.post3) 3.35 -> 0.48 GiB
    # per TP rank beyond 1; TP 4 / EP 4 (1.3.0rc10) 4.90 and TP 8 / EP 8 (1.2.0rc6.post2) 6.26,
    # less that slope, 3.47 and 2.92 -> the EP step 3.19.
    extra: dict[tuple[int, int], float] = {}
    for log in LOGS:
        if not log["fitted"]:
            continue
        left = _residual_gib(log) - _graphs_gib(log)
        if log["tp"] == 1:
            assert abs(left - TRTLLM_NON_TORCH_TP1_GIB) < 0.01
            continue
        dense = trtllm_non_torch(log["tp"], log["engine_version_arg"], moe=False).total / GiB
        extra[(log["tp"], log["ep"])] = left - dense
    assert sorted(extra) == [(4, 4), (8, 1), (8, 8)]
    assert abs(extra[(8, 1)] / 7 - TRTLLM_MOE_GIB_PER_TP_RANK) < 0.005
    steps = [extra[(tp, ep)] - TRTLLM_MOE_GIB_PER_TP_RANK * (tp - 1) for tp, ep in extra if ep > 1]
    assert abs(statistics.mean(steps) - TRTLLM_MOE_EP_GIB) < 0.01


def test_moe_extra_by_ep_is_better_on_held_out_configurations() -> None:
    # The former rule (points by TP only, 4.61 / 4.50 GiB at TP 4 / 8 from the same DeepSeek-R1
    # logs) put DeepSeek-R1 NVFP4 at TP 2 / EP 1 on a B300 at -1.4 % (-1.7 % before the CUDA-graph
    # part) and at TP 8 / EP 1 on B200s at -1.1 %. Held out, the per-rank + EP rule: +0.1 % at
    # both.
    for gpu, tp in (("B300", 2), ("B200", 8)):
        row = next(r for r in ROWS if r["log"]["gpu"] == gpu and r["log"]["tp"] == tp
                   and r["log"]["ep"] == 1 and "NVFP4" in r["log"]["model"])
        assert not row["log"]["fitted"]
        assert abs(row["error"]) < 0.003, row["log"]["id"]


def test_decode_cuda_graph_batch_sizes_follow_llm_args() -> None:
    # CudaGraphConfig._generate_cuda_graph_batch_sizes, as the logs print the lists:
    # enable_padding, max 64 -> [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64] (11, zufayu B200 logs);
    # max 256 -> 1, 2, 4, 8-128 by 8, 256 (20); max 4 -> [1, 2, 4]; no padding, max 0 (= 128): 1-31,
    # 32, 64, 128 ("Creating CUDA graph instances for 34 batch sizes", TinyLlama, 1.1.0 defaults).
    assert trtllm_cuda_graph_batch_sizes(64, True) == (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64)
    big = trtllm_cuda_graph_batch_sizes(256, True)
    assert len(big) == 20 and big[-2:] == (128, 256)
    assert trtllm_cuda_graph_batch_sizes(4, True) == (1, 2, 4)
    assert trtllm_cuda_graph_batch_sizes(1, True) == (1,)
    default = trtllm_cuda_graph_batch_sizes(None, False)
    assert len(default) == 34 and default[-3:] == (32, 64, 128)
    tiny = _log("sro-sa-tinyllama-1.1b-rtx6000ada-1.1.0")
    assert "for 34 batch sizes" in tiny["quote"]
    # Priced per graph and layer + largest batch and layer: DeepSeek-R1's 61 layers at 11
    # graphs to 64: 61 x (11 x 0.255 + 64 x 0.0179) MiB = 240.9866 MiB = 252,692,765 B.
    assert TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER == 0.255
    assert TRTLLM_CUDA_GRAPH_MIB_PER_BATCH_LAYER == 0.0179
    sizes = trtllm_cuda_graph_batch_sizes(64, True)
    assert trtllm_cuda_graph_bytes(layers=61, batch_sizes=sizes) == 252_692_765
    assert trtllm_cuda_graph_bytes(layers=61, batch_sizes=()) == 0


def _outside_growth(ids: list[str]) -> list[tuple[float, float]]:
    """(logged, kvplan) growth of the outside-torch memory before the estimation run from the
    first log of one configuration to each other one (the temporary pool and base cancel)."""
    logs = [_log(i) for i in ids]
    first = logs[0]
    return [(log["non_torch_before_gib"] - first["non_torch_before_gib"],
             _graphs_gib(log) - _graphs_gib(first)) for log in logs[1:]]


FP8_EP1 = "zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_chat_ep1_c"
FP4_EP8 = "zufayu-b200-dsr1-fp4-tp8-ep8-1.2.0rc6.post2-fp4_throughput_reasoning_ep8_c"
B300 = "zufayu-b300-gptoss120b-tp1-ep1-1.3.0rc10-fwbringup-fp4_throughput_chat_ep1_c"
TP4 = "zufayu-b200-dsr1-fp4-tp4-ep4-1.3.0rc10-fp4_throughput_chat_ep4_c"


def test_decode_cuda_graph_cost_fitted_and_held_out() -> None:
    # Fitted (least squares over the growth within one configuration): DeepSeek-R1 FP8 TP 8,
    # graphs to 1 / 4 / 8 / 16 / 32 (7.46 -> 7.48, 7.50, 7.53, 7.60 GiB) and DeepSeek-R1 NVFP4
    # TP 8 / EP 8 to 128 / 256 (10.32 -> 10.47). Not fitted here (but the TP 4 / EP 4 run to 4
    # set TRTLLM_MOE_EP_GIB_FIT, so it is no held-out case): DeepSeek-R1 NVFP4 TP 4 (1.3.0rc10) to
    # 4 / 64: +0.19 logged, +0.19; gpt-oss-120b on a B300 to 1 / 16 / 64: +0.05, +0.13 logged,
    # +0.05, +0.13. Each figure is printed to 2 decimals (+-0.01 on a difference).
    fitted = (_outside_growth([FP8_EP1 + c for c in ("1", "4", "8", "16", "32")])
              + _outside_growth([FP4_EP8 + c for c in ("128", "256")]))
    for logged, kvplan in fitted:
        assert abs(logged - kvplan) < 0.02
    held = (_outside_growth([TP4 + "4", TP4 + "64"])
            + _outside_growth([B300 + c for c in ("1", "16", "64")]))
    assert len(held) == 3
    for logged, kvplan in held:
        assert abs(logged - kvplan) < 0.015
    # One graph at 256 costs 0.15 GiB: the largest batch's term, not a per-graph constant.
    (logged, _), = _outside_growth([FP4_EP8 + "128", FP4_EP8 + "256"])
    assert logged > 0.14


def test_piecewise_cuda_graph_logs_are_the_misses() -> None:
    # Piecewise CUDA graphs (torch_compile_config, not modelled: engines/budgets.py) are on in 8
    # replayed logs. At max_num_tokens 8192 the estimation run replays a graph and the reserve
    # stays within 1 % (the pool takes what the torch peak loses); at 8384 / 8512 (max_seq_len
    # 10240) the reserve grows 4.8 / 5.1 GiB beyond the same configuration without them: the two
    # worst budgets, +5.4 % and +5.5 %.
    piecewise = [r for r in ROWS if r["log"]["piecewise_cuda_graphs"]]
    assert len(piecewise) == 8
    for r in piecewise:
        big = r["log"]["max_num_tokens"] > 8192
        assert (r["error"] > 0.05) if big else (abs(r["error"]) < 0.013), r["log"]["id"]
    # Of the logs before the startsgl cohort; the prospective SmolLM2-135M RTX 4070 SUPER log
    # (-5.5 %, its device total and weights inferred) now ranks between them.
    earlier = [r for r in ROWS if r["log"]["added_in"] != "cd15e16f6049"]
    worst = sorted(earlier, key=lambda r: abs(r["error"]))[-2:]
    assert all(r["log"]["piecewise_cuda_graphs"] for r in worst)


def test_cuda_graphs_are_captured_before_the_budget_is_taken() -> None:
    # The raw 1.2.0rc6.post2 log (nsys rerun of TP 8 / EP 8): decode and piecewise graphs are
    # captured, then the estimate's first measurement; so both pools are outside torch in the
    # budget. Its estimation run adds only 0.21 GiB inside torch (the piecewise graph replayed).
    log = _log("zufayu-b200-dsr1-fp4-tp8-ep8-1.2.0rc6.post2-nsys-chat_ep8_c64")
    q = log["quote"]
    order = [q.index(s) for s in ("Creating CUDA graph instances for 11 batch sizes",
                                  "Running piecewise CUDA graph warmup",
                                  "Memory used after loading model weights (inside torch)",
                                  "Estimated max memory in KV cache")]
    assert order == sorted(order)
    assert "alltoall_method_type <AlltoallMethodType.NotEnabled" in q
    assert log["activation_gib"] == 0.21 and not log["fitted"]


def test_decode_graphs_precede_the_estimate_in_1_1_logs_too() -> None:
    # 1.1.0 (TinyLlama, RTX 6000 Ada) and 1.1.0rc3 (gpt-oss-120b, GB10) print the graph warm-up
    # before the estimate's first line as well; no 0.20-1.0 log in the data shows the order.
    for log_id in ("sro-sa-tinyllama-1.1b-rtx6000ada-1.1.0", "dgx-spark-gptoss120b-gb10-1.1.0rc3"):
        q = _log(log_id)["quote"]
        warm = q.find("CUDA graph warmup for batch size=")
        assert 0 <= warm < q.index("Memory used after loading model weights"), log_id


def test_cuda_graph_options_price_the_graphs_on_the_cli() -> None:
    # DeepSeek-V3 (61 layers) at TRT-LLM's default cuda_graph_config (34 sizes to 128, no
    # padding): 61 x (34 x 0.255 + 128 x 0.0179) = 668.63 MiB more reserve than --enforce-eager;
    # --cuda-graph-max-batch-size 64 --cuda-graph-padding: 61 x (11 x 0.255 + 64 x 0.0179) =
    # 240.99 MiB.
    base = ["estimate", "deepseek-v3", "--engine", "trtllm", "--gpu", "B200", "--tp", "8",
            "--format", "json"]

    def reserve(*extra: str) -> int:
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["reserve_bytes"]

    eager = reserve("--enforce-eager")
    assert abs(reserve() - eager - 668.6332 * (1 << 20)) < 2
    padded = reserve("--cuda-graph-max-batch-size", "64", "--cuda-graph-padding")
    assert abs(padded - eager - 240.9866 * (1 << 20)) < 2


def test_moe_attention_dp_is_refused_before_1_2_without_a_reserve() -> None:
    # select_alltoall_method_type: the MoE all-to-all workspaces exist only with attention DP;
    # kvplan sizes the 1.2 line's (tests/test_trtllm_alltoall.py), not the MNNVL two-sided ones
    # before it.
    base = ["estimate", "deepseek-v3", "--engine", "trtllm", "--gpu", "B200", "--tp", "8",
            "--dp-attention", "--engine-version", "1.1"]
    result = runner.invoke(app, base)
    assert result.exit_code == 2 and "all-to-all" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    ok = runner.invoke(app, [*base, "--reserve-gib", "10", "--format", "json"])
    assert ok.exit_code == 0, ok.output


def test_non_torch_at_tp_1_holds_on_other_gpus() -> None:
    # Held out: gpt-oss-120b at TP 1 on a B300 (5 logs, 1.3.0rc10, graphs to 1-64) and on a
    # GB200 (NVIDIA's CI, 2 logs). What they print outside torch before the estimation run, less
    # the temporary KV pool (added back), is 1.87-2.05 GiB on the B300, kvplan's base 1.81 + the
    # log's graphs 1.82-1.95; 1.97 / 2.48 on the GB200.
    b300 = [log for log in LOGS if log["gpu"] == "B300" and log["tp"] == 1]
    assert len(b300) >= 5
    for log in b300:
        tmp = (log["available_kv_gib"] / log["free_gpu_memory_fraction"]
               - get_gpu("B300").total_bytes / GiB + log["peak_profiling_gib"])
        outside = log["non_torch_before_gib"] - tmp
        assert abs(outside - TRTLLM_NON_TORCH_TP1_GIB - _graphs_gib(log)) < 0.11, log["id"]
    gb200 = [r for r in bench.trtllm_ci_rows()
             if r["log"]["tp"] == 1 and r["log"]["spec"] == "gpt-oss-120b"]
    assert sorted(round(r["logged_outside_torch_gib"], 2) for r in gb200) == [1.97, 2.48]


def test_tp_2_is_checked_on_held_out_moe_logs() -> None:
    # From 1.2 at TP 2: base 1.81 + workspace 0.50 + NCCL 1.05 + MoE extra 0.48 (one TP rank
    # beyond 1, EP 1) = 3.84 GiB before the graphs. Held out: DeepSeek-R1 NVFP4 at TP 2 on a
    # B300 (1.3.0rc10, one graph) leaves 193.59 - 185.48 - 2.15 (temporary KV) = 5.96 GiB to the
    # reserve, kvplan 3.86 + its activation estimate 2.00 = 5.86: budget +0.1 %; gpt-oss-120b at
    # TP 2 on GB200s prints 4.39 / 5.32 GiB outside torch (NVIDIA's CI), kvplan 4.23 with
    # TRT-LLM's default graphs.
    assert abs(trtllm_non_torch_gib(2, "1.3.0rc10", moe=True) - 3.84) < 0.001
    row = next(r for r in ROWS if r["log"]["gpu"] == "B300" and r["log"]["tp"] == 2)
    assert not row["log"]["fitted"]
    assert abs(row["predicted_reserve_gib"] - row["logged_reserve_gib"]) < 0.15
    assert abs(row["error"]) < 0.005
    ci = [r["logged_outside_torch_gib"] - r["predicted_non_torch_gib"]
          for r in bench.trtllm_ci_rows()
          if r["log"]["tp"] == 2 and r["log"]["spec"] == "gpt-oss-120b"]
    assert len(ci) == 2 and all(0 < x < 1.15 for x in ci)


def test_ci_logs_where_the_moe_extra_misses() -> None:
    # What NVIDIA's GB200 CI shows beside the rule, kept as it is (its CUDA-graph settings are
    # not in the parsed lines: TRT-LLM's defaults, 34 graphs): gpt-oss-120b at TP 4 / EP 1 holds
    # 5.77 / 7.25 GiB outside torch, kvplan 5.69 (8.81 under the former TP-only points); at TP 4
    # / EP 4 Qwen3-235B-A22B 7.34 and Kimi-K2-Thinking 6.85, kvplan 9.50 / 9.14 (the DeepSeek-R1
    # EP step, 3.19 GiB, is more than these models hold); Qwen3-235B-A22B at TP 1 holds 7.84
    # against kvplan's 2.82: the MoE extra depends on the model, not only on TP and EP.
    rows = {r["log"]["id"]: r for r in bench.trtllm_ci_rows()}
    assert len(rows) == 9
    for r in rows.values():
        if r["log"]["tp"] != 4:
            continue
        miss = r["predicted_non_torch_gib"] - r["logged_outside_torch_gib"]
        if r["log"]["ep"] == 1:
            assert -1.6 < miss < 0.1, r["log"]["id"]
        else:
            assert 2.1 < miss < 2.35, r["log"]["id"]
    tp1_qwen = rows["trtllm-ci-gb200-qwen3-235b-tp1-ctx-8k1k"]
    assert abs(tp1_qwen["logged_outside_torch_gib"] - 7.84) < 0.005
    assert 2.7 < tp1_qwen["predicted_non_torch_gib"] < 2.9


def test_nccl_constant_follows_from_the_fitted_dense_points() -> None:
    # NCCL at TP >= 2 is the mean, over the two fitted points (Llama-3.1-8B bf16, H100, ISL =
    # OSL = 2048, fraction 0.8: 173 requests at TP 2, 363 at TP 4), of the reserve the measured
    # concurrency implies less kvplan's reserve without it (TRT-LLM's default 34 decode graphs
    # counted): 3.91 - 2.91 = 1.00 and 4.42 - 3.33 = 1.09 GiB -> 1.05.
    fits = [r for r in POINT_ROWS if r["log"]["fitted"]]
    assert [(r["log"]["tp"], r["logged"]) for r in fits] == [(2, 173), (4, 363)]
    residuals = [r["implied_reserve_gib"] - (r["predicted_reserve_gib"] - TRTLLM_NCCL_GIB)
                 for r in fits]
    assert abs(statistics.mean(residuals) - TRTLLM_NCCL_GIB) < 0.01


def test_dense_tp_points_against_the_measured_concurrency() -> None:
    # Held out: 22 H100 points (Llama-3.1-8B bf16 and Qwen3-32B-FP8 at TP 1 / 2 / 4, ISL / OSL
    # 2k-4k): median |error| 0.00 % (0.82 % before the decode CUDA graphs were priced), all
    # within 3 % or one request; at TP 2 and 4 (14 points) all within 3 %, worst 1.1 % (was
    # 1.9 %). The TP-1 Qwen3-32B-FP8 points hold 14-27 requests, where one request is 4-7 %:
    # kvplan is one above at three of four (its reserve 3.2-3.9 GiB with 64 layers' graphs, the
    # measurement implying 4.2-6.4 +- 0.8-1.4; it was one above at all four). Under the earlier
    # MoE-fitted TP points kvplan was -6 % at every H100 TP-4 point.
    held = [r for r in POINT_ROWS if r["log"]["replay"] and not r["log"]["fitted"]]
    s = bench.trtllm_point_summary(held)
    assert s["points"] == 22
    assert s["within"] == 1.0
    assert s["median_error"] <= 0.001
    tp = bench.trtllm_point_summary([r for r in held if r["log"]["tp"] > 1])
    assert tp["points"] == 14 and tp["within_3"] == 1.0 and tp["worst_error"] <= 0.011


def test_capacity_points_name_their_source() -> None:
    points = bench.load_trtllm_points()
    assert len(points) == 72 and len({p["id"] for p in points}) == 72
    for p in points:
        assert p["url"].startswith("https://github.com/ai-dynamo/aiconfigurator/blob/")
        assert p["quote"].endswith(f", {p['bench_max_concurrency']})")
        assert p["max_seq_len"] == p["isl"] + p["osl"] + 1000
        assert p["replay"] == (p["gpu"] == "H100-80GB")
        if not p["replay"]:
            assert p["why_not_replayed"]


def test_trtllm_budget_against_the_logs() -> None:
    # Issue #13's target: within 3 % on PyTorch-backend logs. Achieved (examples/engine-bench.md):
    # 32 logs (B200, B300, H100 and an RTX 6000 Ada; TP 1 / 2 / 4 / 8), median |error| 0.25 %, 30
    # of 32 within 3 %, worst 5.5 %; not marked `fit` (28 logs: 19 of them fitted or of a fitted
    # log's configuration; the 9 held out, 0.14 %) median 0.31 % (on the 27 before the nsys
    # rerun: 0.37 %, 0.99 % under the TP-only MoE points, 1.08 % before the decode CUDA graphs
    # were priced). The misses: two DeepSeek-R1
    # FP8 runs with piecewise CUDA graphs at max_num_tokens 8384 / 8512 (not modelled: +5.4 %,
    # +5.5 %) and one with the DEEPGEMM MoE backend and 124.76 GiB of weights (-2.5 %, was
    # -5.5 %). This test holds what is achieved, not the target. With the prospective SmolLM2
    # log (startsgl, cd15e16; -5.5 %): 33 logs, 30 within 3 %.
    s = bench.trtllm_summary(ROWS)
    assert s["logs"] >= 33
    assert s["median_error"] <= 0.003
    assert s["worst_error"] <= 0.056
    assert s["within_3"] >= 0.90
    held = bench.trtllm_summary([r for r in ROWS if not r["log"]["fitted"]])
    assert held["logs"] >= 29
    assert held["median_error"] <= 0.0038  # 0.31 % on the 28 before SmolLM2, 0.37 % with it
    assert {r["log"]["gpu"] for r in ROWS} >= {"B200", "B300", "H100-80GB"}


def test_a_dense_model_on_a_smaller_gpu() -> None:
    # Held out: TinyLlama-1.1B (dense, bf16) on an RTX 6000 Ada, TRT-LLM 1.1.0, all defaults. The
    # log: (47.37 - 5.13 + 1.38) x 0.9 = 39.26 GiB. kvplan's activation over 8,192 tokens (0.35
    # GiB) is near the logged 0.39, but the outside-torch memory here is 2.49 - 1.38 = 1.11 GiB,
    # not the B200-fitted base 1.81 + 34 graphs of 22 layers (0.24): kvplan (47.37 - 2.23 -
    # 0.35 - 2.05) x 0.9 = 38.47 GiB, -2.0 %. The TP-1 base holds to 0.1 GiB across B200 / B300
    # (gpt-oss-120b) but not on this GPU.
    row = next(r for r in ROWS if r["log"]["id"] == "sro-sa-tinyllama-1.1b-rtx6000ada-1.1.0")
    assert abs(row["logged_outside_torch_gib"] - 1.11) < 0.005
    assert abs(row["error"] - (-0.020)) < 0.001
    assert row["predicted_tokens"] % 32 == 0


def test_replay_uses_the_logged_kv_size_per_token() -> None:
    # The logs print TRT-LLM's bytes per token: DeepSeek-R1 fp8 KV 61 x (512 + 64) x 1 = 35,136
    # on every TP rank (MLA is not split); gpt-oss-120b fp8 at TP 1: 36 x 8 x 64 x 2 x 1 = 36,864.
    for row in ROWS:
        log = row["log"]
        out = json.loads(runner.invoke(app, bench.trtllm_cli_args(log)).stdout)
        if "kv size" in log["quote"]:
            assert f"kv size is {out['per_gpu_bytes_per_token']}" in log["quote"] or \
                f"kv size per token is {out['per_gpu_bytes_per_token']}" in log["quote"]
        tokens = int(log["available_kv_gib"] * GiB) // out["per_gpu_bytes_per_token"]
        # The logged budget / kvplan's per-token size = the logged max_tokens (2 decimals); where
        # only the allocated pool is logged, that pool (whole blocks, so one block more slack).
        slack = 0.005 * GiB / out["per_gpu_bytes_per_token"] + 1
        logged = log["estimated_max_tokens"]
        if logged is None:
            logged, slack = log["allocated_tokens"], slack + log["tokens_per_block"]
        assert abs(tokens - logged) <= slack, log["id"]


def test_user_max_tokens_caps_before_the_blocks_are_rounded() -> None:
    # _util.py: a user max_tokens limits the memory to bytes_for_tokens(max_tokens) before
    # max_tokens = tokens_for_budget(memory); the manager then rounds that to blocks of 32:
    # 3,210 tokens -> 100 blocks from 1.2 (floor), 101 up to 1.1 (ceilDiv).
    spec = load_spec("llama-3.1-8b")
    base = plan_inputs(context=4096, engine=Engine.trtllm, kv_budget_bytes=10 * GiB,
                      max_total_tokens=3210)
    assert plan_capacity(spec, base).num_blocks == 100
    old = plan_inputs(context=4096, engine=Engine.trtllm, kv_budget_bytes=10 * GiB,
                     max_total_tokens=3210, engine_version="1.1.0rc3")
    assert plan_capacity(spec, old).num_blocks == 101


def test_b300_total_is_what_trtllm_measures() -> None:
    # "Setting PyTorch memory fraction to F (X GiB)" is F x the device total (torch's
    # mem_get_info): on the B200 logs 76.70452880859375 / 0.43007606847668667 = 178.35 GiB, the
    # total the raw logs print; on the B300 ones 104.99627685546875 / 0.3922430117721311 =
    # 267.68 GiB (288 GB = 268.2 GiB nominal), kvplan's B300 preset. With the nominal 288 GiB the
    # B300 gpt-oss-120b budget would be (288 - 64.12 - 2.79) x 0.8 = 176.9 GiB, +9.8 % on 161.05.
    for gpu in ("B200", "B300"):
        totals = set()
        for log in LOGS:
            m = re.search(r"PyTorch memory fraction: ([\d.]+) \(([\d.]+) GiB\)", log["quote"])
            if log["gpu"] == gpu and m:
                totals.add(round(float(m.group(2)) / float(m.group(1)), 2))
        assert totals == {round(get_gpu(gpu).total_bytes / GiB, 2)}, gpu
