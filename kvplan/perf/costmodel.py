"""The cost model's prediction for one scheme on one layout (`predict`): decode time per output
token, prefill time, throughput per GPU and cost per million tokens, from the step time of
kvplan.perf.roofline with the efficiencies of kvplan.perf.efficiency.

MTP / speculative decoding: a step verifies `1 + draft_tokens` tokens per request and runs the
draft module `draft_tokens` times (one decoder layer and the lm_head each); with a per-token
acceptance rate a it emits 1 + a + a^2 + ... + a^k tokens per request (DeepSeek-V3 report,
sec. 5.4.3: 85-90 % acceptance of the second token, the default 0.85).

CUDA-graph padding (`CostInputs.graph_sizes`, given for vLLM's disaggregated roles: kvplan.analysis
.plan_search): a decode step of at most the largest captured size runs its dense ops at the next
captured size, its attention core and head at its own requests (kvplan.perf.graph_padding); the
draft module's steps are not padded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvplan._util.errors import InputError
from kvplan.engines.decode_graphs import NO_DECODE_GRAPHS, DecodeGraphs
from kvplan.hardware.gpus import GPU
from kvplan.kv.cache import check_token_sized
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import Efficiency, device_efficiency
from kvplan.perf.flops import MLAForm, decode_cost
from kvplan.perf.graph_padding import padded_step, padded_tokens
from kvplan.perf.layout import ONE_GPU, Layout
from kvplan.perf.roofline import step_time

DEFAULT_MTP_ACCEPTANCE = 0.85


@dataclass(frozen=True, kw_only=True)
class Prediction:
    """`compare` / `plan` predictions for one scheme. Field names are the JSON contract."""

    tpot_ms: float  # time per output token of one request (decode step / tokens per step)
    decode_step_ms: float  # one decode step for `batch` requests per rank
    ttft_ms: float  # prefill of one `context`-token prompt
    tokens_per_step: float  # per request (1 without speculative decoding)
    output_tokens_per_s_per_gpu: float
    gpus: int
    cost_per_million_tokens_usd: float | None
    decode_ms_by_op: dict[str, float]
    roofline_ms_per_step: float  # the old single max(FLOPs / peak, bytes / bandwidth), 100 %


@dataclass(frozen=True, kw_only=True)
class CostInputs:
    context: int
    batch: int = 1  # requests per attention rank (per GPU with --dp-attention)
    kv_dtype: str = "bf16"
    mla_form: MLAForm = MLAForm.absorbed
    layout: Layout = ONE_GPU
    efficiency: Efficiency | None = None  # None: the GPU's (`device_efficiency`)
    fp8_attention: bool = False
    draft_tokens: int = 0  # MTP / speculative tokens per step
    acceptance: float = DEFAULT_MTP_ACCEPTANCE
    gpu_hour_usd: float | None = None
    quantization: str | None = None
    # The recurrent state's dtypes as the engine keeps them (EngineRules.state_dtypes):
    # None / "auto" is vLLM's rule (the model dtype unless the config fixes the SSM dtype).
    conv_dtype: str | None = None
    ssm_dtype: str = "auto"
    # The CUDA-graph sizes the engine pads a decode step's tokens to (ascending;
    # kvplan.perf.graph_padding); () none: the step at its own tokens.
    graph_sizes: tuple[int, ...] = ()
    # The decode-phase forwards the engine replays from CUDA graphs it captured, unpadded, in
    # its own unit (EngineRules.decode_graphs; SGLang: up to --cuda-graph-max-bs requests, a
    # verify's 1 + draft_tokens each): such a step, and each draft pass, is step_time's
    # `captured` (its shared experts' second stream), as `kvplan simulate` steps it
    # (MixedStepCost.graphs); NO_DECODE_GRAPHS: none.
    graphs: DecodeGraphs = NO_DECODE_GRAPHS


_SUMMED_DRAFT_TOKENS = 1024  # draft tokens up to which tokens_per_step adds the terms


def tokens_per_step(draft_tokens: int, acceptance: float) -> float:
    """Expected tokens emitted per request per step: 1 + a + a^2 + ... + a^k.

    The geometric sum in closed form, (1 - a^(k+1)) / (1 - a) (k + 1 at a = 1), beyond
    _SUMMED_DRAFT_TOKENS: a loop over a user-sized k never returned for k = 2^40 (issue 32).
    Up to it the terms are added as before, so every figure printed so far stays the same to
    the last bit (the two forms differ in the last bits only)."""
    if not 0 <= acceptance <= 1:
        raise InputError(f"acceptance must be in [0, 1], got {acceptance}")
    if draft_tokens < 0:
        raise InputError(f"draft tokens must be >= 0, got {draft_tokens}")
    if draft_tokens <= _SUMMED_DRAFT_TOKENS:
        return sum(acceptance ** i for i in range(draft_tokens + 1))
    if acceptance == 1:
        return float(draft_tokens + 1)
    return (1.0 - acceptance ** (draft_tokens + 1)) / (1.0 - acceptance)



def naive_roofline_seconds(spec: ModelSpec, gpu: GPU, *, context: int, batch: int,
                           kv_dtype: str, mla_form: MLAForm, tp: int) -> float:
    """The former one-max-per-step roofline at 100 % of the peaks (kept as roofline_ms_per_step)."""
    cost = decode_cost(spec, context=context, batch=batch, kv_dtype=kv_dtype, mla_form=mla_form,
                       tp=tp, hbm_bytes_per_s=gpu.hbm_bytes_per_s,
                       peak_flops_per_s=gpu.peak_bf16_flops_per_s, search_crossover=False)
    assert cost.step_seconds is not None
    return cost.step_seconds


def _common(inputs: CostInputs, gpu: GPU) -> dict[str, Any]:
    """step_time's arguments `inputs` fixes (the layout, efficiency, dtypes)."""
    return {"kv_dtype": inputs.kv_dtype, "mla_form": inputs.mla_form, "layout": inputs.layout,
            "eff": inputs.efficiency if inputs.efficiency is not None else device_efficiency(gpu),
            "fp8_attention": inputs.fp8_attention, "quantization": inputs.quantization,
            "conv_dtype": inputs.conv_dtype, "ssm_dtype": inputs.ssm_dtype}


def prefill_seconds(spec: ModelSpec, gpu: GPU, inputs: CostInputs, *, tokens: int,
                    prompts: int) -> float:
    """One prefill step of `prompts` prompts of `inputs.context` tokens each, `tokens` tokens
    in all (a batch of whole prompts: prompts x context; a chunk: fewer), each attending
    within its own prompt: step_time's prefill form at that context, `tokens` rows through
    every layer, one logit row per prompt, the eager launch time (where the engine pays it)
    once per step."""
    return step_time(spec, gpu, tokens=tokens, context=inputs.context, requests=prompts,
                     phase="prefill", logits=prompts, **_common(inputs, gpu)).seconds


def predict(spec: ModelSpec, gpu: GPU, inputs: CostInputs) -> Prediction:
    """Decode (tpot) and prefill (ttft) time, throughput per GPU and cost per million output
    tokens, for one scheme on one layout. Pure: a `plan` command can call it as is."""
    check_token_sized(spec, "the time model")
    if inputs.draft_tokens < 0:
        raise InputError("draft tokens must be >= 0")
    layout = inputs.layout
    common = _common(inputs, gpu)
    q = inputs.batch * (1 + inputs.draft_tokens)
    # The engine's graph runners take a batch by its requests (SGLang: the target's verify graph
    # holds batch x (1 + draft_tokens) tokens; kvplan.engines.decode_graphs), no prefill chunk.
    captured = inputs.graphs.replays(inputs.batch)
    decode = step_time(spec, gpu, tokens=q, context=inputs.context, requests=inputs.batch,
                       logits=q, captured=captured, **common)
    by_op = {k: v * 1e3 for k, v in decode.by_op.items()}
    seconds = decode.seconds
    padded = padded_tokens(q, inputs.graph_sizes)
    if padded != q:  # replayed from the next captured graph (kvplan.perf.graph_padding)
        at = step_time(spec, gpu, tokens=padded, context=inputs.context,
                       requests=inputs.batch, logits=q, captured=captured, **common)
        seconds, by_s = padded_step(at.seconds, at.by_op, decode.by_op)
        by_op = {k: v * 1e3 for k, v in by_s.items()}
    if inputs.draft_tokens:
        # The draft module: one decoder layer (the last one's shape) and the lm_head, run once
        # per draft token on one token per request, from the engine's draft graphs where it
        # captures them (SGLang's eagle_draft_cuda_graph_runner: the same batch sizes).
        last = range(spec.num_hidden_layers - 1, spec.num_hidden_layers)
        draft = step_time(spec, gpu, tokens=inputs.batch, context=inputs.context,
                          requests=inputs.batch, layers=last, captured=captured, **common)
        seconds += inputs.draft_tokens * draft.seconds
        by_op["mtp_draft"] = inputs.draft_tokens * draft.seconds * 1e3
    per_step = tokens_per_step(inputs.draft_tokens, inputs.acceptance)
    prefill_s = prefill_seconds(spec, gpu, inputs, tokens=inputs.context, prompts=1)
    gpus = layout.world
    # Requests decoded at once by the `gpus` GPUs: `batch` per attention data-parallel rank.
    total_requests = inputs.batch * layout.dp_ranks
    per_gpu = total_requests * per_step / seconds / gpus
    cost = None
    if inputs.gpu_hour_usd is not None:
        cost = inputs.gpu_hour_usd / 3600 / per_gpu * 1e6
    roofline = naive_roofline_seconds(spec, gpu, context=inputs.context, batch=inputs.batch,
                                      kv_dtype=inputs.kv_dtype, mla_form=inputs.mla_form,
                                      tp=layout.attention_tp)
    return Prediction(
        tpot_ms=seconds / per_step * 1e3,
        decode_step_ms=seconds * 1e3,
        ttft_ms=prefill_s * 1e3,
        tokens_per_step=per_step,
        output_tokens_per_s_per_gpu=per_gpu,
        gpus=gpus,
        cost_per_million_tokens_usd=cost,
        decode_ms_by_op=by_op,
        roofline_ms_per_step=roofline * 1e3,
    )
