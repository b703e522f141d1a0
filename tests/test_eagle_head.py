"""The speculative drafter priced from its own config.json (`kvplan simulate
--spec-draft-config`; kvplan.sources.draft_config, kvplan.engines.vllm.eagle_head,
kvplan.perf.draft_head_cost): the real Llama-3.1-8B heads' GEMMs worked by hand."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError, SpecError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig, SimRequest
from kvplan.analysis.simulate.spec_acceptance import Acceptance
from kvplan.analysis.simulate.spec_sim import SpecDecodeSim, SpecSimulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.vllm.eagle_head import VllmEagleHead
from kvplan.engines.vllm.spec_decode import VllmSpecDecode
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.draft_head_cost import DraftHeadCost
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.sources.draft_config import load_draft_config
from kvplan.sources.resolve import load_model
from kvplan.weights.params import count_params

DRAFTS = Path(__file__).parent / "data" / "spec_drafts"
EAGLE3 = str(DRAFTS / "eagle3-llama3.1-instruct-8b.json")
EAGLE1 = str(DRAFTS / "eagle-llama3.1-instruct-8b.json")
runner = CliRunner()


def _head(method: str, path: str) -> VllmEagleHead:
    return VllmEagleHead.of(method, load_draft_config(path), load_model("llama-3.1-8b")[0])


def test_eagle3_head_shapes_by_hand() -> None:
    """yuhuili/EAGLE3-LLaMA3.1-Instruct-8B (hidden 4096, 32 / 8 heads of 128, MLP 14336, 1
    layer, draft_vocab_size 32000), vLLM llama_eagle3.py: fc 3 x 4096 = 12288 -> 4096 =
    50,331,648 weights, 100,663,296 FLOPs a token, once a step; qkv's embeds half 4096 x
    (32 + 2 x 8) x 128 = 4096 x 6144 = 25,165,824 weights, 50,331,648 FLOPs a token, every pass;
    the layer's own attention 4096 x 6144 + 4096 x 4096 = 41,943,040, MLP 3 x 4096 x 14336 =
    176,160,768; lm_head 32,000 x 4096 = 131,072,000 (the target's: 128,256 x 4096 =
    525,336,576)."""
    head = _head("eagle3", EAGLE3)
    assert (head.fc.k, head.fc.n, head.fc.params) == (12288, 4096, 50_331_648)
    assert head.fc.flops(1) == 100_663_296
    assert head.qkv_extra is not None
    assert (head.qkv_extra.k, head.qkv_extra.n, head.qkv_extra.params) == (4096, 6144,
                                                                            25_165_824)
    assert [g.name for g in head.extra_gemms(first=True)] == ["draft_fc", "draft_qkv_embeds"]
    assert [g.name for g in head.extra_gemms(first=False)] == ["draft_qkv_embeds"]
    assert head.lm_head_rows == 32_000
    counts = count_params(head.layers)
    assert (len(counts.layers), counts.layers[0].attention, counts.layers[0].mlp,
            counts.lm_head) == (1, 41_943_040, 176_160_768, 131_072_000)
    assert head.layers.weight_dtype == "bf16"  # the target's dtype, not the file's fp16


def test_eagle1_head_shapes_by_hand() -> None:
    """EAGLE-1 (llama_eagle.py): fc 2 x 4096 -> 4096 = 33,554,432 weights, 67,108,864 FLOPs a
    token, in every pass; no qkv change; the target's lm_head, 128,256 rows."""
    head = _head("eagle", EAGLE1)
    assert (head.fc.k, head.fc.params, head.fc.flops(3)) == (8192, 33_554_432, 201_326_592)
    assert head.qkv_extra is None
    assert head.extra_gemms(first=False) == head.extra_gemms(first=True) == (head.fc,)
    assert head.lm_head_rows == 128_256


def test_eagle3_defaults_read_from_the_config() -> None:
    """No draft_vocab_size: the config's vocab_size (0.32.0 llama_eagle3.py:314-316);
    target_hidden_size 2048 with num_aux_hidden_states 2: fc K = 4096."""
    cfg = load_draft_config(EAGLE3)
    fields = {**cfg.fields, "draft_vocab_size": None, "target_hidden_size": 2048,
              "num_aux_hidden_states": 2}
    head = VllmEagleHead.of("eagle3", replace(cfg, fields=fields),
                            load_model("llama-3.1-8b")[0])
    assert (head.lm_head_rows, head.fc.k) == (128_256, 4096)


def test_extra_gemm_seconds_by_hand() -> None:
    """H100 (3.35 TB/s x hbm 0.9 = 3.015e12 B/s; 989.5 TFLOPS x gemm 0.7; floor 4 us), bf16
    weights (2 B): every extra GEMM at 1-4 tokens is memory-bound. EAGLE-3 first pass over 4
    tokens: fc 100,663,296 B / 3.015e12 = 33.388 us (FLOPs 4 x 100,663,296 / 692.65e12 =
    0.58 us), qkv's embeds half 50,331,648 B / 3.015e12 = 16.694 us (no floor: the qkv GEMM's
    own kernel) -> 50.082 us; a later pass, 1 token: 16.694 us. EAGLE-1, any pass: 67,108,864 B
    / 3.015e12 = 22.258 us."""
    gpu = get_gpu("H100-80GB")
    eff = device_efficiency(gpu)
    assert (gpu.hbm_bytes_per_s, eff.hbm, eff.gemm_shape) == (3_350_000_000_000, 0.9, None)
    three = DraftHeadCost(_head("eagle3", EAGLE3), gpu, eff)
    assert three.seconds(4, first=True) == pytest.approx(50.082e-6, rel=1e-4)
    assert three.seconds(1, first=False) == pytest.approx(16.694e-6, rel=1e-4)
    one = DraftHeadCost(_head("eagle", EAGLE1), gpu, eff)
    assert one.seconds(4, first=True) == one.seconds(1, first=False) == pytest.approx(
        22.258e-6, rel=1e-4)


def test_step_adds_the_head_gemms() -> None:
    """One decode of Llama-3.1-8B, EAGLE-3 k 3 (4 tokens verified, 2 later passes of 1 row):
    the head's extras add 50.082 + 2 x 16.694 = 83.47 us to the step (test above)."""
    spec = load_model("llama-3.1-8b")[0]
    gpu = get_gpu("H100-80GB")
    cost = MixedStepCost(spec, gpu)
    sim = SpecDecodeSim.of(VllmSpecDecode(method="eagle3", num_speculative_tokens=3),
                           Acceptance.of(k=3, mean_accept_len=2.0), cost,
                           head=_head("eagle3", EAGLE3))
    pool = KVPool(400, (GroupRule(kind="full", block_size=16),), caching=False)
    cfg = SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512, max_model_len=4096)
    req = SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=84, output_len=8), 0.0, 1)
    req.num_computed, req.num_output = 88, 5
    with_head, without = (SpecSimulator(pool, cfg, cost, s).step_seconds([(req, 4)])
                          for s in (sim, replace(sim, head_cost=None)))
    assert with_head - without == pytest.approx(83.47e-6, rel=1e-4)


def test_eagle3_head_cheaper_than_the_target_shaped_layer() -> None:
    """EAGLE-3's 32,000-row lm_head (262 MB) against the target's 128,256 rows (1.05 GB): each
    later pass streams about 0.75 GB less, so a step with the head's own config is shorter;
    EAGLE-1's head is the target's shape plus its fc (67 MB a pass): longer."""
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", speculative_method="eagle3",
                             num_speculative_tokens=3)
    acc = Acceptance.of(k=3, mean_accept_len=2.5)
    default = setup(spec, inputs, acceptance=acc)[0].spec_decode
    own = setup(spec, inputs, acceptance=acc,
                draft_config=load_draft_config(EAGLE3))[0].spec_decode
    assert default is not None and own is not None
    assert own.draft_cost.head_seconds(1) < default.draft_cost.head_seconds(1) / 3
    e1 = estimate_inputs(spec, context=8192, gpu="H100-80GB", speculative_method="eagle",
                         num_speculative_tokens=3)
    d1 = setup(spec, e1, acceptance=acc)[0].spec_decode
    o1 = setup(spec, e1, acceptance=acc, draft_config=load_draft_config(EAGLE1))[0].spec_decode
    assert d1 is not None and o1 is not None and o1.head_cost is not None
    assert o1.draft_cost.head_seconds(1) == pytest.approx(d1.draft_cost.head_seconds(1))
    assert o1.head_cost.seconds(1, first=False) > 0


def test_cli_names_the_drafter_and_refuses_bad_input(tmp_path: Path) -> None:
    args = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--num-requests", "4",
            "--concurrency", "1", "--input-len", "84", "--output-len", "32",
            "--speculative-method", "eagle3", "--num-speculative-tokens", "3",
            "--spec-mean-accept-len", "2.5", "--format", "json"]
    default = runner.invoke(app, args)
    own = runner.invoke(app, [*args, "--spec-draft-config", EAGLE3])
    assert default.exit_code == 0 and own.exit_code == 0, own.output
    d, o = (json.loads(r.stdout)["spec_decode"]["drafter"] for r in (default, own))
    assert "target's last layer's shape" in d
    assert EAGLE3 in o and "lm_head 32,000 rows" in o
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
                               "hidden_size": 8, "num_hidden_layers": 1}))
    for extra, says in ((["--spec-draft-config", str(bad)], "architectures"),
                        (["--spec-draft-config", str(tmp_path / "none.json")], "none.json"),
                        (["--engine", "sglang", "--engine-version", "0.5.9",
                          "--speculative-eagle-topk", "1", "--spec-draft-config", EAGLE3],
                         "--engine vllm")):
        r = runner.invoke(app, [*args, *extra])
        assert r.exit_code == 2 and says in r.stderr, r.output
        assert "Traceback" not in r.output and len(r.stderr.strip().splitlines()) == 1


def test_refusals_in_the_library(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="eagle and eagle3"):
        _head("mtp", EAGLE3)
    no_width = tmp_path / "config.json"
    no_width.write_text(json.dumps({"architectures": ["LlamaForCausalLM"],
                                    "num_hidden_layers": 1}))
    with pytest.raises(SpecError, match="hidden_size"):
        load_draft_config(str(no_width))
    vocab = tmp_path / "v.json"
    vocab.write_text(json.dumps({**json.loads(Path(EAGLE3).read_text()),
                                 "draft_vocab_size": 0}))
    with pytest.raises(SpecError, match="draft_vocab_size"):
        load_draft_config(str(vocab))
