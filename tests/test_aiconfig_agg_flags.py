"""The counterfactual flags of aiconfigurator's aggregated rows (tests.benches.aiconfig_agg_flags):
the generator's rules at github.com/ai-dynamo/aiconfigurator 095f58a5 worked by hand, and that
the replay's engines take them."""

from __future__ import annotations

import pytest

from tests.benches import aiconfig_agg_flags as fl
from tests.benches import aiconfig_agg_runs as agg

# The 36 sizes every list holds (sglang.rule:2 / trtllm.rule:2 @095f58a5): 1-16 by 1 (16),
# 20-32 by 4 (4), 40-64 by 8 (4), 80-128 by 16 (4), 160-256 by 32 (4), 320-512 by 64 (4).
BASE = (*range(1, 17), 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256,
        320, 384, 448, 512)


def _row(backend: str, isl: int, bs: int) -> dict[str, str]:
    return {"backend": backend, "isl": str(isl), "batch_size": str(bs)}


def test_cuda_graph_batch_sizes() -> None:
    assert len(BASE) == 36
    # bs 16: + range(8, 25): 17, 18, 19, 21, 22, 23 are new (20, 24 listed) -> 42 sizes.
    assert fl.cuda_graph_batch_sizes(16) == tuple(sorted({*BASE, 17, 18, 19, 21, 22, 23}))
    assert len(fl.cuda_graph_batch_sizes(16)) == 42
    # bs 128: + 120..136, 128 listed -> 16 new, 52 sizes.
    assert len(fl.cuda_graph_batch_sizes(128)) == 52
    # bs <= 8: range(1, bs + 9) stays inside 1-16 -> the 36.
    assert fl.cuda_graph_batch_sizes(4) == BASE
    # bs 1,000: 992..1,008 above 512 -> 36 + 17.
    assert fl.cuda_graph_batch_sizes(1000)[-17:] == tuple(range(992, 1009))


def test_vllm_flags() -> None:
    # vllm.rule:4 @095f58a5: bs 128 < 512 -> max_num_seqs 512; vllm.rule:20: 512 + 8,192 +
    # 1,500 = 10,204 batched tokens (line 4 has already set the agg scope's max_batch_size).
    f = fl.generator_flags(_row("vllm", 8192, 128))
    assert (f.max_num_seqs, f.max_num_batched_tokens) == (512, 10204)
    assert f.mem_fraction is None and f.cuda_graph_batch_sizes == ()
    # bs 512 -> 2 x 512 = 1,024 seqs; 1,024 + 1,024 + 1,500 = 3,548 tokens.
    f = fl.generator_flags(_row("vllm", 1024, 512))
    assert (f.max_num_seqs, f.max_num_batched_tokens) == (1024, 3548)


def test_sglang_flags() -> None:
    # sglang.rule:8 (as vLLM's) and :11 max_prefill_tokens 8,192 + 1,500 = 9,692; :12 mixed
    # chunk; no max_num_tokens rule (SGLang's chunked_prefill_size stays its default).
    f = fl.generator_flags(_row("sglang", 8192, 128))
    assert (f.max_num_seqs, f.max_prefill_tokens, f.max_num_batched_tokens) == (512, 9692, None)
    assert f.mixed_chunk and len(f.cuda_graph_batch_sizes) == 52


def test_trtllm_flags() -> None:
    # trtllm.rule:8 max_batch_size 16; :19 (16 + 8,192 + 500 = 8,708) rounded up to 32 =
    # 273 x 32 = 8,736; extra_engine_args.1.2.0rc6.post2.yaml.j2:28 fraction 0.80, :33 no
    # block reuse. An 8,192-token prompt and 16 decodes (8,208) fit one step of 8,736.
    f = fl.generator_flags(_row("trtllm", 8192, 16))
    assert (f.max_num_seqs, f.max_num_batched_tokens) == (16, 8736)
    assert (f.mem_fraction, f.block_reuse) == (0.80, False)
    assert len(f.cuda_graph_batch_sizes) == 42
    # 1,024-token prompts at bs 128: 128 + 1,024 + 500 = 1,652 -> 52 x 32 = 1,664.
    assert fl.generator_flags(_row("trtllm", 1024, 128)).max_num_batched_tokens == 1664
    # No batch size: trtllm.rule:8 `else 128` -> 128 + 1,024 + 500 -> 1,664.
    f = fl.generator_flags(_row("trtllm", 1024, 0))
    assert (f.max_num_seqs, f.max_num_batched_tokens) == (128, 1664)


def _first(backend: str, isl: str) -> dict[str, str]:
    return next(r for r in agg.rows() if r["backend"] == backend and r["isl"] == isl
                and agg.why_not(r) == "" and agg.release(r) is not None
                and agg.layout(r)[1] == 1)  # no attention DP


@pytest.mark.parametrize("backend", ["vllm", "sglang", "trtllm"])
def test_replay_engines_take_the_flags(backend: str) -> None:
    row = _first(backend, "8192")
    f = fl.generator_flags(row)
    sim = fl._setup(row, f)
    if backend == "vllm":
        assert sim.scheduler.max_num_seqs == f.max_num_seqs
        assert sim.scheduler.max_num_batched_tokens == f.max_num_batched_tokens
    elif backend == "sglang":
        assert sim.sglang is not None
        assert sim.sglang.max_prefill_tokens == f.max_prefill_tokens
        assert sim.sglang.max_running_requests <= f.max_num_seqs
    else:
        assert sim.trtllm is not None
        assert (sim.trtllm.max_batch_size, sim.trtllm.max_num_tokens) == (
            f.max_num_seqs, f.max_num_batched_tokens)
        assert not sim.caching and sim.plan.mem_fraction == 0.80
        assert sim.cost.graph_sizes == f.cuda_graph_batch_sizes


def test_compare_line_and_moved() -> None:
    from tests.benches.disagg_rows import Replay

    def rep(rid: str, ttft: float, tpot: float) -> Replay:
        return Replay(id=rid, label="", measured_ttft_ms=100.0, measured_tpot_ms=10.0,
                      concurrency=1, input_len=1, output_len=2, ttft_ms=ttft, tpot_ms=tpot)
    # Row a: frozen TTFT ratio 400 (starved) -> 0.9; TPOT 0.6 -> 1.1. Row b: 0.5 -> 0.5,
    # TPOT 1.0 -> 1.0. Inside [0.75, 1.33] (BAND): a with the flags both, b its TPOT only;
    # medians of two are their means: |TTFT err| (399 + 0.5) / 2 = 199.75 -> (0.1 + 0.5) / 2.
    pairs = [(rep("a", 40000.0, 6.0), rep("a", 90.0, 11.0)), (rep("b", 50.0, 10.0),
                                                              rep("b", 50.0, 10.0))]
    assert fl.compare_line("x", pairs) == (
        "| x | 2 | 0 -> 1 | 0 -> 1 | 1 -> 2 | 19975.0% -> 30.0% | 20.0% -> 5.0% | "
        "200.25 -> 0.70 | 0.80 -> 1.05 |")
    assert [f.id for f, _ in fl.moved(pairs, 1)] == ["a"]
