"""Decode maths over the paged cache, in chunks so that its temporaries stay inside a stated
workspace.

Attention reads the cache block by block through a block table and folds each chunk of tokens
into an online softmax (running max, denominator and numerator, as flash-decoding does), so
only one chunk is ever materialised:

- heads (MHA/GQA/MQA; full, sliding, chunked): softmax(q K^T / sqrt(d)) V with GQA grouping;
- MLA absorbed (DeepSeek-V2 sec. 2.1.2, the decode path): q_nope W_UK^T attends over the cached
  latent and RoPE key, W_UV applied after; naive: every latent up-projected to K and V;
- DeepSeek Sparse Attention: the indexer scores every cached key
  (sum_h w_h relu(q_h . k)), the top-k tokens are attended with MLA;
- recurrent state: the conv window shifts in one row, the SSM / linear-attention state decays
  and adds an outer product (S' = a S + x b^T, y = S' c), written back to the running page and
  copied into the request's other pages (mode align's checkpoint, speculative tokens).

All functions take one request at a time; torch is imported inside them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class OnlineSoftmax:
    """softmax(scores) @ values accumulated one chunk of tokens at a time (fp32)."""

    def __init__(self) -> None:
        self.m: torch.Tensor | None = None
        self.denominator: torch.Tensor | None = None
        self.numerator: torch.Tensor | None = None

    def add(self, scores: torch.Tensor, weigh: Callable[[torch.Tensor], torch.Tensor]) -> None:
        """scores [..., t]; weigh(p [..., t]) -> [..., dv] (p @ V for this chunk)."""
        import torch

        scores = scores.float()
        chunk_max = scores.amax(dim=-1)
        m = chunk_max if self.m is None else torch.maximum(self.m, chunk_max)
        p = torch.exp(scores - m[..., None])
        contribution = weigh(p).float()
        if self.m is None:
            self.denominator, self.numerator = p.sum(-1), contribution
        else:
            assert self.denominator is not None and self.numerator is not None
            correction = torch.exp(self.m - m)
            self.denominator = self.denominator * correction + p.sum(-1)
            self.numerator = self.numerator * correction[..., None] + contribution
        self.m = m

    def result(self) -> torch.Tensor:
        assert self.numerator is not None and self.denominator is not None
        return self.numerator / self.denominator[..., None]


def attend_heads(q: torch.Tensor, chunks: Iterable[tuple[torch.Tensor, torch.Tensor]]
                 ) -> torch.Tensor:
    """q [Hq, d]; chunks of (k [t, Hkv, d], v [t, Hkv, dv]) -> [Hq, dv], GQA grouping."""
    import torch

    hq, d = q.shape
    acc = OnlineSoftmax()
    hkv = 1
    for k, v in chunks:
        hkv = k.shape[1]
        qg = q.view(hkv, hq // hkv, d)
        scores = torch.einsum("kgd,tkd->kgt", qg, k) * d ** -0.5
        acc.add(scores, lambda p, v=v: torch.einsum("kgt,tkd->kgd", p.to(v.dtype), v))
    return acc.result().reshape(hq, -1)


@dataclass(frozen=True, kw_only=True)
class MLAWeights:
    w_uk: torch.Tensor  # [heads, kv_lora_rank, qk_nope_head_dim]
    w_uv: torch.Tensor  # [heads, kv_lora_rank, v_head_dim]
    rank: int
    rope: int

    @property
    def scale(self) -> float:
        return (self.w_uk.shape[-1] + self.rope) ** -0.5


def mla_absorbed(q_nope: torch.Tensor, q_rope: torch.Tensor, chunks: Iterable[torch.Tensor],
                 w: MLAWeights) -> torch.Tensor:
    """q_nope [H, dn], q_rope [H, dr]; chunks of cached rows [t, rank + dr] -> [H, dv]."""
    import torch

    q_latent = torch.einsum("hd,hcd->hc", q_nope, w.w_uk)
    acc = OnlineSoftmax()
    for cache in chunks:
        latent, k_rope = cache[:, :w.rank], cache[:, w.rank:]
        scores = (q_latent @ latent.T + q_rope @ k_rope.T) * w.scale
        acc.add(scores, lambda p, latent=latent: p.to(latent.dtype) @ latent)
    return torch.einsum("hc,hcv->hv", acc.result().to(w.w_uv.dtype), w.w_uv)


def mla_naive(q_nope: torch.Tensor, q_rope: torch.Tensor, chunks: Iterable[torch.Tensor],
              w: MLAWeights) -> torch.Tensor:
    """The same by up-projecting every cached latent to per-head K_nope and V.

    Batched matmuls over the weights' own [H, rank, d] layout: each chunk's temporaries are
    its K_nope [H, t, dn] and V [H, t, dv] (counted per token in the step's chunk size). An
    einsum such as "tc,hcd->thd" would first copy the whole weight into [rank, H * d] order, on
    every chunk: with DeepSeek-V3.2's 16 heads on CPU that was 2 x 4 MiB per chunk, and with
    glibc's heap keeping the freed copies, 16 MiB over the rest of the step (half of its 32 MiB
    workspace at a 256 MiB budget) that no chunk size counted."""
    import torch

    acc = OnlineSoftmax()
    for cache in chunks:
        latent, k_rope = cache[:, :w.rank], cache[:, w.rank:]
        k_nope = torch.matmul(latent, w.w_uk)  # [H, t, dn]: latent broadcast, never copied
        scores = ((k_nope @ q_nope[:, :, None]).squeeze(-1) + q_rope @ k_rope.T) * w.scale
        del k_nope
        v = torch.matmul(latent, w.w_uv)  # [H, t, dv]
        acc.add(scores, lambda p, v=v: (p.to(v.dtype)[:, None, :] @ v).squeeze(1))
        del v
    return acc.result()


def indexer_scores(q: torch.Tensor, weights: torch.Tensor,
                   chunks: Iterable[torch.Tensor]) -> torch.Tensor:
    """DeepSeek-V3.2's lightning indexer: q [Hi, d], weights [Hi]; chunks of keys [t, d] ->
    scores [n] = sum_h w_h relu(q_h . k)."""
    import torch

    out = [torch.relu(q @ k.T).mul_(weights[:, None]).sum(0).float() for k in chunks]
    return torch.cat(out)


def state_step(state: dict[str, torch.Tensor], *, gen: object, cd: torch.dtype
               ) -> tuple[dict[str, torch.Tensor], bool]:
    """One decode step of a recurrent state (one request's tensors, in their stored dtypes):
    the conv window shifts in a new row and is convolved; every other tensor is a recurrent
    state S of shape (..., P, N) updated as S' = a S + x b^T and read out as y = S' c. Returns
    the new tensors (stored dtypes) and whether the outputs are finite."""
    import torch

    finite = True
    out: dict[str, torch.Tensor] = {}
    for name, t in state.items():
        x = t.to(cd)
        if name == "conv":
            rows, dim = x.shape
            new = torch.randn(1, dim, generator=gen, device=x.device).to(cd)  # type: ignore[arg-type]
            x = torch.cat([x[1:], new], dim=0)
            weight = torch.full((rows, 1), 1.0 / rows, dtype=cd, device=x.device)
            finite &= bool(torch.isfinite((x * weight).sum(0)).all())
        else:
            s = x.reshape(-1, x.shape[-2], x.shape[-1])  # (H, P, N); mamba1 (d, N): H = 1
            h, p, n = s.shape
            xin = torch.randn(h, p, 1, generator=gen, device=x.device).to(cd)  # type: ignore[arg-type]
            b = torch.randn(h, 1, n, generator=gen, device=x.device).to(cd)  # type: ignore[arg-type]
            c = torch.randn(h, n, 1, generator=gen, device=x.device).to(cd)  # type: ignore[arg-type]
            s = 0.9 * s + 0.01 * (xin @ b)
            finite &= bool(torch.isfinite(s @ c).all())
            x = s.reshape(x.shape)
        out[name] = x.to(t.dtype)
    return out, finite
