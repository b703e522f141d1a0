"""The frozen prospective60 set (tests/data/sim_to_real/prospective60.json): every run names its
source and its own URL, a model config, a GPU preset, its engine's release and measured figures;
none is a run of an earlier set, and the rows it takes from pages earlier sets read are the
engines those sets left; the replay's requests are the run's mean lengths plus the chat
template's tokens, all at t = 0; the replay takes the launch line's context length and
trtllm-serve's --enable_chunked_prefill (the full replay is tests.benches.prospective60_runs)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from typer.testing import CliRunner

from kvplan import load_spec
from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.cli.app import app
from kvplan.engines.base import Engine
from kvplan.engines.vllm.alloc import vllm_batch_defaults
from kvplan.hardware.gpus import get_gpu
from tests.benches import (
    cost_bench,
    prospective31_runs,
    prospective52_runs,
    prospective53_runs,
    prospective53b_runs,
    prospective54_runs,
    prospective56_runs,
    prospective57_runs,
    prospective58_runs,
    prospective59_runs,
    prospective60_runs,
    prospective_runs,
)
from tests.benches.fitted_rows import FITTED, SHAPED_BY

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA, prospective54_runs.DATA,
           prospective56_runs.DATA, prospective57_runs.DATA, prospective58_runs.DATA,
           prospective59_runs.DATA)
LAB = ("https://github.com/gpustack/gpustack/blob/47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d/"
       "docs/performance-lab/")

_runs = functools.partial(prospective_runs.runs_by_id, prospective60_runs.DATA)


def _page(url: str) -> str:
    """A gpustack page's path under docs/performance-lab/ (any commit)."""
    return url.split("/docs/performance-lab/")[1]


def test_every_run_is_complete_and_new() -> None:
    doc = prospective_runs.load(prospective60_runs.DATA)
    # A100 80GB: Qwen3-32B under vLLM and TensorRT-LLM, gpt-oss-20b and -120b under vLLM at two
    # launch lines each (24 runs); H100 Qwen3-32B-FP8 under TensorRT-LLM and H200
    # DeepSeek-R1-0528 under SGLang (4 each); every case 32000/100, 4000/200, 2000/100, 128/4.
    assert len(doc["runs"]) == 32
    assert not prospective_runs.incomplete(doc)
    engines = {(run.get("engine", "vllm"), run.get(run.get("engine", "vllm"))) for run in
               doc["runs"]}
    assert engines == {("vllm", "0.11.0"), ("trtllm", "1.2.0rc1"), ("sglang", "0.5.3")}
    assert {run["gpu"] for run in doc["runs"]} == {"A100-80GB", "H100-80GB", "H200-141GB"}
    assert all(run["url"].startswith(LAB) and run["url"] == doc["sources"][run["source"]]["url"]
               for run in doc["runs"])
    assert {rid.rsplit(" ", 1)[1] for rid in _runs()} == set(prospective60_runs.CASES)
    old = [prospective_runs.load(data) for data in EARLIER]
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    # Two pages were read by earlier sets (prospective31: qwen3-32b/h100, prospective53:
    # deepseek-r1/h200), which replayed vLLM rows only; this set takes those pages' other
    # engines' rows (its A100 pages are new).
    lab = [(d, src) for d in old for src in d["sources"].values()
           if "github.com/gpustack/gpustack/" in src["url"]]
    assert {run.get("engine", "vllm") for d, src in lab for run in d["runs"]
            if d["sources"][run["source"]] is src} == {"vllm"}
    mine = {(_page(run["url"]), run.get("engine", "vllm")) for run in doc["runs"]}
    shared = {page for page, _ in mine} & {_page(src["url"]) for _, src in lab}
    assert shared == {"qwen3-32b/h100.md", "deepseek-r1/h200.md"}
    assert {(page, engine) for page, engine in mine if page in shared} == {
        ("qwen3-32b/h100.md", "trtllm"), ("deepseek-r1/h200.md", "sglang")}
    # One publisher (the section says the two were not met).
    assert {src["publisher"].split(" (")[0] for src in doc["sources"].values()} == {
        "gpustack performance lab"}
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 8


def test_requests_follow_the_run() -> None:
    # Qwen3-32B-FP8 on the H100, 4K case: 500 prompts, 1,997,942 input and 99,888 generated
    # tokens printed: 3,996 (1,997,942 / 500 = 3,995.9) and 200 (99,888 / 500 = 199.8) a
    # request, rounded, plus Qwen3's 8 chat-template tokens; all at t = 0 (rate inf).
    run = _runs()["gpustack Qwen3-32B-FP8 H100 TensorRT-LLM --enable_chunked_prefill random "
                  "4000/200"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 500
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(3996 + 8, 200, 0.0)}
    for run in _runs().values():
        w, m = run["workload"], run["measured"]
        assert w["num_prompts"] * 1000 >= 100_000 and w["request_rate"] is None
        assert w["input_len"] == round(m["total_input_tokens"] / w["num_prompts"])
        assert w["output_len"] == round(m["total_generated_tokens"] / w["num_prompts"])
        reqs = prospective_runs.requests(run)
        assert len(reqs) == w["num_prompts"] and {r.arrival_s for r in reqs} == {0.0}
        assert max(r.prompt_len + r.output_len for r in reqs) <= run["max_model_len"]


def test_the_first_evaluation_names_every_run() -> None:
    # The record typed in at the first evaluation covers exactly the frozen runs; the four it
    # records as refused are the Qwen3-32B vLLM A100 runs.
    rows = prospective60_runs.FIRST_ROWS
    assert {prospective60_runs.ID_PREFIX + key for key in rows} == set(_runs())
    assert {key for key, value in rows.items() if value is None} == {
        f"Qwen3-32B A100 vLLM random {case}" for case in prospective60_runs.CASES}


def test_every_run_is_in_one_group() -> None:
    for rid in _runs():
        result = prospective_runs.Result(run_id=rid, source="", measured={}, simulated={},
                                         served={}, preemptions=0, prefix_hit_rate=0.0)
        assert sum(prospective60_runs.in_group(result, g) for g in prospective60_runs.GROUPS) == 1
        assert prospective60_runs.engine_of(result) in prospective60_runs.ENGINES


def test_the_replay_takes_the_launch_line(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # trtllm-serve's --max_seq_len=40960 is the context, and run_one hands its
    # --enable_chunked_prefill to TensorRT-LLM's scheduler (llm_args' default is off: a
    # 32,008-token prompt would run whole in one step); a vLLM run passes no TensorRT-LLM options.
    seen = []

    def stop(spec, inputs, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(kwargs["trtllm"])
        raise KvplanError("stopped here")

    monkeypatch.setattr(prospective_runs, "setup", stop)
    trt = _runs()["gpustack Qwen3-32B A100 TensorRT-LLM --enable_chunked_prefill random "
                  "32000/100"]
    vllm = _runs()["gpustack gpt-oss-20b A100 vLLM random 128/4"]
    assert trt["max_model_len"] == 40_960 and trt["enable_chunked_prefill"] is True
    assert prospective_runs.run_one(trt).refused == "stopped here"
    assert prospective_runs.run_one(vllm).refused == "stopped here"
    assert seen == [
        prospective_runs.TrtllmOptionsSim(chunked_prefill=True), None]
    # And the simulator keeps it with the launch line's context.
    spec = load_spec(str(prospective_runs.REPO / trt["model"]))
    inputs = estimate_inputs(spec, context=trt["max_model_len"], gpu=trt["gpu"], tp=trt["tp"],
                             engine=Engine.trtllm, engine_version=trt["trtllm"])
    sim, _ = setup(spec, inputs, trtllm=prospective_runs.TrtllmOptionsSim(chunked_prefill=True))
    assert sim.trtllm is not None and sim.trtllm.chunked_prefill
    assert sim.scheduler.max_model_len == 40_960
    # The SGLang run sets no --context-length: the config's 163,840; --enable-dp-attention is
    # not passed on (SGLang turns it off at --dp 1, the data file's 'assumed').
    run = _runs()["gpustack DeepSeek-R1-0528 H200 TP8 SGLang --enable-dp-attention random "
                  "128/4"]
    assert run["max_model_len"] == 163_840 and not {"dp", "dp_attention"} & set(run)


def test_only_the_deepseek_rows_share_a_fitted_rows_configuration() -> None:
    # The cost bench's fitted rows (a record's fitted_on) by model config, GPU, TP and engine:
    # DeepSeek-V3 / R1 FP8 SGLang TP 8 on 8 x H200 (PREFILL_LAUNCH_FIT's prefill rows) is the
    # one this set meets, in the DeepSeek-R1-0528 SGLang rows (deepseek-v3.json stands in).
    fitted = {r for f in FITTED.values() for r in f.fitted_on}
    engines = {"SGLang": "sglang", "TensorRT-LLM": "trtllm", "vLLM": "vllm"}
    keys = {(c.model, get_gpu(c.gpu).name, c.layout.tp,
             next((v for k, v in engines.items() if k in c.label), None))
            for c in (*cost_bench.PREFILL_CASES, *cost_bench.all_cases()) if c.label in fitted}
    shared = {rid for rid, run in _runs().items()
              if (Path(run["model"]).stem, get_gpu(run["gpu"]).name, run["tp"],
                  run.get("engine", "vllm")) in keys}
    group = prospective60_runs.ID_PREFIX + prospective60_runs.SAME_CONFIGURATION + " "
    assert shared == {rid for rid in _runs() if rid.startswith(group)}
    assert len(shared) == 4


def test_the_gpt_oss_rows_are_recorded_as_shaping_four_rules() -> None:
    # Read after the first evaluation (issue 30, gptossa100): vLLM's Marlin MoE for MXFP4
    # experts (a52829a4), Triton unified attention for models with sinks on SM 8.x
    # (f8be70f3) and vLLM's first-chunk admission to 0.15.1 (a013bb35); gptoss61: that
    # attention's split-KV decode path in 0.11.0 (9a8d3183). SHAPED_BY names
    # exactly the sixteen runs of the section's SHAPED groups, and the section's held-out line
    # leaves them out.
    shaped = {rid for rid in _runs()
              if any(rid.startswith(f"{prospective60_runs.ID_PREFIX}{g} ")
                     for g in prospective60_runs.SHAPED)}
    assert len(shaped) == 16
    for commit in ("a52829a4", "f8be70f3", "a013bb35", "9a8d3183"):
        entry = next(e for e in SHAPED_BY if e.commit == commit)
        assert set(entry.rows) == shaped


def _pool(*extra: str, context: int = 40_960) -> dict:  # type: ignore[type-arg]
    """kvplan estimate for the refused rows' server: Qwen3-32B bf16, one A100 80GB, vLLM
    0.11.0, gpu_memory_utilization 0.9."""
    result = CliRunner().invoke(app, [
        "estimate", str(prospective_runs.REPO / "tests/data/configs/qwen3-32b.json"), "--gpu",
        "A100-80GB", "--engine", "vllm", "--engine-version", "0.11.0", "--mem-fraction", "0.9",
        "-c", str(context), "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_refused_vllm_rows_cannot_have_run_at_their_line() -> None:
    # a100pool61 (prospective60.json, the source's "refused_why"): vLLM 0.11.0 refuses to start
    # unless one max_model_len request fits (v1/core/kv_cache_utils.py:706): cdiv(40,960, 16) =
    # 2,560 blocks of 64 layers x 2 x 8 heads x 128 x 2 B x 16 tokens = 4 MiB, 10 GiB in all.
    # By hand, before any profile reserve: int(79.15 x 2^30) = 84,986,665,369 B; x 0.9 ->
    # 76,487,998,832; - 65,534,733,312 B of weights (32,762,123,264 params x 2 + the 10 MiB
    # rotary cache + 1 KiB of attention scales) = 10,953,265,520 B, 215,847,280 above 10 GiB.
    bare = _pool("--reserve-gib", "0")
    assert bare["blocks_per_request"] == 2_560 and bare["bytes_per_block"] == 4 << 20
    assert bare["weights_bytes"] == 65_534_733_312
    assert bare["kv_budget_bytes"] == 10_953_265_520
    slack = bare["kv_budget_bytes"] - 2_560 * (4 << 20)
    assert slack == 215_847_280
    # The profile's sampler warm-up holds min(max_num_seqs, max_num_batched_tokens) rows
    # (gpu_model_runner.py:2977): 256 for an A100's API server (engine/arg_utils.py:1605), of
    # 151,936 logits in bf16 and their fp32 copy (sampler.py:86): 6 B a logit, 233,373,696 B,
    # beyond the slack before the sort's or FlashInfer's tensors, the forward and non-torch.
    seqs, tokens = vllm_batch_defaults(bare["total_bytes"], is_a100=True, version="0.11.0")
    assert (seqs, tokens) == (256, 2_048) == (seqs, bare["max_num_batched_tokens"])
    vocab = load_spec(str(prospective_runs.REPO / "tests/data/configs/qwen3-32b.json")).vocab_size
    assert min(seqs, tokens) * vocab * 6 == 233_373_696 > slack
    # kvplan's pool: 10,953,265,520 - (377,487,360 forward + 1,109,443,215 sort sampler beyond
    # it + 139,586,437 non-torch) = 9,326,748,508 B // 4 MiB = 2,223 blocks < 2,560: refused,
    # as the first evaluation recorded; at the same page's section-1 line (32,768) a request
    # needs 2,048 blocks, which it holds.
    pool = _pool()
    assert pool["reserve_bytes"] == 1_626_517_012
    assert pool["kv_budget_bytes"] == 9_326_748_508 and pool["num_blocks"] == 2_223
    assert prospective60_runs.PAGE_CONTEXT == {"Qwen3-32B A100 vLLM": 32_768}
    assert _pool(context=32_768)["blocks_per_request"] == 2_048 <= 2_223
    why = prospective_runs.load(prospective60_runs.DATA)["sources"][
        "gpustack-qwen3-32b-a100"]["refused_why"]
    assert "`vllm serve Qwen/Qwen3-32B --max-model-len 32768`" in why and "line 85" in why


def test_the_refused_group_is_replayed_apart_at_the_page_context() -> None:
    # The section replays the four refused runs at PAGE_CONTEXT, in no median: each runs there
    # (2,048 blocks a request) and the frozen runs stay at 40,960. The runs carry FlashInfer's
    # sampler ('amended'): 256 x 151,936 x (34.64 - 14.37) B = 788,414,136 B less reserve,
    # 188 blocks of 4 MiB more than the test above's 2,223: 2,411, still short of 2,560.
    part = [prospective_runs.run_one(run) for rid, run in _runs().items()
            if rid.startswith("gpustack Qwen3-32B A100 vLLM ")]
    assert len(part) == 4 and all("2,560 blocks, the pool has 2,411" in r.refused for r in part)
    again = prospective60_runs.at_page_context(part)
    assert len(again) == 4 and not any(r.refused for _, r in again)
    assert {run["max_model_len"] for rid, run in _runs().items()
            if rid.startswith("gpustack Qwen3-32B A100 vLLM ")} == {40_960}


def test_the_vllm_runs_ran_flashinfers_sampler(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The lab's vLLM 0.11.0 runs ran gpustack's runner image, which installs FlashInfer (the
    # data file's 'amended'), so 0.11.0's profile ran FlashInfer's top-k/top-p warm-up: every
    # vLLM run says so, no other engine's run does, and run_one hands it to the plan.
    runs = _runs()
    assert {rid for rid, run in runs.items() if run.get("flashinfer_sampler")} == {
        rid for rid, run in runs.items() if run.get("engine", "vllm") == "vllm"}
    assert "01961f4" in prospective_runs.load(prospective60_runs.DATA)["amended"]
    seen = []

    def stop(spec, inputs, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(inputs.capacity.options.flashinfer_sampler)
        raise KvplanError("stopped here")

    monkeypatch.setattr(prospective_runs, "setup", stop)
    run = runs["gpustack gpt-oss-120b A100 vLLM random 32000/100"]
    assert prospective_runs.run_one(run).refused == "stopped here"
    assert prospective_runs.run_one({**run, "flashinfer_sampler": None}).refused == "stopped here"
    assert seen == [True, None]
    monkeypatch.undo()
    # The pool, by hand (gpt-oss-120b, one A100 80GB of 84,986,665,369 B at 0.9, weights
    # 70,790,147,264 B, profile forward 176,947,200 B, non-torch 0.13 GiB = 139,586,437 B):
    # the sampler warm-up holds 0.13 GiB + 256 rows x 201,088 logits x B, of which the forward
    # peak's 176,947,200 B is already counted. PyTorch's sort (B = 34.64): 1,922,802,647 -
    # 176,947,200 = 1,745,855,447; KV = 76,487,998,832 - 70,790,147,264 - 2,062,389,084 =
    # 3,635,462,484 B, // 32,768 B a page // 18 layers a group = 6,163 blocks. FlashInfer
    # (B = 14.37): 879,332,884 - 176,947,200 = 702,385,684; KV = 76,487,998,832 -
    # 70,790,147,264 - 1,018,919,321 = 4,678,932,247 B -> 142,789 pages // 18 = 7,932 blocks.
    # A request of 32,065 + 100 tokens holds cdiv(32,165, 16) = 2,011 full-attention blocks and
    # about 9 sliding ones once its window slides: 6,162 usable blocks hold three such
    # requests, 7,931 almost four (what the measured 32000/100 runs imply, 'amended').
    spec = load_spec(str(prospective_runs.REPO / run["model"]))
    blocks = {}
    for flag in (None, True):
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=1,
                                 engine=Engine.vllm, engine_version=run["vllm"],
                                 mem_fraction=run["gpu_memory_utilization"],
                                 flashinfer_sampler=flag)
        blocks[flag] = setup(spec, inputs)[0].plan.num_blocks
    assert blocks == {None: 6_163, True: 7_932}


def test_littles_law_counts_the_requests_decoding() -> None:
    # gpt-oss-120b 32000/100 on the A100: 9,988 tokens in 740.1 s is 13.495 tok/s; each took
    # 224.58 ms (mean TPOT), so 13.495 x 0.22458 = 3.031 requests decoded on average.
    from tests.benches.gptoss61_forensic import decoding_requests

    m = _runs()["gpustack gpt-oss-120b A100 vLLM random 32000/100"]["measured"]
    assert abs(decoding_requests(m) - 9_988 / 740.1 * 0.22458) < 1e-9
    assert round(decoding_requests(m), 2) == 3.03
