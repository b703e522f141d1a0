"""A COUNTERFACTUAL replay of aiconfigurator's aggregated rows (issue 30) "with the generator's
flags": what aiconfigurator's generator (github.com/ai-dynamo/aiconfigurator at 095f58a5) writes
for an aggregated deployment of the row's batch size, in place of the engine defaults the frozen
evaluation (tests.benches.aiconfig_agg_runs) assumed. Written AFTER that evaluation (aggflags54),
from the generator's rule text alone, not from the rows: a second reading, never the set's
headline. Whether the measured runs used the generator's flags is not recorded (aiconfigurator's
silicon_sample.csv is "a 2026-04 dump of the internal benchmark DB",
docs/design/prediction_regression_gate_design.md:143-145; its rows name the engine's own image,
e.g. vllm/vllm-openai:v0.19.0, lmsysorg/sglang:v0.5.9-cu130, nvcr.io tensorrt-llm/release:
1.2.0rc6.post3, and a few Dynamo runtimes; the generator's benchmark client is aiperf,
generator/config/backend_templates/benchmark/bench_run.sh.j2:79). Read later (aggvllmttft55,
tests.benches.aiconfig_harness): most rows are InferenceX's runs, whose own scripts state their
flags; they did not run the generator's.

The generator's default rule plugin (generator/rule_plugin/<backend>.rule; the "benchmark"
plugin only when a user asks `rule: benchmark`, rendering/rule_engine.py:14-29,176-182) applied
to an aggregated worker whose SDK batch size is `bs` (module_bridge.py:153 `max_batch_size: bs`;
taken as the row's `batch_size` field, the batch aiconfigurator's estimate of the row is given,
tools/accuracy_tracking/run_silicon.py:50-51, every replayed row's equal to its concurrency),
ISL from the row; the templates it renders (generator/config/backend_templates/):

- vLLM (vllm.rule:4,20,21; cli_args.<version>.j2 writes --max-num-seqs, --max-num-batched-tokens,
  --max-model-len, no --gpu-memory-utilization and, in the default plugin, no capture sizes):
  max_num_seqs = 512 if bs < 512 else 2 bs; max_num_batched_tokens = max_num_seqs + ISL + 1,500
  (the rule reassigns agg max_batch_size at line 4 before line 20 reads it, rule_engine.py
  _apply_line/_eval read the scope's updated value); max_model_len ISL + OSL + 1,500 (the frozen
  bench's already). CUDA graph sizes: vLLM's own from those two (kvplan's vllm_cuda_graph_sizes).
- SGLang (sglang.rule:2,8,11,12; cli_args.0.5.9.j2 writes --max-running-requests,
  --max-prefill-tokens, --enable-mixed-chunk, --cuda-graph-bs, no --mem-fraction-static, no
  --chunked-prefill-size, no --context-length): max_running_requests as vLLM's max_num_seqs;
  max_prefill_tokens ISL + 1,500; --enable-mixed-chunk (NOT simulated: kvplan's SGLang scheduler
  runs no mixed chunks); --cuda-graph-bs the list below (kvplan's SGLang step cost pads no
  decode batch to a graph: not simulated).
- TensorRT-LLM (trtllm.rule:2,4,8,12,15,19; extra_engine_args.1.2.0rc6.post2.yaml.j2:17,21,22,
  28,33,41-47): max_batch_size bs; max_num_tokens (bs + ISL + 500) rounded up to
  tokens_per_block 32; kv_cache_config.free_gpu_memory_fraction 0.80 (the template's default:
  the SDK passes none unless asked; TensorRT-LLM's own is 0.9) and enable_block_reuse false;
  enable_chunked_prefill false and the overlap scheduler on (the defaults, as frozen);
  cuda_graph_config enable_padding true over the list below (a release without a template of
  its own renders the newest at or below it, rendering/engine.py:102-108: 1.2.0rc6.post3
  renders post2's).

Not changed (the rows do not say, or kvplan does not simulate it): the KV dtype (the generator
writes the SDK's kvcache quant mode, which the rows do not state), --max-model-len / max_seq_len
for SGLang and TensorRT-LLM (not written by their rules: the frozen ISL + OSL + 1,500 kept; the
rows' fixed lengths never reach it), speculative decoding (nextn 0 by default, cli/api.py:185).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace
from functools import cache

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate import run as sim_run
from kvplan.analysis.simulate.run import SimSetup, setup
from kvplan.engines.base import Engine
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.disagg_rows import BAND, Replay

# trtllm.rule:15 `tokens_per_block = 32` (max_num_tokens a multiple of it).
TOKENS_PER_BLOCK = 32
# extra_engine_args.1.2.0rc6.post2.yaml.j2:28 `free_gpu_memory_fraction | default(0.80)`.
TRTLLM_TEMPLATE_FRACTION = 0.80
MOVED = 4  # rows shown per backend, the most moved

# Read after the counterfactual's one run (aggflags54, over the 1,193 rows the frozen bench ran
# kvplan on; its frozen half reproduced the section's figures); no rule or constant changed.
FINDING = (
    "Read after the counterfactual's one run; no rule or constant changed. The generator's "
    "flags explain TensorRT-LLM's starved prompts and nothing else: its 69 replayed rows of "
    "8,192-token prompts go from a median TTFT ratio of 319 (none inside) to 0.49 (5 inside; "
    "TPOT inside 24 -> 44, median ratio 0.73 -> 1.23), max_num_tokens (batch + ISL + 500, "
    "rounded up to 32) taking a whole prompt and the running decodes in one step. Elsewhere "
    "they move kvplan away from the measurements: TensorRT-LLM's 99 rows of 1,024-token "
    "prompts (TTFT ratio 0.42 -> 0.30, inside 13 -> 0: one prompt a step instead of "
    "several), vLLM's 527 rows (TTFT inside 191 -> 168, ratio 0.69 -> 0.65; TPOT |err| 12.5 "
    "-> 12.4 %) and SGLang's 156 (TTFT inside 61 -> 32, ratio 1.05 -> 2.07: --max-prefill-"
    "tokens ISL + 1,500 admits two 1,024-token prompts a prefill step, not fifteen; its "
    "--enable-mixed-chunk is not simulated; the 50 rows of 8,192-token prompts do not move, "
    "2.84). TensorRT-LLM's 1.2.0rc6.post3 rows are not explained either: the generator "
    "renders the same flags for post2 and post3 (no post3 template; the same fields), and "
    "the TPOT ratio goes 1.75 -> 1.83 on the 52 post3 rows, 1.10 -> 1.15 on the 62 post2. No "
    "refusal moves (342 of 1,193 either way). So the rows do not look like runs of the "
    "generator's flags for vLLM and SGLang; TensorRT-LLM's long prompts need a max_num_tokens "
    "above the prompt, as the generator writes.")


@dataclass(frozen=True, kw_only=True)
class GeneratorFlags:
    """The generator's engine flags for one aggregated row (module docstring)."""

    backend: str
    batch_size: int  # the SDK's bs the flags are generated for (the row's batch_size)
    max_num_seqs: int  # vLLM --max-num-seqs, SGLang --max-running-requests, TRT-LLM max_batch_size
    max_num_batched_tokens: int | None  # vLLM --max-num-batched-tokens, TRT-LLM max_num_tokens
    max_prefill_tokens: int | None = None  # SGLang --max-prefill-tokens
    mem_fraction: float | None = None  # TRT-LLM free_gpu_memory_fraction (None: not written)
    block_reuse: bool | None = None  # TRT-LLM enable_block_reuse (None: not written)
    cuda_graph_batch_sizes: tuple[int, ...] = ()  # SGLang / TRT-LLM, padded (() not written)
    mixed_chunk: bool = False  # SGLang --enable-mixed-chunk (not simulated)


def cuda_graph_batch_sizes(bs: int) -> tuple[int, ...]:
    """sglang.rule:2 / trtllm.rule:2 `agg_decode cuda_graph_batch_sizes`: 1-16 by 1, 16-32 by 4,
    32-64 by 8, 64-128 by 16, 128-256 by 32, 256-512 by 64, and bs - 8 .. bs + 8 by 1 (from 1
    when bs <= 8); sorted, repeats once (the list's repeats capture one graph)."""
    steps = ((1, 16, 1), (16, 32, 4), (32, 64, 8), (64, 128, 16), (128, 256, 32), (256, 512, 64),
             (1 if bs <= 8 else bs - 8, bs + 8, 1))
    return tuple(sorted({n for lo, hi, step in steps for n in range(lo, hi + 1, step)}))


def _seats(bs: int) -> int:
    """vllm.rule:4 / sglang.rule:8 `agg_decode max_batch_size = (512 if (max_batch_size or 0)
    < 512 else (max_batch_size * 2))`."""
    return 512 if bs < 512 else 2 * bs


def generator_flags(row: dict[str, str]) -> GeneratorFlags:
    """The generator's flags for the row (module docstring), for the SDK batch size the row
    states (`batch_size`)."""
    backend, isl, bs = row["backend"], int(row["isl"]), int(row["batch_size"])
    if backend == "vllm":
        seats = _seats(bs)
        return GeneratorFlags(backend=backend, batch_size=bs, max_num_seqs=seats,
                              max_num_batched_tokens=seats + isl + 1500)
    if backend == "sglang":
        return GeneratorFlags(backend=backend, batch_size=bs, max_num_seqs=_seats(bs),
                              max_num_batched_tokens=None, max_prefill_tokens=isl + 1500,
                              cuda_graph_batch_sizes=cuda_graph_batch_sizes(bs),
                              mixed_chunk=True)
    if backend == "trtllm":
        batch = bs or 128  # trtllm.rule:8 `max_batch_size if max_batch_size else 128`
        tokens = -(-(batch + isl + 500) // TOKENS_PER_BLOCK) * TOKENS_PER_BLOCK
        return GeneratorFlags(backend=backend, batch_size=bs, max_num_seqs=batch,
                              max_num_batched_tokens=tokens,
                              mem_fraction=TRTLLM_TEMPLATE_FRACTION, block_reuse=False,
                              cuda_graph_batch_sizes=cuda_graph_batch_sizes(batch))
    raise ValueError(f"{backend}: no generator rule read")


def _setup(row: dict[str, str], flags: GeneratorFlags) -> SimSetup:
    config, kv_dtype, _ = agg.AGG_MODELS[(row["model_path"], row["precision"])]
    spec = agg._spec(config)
    tp, _, _, ep = agg.layout(row)
    isl, osl = int(row["isl"]), int(row["osl"])
    extra = {} if flags.block_reuse is None else {"prefix_caching": flags.block_reuse}
    inputs = estimate_inputs(spec, context=isl + osl + agg.CONTEXT_PAD, kv_dtype=kv_dtype,
                             engine=Engine(row["backend"]), gpu=agg.GPUS[row["system"]], tp=tp,
                             engine_version=agg.release(row), ep=ep,
                             max_num_batched_tokens=flags.max_num_batched_tokens,
                             max_num_seqs=flags.max_num_seqs, mem_fraction=flags.mem_fraction,
                             **extra)
    sim, _ = setup(inputs.spec, inputs)
    if flags.max_prefill_tokens is not None and sim.sglang is not None:
        sim = replace(sim, sglang=replace(sim.sglang, max_prefill_tokens=flags.max_prefill_tokens))
    if sim.trtllm is not None and flags.cuda_graph_batch_sizes:
        # enable_padding true: a step of up to the largest size runs at the next captured size.
        sim = replace(sim, cost=sim_run._step_cost(inputs.spec, inputs,
                                                   flags.cuda_graph_batch_sizes))
    return sim


def replay(row: dict[str, str]) -> Replay:
    """The row replayed as tests.benches.aiconfig_agg_runs.replay does, with the generator's
    flags; rows the frozen bench does not replay are not replayed here either (same why)."""
    return agg.replay_on(row, lambda: _setup(row, generator_flags(row)), "aggflags54")


@dataclass(frozen=True, kw_only=True)
class Counterfactual:
    replays: tuple[Replay, ...]  # in agg.rows() order, the rows the frozen bench ran kvplan on
    seconds: float


@cache
def counterfactual() -> Counterfactual:
    """The counterfactual for every row the frozen evaluation ran kvplan on (replayed, or
    refused by kvplan: the flags may move a refusal); the rows it counts out before kvplan (a
    checkpoint, GPU, release, layout or the CPU bound) are not re-run, no flag moves those."""
    start = time.perf_counter()
    # The rows of the cohorts replayed when it was run (aggflags54: aggmeas54, aggmore54), at a
    # release: the cohorts first replayed at stop 55 (trt10's TensorRT-LLM 1.0 / 1.1 lines,
    # moehybrid55's MoE TP x EP, aggdp55's attention DP, the nightly builds') came after it and
    # are not part of it.
    out = tuple(agg.replay_all(replay, (r for r in agg.rows()
                                        if not agg.why_not(r) and agg.release(r) is not None
                                        and agg.cohort_of(r) in (agg.COHORT,
                                                                 *agg.COHORTS.values()))))
    return Counterfactual(replays=out, seconds=time.perf_counter() - start)


def _inside(x: float) -> bool:
    return BAND[0] <= x <= BAND[1]


def compare_line(name: str, pairs: list[tuple[Replay, Replay]]) -> str:
    """One table line over the rows both replays ran: each cell frozen -> with the generator's
    flags (both inside, TTFT inside, TPOT inside, median |TTFT err|, |TPOT err|, median ratios)."""
    both = [(f.ratios, c.ratios) for f, c in pairs if f.ratios and c.ratios]
    if not both:
        return f"| {name} | 0 | - | - | - | - | - | - | - |"

    def stats(k: int) -> list[str]:
        a = [p[k][0] for p in both if p[k]]
        b = [p[k][1] for p in both if p[k]]
        return [str(sum(_inside(x) and _inside(y) for x, y in zip(a, b, strict=True))),
                str(sum(_inside(x) for x in a)), str(sum(_inside(y) for y in b)),
                f"{statistics.median(abs(x - 1) for x in a):.1%}",
                f"{statistics.median(abs(y - 1) for y in b):.1%}",
                f"{statistics.median(a):.2f}", f"{statistics.median(b):.2f}"]
    cells = [f"{x} -> {y}" for x, y in zip(stats(0), stats(1), strict=True)]
    return f"| {name} | {len(both):,} | " + " | ".join(cells) + " |"


def moved(pairs: list[tuple[Replay, Replay]], n: int = 8) -> list[tuple[Replay, Replay]]:
    """The `n` rows whose predicted TTFT or TPOT the flags move most (largest |log| of the
    counterfactual / frozen prediction), both replayed."""
    import math

    def shift(p: tuple[Replay, Replay]) -> float:
        f, c = p
        assert f.ttft_ms and c.ttft_ms and f.tpot_ms and c.tpot_ms
        return max(abs(math.log(c.ttft_ms / f.ttft_ms)), abs(math.log(c.tpot_ms / f.tpot_ms)))
    done = [p for p in pairs if p[0].ratios and p[1].ratios]
    return sorted(done, key=shift, reverse=True)[:n]


def print_section() -> None:
    """The counterfactual's lines, after the frozen section (aiconfig_agg_runs.print_section)."""
    frozen = {r.id: r for r in agg.bench().replays}
    cf = counterfactual()
    pairs = [(frozen[c.id], c) for c in cf.replays]
    print("\n### Counterfactual (read after the evaluation): the generator's flags\n")
    print("NOT the set's evaluation (the frozen replay above is): the rows the frozen bench "
          "ran kvplan on when it was run (cohorts aggmeas54 and aggmore54; the cohorts first "
          "replayed at stop 55 are not in it), replayed again with the engine flags "
          "aiconfigurator's generator writes for an aggregated worker of the row's batch size "
          "(095f58a5 generator/rule_plugin/<backend>.rule and its templates: vLLM "
          "--max-num-seqs 512 (2x the batch from 512) "
          "and --max-num-batched-tokens that + ISL + 1,500; SGLang --max-running-requests "
          "likewise and --max-prefill-tokens ISL + 1,500 (its --enable-mixed-chunk and "
          "--cuda-graph-bs not simulated); TensorRT-LLM max_batch_size the batch, max_num_tokens "
          "batch + ISL + 500 rounded up to 32, free_gpu_memory_fraction 0.80, block reuse off, "
          "padded CUDA graphs; tests/benches/aiconfig_agg_flags.py). Whether the measured runs "
          "used them is not recorded. Each cell: frozen (the page's replay above: since "
          "aggflags67 an InferenceX row's own script flags, not the engine defaults the "
          "FINDING below was read against) -> with the generator's flags, over the "
          "rows both replayed (its CPU time is not printed: the page must not depend on the "
          "machine).\n")
    print("| rows | both replayed | both inside | TTFT inside | TPOT inside | median TTFT err | "
          "median TPOT err | median TTFT ratio | median TPOT ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for backend in ("vllm", "sglang", "trtllm"):
        part = [p for p in pairs if agg.row_of(p[0])["backend"] == backend]
        print(compare_line(f"backend {backend}", part))
    moves = [(f, c) for f, c in pairs if f.replayed != c.replayed]
    print(f"\nkvplan refuses {sum(not c.replayed for c in cf.replays):,} of the "
          f"{len(cf.replays):,} rows with the generator's flags, "
          f"{sum(not f.replayed for f, _ in pairs):,} in the page's replay; "
          f"{len(moves):,} change"
          + "".join(f"; {f.id.removeprefix(agg.PREFIX)}: {f.why_not or 'replayed'} -> "
                    f"{c.why_not or 'replayed'}" for f, c in moves[:4]) + ".")
    print("\nThe rows the flags move most, per backend (TTFT / TPOT ms):\n")
    print("| row | layout and load | measured | frozen | generator's flags |")
    print("|---|---|---|---|---|")
    for f, c in [p for backend in ("vllm", "sglang", "trtllm")
                 for p in moved([q for q in pairs
                                 if agg.row_of(q[0])["backend"] == backend], MOVED)]:
        print(f"| {f.id.removeprefix(agg.PREFIX)} | {f.label} | {f.measured_ttft_ms:,.1f} / "
              f"{f.measured_tpot_ms:.2f} | {f.ttft_ms:,.1f} / {f.tpot_ms:.2f} | "
              f"{c.ttft_ms:,.1f} / {c.tpot_ms:.2f} |")
    print(f"\n{FINDING}")


if __name__ == "__main__":
    agg.print_section()
    print_section()
