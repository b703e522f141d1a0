"""vLLM 0.15's sampler per step (kvplan.engines.vllm.sampler, kvplan.perf.sampler_cost,
`kvplan simulate --generation-config`), worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.cli import app
from kvplan.engines.vllm.sampler import SamplingParams, VllmSampler
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.sources.generation_config import read_generation_config
from kvplan.sources.resolve import load_model

runner = CliRunner()
GEN = Path(__file__).parent / "data" / "generation_configs"
QWEN3 = SamplingParams(temperature=0.6, top_p=0.95, top_k=20)


def _cost_s(params: SamplingParams, rows: int, vocab: int) -> float:
    from kvplan.perf.sampler_cost import SamplerCost

    gpu = get_gpu("H100-80GB")
    return SamplerCost(VllmSampler(params=params, version="0.15.0"), vocab=vocab, gpu=gpu,
                       eff=device_efficiency(gpu)).seconds(rows)


def test_qwen3_top_k_top_p_at_200_rows_on_h100() -> None:
    # Qwen3-8B's defaults (temperature 0.6, top_p 0.95, top_k 20), 200 requests, V = 151,936:
    # E = 200 x 151,936 = 30,387,200 float32 elements. Bytes per element: the bf16 logits to
    # fp32 (2 + 4 = 6), temperature div_ (4 + 4 = 8), the sort at >= 128 rows (the int64 index
    # fill 8, then CUB's segmented radix sort, ceil(32 / 6) = 6 passes of 4 (upsweep keys) +
    # 12 (downsweep keys + values read) + 12 (written) = 28: 176), the top-k mask (4 + 1) and
    # masked_fill_ (4 + 1 + 4): 14, top-p: softmax (3 reads + 1 write = 16), cumsum (8), mask
    # (5), masked_fill_ (9): 38, the scatter (clone 8, scatter 8 + 4 + 4): 24, softmax 16,
    # exponential_ 4, div_ 12, argmax 4: 302 bytes, 9,176,934,400 in all. H100-80GB at
    # 3.35e12 B/s x hbm 0.90 = 3.015e12 B/s: 3.0437 ms; every kernel above the 4 us floor.
    sampler = VllmSampler(params=QWEN3, version="0.15.0")
    assert sum(p.bytes_per_element for p in sampler.passes(200, 151_936)) == 302
    assert sampler.bytes(200, 151_936) == 9_176_934_400
    assert _cost_s(QWEN3, 200, 151_936) == pytest.approx(9_176_934_400 / 3.015e12, rel=1e-12)


def test_the_sort_by_row_count() -> None:
    # 1 row: index fill 8, histogram 4, 4 one-sweep passes of 24: 108. 2-127 rows: index and
    # row fill 8, histogram 4, 4 passes of 24, the row-bit sort's histogram 8 and pass 16, the
    # postprocess 24: 156. From 128 rows: 176 (above).
    sampler = VllmSampler(params=SamplingParams(temperature=1.0, top_p=0.9), version="0.15.0")
    # The rest of a top-p-only row: 6 + 8 + 38 + 24 + 16 + 4 + 12 + 4 = 112.
    assert [sum(p.bytes_per_element for p in sampler.passes(rows, 128_256))
            for rows in (1, 2, 127, 128)] == [108 + 112, 156 + 112, 156 + 112, 176 + 112]


def test_no_sort_without_top_p_and_greedy_argmax_only() -> None:
    # gpt-oss-120b's generation_config sets no sampling key: temperature 1.0, no top-p / top-k:
    # 6 + 8 + 16 + 4 + 12 + 4 = 50 bytes. Greedy (temperature 0): 6 + 4 = 10.
    oss = SamplingParams.resolve({}, read_generation_config(GEN / "gpt-oss-120b.json"))
    assert oss == SamplingParams(temperature=1.0, top_p=1.0, top_k=0)
    assert sum(p.bytes_per_element for p in
               VllmSampler(params=oss, version="0.15.0").passes(64, 201_088)) == 50
    greedy = SamplingParams.resolve({}, read_generation_config(GEN / "greedy.json"))
    assert sum(p.bytes_per_element for p in
               VllmSampler(params=greedy, version="0.15.0").passes(64, 201_088)) == 10
    # A small step: each kernel at the 4 us floor (1 row, greedy: 2 kernels).
    assert _cost_s(greedy, 1, 201_088) == pytest.approx(8e-6)


def test_resolve_takes_the_request_then_the_file_then_the_server() -> None:
    qwen = read_generation_config(GEN / "qwen3-8b.json")
    assert SamplingParams.resolve({}, qwen) == QWEN3
    assert SamplingParams.resolve({"temperature": 0.0}, qwen).greedy
    llama = SamplingParams.resolve({}, read_generation_config(GEN / "llama-3.1-70b-instruct.json"))
    assert llama == SamplingParams(temperature=0.6, top_p=0.9, top_k=0)


def test_refusals() -> None:
    with pytest.raises(InputError, match="vLLM 0.15 only"):
        VllmSampler(params=QWEN3, version="0.11.0")
    with pytest.raises(InputError, match="torch.topk"):
        VllmSampler(params=SamplingParams(top_k=20), version="0.15.0")
    with pytest.raises(InputError, match="top_p"):
        SamplingParams(top_p=0.0)


def test_setup_charges_the_sampler_only_when_asked() -> None:
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine_version="0.15.0")
    plain, _ = setup(spec, inputs)
    sampled, notes = setup(spec, inputs, sampling=QWEN3)
    assert plain.sampler is None and sampled.sampler is not None
    assert any("sampler (--generation-config)" in n for n in notes)


def test_cli_generation_config(tmp_path: Path) -> None:
    # 8 requests decoding together: each decode step samples 8 rows of Llama-3.1-8B's 128,256
    # tokens with Qwen3's defaults (top-k 20, top-p 0.95; the full sort below 128 rows): E =
    # 1,026,048 elements, 0.34032 us per byte an element at 3.015e12 B/s, the 4 us floor up to
    # 11.75 bytes. Floored: the cast (6), temperature (8), the fills (8), the histogram (4), the
    # row-bit histogram (8), the top-k mask (5) and fill (9), cumsum (8), the top-p mask (5) and
    # fill (9), the clone (8), exponential_ (4), argmax (4): 13 x 4 = 52 us. Above it: 4
    # one-sweep passes and the postprocess (24: 8.168 us each, 40.84), the row-bit pass, the
    # top-p softmax, the scatter and the softmax (16: 5.445 each, 21.78), div_ (12: 4.084):
    # 66.70 us. 118.70 us a step: the TPOT grows by that.
    args = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "4096",
            "--concurrency", "8", "--num-requests", "8", "--input-len", "512",
            "--output-len", "64", "--engine-version", "0.15.0", "-f", "json"]
    plain = runner.invoke(app, args)
    sampled = runner.invoke(app, [*args, "--generation-config", str(GEN / "qwen3-8b.json")])
    assert plain.exit_code == 0 and sampled.exit_code == 0, sampled.output
    a, b = json.loads(plain.stdout), json.loads(sampled.stdout)
    assert b["tpot_ms"]["mean"] - a["tpot_ms"]["mean"] == pytest.approx(0.11870, abs=0.001)
    bad = tmp_path / "generation_config.json"
    bad.write_text('{"top_p": "high"}', encoding="utf-8")
    res = runner.invoke(app, [*args, "--generation-config", str(bad)])
    assert res.exit_code == 2
    assert "top_p: expected a number" in res.stderr and "Traceback" not in res.output
