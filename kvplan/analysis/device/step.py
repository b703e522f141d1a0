"""One decode step through the allocated pool: block tables, random contents, attention and state
updates per layer, with every temporary sized to a workspace.

The batch's blocks come from the one shared pool in random order (so the block table is not the
identity); each group takes ``pages_per_request`` blocks per request, as vLLM admits it.
Attention layers hold their tokens from a block-aligned base: full attention all of the context,
sliding layers the last ``window``, chunked layers the current chunk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import DeviceError
from kvplan.analysis.device.alloc import Held, Member, PoolPlan
from kvplan.analysis.device.decode import (
    MLAWeights,
    attend_heads,
    indexer_scores,
    mla_absorbed,
    mla_naive,
    state_step,
)
from kvplan.analysis.device.formats import Storage, dequant, random_values, read_packed_rows
from kvplan.analysis.device.probe import Device
from kvplan.kv.kinds import (
    ChunkedLocalCache,
    IndexerCache,
    MLACache,
    RecurrentState,
    SlidingWindowCache,
)
from kvplan.model.attention import HeadAttention, LatentAttention
from kvplan.model.spec import ModelSpec

if TYPE_CHECKING:
    import torch

MLA_CHECK_MAX_REQUESTS = 4
# Max relative error allowed between MLA's naive and absorbed forms, by compute dtype.
MLA_TOLERANCES = {"fp32": 1e-4, "bf16": 2e-2, "fp16": 5e-3}
# Share of the workspace one chunk's temporaries may take (the rest: BLAS scratch, the
# allocator's rounding, the online softmax's running sums).
CHUNK_SHARE = 4


@dataclass(frozen=True, kw_only=True)
class StepOutcome:
    batch: int
    context: int
    seconds: float | None
    finite: bool
    chunk_tokens: int = 0
    mla_error: float | None = None
    mla_naive_seconds: float | None = None
    mla_absorbed_seconds: float | None = None
    mla_requests: int | None = None
    mla_heads: int | None = None
    sparse_topk: int | None = None


def token_span(member: Member, context: int) -> tuple[int, int]:
    """(first position held, tokens held) of one request at `context` tokens."""
    cache = member.layout.cache
    if isinstance(cache, SlidingWindowCache):
        n = min(context, cache.window)
        return context - n, n
    if isinstance(cache, ChunkedLocalCache):
        start = (context - 1) // cache.chunk * cache.chunk
        return start, context - start
    return 0, context


def _token_axis_index(part_role: str, bids: torch.Tensor, offs: torch.Tensor) -> tuple[Any, ...]:
    # "kv" parts are [blocks, 2, block, ...]: K and V of a token are at [b, :, o].
    return (bids, slice(None), offs) if part_role in ("kv", "kv_scale") else (bids, offs)


class _Reader:
    """Reads and writes one member's tokens through a block table."""

    def __init__(self, held: Held, plan: PoolPlan, index: int, st: Storage, cd: Any) -> None:
        self.member = plan.members[index]
        self.views = {p.role: held.views[(index, p.role)] for p in self.member.layout.parts}
        self.parts = self.member.layout.parts
        self.block = self.member.layout.block
        self.st, self.cd = st, cd

    def slots(self, table_row: torch.Tensor, base: int, positions: torch.Tensor
              ) -> tuple[torch.Tensor, torch.Tensor]:
        local = positions - base
        return table_row[local // self.block], local % self.block

    def write(self, bids: torch.Tensor, offs: torch.Tensor, gen: Any, device: str) -> None:
        t = bids.numel()
        for part in self.parts:
            shape = part.shape
            rest = (shape[0], *shape[2:]) if part.role in ("kv", "kv_scale") else shape[1:]
            values = random_values((t, *rest), part, self.st, gen=gen, device=device)
            self.views[part.role][_token_axis_index(part.role, bids, offs)] = values

    def read(self, bids: torch.Tensor, offs: torch.Tensor) -> dict[str, torch.Tensor]:
        v = {role: view[_token_axis_index(role, bids, offs)] for role, view in self.views.items()}
        cd, st = self.cd, self.st
        if "kv" in v:
            s = v.get("kv_scale")
            return {"k": dequant(v["kv"][:, 0], None if s is None else s[:, 0], st, cd),
                    "v": dequant(v["kv"][:, 1], None if s is None else s[:, 1], st, cd)}
        if "k" in v:
            return {"k": dequant(v["k"], v.get("k_scale"), st, cd),
                    "v": dequant(v["v"], v.get("v_scale"), st, cd)}
        if "latent" in v:
            return {"latent": dequant(v["latent"], v.get("latent_scale"), st, cd)}
        if "ds_mla" in v:
            return {"latent": read_packed_rows(v["ds_mla"], "ds_mla", cd)}
        if "indexer" in v:
            return {"keys": read_packed_rows(v["indexer"], "indexer", cd)}
        raise DeviceError(f"internal: nothing to read in {sorted(v)}")


def _per_token_temp_bytes(member: Member, q_heads: int, naive_width: int) -> int:
    """Bytes of temporaries one token of a chunk costs: the gathered raw bytes, two fp32 copies
    of its values (dequantised, cast) and the scores, with MLA's naive form its per-head K and V."""
    raw = sum(p.nbytes for p in member.layout.parts) // max(1, member.layout.block)
    return raw + 3 * 4 * raw + 4 * 4 * q_heads + 3 * 4 * naive_width


def decode_step(held: Held, plan: PoolPlan, *, spec: ModelSpec, st: Storage, tp: int,
                device: Device, batch: int, context: int, workspace: int, gen: Any
                ) -> StepOutcome:
    import torch

    dev = device.torch_device
    cd, cd_name = device.compute_dtype(st.kv_dtype)
    att = spec.attention
    q_heads = max(1, att.num_attention_heads // tp)
    if isinstance(att, HeadAttention):
        kv_heads = att.kv_heads_per_rank(tp)
        q_heads = kv_heads * max(1, q_heads // kv_heads)
    mla_heads = q_heads
    if isinstance(att, LatentAttention):
        # The up-projections are model weights, not cache: keep them to a quarter of the
        # workspace by attending with fewer heads when the model has many.
        per_head = att.kv_lora_rank * (att.qk_nope_head_dim + att.v_head_dim) * 4
        mla_heads = max(1, min(q_heads, workspace // CHUNK_SHARE // per_head))
    naive_width = (mla_heads * (att.qk_nope_head_dim + att.v_head_dim)
                   if isinstance(att, LatentAttention) else 0)

    # Block tables: each group's batch x pages_per_request blocks, from one shuffled pool.
    perm = torch.randperm(held.num_blocks, generator=gen, device=dev)
    tables, used = [], 0
    for g in plan.groups:
        n = batch * g.pages_per_request
        tables.append(perm[used:used + n].view(batch, g.pages_per_request))
        used += n
    if used > held.num_blocks:
        raise DeviceError(f"internal: the decode batch needs {used} blocks, the pool has "
                          f"{held.num_blocks}")
    readers = [_Reader(held, plan, i, st, cd) for i in range(len(plan.members))]
    chunk_of: dict[int, int] = {}
    for i, r in enumerate(readers):
        per_token = _per_token_temp_bytes(r.member, q_heads, naive_width)
        chunk_of[i] = max(1, workspace // CHUNK_SHARE // per_token)

    def spans(i: int) -> tuple[int, int, int]:
        start, n = token_span(readers[i].member, context)
        base = start - start % readers[i].block
        pages = plan.groups[readers[i].member.group].pages_per_request
        if start - base + n > pages * readers[i].block:
            raise DeviceError(f"internal: {n} tokens from {start} do not fit in {pages} pages")
        return start, n, base

    def chunks(i: int, request: int, positions: torch.Tensor):
        r = readers[i]
        _, _, base = spans(i)
        row = tables[r.member.group][request]
        step = chunk_of[i]
        for s in range(0, positions.numel(), step):
            bids, offs = r.slots(row, base, positions[s:s + step])
            yield r.read(bids, offs)

    # Random contents for the batch's tokens and states.
    for i, r in enumerate(readers):
        if isinstance(r.member.layout.cache, RecurrentState):
            for request in range(batch):
                for page in tables[r.member.group][request]:
                    for part in r.parts:
                        r.views[part.role][int(page)] = random_values(
                            part.shape, part, st, gen=gen, device=dev)
            continue
        start, n, base = spans(i)
        row_step = chunk_of[i]
        for request in range(batch):
            row = tables[r.member.group][request]
            for s in range(start, start + n, row_step):
                pos = torch.arange(s, min(s + row_step, start + n), device=dev)
                bids, offs = r.slots(row, base, pos)
                r.write(bids, offs, gen, dev)

    indexer_of = {m.layer: i for i, m in enumerate(plan.members)
                  if isinstance(m.layout.cache, IndexerCache)}
    w = None
    if isinstance(att, LatentAttention):
        dn, dr = att.qk_nope_head_dim, att.qk_rope_head_dim
        # Scaled in place: the weights are the quarter of the workspace counted above, with no
        # second fp32 copy of either while it is made.
        w = MLAWeights(
            w_uk=torch.randn(mla_heads, att.kv_lora_rank, dn, generator=gen, device=dev)
            .mul_(att.kv_lora_rank ** -0.5).to(cd),
            w_uv=torch.randn(mla_heads, att.kv_lora_rank, att.v_head_dim, generator=gen,
                             device=dev).mul_(att.kv_lora_rank ** -0.5).to(cd),
            rank=att.kv_lora_rank, rope=dr)
    topk = spec.indexer.index_topk if spec.indexer is not None else None

    def layer(i: int, request: int) -> bool:
        r = readers[i]
        cache = r.member.layout.cache
        if isinstance(cache, IndexerCache):
            return True  # read by its layer's MLA step
        if isinstance(cache, RecurrentState):
            row = tables[r.member.group][request]
            state = {p.role: r.views[p.role][int(row[0])] for p in r.parts}
            new, ok = state_step(state, gen=gen, cd=cd)
            for page in row:  # running page, then mode align's / speculative copies
                for role, t in new.items():
                    r.views[role][int(page)] = t
            return ok
        start, n, _ = spans(i)
        positions = torch.arange(start, start + n, device=dev)
        if isinstance(cache, MLACache):
            assert w is not None and isinstance(att, LatentAttention)
            q_nope = torch.randn(mla_heads, att.qk_nope_head_dim, generator=gen,
                                 device=dev).to(cd)
            q_rope = torch.randn(mla_heads, att.qk_rope_head_dim, generator=gen,
                                 device=dev).to(cd)
            j = indexer_of.get(r.member.layer)
            if j is not None and topk is not None and spec.indexer is not None:
                hi = spec.indexer.index_n_heads
                qi = torch.randn(hi, spec.indexer.index_head_dim, generator=gen,
                                 device=dev).to(cd)
                wi = torch.rand(hi, generator=gen, device=dev).to(cd)
                scores = indexer_scores(qi, wi, (c["keys"] for c in chunks(j, request,
                                                                            positions)))
                keep = min(topk, n)
                positions = positions[torch.topk(scores, keep).indices.sort().values]
            out = mla_absorbed(q_nope, q_rope, (c["latent"] for c in chunks(
                i, request, positions)), w)
        else:
            q = torch.randn(q_heads, spec.attention.head_dim, generator=gen, device=dev).to(cd)
            out = attend_heads(q, ((c["k"], c["v"]) for c in chunks(i, request, positions)))
        return bool(torch.isfinite(out).all())

    def step() -> bool:
        finite = True
        for i in range(len(readers)):
            for request in range(batch):
                finite &= layer(i, request)
        return finite

    if device.is_cuda:
        step()  # warm-up: kernels, allocator
    device.sync()
    started = time.perf_counter()
    finite = step()
    device.sync()
    seconds = time.perf_counter() - started
    attention_chunks = [c for i, c in chunk_of.items()
                        if not isinstance(readers[i].member.layout.cache, RecurrentState)]
    outcome: dict[str, Any] = {"batch": batch, "context": context, "seconds": seconds,
                               "finite": finite, "chunk_tokens": min(attention_chunks, default=0),
                               "sparse_topk": topk}
    first_mla = next((i for i, m in enumerate(plan.members)
                      if isinstance(m.layout.cache, MLACache)), None)
    if first_mla is None or w is None or not isinstance(att, LatentAttention):
        return StepOutcome(**outcome)

    # MLA: naive vs absorbed on the first MLA layer for a few requests (dense, every token).
    m = min(batch, MLA_CHECK_MAX_REQUESTS)
    start, n, _ = spans(first_mla)
    positions = torch.arange(start, start + n, device=dev)
    err, naive_s, absorbed_s = 0.0, 0.0, 0.0
    for request in range(m):
        q_nope = torch.randn(mla_heads, att.qk_nope_head_dim, generator=gen, device=dev).to(cd)
        q_rope = torch.randn(mla_heads, att.qk_rope_head_dim, generator=gen, device=dev).to(cd)
        device.sync()
        t0 = time.perf_counter()
        absorbed = mla_absorbed(q_nope, q_rope, (c["latent"] for c in chunks(
            first_mla, request, positions)), w).float()
        device.sync()
        t1 = time.perf_counter()
        naive = mla_naive(q_nope, q_rope, (c["latent"] for c in chunks(
            first_mla, request, positions)), w).float()
        device.sync()
        t2 = time.perf_counter()
        absorbed_s += t1 - t0
        naive_s += t2 - t1
        err = max(err, float((absorbed - naive).abs().max()
                             / naive.abs().max().clamp_min(1e-30)))
        finite &= bool(torch.isfinite(naive).all())
    outcome["finite"] = finite
    return StepOutcome(**outcome, mla_error=err, mla_naive_seconds=naive_s,
                       mla_absorbed_seconds=absorbed_s, mla_requests=m, mla_heads=mla_heads)


__all__ = ["MLA_TOLERANCES", "StepOutcome", "decode_step", "token_span", "cd_name_of"]


def cd_name_of(device: Device, kv_dtype: str) -> str:
    return device.compute_dtype(kv_dtype)[1]
