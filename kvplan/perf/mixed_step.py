"""The time of one engine step whose batch mixes prefill chunks and decodes (`MixedStepCost`),
for the serving simulator (kvplan.analysis.simulate).

vLLM V1 runs every scheduled request of a step in one forward pass: the chunks of prompts being
prefilled and the one-token decodes share each GEMM, and each attention layer is one varlen
kernel over all of them (vllm/v1/worker/gpu_model_runner.py `_prepare_inputs` builds one flat
batch of `total_num_scheduled_tokens`; the FlashAttention backend takes `cu_seqlens_q` for the
whole mix). The step's cost is therefore composed from kvplan.perf.roofline's per-operation
costs, nothing fitted here:

- every operation that does not look at the cache (projections, MLP / experts, collectives,
  norms, the per-layer overhead) costs what `roofline.step_time` charges for `tokens` tokens
  (the step's total), read from its `by_op` with the attention core taken out;
- the lm_head runs on one row per scheduled request (vLLM computes logits at each request's
  last scheduled token, a partial prefill's discarded): `step_time` with no decoder layer and
  `logits` rows, with the TP all-gather of those rows' logits (kvplan.perf.step_comm), or,
  with the lm_head split over the TP group under DP attention (SGLang), the gather of every
  DP rank's rows (step_comm `logits gather`: this rank's x the ranks, or their actual sum in
  a SUM_LEN step, `regathered_seconds`);
- each attention layer is one kernel of max(FLOPs / (peak x attention efficiency), bytes /
  (HBM x hbm efficiency), kernel floor), as `roofline._Step.op` charges it, over the whole mix:
  FLOPs = pairs x (q.K + p.V FLOPs per attended key, kvplan.perf.flops.attention_flops, of the
  decode form for decode tokens and of the prefill form for prompt tokens), bytes = the cache
  rows read (every attended key of a decode; a chunk's earlier tokens once) and written (the
  chunk's own). A layer's pairs follow its cache kind (kvplan.perf.flops.attended_tokens): a
  window of W tokens, a chunk of C, or the whole context. Where the engine declares its varlen
  kernel for the GPU (kvplan.perf.attention_kernel: vLLM's FlashAttention 2 on SM 8.x / 12.x;
  its Triton unified attention, 16-row tiles packing a KV head's query heads, for a model with
  attention sinks there),
  a decode token's FLOPs are its kernel's query tiles': 64 rows per query head when a prefill
  chunk shares the step, ceil(g / 64) x 64 rows per KV head in a decode-only step.

DeepSeek's sparse attention (kvplan.perf.attention_cost): a decode's main attention computes
over min(its keys, index_topk), a chunk's tokens over min(position + 1, index_topk) each (the
pairs of a window of index_topk), in the absorbed form, times the engine's sparse-kernel head
padding (index_topk a token, decode and chunk alike, where the kernel computes every index slot:
kvplan.perf.attention_kernel.sparse_slots; the rows read stay the keys seen); each layer with an
indexer adds its logits kernel (every pair of the whole context, at the FP8 peak) and its top-k
(`indexer_seconds`), as `roofline.step_time` charges them.

A step of up to the largest CUDA-graph capture size runs its GEMMs at the next captured size
(`graph_sizes`: vLLM pads the batch to the graph it replays; the padding rows attend nothing).
`graph_mixed` False: only a step without a prefill chunk is padded (TensorRT-LLM replays graphs
for generation-only batches alone: kvplan.engines.trtllm.engine `decode_graph_sizes`); a step
holding a chunk runs at its own tokens.

`eager_prefill`: the engine runs every step that holds a prefill chunk eagerly, each op
launched from Python (SGLang 0.5.6 / 0.5.9: model_executor/cuda_graph_runner.py:272 / 276
captures decode batches only; server_args.py:508 / 604 `enable_piecewise_cuda_graph = False`),
so such a step adds the launch time `roofline.step_time` charges a prefill step
(`prefill_launch`: kvplan.perf.op_counts.eager_prefill_ops x `eff.prefill_launch_s`, once per
step however many prompts it holds; from SGLang 0.5.10 a step it replays from piecewise CUDA
graphs launches only graph_prefill_ops, kvplan.perf.engine_traits.prefill_launch_ops; the
overlap scheduler hides no part of it in the simulator). The engine's efficiency says what it
pays (kvplan.perf.engine_traits.engine_efficiency: 0 for vLLM; TensorRT-LLM's ops counted from
its own code, kvplan.perf.trtllm_ops). Off by
default (callers outside the simulator's set-up, kvplan.analysis.simulate.run, build it without
the flag).

TensorRT-LLM's context-step kernels (kvplan.perf.trtllm_bytes, trtctx66; trtsim67): a step
holding a prefill chunk runs them as `roofline.step_time` charges a prefill step, the rule
written once there (`context_tokens`): its whole-batch kernels (norms, the linears' input
quantizations, SwiGLU, the CUTLASS MoE's kernels, the MoE output add) over all the step's
tokens, in place of the decode step's norm rows (kvplan.perf.norm_traffic), and MLA's context
path (kv_b_proj's input quantization, the k_nope copy, the qkv concat, the attention op's RoPE
and FP8 copies) over its prefill tokens alone (`context_only_seconds`): trtllm_bytes' docstring
reads MLA.forward_impl and thop/attentionOp.cpp's context pass for the split.

Not modelled: vLLM's async scheduling (the CPU's scheduling overlapped with the GPU step); the
other terms `roofline.step_time` takes by phase, a simulated step charging the decode phase's
for its prefill tokens: MLA's projections in the decode (absorbed) form; the decode-only extra
MLA kernels (attention_kernel.mla_decode_extra_kernels: charged in a step with a chunk too); a
prefill step's MLP collective (Efficiency.prefill_mlp_all_reduce) and all-to-all cost by phase
(kvplan.engines.moe_comm.MoeAllToAll.seconds); Gated DeltaNet's chunked-form state FLOPs; the
bytes of the KV-dtype kernel's q / k / v casts (their floors and launches are charged,
`_cast_s`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from kvplan._util.dtypes import GemmMath
from kvplan.engines.decode_graphs import NO_DECODE_GRAPHS, DecodeGraphs
from kvplan.hardware.gpus import GPU
from kvplan.kv.cache import attention_token_bytes
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.attention_cost import LOGIT_BYTES, attention_cost, causal_pairs
from kvplan.perf.attention_kernel import (
    decode_flop_factor,
    kv_dtype_kernel,
    sparse_head_factor,
    sparse_slots,
    varlen_kernel,
)
from kvplan.perf.context_only import ContextOnlyCost
from kvplan.perf.efficiency import Efficiency, device_efficiency
from kvplan.perf.engine_traits import (
    fuses_allreduce_norm,
    graph_prefill_applies,
    prefill_launch_ops,
)
from kvplan.perf.flops import MLAForm, attention_flops, prefill_form
from kvplan.perf.graph_padding import ATTENTION_CORE_OPS, padded_tokens
from kvplan.perf.layout import ONE_GPU, Layout
from kvplan.perf.roofline import step_time
from kvplan.perf.split_decode import SplitDecodeCost, decode_partials
from kvplan.perf.vllm_ungraphed import vllm_ungraphed_ops

# by_op entries of roofline.step_time that a mixed step charges itself (the attention core over
# the whole mix; the naive MLA up-projection, whose share is in the prefill form's FLOPs) or that
# depend on the number of requests rather than tokens (the lm_head, the recurrent state): the
# ops a CUDA-graph-padded step charges at its real requests (kvplan.perf.graph_padding).
_OWN_OPS = ATTENTION_CORE_OPS
# Steps of up to EXACT_TOKENS tokens are timed by roofline.step_time itself; larger ones
# interpolate between its values at multiples of GRID_TOKENS (`MixedStepCost.dense_seconds`).
EXACT_TOKENS = 512
GRID_TOKENS = 64
# `MixedStepCost.seconds` memoises steps of at most SMALL_STEP requests (their compositions
# recur: a request served alone steps through the same contexts as the one before it), keeping
# at most STEP_MEMO of them (cleared when full). Speed only: the numbers are the same.
SMALL_STEP = 8
STEP_MEMO = 1 << 16


@dataclass(frozen=True, kw_only=True)
class _LayerKind:
    """Attention layers of one span rule: how many, and their window or chunk."""

    layers: int
    window: int | None
    chunk: int | None


class MixedStepCost:
    """Seconds of one step on one rank of `layout` for a batch of decodes and prefill chunks.
    Memoises the token-count part (`step_time` per distinct token count)."""

    def __init__(self, spec: ModelSpec, gpu: GPU, *, kv_dtype: str = "bf16",
                 layout: Layout = ONE_GPU, eff: Efficiency | None = None,
                 quantization: str | None = None, conv_dtype: str | None = None,
                 ssm_dtype: str = "auto", mla_form: MLAForm = MLAForm.absorbed,
                 graph_sizes: tuple[int, ...] = (), eager_prefill: bool = False,
                 layers: range | None = None, head: bool = True,
                 graph_mixed: bool = True, graphs: DecodeGraphs = NO_DECODE_GRAPHS) -> None:
        self.spec, self.gpu, self.layout = spec, gpu, layout
        # The steps replayed from CUDA graphs the engine captured, in its unit (SGLang: up to
        # --cuda-graph-max-bs requests) though `graph_sizes` pads nothing: step_time's
        # `captured` (its shared experts' second stream); kvplan.engines.decode_graphs.
        self.graphs = graphs
        # A pipeline stage's share (kvplan.analysis.simulate.pipeline): only these decoder
        # layers (None: all), the lm_head only where `head` (the last stage).
        self.layers, self.head = layers, head
        span = layers if layers is not None else range(spec.num_hidden_layers)
        self.quantization = quantization
        self.eager_prefill = eager_prefill
        self._launch: dict[tuple[bool, bool], float] = {}
        self._spill: dict[int, float] = {}
        self.eff = eff if eff is not None else device_efficiency(gpu)
        self._common = {"kv_dtype": kv_dtype, "layout": layout, "eff": self.eff,
                        "quantization": quantization, "conv_dtype": conv_dtype,
                        "ssm_dtype": ssm_dtype, "mla_form": mla_form}
        att_tp = layout.attention_tp
        # Per attended key per query token, one layer on this rank (scores + values).
        # The attention kind (kvplan.perf.attention_cost: its keys, its prefill's MLA form, its
        # indexer) and the heads its sparse kernel computes (attention_kernel.sparse_head_factor).
        self.cost = attention_cost(spec)
        heads = sparse_head_factor(self.eff, spec, gpu, kv_dtype, att_tp)
        # A sparse kernel computing every index slot: index_topk keys' FLOPs a token.
        self.slots = sparse_slots(self.eff, spec, gpu, kv_dtype, att_tp)
        dec = attention_flops(spec, context=1, phase="decode", mla_form=mla_form)
        pre = attention_flops(spec, context=1, phase="prefill",
                              mla_form=prefill_form(spec, MLAForm.absorbed))
        self.decode_pair_flops = (dec.scores + dec.values) / att_tp * heads
        self.prefill_pair_flops = (pre.scores + pre.values) / att_tp * heads
        # Layers running an indexer (IndexCache's skipped ones do not), and its one.
        indexed = [i for i in span
                   if spec.has_attention(i) and self.cost.layer_indexer(i) is not None]
        self.indexer = self.cost.layer_indexer(indexed[0]) if indexed else None
        self.indexer_layers = len(indexed)
        self.kv_row_bytes = attention_token_bytes(spec, kv_dtype, att_tp)
        kinds: dict[tuple[int | None, int | None], int] = {}
        for i in span:
            if not spec.has_attention(i):
                continue
            window = spec.layer_windows[i] if spec.layer_windows else None
            chunk = None if window is not None else spec.chunk(i)
            kinds[(window, chunk)] = kinds.get((window, chunk), 0) + 1
        self.kinds = tuple(_LayerKind(layers=n, window=w, chunk=c)
                           for (w, c), n in kinds.items())
        # The decode FLOPs' factor of the engine's attention kernel per layer kind, in a step of
        # single-token queries and in a step with a prefill chunk (kvplan.perf.attention_kernel).
        kernel = varlen_kernel(self.eff, spec, gpu, kv_dtype)
        self._decode_factor = {
            (kind.window, single): decode_flop_factor(
                kernel, spec, att_tp, query_len=1, single_token_call=single,
                windowed=kind.window is not None)
            for kind in self.kinds for single in (True, False)}
        # Its split-KV path in a decode-only step, where it has one at this release
        # (kvplan.perf.split_decode: vLLM 0.11.0's Triton unified attention).
        self._split = SplitDecodeCost.of(kernel, spec, att_tp, self.eff.engine_version)
        # CUDA-graph capture sizes (ascending): a step of up to the largest runs its GEMMs padded
        # to the next size (vLLM: kvplan.engines.vllm.budget.vllm_cuda_graph_sizes); () none.
        self.graph_sizes = tuple(sorted(graph_sizes))
        self.graph_mixed = graph_mixed  # False: a step with a prefill chunk is not padded
        # A step of more tokens than the largest graph runs ungraphed: its kernels' host time
        # (opt-in `eff.ungraphed_launch_s`; kvplan.perf.vllm_ungraphed; None ops: not counted).
        self._ungraphed_s = 0.0
        if self.graph_sizes and self.eff.ungraphed_launch_s:
            ops = vllm_ungraphed_ops(spec, layout, quantization)
            self._ungraphed_s = (ops or 0) * self.eff.ungraphed_launch_s
            if layers is not None:  # a stage launches its layers' share (the count is per model)
                self._ungraphed_s *= len(layers) / max(1, spec.num_hidden_layers)
        self._padded: dict[int, int] = {
            t: padded_tokens(t, self.graph_sizes)
            for t in range(1, (self.graph_sizes[-1] if self.graph_sizes else 0) + 1)}
        self._dense: dict[tuple[int, int, bool, bool], float] = {}
        # TensorRT-LLM's context-only kernels (kvplan.perf.context_only; trtsim67).
        self.context_only = ContextOnlyCost(spec, gpu, self.eff, att_tp=att_tp,
                                            quantization=quantization, kv_dtype=kv_dtype,
                                            span=span)
        self._steps: dict[tuple[tuple[int, ...], tuple[tuple[int, int], ...]], float] = {}
        self._head: dict[int, float] = {}
        self._gathered: dict[tuple[int, bool, int], float] = {}
        self._head_gathered: dict[int, float] = {}
        self._per_request_state = spec.recurrent is not None
        peak = gpu.peak_bf16_flops_per_s
        self._flops_rate = peak * self.eff.attention
        self._fp8_rate = gpu.peak_flops(GemmMath.fp8) * self.eff.attention
        self._byte_rate = gpu.hbm_bytes_per_s * self.eff.hbm
        self._floor = self.eff.kernel_floor_s
        # Opt-in B200 kernel-table floor of a GQA prefill layer's attention, bf16 cache
        # (kvplan.perf.sm100_tables; roofline.step_time charges the same), by the step's chunk
        # tokens; None: none.
        tables = self.eff.sm100_tables
        self._ctx_floor = tables if tables is not None and kv_dtype == "bf16" and not (
            isinstance(spec.attention, LatentAttention)) else None
        # A prefill chunk's attention in the KV cache's dtype where the engine's kernel computes
        # so (kvplan.perf.attention_kernel.kv_dtype_kernel: SGLang's trtllm_mla prefill, vLLM's
        # FP8 query; on SM 10.x): its FLOPs at that rate, over the bf16 rate; and the casts of
        # q, k and v it launches first (SGLang's), a floor each (plus, eager, their launch) per
        # attention layer in every step with a chunk (the casts' bytes are not charged here:
        # roofline.step_time does).
        # The decodes' FLOPs likewise where the kernel computes a decode in it (vLLM's FP8
        # query on SM 10.x, kvplan.engines.vllm.fp8_query).
        ran = gpu.runs(GemmMath.fp8)  # roofline._Step.op's peak and fraction
        frac = self.eff.fp8_attention if ran is GemmMath.fp8 else None
        kv_scale = self._flops_rate / (gpu.peak_flops(ran) * (frac or self.eff.attention))
        self._decode_scale = kv_scale if kv_dtype_kernel(
            self.eff, spec, gpu, kv_dtype, "decode") is not None else 1.0
        in_kv = kv_dtype_kernel(self.eff, spec, gpu, kv_dtype, "prefill")
        self._prefill_scale = 1.0
        self._cast_s = 0.0
        if in_kv is not None:
            self._prefill_scale = kv_scale
            casts = len(in_kv.casts) * sum(map(spec.has_attention, span))
            summed = eager_prefill and self.eff.prefill_launch_model == "sum"
            self._cast_s = casts * (self._floor + (self.eff.prefill_launch_s
                                                   if summed else 0.0))

    def for_spec(self, spec: ModelSpec, *, eager_prefill: bool | None = None,
                 verify: bool = False) -> MixedStepCost:
        """The same engine, GPU, layout and settings stepping another model's shape (a
        speculative drafter's: kvplan.analysis.simulate.spec_sim); `eager_prefill` False: its
        multi-token steps replayed from CUDA graphs (SGLang's target-verify and draft-extend
        graphs: kvplan.analysis.simulate.sglang_spec_sim; None: as this one), `verify` True:
        captured as `graphs` says (DecodeGraphs.verifying: S + 1 tokens a request)."""
        c, graphs = self._common, self.graphs.verifying() if verify else self.graphs
        eager = self.eager_prefill if eager_prefill is None else eager_prefill
        return MixedStepCost(spec, self.gpu, kv_dtype=c["kv_dtype"], layout=self.layout,
                             eff=self.eff, quantization=self.quantization,
                             conv_dtype=c["conv_dtype"], ssm_dtype=c["ssm_dtype"],
                             mla_form=c["mla_form"], graph_sizes=self.graph_sizes,
                             eager_prefill=eager, graph_mixed=self.graph_mixed,
                             graphs=graphs)

    def for_stage(self, layers: range, *, head: bool) -> MixedStepCost:
        """The same engine stepping only `layers` (a pipeline stage's), the lm_head only
        where `head` (the last stage): kvplan.analysis.simulate.pipeline."""
        c = self._common
        return MixedStepCost(self.spec, self.gpu, kv_dtype=c["kv_dtype"], layout=self.layout,
                             eff=self.eff, quantization=self.quantization,
                             conv_dtype=c["conv_dtype"], ssm_dtype=c["ssm_dtype"],
                             mla_form=c["mla_form"], graph_sizes=self.graph_sizes,
                             eager_prefill=self.eager_prefill, layers=layers, head=head,
                             graph_mixed=self.graph_mixed, graphs=self.graphs)

    def _dense_exact(self, tokens: int, requests: int, captured: bool = False,
                     context: bool = False) -> float:
        """`step_time`'s dense part at `tokens`; `captured`: a decode-only step replayed from a
        CUDA graph; `context`: a step holding a context request, TensorRT-LLM's context-step
        kernels charged over every token but those MLA's context path runs on the prefill
        tokens alone (`context_only_seconds`, added by the caller)."""
        key = (tokens, requests, captured, context)
        hit = self._dense.get(key)
        if hit is None:
            st = step_time(self.spec, self.gpu, tokens=tokens, context=1,
                           requests=max(1, requests), logits=1, layers=self.layers,
                           captured=captured, context_tokens=tokens if context else 0,
                           **self._common)
            own = sum(st.by_op.get(name, 0.0) for name in _OWN_OPS)
            if self._per_request_state:
                own -= st.by_op.get("recurrent_state", 0.0)  # it depends on the requests: kept
            if context:
                own += self.context_only_seconds(tokens)
            hit = self._dense[key] = st.seconds - own
        return hit

    def context_only_seconds(self, tokens: int) -> float:
        """kvplan.perf.context_only: MLA's context-path kernels over `tokens` prefill tokens."""
        return self.context_only.seconds(tokens)

    def dense_seconds(self, tokens: int, requests: int, *, captured: bool = False,
                      context_tokens: int = 0, pad: bool = True) -> float:
        """Everything but the attention core for `tokens` tokens (padded to the next CUDA-graph
        size when graphs are captured) and `requests` logit rows. Up to EXACT_TOKENS tokens,
        `step_time` itself; beyond, linear between its values at multiples of GRID_TOKENS (a
        step that large is a chunked prefill, whose GEMMs are compute-bound and linear in the
        tokens: tests/test_simulate.py bounds the gap). `captured`: a decode-only step replayed
        from a CUDA graph (`graphs`). `context_tokens`: the step's prefill tokens, where
        the engine charges context-step kernels (TensorRT-LLM: module docstring): the step's
        whole-batch kernels at `tokens`, MLA's context path at these. `pad` False: at `tokens`
        as they are."""
        req = requests if self._per_request_state else 0
        if pad:
            tokens = self._padded.get(tokens, tokens)
        ctx = self.context_only.byte_rows is not None and context_tokens > 0
        if tokens <= EXACT_TOKENS:
            base = self._dense_exact(tokens, req, captured, ctx)
        else:
            lo = tokens // GRID_TOKENS * GRID_TOKENS
            low = self._dense_exact(lo, req, context=ctx)
            if lo == tokens:
                base = low
            else:
                high = self._dense_exact(lo + GRID_TOKENS, req, context=ctx)
                base = low + (high - low) * (tokens - lo) / GRID_TOKENS
        if ctx:
            base += self.context_only_seconds(context_tokens)
        return base + (self.head_seconds(requests) if self.head else 0.0)

    def launch_seconds(self, tokens: int) -> float:
        """The launch time of an eager prefill step of `tokens` tokens (module docstring): what
        `roofline.step_time` adds as `prefill_launch` (its op count depends on the tokens only
        through the fused all-reduce + RMSNorm and the piecewise graphs' token limit); 0 unless
        `eager_prefill`."""
        if not self.eager_prefill or not self.eff.prefill_launch_s:
            return 0.0
        if self.eff.prefill_launch_model != "sum":
            # Counterfactual (kvplan.perf.launch_model): the spill of one prompt of `tokens`.
            spill = self._spill.get(tokens)
            if spill is None:
                spill = self._spill[tokens] = step_time(
                    self.spec, self.gpu, tokens=tokens, context=tokens, requests=1,
                    phase="prefill", logits=1, **self._common).by_op["prefill_launch"]
            return spill
        fused = fuses_allreduce_norm(self.spec, self.gpu, self.layout, tokens, self.eff)
        key = (fused, graph_prefill_applies(self.eff, self.spec, self.gpu, self.layout, tokens))
        hit = self._launch.get(key)
        if hit is None:
            hit = self._launch[key] = prefill_launch_ops(
                self.spec, self.gpu, self.layout, tokens, self.eff, self.quantization,
                fused_norms=fused) * self.eff.prefill_launch_s
        return hit

    def ungraphed_seconds(self, tokens: int) -> float:
        """The host launch time of a step of `tokens` tokens above the largest CUDA graph
        (`eff.ungraphed_launch_s` per kernel of kvplan.perf.vllm_ungraphed.vllm_ungraphed_ops);
        0 at or below it, with no graphs, or with the price off."""
        if self.graph_sizes and tokens > self.graph_sizes[-1]:
            return self._ungraphed_s
        return 0.0

    def _moe_part(self, gathered: int, sum_len: bool, tokens: int) -> float:
        """`step_time` of `tokens` tokens on this rank with `gathered` tokens entering its MoE
        layers, its DP gathers in the `sum_len` mode (memoised): differences of it at the same
        `tokens` are the MoE part's (its other ops do not change)."""
        key = (gathered, sum_len, tokens)
        hit = self._gathered.get(key)
        if hit is None:
            hit = self._gathered[key] = step_time(
                self.spec, self.gpu, tokens=tokens, context=1, requests=1, logits=1,
                gathered=gathered, sum_len=sum_len, layers=self.layers,
                **self._common).seconds
        return hit

    def moe_seconds(self, gathered: int, *, sum_len: bool = False, tokens: int = 1) -> float:
        """The step time that depends on the tokens entering the MoE layers over the DP ranks
        (the routed experts, a dense MLP run on the gathered tokens, the DP gathers in the
        `sum_len` mode: the ops `roofline.step_time` prices at its `gathered` tokens), up to a
        constant at this rank's `tokens`: exact up to EXACT_TOKENS, linear between multiples
        of GRID_TOKENS beyond (as `dense_seconds`)."""
        if gathered <= EXACT_TOKENS:
            return self._moe_part(gathered, sum_len, tokens)
        lo = gathered // GRID_TOKENS * GRID_TOKENS
        low = self._moe_part(lo, sum_len, tokens)
        if lo == gathered:
            return low
        high = self._moe_part(lo + GRID_TOKENS, sum_len, tokens)
        return low + (high - low) * (gathered - lo) / GRID_TOKENS

    def regathered_seconds(self, tokens: int, gathered: int, *, requests: int | None = None,
                           rows: int | None = None) -> float:
        """What a step of `tokens` tokens and `requests` logit rows on this rank (`seconds`: its
        MoE layers priced at `tokens` x the layout's DP ranks in the MAX_LEN mode, its logits
        gather at `requests` x the ranks) gains when the ranks gather `gathered` tokens at
        SUM_LEN instead, and `rows` logit rows (an engine gathering the ranks' actual tokens,
        SGLang in a step where a rank extends: kvplan.analysis.simulate.dp_lockstep,
        kvplan.engines.sglang.dp_balance). The MAX_LEN mode's attention-TP share grows with
        this rank's tokens (kvplan.perf.step_comm), so with attention TP above 1 both modes are
        priced at them; without, at one token (the same difference)."""
        padded = self._padded.get(tokens, tokens)
        own = padded * self.layout.dp_ranks
        at = padded if self.layout.attention_tp > 1 else 1
        moved = (self.moe_seconds(gathered, sum_len=True, tokens=at)
                 - self.moe_seconds(own, sum_len=False, tokens=at))
        if rows is None or requests is None:
            return moved
        return moved + self.head_gathered_seconds(rows) - self.head_gathered_seconds(
            requests * self.layout.dp_ranks)

    def head_gathered_seconds(self, rows: int) -> float:
        """The lm_head and its DP logits gather over `rows` rows gathered from every DP rank
        (roofline.step_time `gathered_logits`; 0 where the lm_head is not split over the DP
        ranks' rows: no such ops)."""
        hit = self._head_gathered.get(rows)
        if hit is None:
            st = step_time(self.spec, self.gpu, tokens=1, context=1, requests=1, logits=1,
                           layers=range(0), gathered_logits=rows, **self._common)
            hit = self._head_gathered[rows] = (st.by_op.get("lm_head", 0.0)
                                               + st.by_op.get("logits_gather", 0.0))
        return hit

    def head_seconds(self, rows: int) -> float:
        """The lm_head over `rows` rows (no decoder layer), with the TP gather of their logits
        (kvplan.perf.step_comm, `TP logits gather`), or under DP attention with a split lm_head
        the gather of every DP rank's rows (`logits gather`: `rows` x the ranks, as many on
        each)."""
        hit = self._head.get(rows)
        if hit is None:
            st = step_time(self.spec, self.gpu, tokens=rows, context=1, requests=rows,
                           logits=rows, layers=range(0), **self._common)
            hit = self._head[rows] = (st.by_op.get("lm_head", 0.0)
                                      + st.by_op.get("tp_logits_gather", 0.0)
                                      + st.by_op.get("logits_gather", 0.0))
        return hit

    @property
    def full_attention_only(self) -> bool:
        """Every attention layer attends the whole context (no window, no chunk, no selection
        of keys)."""
        full = self.__dict__.get("_full_only")  # asked every step: computed once
        if full is None:
            full = self._full_only = not self.cost.selects_keys and all(
                k.window is None and k.chunk is None for k in self.kinds)
        return full

    def _layer_seconds(self, dec_pairs: int, pre_pairs: int, rows: int,
                       decode_factor: float = 1.0, partials: float = 0.0,
                       chunk_tokens: int = 0) -> float:
        """One attention layer's kernel over the mix (roofline._Step.op's charge), the decodes'
        FLOPs times the kernel's `decode_factor`; `partials`: the split-KV path's partial bytes
        (kvplan.perf.split_decode), written by the kernel and read back by its reduce kernel;
        `chunk_tokens`: the step's prefill tokens (the opt-in B200 floor, `_ctx_floor`)."""
        flops = (dec_pairs * self.decode_pair_flops * decode_factor * self._decode_scale
                 + pre_pairs * self.prefill_pair_flops * self._prefill_scale)
        floor = self._floor
        if self._ctx_floor is not None and chunk_tokens:
            floor = max(floor, self._ctx_floor.context_floor_s(chunk_tokens))
        core = max(flops / self._flops_rate,
                   (rows * self.kv_row_bytes + partials) / self._byte_rate, floor)
        if partials:
            core += max(partials / self._byte_rate, self._floor)
        return core

    def _split_partials(self, decodes: int, contexts: Iterable[int], chunks: bool) -> float:
        """The split-KV path's partial bytes a layer for a step of `decodes` decodes attending
        `contexts` keys (0: a step with a chunk, no split path, or too many programs)."""
        if chunks or not decodes:
            return 0.0
        return decode_partials(self._split, self._padded.get(decodes, decodes), contexts)

    def attention_seconds(self, decode_contexts: Iterable[int],
                          chunks: Iterable[tuple[int, int]]) -> float:
        """The attention cores of one step: decodes attending `decode_contexts` keys each (the
        cached tokens plus the new one) and prefill chunks (start, tokens)."""
        decodes = list(decode_contexts)
        parts = list(chunks)
        single = all(n <= 1 for _, n in parts)
        partials = self._split_partials(len(decodes), decodes, bool(parts))
        total = 0.0
        for kind in self.kinds:
            if kind.window is None and kind.chunk is None:
                dec_pairs = round(sum(self.cost.main_keys(c) for c in decodes))
                earlier = sum(s for s, _ in parts)
            elif kind.window is not None:
                w = kind.window
                dec_pairs = sum(c if c < w else w for c in decodes)
                earlier = sum(min(s, w) for s, _ in parts)
            else:
                ch = kind.chunk
                assert ch is not None
                dec_pairs = sum((c - 1) % ch + 1 for c in decodes)
                earlier = sum(s % ch for s, _ in parts)
            pre_pairs = sum(
                self.cost.chunk_pairs(s, n) if kind.window is None and kind.chunk is None
                else causal_pairs(s, n, kind.window, kind.chunk) for s, n in parts)
            # Rows read: every attended key of a decode; a chunk's earlier keys in its span,
            # once, and its own rows written.
            rows = dec_pairs + earlier + sum(n for _, n in parts)
            if self.slots is not None and kind.window is None and kind.chunk is None:
                # Every index slot computed (attention_kernel.sparse_slots): the FLOPs'
                # pairs are index_topk a token; the rows read stay the keys seen.
                dec_pairs = len(decodes) * self.slots
                pre_pairs = sum(n for _, n in parts) * self.slots
            factor = self._decode_factor[(kind.window, single)]
            total += kind.layers * self._layer_seconds(dec_pairs, pre_pairs, rows, factor,
                                                       partials, sum(n for _, n in parts))
        return total + self.indexer_seconds(decodes, parts)

    def indexer_seconds(self, decodes: list[int], chunks: list[tuple[int, int]]) -> float:
        """The lightning indexer's logits and top-k kernels in every layer that runs one
        (kvplan.perf.attention_cost; roofline._indexer_ops): every decode over all the keys it
        sees, each chunk causally over its prefix (its earlier keys gathered once, its own
        written), fp32 logits written and read back; 0 without an indexer."""
        ind = self.indexer
        if ind is None:
            return 0.0
        pairs = sum(decodes) + sum(causal_pairs(s, n) for s, n in chunks)
        keys = sum(decodes) + sum(s + n for s, n in chunks)
        logits = pairs * LOGIT_BYTES
        logit_s = max(pairs * ind.pair_flops / self._fp8_rate,
                      (keys * ind.key_bytes + logits) / self._byte_rate, self._floor)
        topk_s = max(logits / self._byte_rate, self._floor)
        return self.indexer_layers * (logit_s + topk_s)

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        """`seconds` for a model whose attention layers all see the whole context
        (`full_attention_only`), from the number of decodes and the keys they attend in all:
        the same number `seconds` gives for any decode contexts of that sum."""
        if not self.full_attention_only:
            raise ValueError("seconds_from_sums needs full attention in every layer")
        tokens = decodes + sum(n for _, n in chunks)
        if tokens == 0:
            return 0.0
        earlier = sum(s for s, _ in chunks)
        pre_pairs = sum(causal_pairs(s, n, None, None) for s, n in chunks)
        rows = decode_keys + earlier + sum(n for _, n in chunks)
        single = all(n <= 1 for _, n in chunks)
        # The split path's partials from the decodes' mean keys (their own are not known here).
        mean = itertools.repeat(decode_keys // decodes, decodes) if decodes else ()
        partials = self._split_partials(decodes, mean, bool(chunks))
        attention = 0.0
        for kind in self.kinds:
            factor = self._decode_factor[(kind.window, single)]
            attention += kind.layers * self._layer_seconds(decode_keys, pre_pairs, rows, factor,
                                                           partials, tokens - decodes)
        launch = self.launch_seconds(tokens) + self._cast_s if chunks else 0.0
        return (self.dense_seconds(tokens, decodes + len(chunks),
                                   captured=self.graphs.replays(decodes + len(chunks),
                                                                chunks=bool(chunks)),
                                   context_tokens=tokens - decodes,
                                   pad=self.graph_mixed or not chunks)
                + attention + launch + self.ungraphed_seconds(tokens))

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        """One step: `decode_contexts` (keys attended by each decode, its new token included)
        and prefill `chunks` ((start position, tokens) per prefilling request). A step of at
        most SMALL_STEP requests is memoised on its composition (a pure function of it: the
        same float as computing it again), at most STEP_MEMO of them at once."""
        if len(decode_contexts) + len(chunks) > SMALL_STEP:
            return self._seconds(decode_contexts, chunks)
        key = (tuple(decode_contexts), tuple(chunks))
        hit = self._steps.get(key)
        if hit is None:
            if len(self._steps) >= STEP_MEMO:
                self._steps.clear()
            hit = self._steps[key] = self._seconds(decode_contexts, chunks)
        return hit

    def _seconds(self, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        tokens = len(decode_contexts) + sum(n for _, n in chunks)
        if tokens == 0:
            return 0.0
        requests = len(decode_contexts) + len(chunks)
        launch = self.launch_seconds(tokens) + self._cast_s if chunks else 0.0
        return (self.dense_seconds(tokens, requests,
                                   captured=self.graphs.replays(requests, chunks=bool(chunks)),
                                   context_tokens=tokens - len(decode_contexts),
                                   pad=self.graph_mixed or not chunks)
                + self.attention_seconds(decode_contexts, chunks) + launch
                + self.ungraphed_seconds(tokens))
