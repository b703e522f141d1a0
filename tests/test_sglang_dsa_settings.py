"""The settings SGLang forces for DeepSeek's sparse attention besides the page and the KV dtype
(kvplan/engines/sglang/dsa_settings.py; read from the sglang==X wheels, srt/server_args.py):
0.5.3-0.5.5 ``enable_dp_attention = True; dp_size = tp_size`` under is_deepseek_nsa and not
is_npu() (0.5.3 lines 815-818, 0.5.4 1018-1021, 0.5.5 1070-1073), which _handle_data_parallelism
turns off at dp_size 1 (TP 1); 0.5.6-0.5.7 the same without ``dp_size = tp_size`` (0.5.6 lines
950-951), so off with the default --dp-size 1; 0.5.3 ``mem_fraction_static = 0.8`` (lines
823-824). The real DeepSeek-V3.2 config (tests/data/configs/deepseek-v3.2.json), TP 8 on H200s
(kvplan's preset: 150,119,844,413 B, 143,165 MiB as SGLang's get_device_memory_capacity
reads it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.engines.base import Engine
from kvplan.engines.sglang.dsa_settings import sglang_dsa_inputs
from kvplan.engines.sglang.options import sglang_options
from kvplan.sources.resolve import load_spec
from tests.test_sglang_pools import sglang
from tests.test_vllm_architectures import _run

V32 = str(Path(__file__).parent / "data" / "configs" / "deepseek-v3.2.json")


@pytest.mark.parametrize(("version", "tp", "forced"), [
    ("0.5.3", 8, True),   # 0.5.3 server_args.py:815-818
    ("0.5.4", 8, True),   # 0.5.4:1018-1021
    ("0.5.5", 2, True),   # 0.5.5:1070-1073, dp_size = tp_size = 2
    ("0.5.5", 1, False),  # dp_size 1: _handle_data_parallelism turns it off (0.5.5:1374-1376)
    ("0.5.6", 8, False),  # 0.5.6:950 sets the flag, dp_size stays 1: off again (0.5.6:1491-1493)
    ("0.5.7", 8, False),  # 0.5.7:1035, the same
    ("0.5.8", 8, False),  # 0.5.8: only under --enable-nsa-prefill-context-parallel
    (None, 8, False),     # the newest modelled
])
def test_dp_attention_forced_by_release(version: str | None, tp: int, forced: bool) -> None:
    spec = load_spec("deepseek-v3.2")
    served = sglang_dsa_inputs(spec, sglang(engine_version=version, tp=tp))
    assert served.dp_attention is forced
    assert sglang_options(served).forced_dp_attention is forced
    # DeepSeek-V3 (dense MLA, no indexer) is not is_deepseek_nsa: nothing forced.
    plain = sglang(engine_version=version, tp=tp)
    assert sglang_dsa_inputs(load_spec("deepseek-v3"), plain) is plain


def test_a_given_dp_attention_is_not_marked_forced() -> None:
    # --dp-attention given: SGLang's memory settings see --enable-dp-attention (dp = tp).
    served = sglang_dsa_inputs(load_spec("deepseek-v3.2"),
                               sglang(engine_version="0.5.4", tp=8, dp_attention=True))
    assert served.dp_attention and not sglang_options(served).forced_dp_attention


def test_0_5_3_fraction_is_0_8_whatever_given() -> None:
    # 0.5.3 server_args.py:823 sets 0.8 after _handle_gpu_memory_settings, whatever was given.
    spec = load_spec("deepseek-v3.2")
    for given in (None, 0.9):
        served = sglang_dsa_inputs(spec, sglang(engine_version="0.5.3", tp=1,
                                                mem_fraction=given))
        assert served.resolved_mem_fraction == 0.8
        assert "0.5.3 server_args.py:823" in served.mem_fraction_rule
    # 0.5.4 dropped it: a given fraction stands.
    served = sglang_dsa_inputs(spec, sglang(engine_version="0.5.4", tp=8, mem_fraction=0.9))
    assert served.resolved_mem_fraction == 0.9


def _estimate(version: str, *extra: str) -> dict:
    result = _run("estimate", V32, "--engine", "sglang", "--gpu", "H200", "--tp", "8",
                  "--engine-version", version, *extra, "-f", "json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert isinstance(answer, dict)
    return answer


def test_the_pool_under_the_forced_dp_attention() -> None:
    # Default fraction on 143,165 MiB at TP 8 (0.5.3+ rule, computed before the NSA block):
    # reserved = 512 + 1.5 x 8,192 + 2 x 512 + 8 x 128 = 14,848 MiB (>= 10,240), so
    # round((143,165 - 14,848) / 143,165, 3) = round(0.89629, 3) = 0.896 -- no DP-attention
    # reserve, as SGLang computed it before forcing DP attention.
    forced, tp_only = _estimate("0.5.4"), _estimate("0.5.6")
    assert forced["mem_fraction"] == tp_only["mem_fraction"] == 0.896
    assert forced["dp_attention"] and not tp_only["dp_attention"]
    # The cell is the same whole latent + indexer keys either way (MLA is not split by TP):
    # 61 x ((512 + 64) x 2 + 132) = 78,324 B/token, bf16 on SM 9.0 (0.5.5+ auto: bfloat16).
    assert forced["per_gpu_bytes_per_token"] == tp_only["per_gpu_bytes_per_token"] == 78_324
    # What moves is the weights: under DP attention the attention weights are whole on each GPU
    # (attn_tp_size 1), so the KV budget loses exactly the weights' growth.
    grown = forced["weights_bytes"] - tp_only["weights_bytes"]
    assert grown > 0
    assert forced["kv_budget_bytes"] == tp_only["kv_budget_bytes"] - grown
    # Tokens: kv_budget // 78,324 floored to 64-token pages; requests of 4,096 tokens (64
    # pages each) per GPU, and each of the 8 GPUs is its own DP rank.
    tokens = forced["kv_budget_bytes"] // 78_324 // 64 * 64
    assert forced["token_capacity"] == tokens
    assert forced["max_requests"] == tokens // 4096
    assert forced["total_max_requests"] == 8 * forced["max_requests"]
    assert tp_only["total_max_requests"] == tp_only["max_requests"]


def test_a_given_dp_attention_keeps_its_reserve() -> None:
    # --dp-attention given (SGLang: --enable-dp-attention --dp-size 8): the fraction holds
    # 3 x 512 x 8 + 1.5 x 512 x 8 (bs 512 > 300) = 18,432 MiB more: reserved 33,280 MiB,
    # round((143,165 - 33,280) / 143,165, 3) = round(0.76754, 3) = 0.768.
    assert _estimate("0.5.4", "--dp-attention")["mem_fraction"] == 0.768
    # 0.5.3: 0.8 whatever (line 823).
    assert _estimate("0.5.3", "--dp-attention")["mem_fraction"] == 0.8
    assert _estimate("0.5.3", "--mem-fraction", "0.9")["mem_fraction"] == 0.8


def test_other_engines_force_nothing() -> None:
    spec = load_spec("deepseek-v3.2")
    for engine in (Engine.vllm, Engine.trtllm):
        inputs = sglang(engine_version=None, tp=8)
        assert engine.rules.served_inputs(spec, inputs) is inputs


def test_plan_keeps_only_the_launches_sglang_runs_as_evaluated() -> None:
    # On 0.5.4 a `--tp-size 8` launch runs DP attention all the same: the planner drops the
    # TP-attention layout (kvplan.analysis.plan_search.evaluate) and keeps the DP-attention one.
    result = _run("plan", V32, "--engine", "sglang", "--gpu", "H200", "--engine-version",
                  "0.5.4", "--concurrency", "64", "--context", "4096", "-f", "json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["dp_attention"] and (answer["layout"]["tp"], answer["layout"]["dp"]) == (8, 8)
    assert "--enable-dp-attention" in answer["command"]


def test_simulate_and_disagg_refuse_the_forced_layout() -> None:
    result = _run("simulate", V32, "--engine", "sglang", "--gpu", "H200", "--tp", "8",
                  "--engine-version", "0.5.4", "--rate", "1")
    assert result.exit_code == 2
    assert "runs deepseek-v3.2 with DP attention at TP > 1" in result.stderr
    assert "give --dp 8 --dp-attention" in result.stderr
    # ... which simulate runs as 8 attention-DP ranks (kvplan.analysis.simulate.dp_lockstep).
    result = _run("simulate", V32, "--engine", "sglang", "--gpu", "H200", "--tp", "8", "--dp",
                  "8", "--dp-attention", "--engine-version", "0.5.4", "--rate", "1",
                  "--num-requests", "8", "--max-model-len", "8192", "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["num_requests"] == 8
    result = _run("plan", V32, "--engine", "sglang", "--gpu", "H200", "--engine-version",
                  "0.5.4", "--disagg", "--prefill-tp", "8", "--decode-tp", "8",
                  "--concurrency", "16", "--context", "4096")
    assert result.exit_code == 2
    assert "give --prefill-dp 8 --prefill-dp-attention" in result.stderr


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_pooled_indexer_keys_are_refused(tmp_path: Path, engine: str) -> None:
    # index_kpool > 1 (SGLang 0.5.22 configs/model_config.py:452; vLLM 0.32
    # v1/attention/backends/mla/indexer.py:301-306): the indexer keys pooled by 4 would be
    # ceil(132 / 4) = 33 B per layer and the page 256 in SGLang; kvplan sizes 132 B and 64:
    # refused in one line, exit 2. index_kpool 1 is the plain cache.
    config = json.loads(Path(V32).read_text())
    for kpool, code in ((4, 2), (1, 0)):
        path = tmp_path / f"kpool{kpool}.json"
        path.write_text(json.dumps({**config, "index_kpool": kpool}))
        result = _run("estimate", str(path), "--engine", engine, "--gpu", "H200", "--tp", "8")
        assert result.exit_code == code, result.output
        if code:
            assert f"index_kpool {kpool}: kvplan does not model" in result.stderr
            assert len(result.stderr.strip().splitlines()) == 1


def test_sweep_runs_0_5_3s_fraction_whatever_asked() -> None:
    # Every --mem-fraction of a 0.5.3 sweep is 0.8 (server_args.py:823); 0.5.4 keeps them.
    for version, expected in (("0.5.3", ["0.8", "0.8"]), ("0.5.4", ["0.85", "0.9"])):
        result = _run("sweep", V32, "--engine", "sglang", "--engine-version", version, "--gpu",
                      "H200", "--tp", "8", "--mem-fraction", "0.85,0.9", "--context", "4096",
                      "--kv-dtype", "bf16", "-f", "csv")
        assert result.exit_code == 0, result.output
        lines = result.stdout.strip().splitlines()
        column = lines[0].split(",").index("mem_fraction")
        assert [line.split(",")[column] for line in lines[1:]] == expected
