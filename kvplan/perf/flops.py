"""Cost model: matmul FLOPs, bytes moved and roofline time per decoded token.

Conventions (stated in every output):
- A multiply-add is 2 FLOPs; a matmul of [M, K] x [K, N] costs 2·M·K·N.
- Only matmuls are counted. Softmax, RoPE, norms, activation functions and the router's top-k
  are excluded (they are O(heads·L) or O(hidden) per token, well under 1% here).
- Per layer, per token. Decode at context L attends to L cached tokens; prefill counts one prompt
  token of a causal prompt of length L, which attends to (L + 1) / 2 tokens on average.

DeepSeek's sparse attention (kvplan.perf.attention_cost): the main attention over at most
index_topk keys, MLA absorbed in prefill too; the lightning indexer apart (`indexer_flops`).

MLA (DeepSeek-V2, arXiv 2405.04434 sec. 2.1) in three forms:
- naive: cache the latent c_kv; at every decode step up-project every cached latent with W_UK and
  W_UV to per-head K_nope and V, then attend (the up-projection grows with L);
- absorbed: fold W_UK into the query (q_nope·W_UK gives a query in latent space) and apply W_UV
  after attention, so decode attends directly over the latent (DeepSeek's and vLLM/SGLang's
  decode path);
- decompressed: up-project each new token once and cache per-head K and V (what a plain
  implementation does) -- the FLOPs of MHA with a much larger cache.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from kvplan._util.dtypes import get_dtype
from kvplan._util.search import first_true
from kvplan.kv.cache import (
    activation_dtype,
    attention_cache,
    attention_token_bytes,
    recurrent_state,
)
from kvplan.kv.kinds import RequestShape
from kvplan.model.attention import HeadAttention, LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.attention_cost import attention_cost
from kvplan.weights.params import count_params, recurrent_params


class MLAForm(str, Enum):
    naive = "naive"
    absorbed = "absorbed"
    decompressed = "decompressed"


@dataclass(frozen=True, kw_only=True)
class AttentionFlops:
    """Matmul FLOPs of one attention layer for one token."""

    q_proj: int  # query projection (MLA: through q_lora_rank when present)
    kv_proj: int  # K/V projections (MLA: down-projection to the latent + RoPE key; up-projection
    #               of the new token in the decompressed form)
    kv_up_proj: int  # MLA naive: up-projecting every cached latent (grows with L); else 0
    absorb: int  # MLA absorbed: q_nope·W_UK and the W_UV after attention; else 0
    scores: int  # q·K^T over the attended tokens
    values: int  # weights·V over the attended tokens
    o_proj: int
    # The part of q_proj + kv_proj that every tensor-parallel rank runs whole: MLA's
    # down-projections q_a_proj and kv_a_proj_with_mqa (`_mla_flops`); 0 for head attention.
    replicated: int = 0

    @property
    def projections(self) -> int:
        return self.q_proj + self.kv_proj + self.o_proj

    def projections_on_rank(self, tp: int) -> float:
        """The projections' FLOPs (q, kv, the absorbed form's two bmm, o) that one rank of a
        `tp`-way attention group runs for this token: the split ones' 1 / tp, the replicated
        ones (`replicated`) whole. Each engine builds MLA's q_a and kv_a without TP and q_b,
        kv_b column-split, o_proj row-split over the attention-TP group:
        vLLM 0.11.0 model_executor/models/deepseek_v2.py:878-884 (fused_qkv_a_proj,
        MergedColumnParallelLinear disable_tp=True), :886 kv_a_proj_with_mqa ReplicatedLinear
        (no q_lora_rank), :896 / :911 q_b_proj / kv_b_proj ColumnParallelLinear, :917 o_proj
        RowParallelLinear; 0.20.0 :808-821 DeepSeekV2FusedQkvAProjLinear (disable_tp=True),
        :905-945 the same; 0.32.0 :953-966, :1052-1065, :1083 / :1099 / :1106 the same.
        SGLang 0.5.3 srt/models/deepseek_v2.py:1041 fused_qkv_a_proj_with_mqa ReplicatedLinear,
        :1049 / :1096 q_b / kv_b ColumnParallelLinear, :1106 o_proj RowParallelLinear, each
        with tp_size=attn_tp_size; 0.5.6 :1217 / :1225 / :1244 / :1271 / :1281 and 0.5.10
        :1143 / :1151 / :1170 / :1221 / :1231 the same (under --enable-dp-attention the
        attention-TP group is tp / dp: `Layout.attention_tp`). TensorRT-LLM (1.1 / 1.2 line)
        _torch/modules/attention.py class MLA.__init__: kv_a_proj_with_mqa = Linear(hidden,
        q_lora_rank + kv_lora_rank + qk_rope_head_dim) with no mapping nor tensor_parallel_mode
        (replicated), q_b_proj / kv_b_proj TensorParallelMode.COLUMN, o_proj ROW, over
        tp_size set to 1 under enable_attention_dp. The weights already count so
        (kvplan.weights.checkpoint: q_a / kv_a whole on every rank)."""
        split = self.q_proj + self.kv_proj + self.absorb + self.o_proj - self.replicated
        return split / tp + self.replicated

    @property
    def attention(self) -> int:
        """Terms that grow with context (plus the absorbed form's per-token fix-ups)."""
        return self.kv_up_proj + self.absorb + self.scores + self.values

    @property
    def total(self) -> int:
        return self.projections + self.attention


def _head_flops(h: int, att: HeadAttention, keys: float) -> AttentionFlops:
    n_h, n_kv = att.num_attention_heads, att.num_key_value_heads
    d, dv = att.head_dim, att.v_head_dim
    return AttentionFlops(
        q_proj=2 * h * n_h * d,
        kv_proj=2 * h * n_kv * (d + dv),
        kv_up_proj=0,
        absorb=0,
        scores=round(2 * n_h * d * keys),
        values=round(2 * n_h * dv * keys),
        o_proj=2 * n_h * dv * h,
    )


def _mla_q_proj(h: int, att: LatentAttention) -> int:
    q_dim = att.num_attention_heads * att.q_head_dim
    if att.q_lora_rank:
        return 2 * h * att.q_lora_rank + 2 * att.q_lora_rank * q_dim
    return 2 * h * q_dim


def _mla_flops(h: int, att: LatentAttention, keys: float, form: MLAForm,
               *, up_tokens: float) -> AttentionFlops:
    """`keys`: tokens attended; `up_tokens`: cached latents up-projected in the naive form."""
    n_h, d_c, d_r = att.num_attention_heads, att.kv_lora_rank, att.qk_rope_head_dim
    d_n, d_v = att.qk_nope_head_dim, att.v_head_dim
    down = 2 * h * (d_c + d_r)  # kv_a_proj_with_mqa: latent + shared RoPE key
    up_one = 2 * d_c * n_h * (d_n + d_v)  # W_UK and W_UV for one token
    # Replicated on every TP rank (AttentionFlops.projections_on_rank): kv_a and q_a.
    q_a = 2 * h * att.q_lora_rank if att.q_lora_rank else 0
    common = {"q_proj": _mla_q_proj(h, att), "o_proj": 2 * n_h * d_v * h,
              "replicated": down + q_a}
    if form is MLAForm.absorbed:
        return AttentionFlops(
            kv_proj=down, kv_up_proj=0,
            absorb=2 * n_h * d_n * d_c + 2 * n_h * d_c * d_v,
            scores=round(2 * n_h * (d_c + d_r) * keys),
            values=round(2 * n_h * d_c * keys),
            **common,
        )
    scores = round(2 * n_h * (d_n + d_r) * keys)
    values = round(2 * n_h * d_v * keys)
    if form is MLAForm.naive:
        return AttentionFlops(kv_proj=down, kv_up_proj=round(up_one * up_tokens), absorb=0,
                              scores=scores, values=values, **common)
    return AttentionFlops(kv_proj=down + up_one, kv_up_proj=0, absorb=0,
                          scores=scores, values=values, **common)


def attention_flops(spec: ModelSpec, *, context: int, phase: str = "decode",
                    mla_form: MLAForm = MLAForm.absorbed) -> AttentionFlops:
    """One layer, one token. decode: attend to `context` cached tokens; prefill: one token of a
    causal prompt of length `context` (attends to (context + 1) / 2 tokens on average; the naive
    MLA form up-projects each prompt token once, as prefill kernels do). The keys are those the
    attention kind computes over (kvplan.perf.attention_cost: DeepSeek's sparse attention, at
    most index_topk); its indexer is not in here (`indexer_flops`)."""
    if phase not in ("decode", "prefill"):
        raise ValueError(phase)
    cost = attention_cost(spec)
    keys = cost.main_keys(context) if phase == "decode" else cost.prompt_mean_keys(context)
    att = spec.attention
    if isinstance(att, LatentAttention):
        up_tokens = context if phase == "decode" else 1
        return _mla_flops(spec.hidden_size, att, keys, mla_form, up_tokens=up_tokens)
    return _head_flops(spec.hidden_size, att, keys)


def prefill_form(spec: ModelSpec, mla_form: MLAForm) -> MLAForm:
    """The MLA form a prefill runs when decode runs `mla_form`: naive for absorbed
    (compute-bound; each prompt token up-projected once), unless the attention kind runs absorbed
    in prefill too (kvplan.perf.attention_cost: DeepSeek's sparse attention)."""
    if mla_form is MLAForm.absorbed and not attention_cost(spec).absorbed_prefill:
        return MLAForm.naive
    return mla_form


def indexer_flops(spec: ModelSpec, layer: int, *, context: int, phase: str = "decode") -> int:
    """Layer `layer`'s lightning indexer for one token (kvplan.perf.attention_cost): its
    replicated projections plus the FP8 logits over every key seen (decode: `context`; prefill:
    (context + 1) / 2 on average). 0 for an attention kind without one."""
    ind = attention_cost(spec).layer_indexer(layer)
    if ind is None:
        return 0
    keys = context if phase == "decode" else (context + 1) / 2
    return 2 * ind.proj_params + round(ind.pair_flops * keys)


def recurrent_flops_per_token(spec: ModelSpec) -> int:
    """One recurrent mixer, one token: its projections (2 per weight) plus the state update and
    read-out (`recurrent_state_flops_per_token`, the recurrent form)."""
    if spec.recurrent is None:
        return 0
    return 2 * recurrent_params(spec) + recurrent_state_flops_per_token(spec)


def recurrent_state_flops_per_token(spec: ModelSpec, phase: str = "decode") -> int:
    """One recurrent mixer's state work for one token, counted as the multiply-adds of a matmul
    (`RecurrentSpec.state_flops_per_token`, kvplan.model.recurrent: Mamba2 and Mamba1 the B x
    outer product and C.h, Gated DeltaNet and KDA S.k, the rank-1 update and S.q, short conv
    kernel x width). prefill: Gated DeltaNet runs the chunked (WY) form (fla chunk.py, chunks
    of kvplan.model.recurrent.GDN_CHUNK_TOKENS); the other kinds keep the recurrent count."""
    rec = spec.recurrent
    if rec is None:
        return 0
    return rec.state_flops_per_token(phase)


def attended_tokens(spec: ModelSpec, index: int, context: int) -> int:
    """Tokens layer `index` attends to at `context`: what its cache kind holds (kvplan.kv.kinds:
    its window or chunk, else the context), whether it owns that cache or shares another's."""
    return attention_cache(spec, index, token_bytes=0).tokens_held(context, RequestShape())


def mlp_flops_per_token(spec: ModelSpec) -> int:
    """Dense MLP / active experts over all layers, one token: 2 FLOPs per active parameter."""
    counts = count_params(spec)
    return sum(2 * (layer.mlp + layer.routed_active + layer.router) for layer in counts.layers)


def lm_head_flops_per_token(spec: ModelSpec) -> int:
    return 2 * spec.hidden_size * spec.vocab_size


def mla_cache_elements(att: LatentAttention, form: MLAForm) -> int:
    """Elements cached per token per layer by each MLA form."""
    if form is MLAForm.decompressed:
        return att.num_attention_heads * (att.qk_nope_head_dim + att.qk_rope_head_dim
                                          + att.v_head_dim)
    return att.kv_lora_rank + att.qk_rope_head_dim


@dataclass(frozen=True, kw_only=True)
class DecodeCost:
    """One decode step for a batch, on one GPU holding the whole model (tp = 1)."""

    context: int
    batch: int
    mla_form: str | None
    attention_flops_per_token: int  # all layers: projections + attention
    decode_flops_per_token: int  # attention + MLP + lm_head
    prefill_flops_per_token: int  # per prompt token of a causal prompt of `context` tokens
    kv_read_bytes_per_token: int  # KV cache read for one request's decode step
    weight_read_bytes_per_step: int  # weights read once per step, shared by the batch
    arithmetic_intensity: float  # FLOPs per byte moved, at this batch
    step_seconds: float | None  # roofline time of one step (None without a GPU)
    compute_bound_batch: int | None  # smallest batch at which the step turns compute-bound

    @property
    def bytes_per_step(self) -> int:
        return self.weight_read_bytes_per_step + self.batch * self.kv_read_bytes_per_token


def _weights_read_bytes(spec: ModelSpec, batch: int) -> int:
    """Weights one decode step reads. Dense weights once; for MoE the expected number of distinct
    routed experts a batch touches, n·(1 - (1 - k/n)^B) per layer (uniform routing)."""
    counts = count_params(spec)
    dtype = get_dtype(spec.weight_dtype)
    # The embedding lookup is a gather of `batch` rows (negligible); the lm_head matmul reads a
    # full vocab x hidden matrix, the embedding matrix itself when the two are tied.
    params = (counts.lm_head or counts.embedding) + counts.final_norm
    for layer in counts.layers:
        params += layer.attention + layer.mlp + layer.router + layer.norms
        if layer.routed_experts and spec.moe is not None:
            n, k = spec.moe.n_routed_experts, spec.moe.num_experts_per_tok
            touched = n * (1 - (1 - k / n) ** batch)
            params += round(layer.routed_experts * touched / n)
    return dtype.bytes_for(params)


def decode_cost(spec: ModelSpec, *, context: int, batch: int = 1, kv_dtype: str = "bf16",
                mla_form: MLAForm = MLAForm.absorbed, tp: int = 1,
                hbm_bytes_per_s: int | None = None,
                peak_flops_per_s: int | None = None, search_crossover: bool = True) -> DecodeCost:
    """Per GPU of a `tp`-way tensor-parallel group: FLOPs and weights split evenly (ideal) except
    MLA's q_a / kv_a down-projections, which every rank runs and reads whole (as each engine
    builds them: AttentionFlops.projections_on_rank); KV read per rank as the cache is laid out
    (MLA's latent is read whole by every rank). `search_crossover` False: compute_bound_batch left
    None, not searched (for a caller that reads only the step's time)."""
    # Attention layers only (hybrids: the recurrent layers are counted below), each over the
    # tokens it attends: its sliding window or local chunk, else the whole context.
    pre_form = prefill_form(spec, mla_form)
    owners = spec.kv_owner_flags
    att_total = att_prefill_total = replicated_params = 0
    for i in range(spec.num_hidden_layers):
        if not spec.has_attention(i):
            continue
        span = attended_tokens(spec, i, context)
        dec = attention_flops(spec, context=span, mla_form=mla_form)
        # Prefill uses the naive form for MLA (compute-bound; up-project each prompt token once).
        pre = attention_flops(spec, context=span, phase="prefill", mla_form=pre_form)
        # Layers that reuse an earlier layer's cache (cross-layer sharing) skip their K/V
        # projection. The indexer (DeepSeek's sparse attention) is replicated over TP ranks:
        # its FLOPs are counted tp times in the sum split below.
        # MLA's q_a / kv_a down-projections run whole on every rank (AttentionFlops.replicated,
        # read in each engine's MLA module: projections_on_rank): counted tp times as well, so
        # the sum's 1 / tp below leaves (split) / tp + replicated per rank.
        att_total += dec.total - (0 if owners[i] else dec.kv_proj) + tp * indexer_flops(
            spec, i, context=span) + (tp - 1) * dec.replicated
        att_prefill_total += pre.total - (0 if owners[i] else pre.kv_proj) + tp * indexer_flops(
            spec, i, context=span, phase="prefill") + (tp - 1) * pre.replicated
        replicated_params += dec.replicated // 2  # a linear layer: 2 FLOPs a weight a token
    recurrent = spec.num_recurrent_layers * recurrent_flops_per_token(spec)
    rest = mlp_flops_per_token(spec) + lm_head_flops_per_token(spec) + recurrent
    decode = (att_total + rest) // tp
    per_layer = attention_token_bytes(spec, kv_dtype, tp)
    if isinstance(spec.attention, LatentAttention) and mla_form is MLAForm.decompressed:
        elements = mla_cache_elements(spec.attention, mla_form)
        per_layer = get_dtype(kv_dtype).bytes_for(elements // tp)  # per-head cache shards
    # Every layer reads the cache it attends over, its own or (cross-layer sharing) an earlier
    # layer's: sharing saves capacity, not bandwidth. Sliding and chunked layers read their span;
    # a recurrent layer reads and writes its whole state once per token.
    # The attention kind's main keys (DeepSeek's sparse attention: at most index_topk) and its
    # indexer's keys, every one seen (kvplan.perf.attention_cost).
    cost = attention_cost(spec)
    kv_read = 0
    for i in range(spec.num_hidden_layers):
        if spec.has_attention(i):
            span = attended_tokens(spec, i, context)
            ind = cost.layer_indexer(i)
            kv_read += round(cost.main_keys(span)) * per_layer + (
                0 if ind is None else span * ind.key_bytes)
    if spec.recurrent is not None:
        state = recurrent_state(spec.recurrent, tp=tp, conv_dtype=activation_dtype(spec))
        kv_read += 2 * spec.num_recurrent_layers * state.state_bytes
    replicated_bytes = get_dtype(spec.weight_dtype).bytes_for(replicated_params)
    weights = _rank_weight_bytes(spec, batch, tp, replicated_bytes)
    moved = weights + batch * kv_read
    intensity = batch * decode / moved
    step = crossover = None
    if hbm_bytes_per_s and peak_flops_per_s:
        step = max(batch * decode / peak_flops_per_s, moved / hbm_bytes_per_s)
        if search_crossover:
            crossover = _compute_bound_batch(spec, decode, kv_read, hbm_bytes_per_s,
                                             peak_flops_per_s, tp=tp,
                                             replicated_bytes=replicated_bytes)
    return DecodeCost(
        context=context, batch=batch,
        mla_form=mla_form.value if isinstance(spec.attention, LatentAttention) else None,
        attention_flops_per_token=att_total // tp,
        decode_flops_per_token=decode,
        prefill_flops_per_token=(att_prefill_total + rest) // tp,
        kv_read_bytes_per_token=kv_read,
        weight_read_bytes_per_step=weights,
        arithmetic_intensity=intensity,
        step_seconds=step,
        compute_bound_batch=crossover,
    )


def _rank_weight_bytes(spec: ModelSpec, batch: int, tp: int, replicated_bytes: int) -> int:
    """Weights one rank of a `tp`-way group reads in a decode step: the split ones' 1 / tp and
    the `replicated_bytes` (MLA's q_a / kv_a, whole on every rank) whole."""
    return (_weights_read_bytes(spec, batch) - replicated_bytes) // tp + replicated_bytes


def _compute_bound_batch(spec: ModelSpec, flops_per_token: int, kv_read: int, bw: int,
                         peak: int, *, tp: int = 1, replicated_bytes: int = 0,
                         limit: int = 1 << 20) -> int | None:
    """Smallest batch B with B·F/peak >= (W(B) + B·KV)/bw; None when the step stays
    memory-bound (each request's KV read alone outweighs its FLOPs)."""
    if flops_per_token / peak <= kv_read / bw:
        return None

    def bound(b: int) -> bool:
        weights = _rank_weight_bytes(spec, b, tp, replicated_bytes)
        return b * flops_per_token / peak >= (weights + b * kv_read) / bw

    return first_true(bound, limit=limit)


def absorbed_crossover_context(spec: ModelSpec, limit: int = 1 << 20) -> int | None:
    """Smallest decode context at which the absorbed MLA form costs fewer FLOPs per token than the
    naive one (found by search, not assumed); None for non-MLA models or if never."""
    if not isinstance(spec.attention, LatentAttention):
        return None

    def cheaper(ctx: int) -> bool:
        a = attention_flops(spec, context=ctx, mla_form=MLAForm.absorbed).total
        n = attention_flops(spec, context=ctx, mla_form=MLAForm.naive).total
        return a < n

    # The naive form's extra cost grows linearly in the context, so this is monotone.
    return first_true(cheaper, limit=limit)


def with_attention(spec: ModelSpec, attention: HeadAttention | LatentAttention) -> ModelSpec:
    """The same model with its attention rewritten (for `kvplan compare`)."""
    return replace(spec, attention=attention)
