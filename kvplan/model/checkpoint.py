"""What a checkpoint holds, as read from its safetensors headers (kvplan.sources.checkpoint reads
them): each tensor's name, stored dtype, shape and size, and its weight group."""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = ("embeddings", "attention", "dense_mlp", "experts", "lm_head", "vision", "mtp",
              "quantization_scales", "other")


@dataclass(frozen=True, kw_only=True)
class TensorInfo:
    name: str
    dtype: str  # safetensors spelling: BF16, F8_E4M3, U8, I32, ...
    shape: tuple[int, ...]
    nbytes: int
    file: str
    category: str


@dataclass(frozen=True, kw_only=True)
class CheckpointWeights:
    folder: str
    files: tuple[str, ...]
    tensors: tuple[TensorInfo, ...]

    @property
    def total_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    @property
    def breakdown(self) -> dict[str, int]:
        """Bytes per category (every entry of CATEGORIES, zero when absent)."""
        out = dict.fromkeys(CATEGORIES, 0)
        for t in self.tensors:
            out[t.category] += t.nbytes
        return out

    @property
    def dtypes(self) -> dict[str, int]:
        """Bytes per stored dtype."""
        out: dict[str, int] = {}
        for t in self.tensors:
            out[t.dtype] = out.get(t.dtype, 0) + t.nbytes
        return out
