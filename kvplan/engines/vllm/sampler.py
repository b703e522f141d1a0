"""vLLM's sampler on the GPU, each step: which kernels run over the [rows, vocab] logits and the
bytes each moves (`VllmSampler`), for the requests' sampling parameters (`SamplingParams`).
Pure: no GPU here; kvplan.perf.sampler_cost prices the bytes at the GPU's HBM bandwidth.

Read in vLLM 0.15.0 (the wheel's source; line numbers are its):
- what a request samples with: `vllm bench serve` from 0.15.0 sends no temperature / top_p /
  top_k unless asked (vllm-project/vllm PR 32723, merged 2026-01-20: "Don't default to
  temperature==0"; the client prints "vllm bench serve no longer sets temperature==0"); before
  it the client sent temperature 0 (greedy). The server fills what a request leaves out from the
  checkpoint's generation_config.json (config/model.py:261 `generation_config = "auto"`;
  `get_diff_sampling_param`, :1327-1380, keeps repetition_penalty, temperature, top_k, top_p,
  min_p, max_new_tokens) and else its own defaults, temperature 1.0, top_p 1.0, top_k 0
  (entrypoints/openai/completion/protocol.py:182-188, :226-238). `SamplingParams.resolve`.
- the sampler (v1/sample/sampler.py `Sampler.forward`): the logits (the model's dtype, 16-bit)
  to float32 (:90); no penalties unless set; a greedy-only batch takes the argmax and returns
  (`sample`, :160-172); otherwise the temperature divides in place (:177, `apply_temperature`),
  then `TopKTopPSampler`. Its CUDA path at 0.15.0 is `forward_native` unless
  VLLM_USE_FLASHINFER_SAMPLER=1 (v1/sample/ops/topk_topp_sampler.py:33-57: the env var is unset
  by default, envs.py:691, and FlashInfer is opt-in). `forward_native` (:92-111):
  `apply_top_k_top_p` (:243-283) sorts every row's whole vocabulary when a top-p is set
  (`logits.sort`, :262), masks the top-k (:264-270), softmaxes, cumsums and masks the top-p
  (:272-279) and scatters the row back (:282); with no top-p and no top-k it returns the logits
  untouched; then a softmax (:110) and `random_sample` (:311-332): exponential noise over the
  whole tensor, probs / noise, argmax. (Top-k without top-p runs `torch.topk`, :286-308, whose
  passes are not priced here: refused.)
- the sort (PyTorch's aten/src/ATen/native/cuda/SortStable.cu `launch_stable_sort_kernel`; a row
  longer than 4,096 takes it): 2-127 rows are sorted by one full radix sort of (value, int2
  (row, index)) pairs then a stable sort on the row bits (`segmented_sort_pairs_by_full_sort`);
  128 rows and more by CUB's segmented radix sort of (value, int64 index) pairs
  (`segmented_sort_pairs`); one row by a plain radix sort (`segmented_sort_large_segments`).
  CUB's passes (cub/device/dispatch/dispatch_radix_sort.cuh, `DeviceRadixSortPolicy`, Policy800
  and Policy900): the one-sweep sort takes 8 bits a pass (ONESWEEP_RADIX_BITS 8, one-sweep on
  for keys of 4 bytes and more) after one histogram read of the keys; the segmented sort takes
  6 bits a pass (SEGMENTED_RADIX_BITS 6), each pass an upsweep over the row's keys and a
  downsweep reading and writing keys and values. fp32 keys: 4 one-sweep passes, 6 segmented.
- the softmax over a float32 row too long for shared memory (aten/src/ATen/native/cuda/
  SoftMax.cu `cunn_SoftMaxForward`): the row read for its max, again for the sum of
  exponentials, again to write the result.

Bytes are counted per element of the [rows, vocab] tensor; the per-row vectors (k, p, the
gathered thresholds, the sampled ids) are left out. Every kernel runs eagerly after the forward
pass (outside the CUDA graphs), once per step, on every TP rank over the whole vocabulary
(the logits are gathered to full rows before sampling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key

# vLLM's threshold below which a temperature means greedy (v1/sample/sampler.py:17).
SAMPLING_EPS = 1e-5
# The server's defaults for what neither the request nor generation_config.json sets
# (entrypoints/openai/completion/protocol.py:182-188, 0.15.0).
_SERVER_DEFAULTS = {"temperature": 1.0, "top_p": 1.0, "top_k": 0}
# Rows longer than this are sorted by SortStable.cu's radix sorts (aten/src/ATen/native/cuda/
# Sort.cpp: `should_use_small_sort` takes rows of up to 4,096 to the bitonic sort in shared
# memory).
SMALL_SORT_MAX = 4096
# SortStable.cu `launch_stable_sort_kernel`: fewer rows than this take the full sort.
FULL_SORT_MAX_ROWS = 127
# CUB radix bits a pass (dispatch_radix_sort.cuh, Policy800 / Policy900).
ONESWEEP_BITS = 8
SEGMENTED_BITS = 6
KEY_BITS = 32  # float32 keys, all 32 bits sorted


def _problem(name: str, value: object) -> str | None:
    """What is wrong with `value` for sampling parameter `name`, as vLLM's
    SamplingParams._verify_args refuses it (vllm/sampling_params.py:401-420, 0.15.1: temperature
    >= 0, 0 < top_p <= 1, top_k >= -1 and an integer; a whole float such as 20.0 is taken as
    before), or None. NaN and infinities fail every bound."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "expected a number"
    if name == "temperature" and not value >= 0:
        return "expected >= 0"
    if name == "top_p" and not 0 < value <= 1:
        return "expected in (0, 1]"
    if name == "top_k" and not (value == int(value) and value >= -1
                                if math.isfinite(value) else False):
        return "expected -1, 0 or a count"
    return None


@dataclass(frozen=True, kw_only=True)
class SamplingParams:
    """The sampling parameters every request of a run samples with (one set for the run)."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0 or -1: off

    def __post_init__(self) -> None:
        for name in _SERVER_DEFAULTS:
            value = getattr(self, name)
            problem = _problem(name, value)
            if problem:
                raise InputError(f"sampling: {name} {value}: {problem}")

    @classmethod
    def resolve(cls, request: dict[str, float | int | None],
                generation_config: dict[str, object], *,
                source: str = "generation_config") -> SamplingParams:
        """What vLLM 0.15's completion endpoint samples with: each of temperature / top_p /
        top_k from the request, else generation_config.json (named `source` in errors: the
        file), else the server's default."""
        values: dict[str, float | int] = {}
        for name, default in _SERVER_DEFAULTS.items():
            value, where = request.get(name), "sampling"
            if value is None:
                value, where = generation_config.get(name), source  # type: ignore[assignment]
            if value is None:
                value = default
            problem = _problem(name, value)
            if problem:  # the file and field named (fuzz58: the file was not)
                raise InputError(f"{where}: {name}: {problem}, got {value!r}")
            values[name] = value
        return cls(temperature=float(values["temperature"]), top_p=float(values["top_p"]),
                   top_k=int(values["top_k"]))

    @property
    def greedy(self) -> bool:
        return self.temperature < SAMPLING_EPS


@dataclass(frozen=True, kw_only=True)
class SamplerPass:
    """One kernel (or one CUB sort pass) over the [rows, vocab] tensor."""

    name: str
    bytes_per_element: int


def _sort_passes(rows: int) -> tuple[SamplerPass, ...]:
    """torch.sort of [rows, V] float32 logits (V > 4,096) with int64 indices, as SortStable.cu
    runs it (module docstring)."""
    onesweep = -(-KEY_BITS // ONESWEEP_BITS)  # 4
    if rows == 1:
        # fill_reverse_indices (int64 write), then one radix sort of (f32, i64) pairs: a
        # histogram read of the keys, each pass reading and writing key + value (12 + 12).
        return (SamplerPass(name="sort: index fill", bytes_per_element=8),
                SamplerPass(name="sort: histogram", bytes_per_element=4),
                *(SamplerPass(name=f"sort: one-sweep pass {i + 1}", bytes_per_element=24)
                  for i in range(onesweep)))
    if rows <= FULL_SORT_MAX_ROWS:
        # fill_index_and_segment (int2 write); radix_sort_pairs<float, int2> over all rows
        # (histogram read, 4 passes of 12 + 12); radix_sort_keys<int64> on the <= 7 row bits
        # (a histogram read of 8 and one pass reading and writing 8); sort_postprocess (the
        # int2 read, the value gathered, the int64 index and the value written: 8+4+8+4).
        return (SamplerPass(name="sort: index and row fill", bytes_per_element=8),
                SamplerPass(name="sort: histogram", bytes_per_element=4),
                *(SamplerPass(name=f"sort: one-sweep pass {i + 1}", bytes_per_element=24)
                  for i in range(onesweep)),
                SamplerPass(name="sort: row-bit histogram", bytes_per_element=8),
                SamplerPass(name="sort: row-bit pass", bytes_per_element=16),
                SamplerPass(name="sort: postprocess", bytes_per_element=24))
    # fill_reverse_indices (int64 write); CUB's segmented radix sort: 6 passes of 6 bits, each
    # the keys read by the upsweep (4) and keys + values read and written by the downsweep
    # (12 + 12).
    passes = -(-KEY_BITS // SEGMENTED_BITS)  # 6
    return (SamplerPass(name="sort: index fill", bytes_per_element=8),
            *(SamplerPass(name=f"sort: segmented pass {i + 1}", bytes_per_element=28)
              for i in range(passes)))


@dataclass(frozen=True, kw_only=True)
class VllmSampler:
    """vLLM's sampler for one run's sampling parameters (module docstring)."""

    params: SamplingParams
    version: str | None

    def __post_init__(self) -> None:
        key = version_key(self.version) if self.version else None
        if key is None or key[:2] != (0, 15):
            raise InputError(f"sampler cost: read for vLLM 0.15 only (its FlashInfer sampler "
                             f"off by default), not {self.version or 'the newest'}; give "
                             "--engine-version 0.15.x")
        p = self.params
        if not p.greedy and p.top_p >= 1 and p.top_k > 0:
            raise InputError("sampler cost: top-k without top-p runs torch.topk, whose passes "
                             "are not priced")

    def passes(self, rows: int, vocab: int) -> tuple[SamplerPass, ...]:
        """The kernels over a step's [rows, vocab] logits, in order."""
        if rows < 1:
            return ()
        cast = SamplerPass(name="logits to float32", bytes_per_element=2 + 4)
        p = self.params
        if p.greedy:
            return (cast, SamplerPass(name="argmax", bytes_per_element=4))
        out = [cast, SamplerPass(name="temperature (div_)", bytes_per_element=8)]
        if p.top_p < 1:
            if vocab <= SMALL_SORT_MAX:
                raise InputError(f"sampler cost: a vocabulary of {vocab} tokens takes "
                                 "PyTorch's small sort, not priced")
            out += _sort_passes(rows)
            if 0 < p.top_k < vocab:
                # logits_sort < threshold (4 read, 1 written), masked_fill_ (4 + 1 read, 4).
                out += [SamplerPass(name="top-k mask", bytes_per_element=5),
                        SamplerPass(name="top-k masked_fill_", bytes_per_element=9)]
            # softmax (3 reads, 1 write), cumsum in place (4 + 4), probs_sum <= 1 - p (4, 1),
            # masked_fill_ (4 + 1, 4); scatter out of place: the clone (4 + 4) and the scatter
            # (the int64 index and the value read, the value written: 8 + 4 + 4).
            out += [SamplerPass(name="top-p softmax", bytes_per_element=16),
                    SamplerPass(name="top-p cumsum", bytes_per_element=8),
                    SamplerPass(name="top-p mask", bytes_per_element=5),
                    SamplerPass(name="top-p masked_fill_", bytes_per_element=9),
                    SamplerPass(name="scatter: clone", bytes_per_element=8),
                    SamplerPass(name="scatter", bytes_per_element=16)]
        # softmax (3 reads, 1 write); exponential_ (4 written), probs.div_(q) (8 read, 4
        # written), argmax (4 read).
        out += [SamplerPass(name="softmax", bytes_per_element=16),
                SamplerPass(name="exponential_", bytes_per_element=4),
                SamplerPass(name="div_", bytes_per_element=12),
                SamplerPass(name="argmax", bytes_per_element=4)]
        return tuple(out)

    def bytes(self, rows: int, vocab: int) -> int:
        """HBM bytes of one step's sampler over `rows` requests."""
        return rows * vocab * sum(p.bytes_per_element for p in self.passes(rows, vocab))
