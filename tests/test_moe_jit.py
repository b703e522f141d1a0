"""vLLM's Triton fused-MoE JIT compiles (kvplan.engines.vllm.moe_jit, the simulator's stall
kvplan.analysis.simulate.moe_jit; `simulate --moe-jit-compile-ms`), against keys worked out by
hand from vLLM 0.15.1's fused_moe.py / moe_align_block_size.py, Triton 3.5.1's specialization
and Mixtral-8x7B's published config (8 experts, top 2, intermediate 14336: N = 7168 a rank at
TP 2, the table configs/E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvplan import load_spec
from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.moe_jit import JitStallCost, MoeJitStall, replica_cost
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from kvplan.engines.vllm.budget import vllm_cuda_graph_sizes
from kvplan.engines.vllm.moe_jit import (
    CompileKey,
    call_keys,
    nearest_config,
    vllm_triton_moe_jit,
)

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
GRAPHS = vllm_cuda_graph_sizes(max_num_seqs=128, max_num_batched_tokens=2048)  # 1, 2, 4, 8..256


def _rule(version: str = "0.15.1", n: int = 7168):
    return vllm_triton_moe_jit(gpu="H100-80GB", engine_version=version, num_experts=8, top_k=2,
                               intermediate_per_rank=n, graph_sizes=GRAPHS,
                               max_num_batched_tokens=2048)


def test_nearest_table_entry() -> None:
    table = _rule().table
    # 451 tokens (run 28's first chunk): |451 - 512| = 61 < |451 - 256| = 195: the 512 entry.
    assert nearest_config(table, 451) == (64, 256, 64, 32, 4, 4)
    # 384 is 128 from both 256 and 512: min() keeps the first key, 256.
    assert nearest_config(table, 384) == (64, 128, 128, 64, 4, 4)
    # 769: 257 from 512, 255 from 1024: the 1024 entry (BLOCK_SIZE_M 128).
    assert nearest_config(table, 769)[0] == 128


def test_call_keys_by_hand() -> None:
    table = _rule().table
    cfg = (64, 256, 64, 32, 4, 4)
    # M = 451: num_valid_tokens = 451 x 2 = 902 (902 % 16 = 6), EM = 902 + 8 x 63 = 1406
    # (% 16 = 14): neither divisible, for w13 and for w2 (its 902 rows at top-k 1).
    assert call_keys(451, table=table, num_experts=8, top_k=2) == (
        CompileKey(gemm="w13", config=cfg, em="", num_valid_tokens=""),
        CompileKey(gemm="w2", config=cfg, em="", num_valid_tokens=""))
    # M = 452: 904 (% 16 = 8), EM 1408 = 88 x 16: EM specializes.
    assert call_keys(452, table=table, num_experts=8, top_k=2)[0] == CompileKey(
        gemm="w13", config=cfg, em="D", num_valid_tokens="")
    # M = 456: 912 = 57 x 16, EM 1416 (% 16 = 8): num_valid_tokens specializes.
    assert call_keys(456, table=table, num_experts=8, top_k=2)[1] == CompileKey(
        gemm="w2", config=cfg, em="", num_valid_tokens="D")
    # M = 1 (the 1 entry, BLOCK_SIZE_M 16): 2 pairs < 8 experts, so sorted_ids = min(2 x 16,
    # 2 + 8 x 15) = 32; w13's 1 row < 16: EM = min(32, 1 x 2 x 16) = 32 ("D"); w2's 2 rows:
    # min(32, 2 x 1 x 16) = 32; num_valid_tokens 2 for both.
    one = (16, 64, 128, 64, 4, 4)
    assert call_keys(1, table=table, num_experts=8, top_k=2) == (
        CompileKey(gemm="w13", config=one, em="D", num_valid_tokens=""),
        CompileKey(gemm="w2", config=one, em="D", num_valid_tokens=""))


def test_warm_sizes_and_eager_steps() -> None:
    rule = _rule()
    warm = rule.warm()
    # A 200-token step runs in the 200 graph (a capture size): compiled at start-up.
    assert rule.call_tokens(200) == 200 and set(rule.keys(200)) <= warm
    assert rule.call_tokens(201) == 208
    # 451 tokens run eager at 451; the 512 entry's (no, no) class is not met at start-up
    # (capture sizes take the entries up to 256; the profile run at 2048 its own entry).
    assert rule.call_tokens(451) == 451
    assert not set(rule.keys(451)) & warm


class _Flat:
    full_attention_only = True

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return 0.01

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return 0.01


def test_stall_once_per_new_key() -> None:
    stall = MoeJitStall(rule=_rule(), compile_s=0.5)
    cost = JitStallCost(inner=_Flat(), stall=stall)
    # 40 decodes + a 411-token chunk = 451 tokens: two new kernels (w13, w2), 2 x 0.5 s.
    assert cost.seconds(decode_contexts=[600] * 40, chunks=[(0, 411)]) == pytest.approx(1.01)
    # 459 tokens: 918 (% 16 = 6), EM 1422 (% 16 = 14), the same entry: compiled already.
    assert cost.seconds_from_sums(40, 24000, [(0, 419)]) == pytest.approx(0.01)
    # 452 tokens: EM 1408 divisible, a new class: two more compiles.
    assert cost.seconds_from_sums(41, 24000, [(0, 411)]) == pytest.approx(1.01)
    assert cost.compiles == 4
    # A decode step of 40 (a capture size) never compiles.
    assert cost.seconds(decode_contexts=[600] * 40, chunks=[]) == pytest.approx(0.01)
    assert replica_cost(_Flat(), None).__class__ is _Flat


def test_refused_where_not_read() -> None:
    with pytest.raises(InputError, match="0.15.1 only"):
        _rule(version="0.20.1")
    with pytest.raises(InputError, match="no tuned fused-MoE table"):
        _rule(n=1792)


def _inputs(model: str, tp: int, engine: str = "vllm"):
    spec = load_spec(model)
    return spec, estimate_inputs(spec, context=4096, gpu="H100-80GB", tp=tp, engine=Engine(engine),
                                 engine_version="0.15.1" if engine == "vllm" else None,
                                 max_num_batched_tokens=2048, max_num_seqs=128)


def test_setup_takes_it_for_mixtral_only() -> None:
    spec, inputs = _inputs(str(CONFIGS / "mixtral-8x7b.json"), 2)
    sim, notes = setup(spec, inputs, moe_jit_compile_s=0.25)
    assert sim.moe_jit is not None and sim.moe_jit.compile_s == 0.25
    assert sim.moe_jit.rule.table == _rule().table and sim.moe_jit.rule.graph_sizes == GRAPHS
    assert any("fused-MoE JIT" in n for n in notes)
    off, _ = setup(spec, inputs)
    assert off.moe_jit is None
    # A dense model has no Triton fused MoE: no stall, a note.
    spec, inputs = _inputs("llama-3.1-8b", 1)
    sim, notes = setup(spec, inputs, moe_jit_compile_s=0.25)
    assert sim.moe_jit is None and any("no compile stall" in n for n in notes)


def test_sglang_refused() -> None:
    spec, inputs = _inputs(str(CONFIGS / "mixtral-8x7b.json"), 2, engine="sglang")
    with pytest.raises(InputError, match="only vLLM"):
        setup(spec, inputs, moe_jit_compile_s=0.25)


def test_cli_option() -> None:
    from typer.testing import CliRunner

    from kvplan.cli import app

    runner = CliRunner()
    args = ["simulate", str(CONFIGS / "mixtral-8x7b.json"), "--gpu", "H100", "--tp", "2",
            "--engine-version", "0.15.1", "--num-requests", "3", "--input-len", "600",
            "--output-len", "4", "--request-rate", "5", "--max-num-seqs", "128",
            "--max-num-batched-tokens", "2048"]
    on = runner.invoke(app, [*args, "--moe-jit-compile-ms", "500"])
    assert on.exit_code == 0, on.output
    assert "fused-MoE JIT: 500 ms" in on.output
    bad = runner.invoke(app, [*args, "--moe-jit-compile-ms", "-1"])
    assert bad.exit_code == 2
    old = runner.invoke(app, [*args[:7], "0.20.1", *args[8:], "--moe-jit-compile-ms", "500"])
    assert old.exit_code == 2 and "0.15.1 only" in old.output
