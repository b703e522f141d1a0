"""What a varlen attention kernel's split-KV decode path adds to a decode-only step
(`SplitDecodeCost`), for the kernel an engine declares with one
(kvplan.engines.attention_kernel.SplitDecode: vLLM 0.11.0's Triton unified attention, which
models with attention sinks run on SM 8.x / 12.x, kvplan.engines.vllm.attention_backend).

A call whose queries are all one token long and whose programs, (tokens // BLOCK_Q +
sequences) x KV heads with BLOCK_Q = tile_rows / g query tokens a tile, number at most
`max_programs` runs the split path: each sequence's keys cut into `segments` segments, one
program per (query block, KV head, segment), each that holds keys storing a float32 partial
output of the head size, its maximum and its exp-sum per query head, and a second kernel per
attention layer reading them back. A sequence of L keys fills act(L) = ceil(L / (t x tile))
segments, t = ceil(L / (segments x tile)) tiles a segment. Per attention layer the split path
adds, beyond the cache rows the attention kernel reads (kvplan.perf.mixed_step):

    partial bytes  P = sum over decodes of act(L) x query heads x (head size x 4 + 4 + 4)

written by the attention kernel (its bytes: cache rows + P) and read by the reduce kernel
(max(P / HBM rate, the kernel floor)). Under CUDA graphs the launch grid is the captured one,
so `tokens` is the padded batch (the caller's CUDA-graph size). The padded rows' partials (one
key or none) are not counted.

One rule, two callers: `decode_partials` gives a decode-only call's partial bytes a layer to
kvplan.perf.mixed_step (the simulator's steps, the call padded to its CUDA graph) and to
kvplan.perf.roofline.step_time (estimate, plan: a decode step of single-token queries, the
batch unpadded, as step_time pads nothing), each charging them as above.

A worked example (tests/test_split_decode.py): gpt-oss-120b (64 query heads, 8 KV heads, head
64) at TP 1, four decodes of 32,000 keys: programs (4 // 2 + 4) x 8 = 48 <= 128, split; t =
ceil(32,000 / 256) = 125, act = ceil(32,000 / 2,000) = 16; P = 4 x 16 x 64 x 264 = 1,081,344
bytes a layer. Sixteen decodes: (8 + 16) x 8 = 192 > 128, the one-pass kernel, nothing added.
"""

from __future__ import annotations

from collections.abc import Iterable

from kvplan._util.versions import version_key
from kvplan.engines.attention_kernel import SplitDecode, VarlenAttentionKernel
from kvplan.model.spec import ModelSpec

_PARTIAL_BYTES = 4  # float32 partial outputs, maxima and exp-sums
_SCALARS = 2  # the maximum and the exp-sum per segment and query head


def _release(text: str) -> tuple[int, ...]:
    """The release's first three parts, missing ones 0 ("0.11" is 0.11.0)."""
    key = version_key(text)[:3]
    return key + (0,) * (3 - len(key))


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


class SplitDecodeCost:
    """The split-KV decode path of `split` for `spec` on one rank (`att_tp` attention ranks):
    whether a decode-only call runs it, and the partial bytes it adds a layer."""

    def __init__(self, split: SplitDecode, spec: ModelSpec, att_tp: int, tile_rows: int) -> None:
        att = spec.attention
        self.split = split
        self.q_heads = max(1, att.num_attention_heads // att_tp)
        self.kv_heads = att.kv_heads_per_rank(att_tp)
        self.block_q = max(1, tile_rows // max(1, self.q_heads // self.kv_heads))
        self.head_bytes = att.v_head_dim * _PARTIAL_BYTES + _SCALARS * _PARTIAL_BYTES

    @classmethod
    def of(cls, kernel: VarlenAttentionKernel | None, spec: ModelSpec, att_tp: int,
           version: str | None) -> SplitDecodeCost | None:
        """The path of the kernel the engine runs (kvplan.perf.attention_kernel.varlen_kernel)
        at engine release `version`, or None: no split path there (None version: not read)."""
        if kernel is None or kernel.split_decode is None or version is None:
            return None
        split = kernel.split_decode
        if not any(_release(version) == _release(r) for r in split.releases):
            return None
        return cls(split, spec, att_tp, kernel.tile_rows)

    def runs(self, tokens: int, sequences: int) -> bool:
        """Whether a call of `tokens` single-token queries over `sequences` sequences (the
        launch's, padded to the CUDA graph it replays) takes the split path."""
        blocks = tokens // self.block_q + sequences
        return blocks * self.kv_heads <= self.split.max_programs

    def segments(self, keys: int) -> int:
        """The segments a sequence of `keys` keys fills (act_num_segments)."""
        if keys <= 0:
            return 0
        span = self.split.segments * self.split.tile
        per_segment = _ceil(keys, span)
        return _ceil(keys, per_segment * self.split.tile)

    def partial_bytes(self, contexts: Iterable[int]) -> int:
        """Bytes of float32 partials one layer writes (and its reduce reads back) for decodes
        attending `contexts` keys each."""
        return sum(self.segments(c) for c in contexts) * self.q_heads * self.head_bytes


def decode_partials(split: SplitDecodeCost | None, launched: int,
                    contexts: Iterable[int]) -> float:
    """The split-KV path's partial bytes one attention layer writes (and its reduce kernel reads
    back) in a decode-only call of `launched` single-token queries over as many sequences (the
    launch's, padded to the CUDA graph it replays), the decodes attending `contexts` keys each;
    0 where the kernel has no split path at the release (`split` None), no decode is launched,
    or the call has too many programs (`SplitDecodeCost.runs`)."""
    if split is None or launched <= 0 or not split.runs(launched, launched):
        return 0.0
    return float(split.partial_bytes(contexts))
