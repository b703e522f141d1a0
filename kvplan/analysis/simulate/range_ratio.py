"""The random dataset's length spread of the benchmark clients (`--random-range-ratio R`), one
type per client and version, each answering "the (prompt, output) lengths of N requests with
seed S" as its code draws them. Pure: no numpy (the clients' legacy numpy draws are reproduced
bit for bit in Python, `LegacyNumpy`).

- vLLM's `vllm bench serve` (`VllmRandom`): vllm/benchmarks/datasets.py
  RandomDataset.get_sampling_params (v0.11.0 :471-520, v0.15.1 :576-623; 0.32.0 moved it to
  datasets/utils.py get_sampling_params :39-95): R in [0, 1); with L' = L - the tokenizer's
  special tokens (`num_special_tokens_to_add`), prompts uniform in [floor(L'(1 - R)),
  ceil(L'(1 + R))] and outputs in [max(floor(O(1 - R)), 1), max(ceil(O(1 + R)), 1)], drawn
  as `self._rng.integers(low, high + 1, size=N)`, inputs first, then outputs, from
  `np.random.default_rng(seed)` (seed default 0, DEFAULT_RANGE_RATIO 0.0: fixed lengths).
  The prompt sent is the drawn tokens (re-encoded to that length); the server adds the special
  tokens back. numpy's PCG64 Generator is not reproduced here: the distribution is drawn with
  kvplan's seed (`random.Random`), inputs then outputs.
- The older clients, [int(L x R), L] (`BoundedBelow`): vLLM's benchmarks/benchmark_serving.py
  `sample_random_requests` before the RandomDataset rewrite (default R 1.0: fixed lengths),
  the InferenceX client forked from it, and srt-slurm's sa-bench (NVIDIA/srt-slurm
  src/srtctl/benchmarks/scripts/sa-bench/benchmark_serving.py at cc158081: :355-364
  `np.random.randint(int(input_len * range_ratio), input_len + 1, size=num_prompts)`, then the
  same for the outputs; main seeds `np.random.seed(args.seed)` at :821, --seed default 0 at
  :1115; bench.sh passes no --seed and RANDOM_RANGE_RATIO, default 0.8 (bench.sh:37), the value
  InferenceX's workflows set (.github/workflows/benchmark-multinode-tmpl.yml:218)). With
  --use-chat-template (the measured run, bench.sh:111-127) sa-bench first takes the template's
  tokens less one (`chat_template_len`) off L and adds them back to each drawn length
  (:345-352, :381): `template_tokens`. SGLang's bench_serving (python/sglang/bench_serving.py,
  `np.random.seed(args.seed)`, --seed default 1): 0.5.6 `sample_random_requests` draws
  `randint(max(int(I x R), 1), I + 1)` then `randint(int(O x R), O + 1)` (1227-1236), 0.5.7
  `compute_random_lens` `randint(max(int(L x R), 1), L + 1)` for both (1384-1389, 1402-1411);
  default R 0.0 (lengths uniform from 1). These draw from numpy's legacy global MT19937, which
  `LegacyNumpy` reproduces exactly (tests/test_range_ratio.py checks it against numpy).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kvplan._util.errors import InputError, unknown_choice
from kvplan._util.versions import version_key

CONVENTIONS = ("vllm", "vllm-legacy", "sglang", "sa-bench")


class LegacyNumpy:
    """numpy's legacy `np.random.seed(seed)` then `np.random.randint(low, high, size=n)`, in
    pure Python: the state is MT19937's `init_genrand(seed)` (numpy's `_legacy_seeding` for an
    int, randomkit's mt19937_seed), which `random.Random.setstate` takes as is, and
    `getrandbits(32)` is MT19937's genrand_int32. randint of range r = high - 1 - low (the int64
    default dtype, r < 2**32 - 1) is numpy's masked rejection (distributions.c
    `random_bounded_uint64_fill` -> `buffered_bounded_masked_uint32`): draw 32 bits, keep those
    under the smallest all-ones mask >= r, retry while above r; r = 0 draws nothing."""

    def __init__(self, seed: int) -> None:
        if not 0 <= seed < 2 ** 32:
            raise InputError(f"--seed: numpy's legacy seed must be in [0, 2**32), got {seed}")
        key, s = [], seed
        for pos in range(624):
            key.append(s)
            s = (1812433253 * (s ^ (s >> 30)) + pos + 1) & 0xFFFFFFFF
        self._mt = random.Random()
        self._mt.setstate((3, (*key, 624), None))

    def randint(self, low: int, high: int, size: int) -> list[int]:
        span = high - 1 - low
        if span < 0 or span >= 0xFFFFFFFF:
            raise ValueError(f"randint({low}, {high}): range outside what is reproduced")
        if span == 0:
            return [low] * size
        mask = span
        for shift in (1, 2, 4, 8, 16):
            mask |= mask >> shift
        out = []
        for _ in range(size):
            value = self._mt.getrandbits(32) & mask
            while value > span:
                value = self._mt.getrandbits(32) & mask
            out.append(low + value)
        return out


def _check_ratio(ratio: float, below_one: bool) -> None:
    if not (0.0 <= ratio < 1.0 if below_one else 0.0 <= ratio <= 1.0):
        raise InputError(f"--random-range-ratio: must be in [0, {'1)' if below_one else '1]'}, "
                         f"got {ratio}")


@dataclass(frozen=True, kw_only=True)
class VllmRandom:
    """`vllm bench serve --dataset-name random` (module docstring): [L'(1 - R), L'(1 + R)]."""

    ratio: float
    special_tokens: int = 0  # the tokenizer's num_special_tokens_to_add (BOS: 1)
    exact: bool = False  # numpy's PCG64 draws are not reproduced: kvplan's seed

    def __post_init__(self) -> None:
        _check_ratio(self.ratio, below_one=True)

    def input_bounds(self, input_len: int) -> tuple[int, int]:
        real = max(0, input_len - self.special_tokens)
        return math.floor(real * (1 - self.ratio)), math.ceil(real * (1 + self.ratio))

    def output_bounds(self, output_len: int) -> tuple[int, int]:
        return (max(math.floor(output_len * (1 - self.ratio)), 1),
                max(math.ceil(output_len * (1 + self.ratio)), 1))

    def lengths(self, n: int, input_len: int, output_len: int, seed: int
                ) -> list[tuple[int, int]]:
        """(prompt tokens the server sees, output tokens) of each request, in send order: the
        drawn prompt plus the special tokens the server adds."""
        rng = random.Random(seed)
        (ilo, ihi), (olo, ohi) = self.input_bounds(input_len), self.output_bounds(output_len)
        ins = [rng.randint(ilo, ihi) for _ in range(n)]
        outs = [rng.randint(olo, ohi) for _ in range(n)]
        return [(max(1, i + self.special_tokens), o) for i, o in zip(ins, outs, strict=True)]


@dataclass(frozen=True, kw_only=True)
class BoundedBelow:
    """The clients drawing [int(L x R), L] from numpy's legacy global state (module
    docstring): vLLM's old benchmark_serving.py and sa-bench (`floor_input` = `floor_output`
    = 0), SGLang's bench_serving 0.5.6 (input floor 1) and 0.5.7+ (both 1). `template_tokens`:
    sa-bench's chat_template_len (taken off L before the draw, added back after)."""

    name: str
    ratio: float
    floor_input: int = 0
    floor_output: int = 0
    template_tokens: int = 0
    exact: bool = True  # the draws are numpy's, bit for bit

    def __post_init__(self) -> None:
        _check_ratio(self.ratio, below_one=False)

    def input_bounds(self, input_len: int) -> tuple[int, int]:
        real = input_len - self.template_tokens
        lo = max(int(real * self.ratio), self.floor_input)
        return lo + self.template_tokens, real + self.template_tokens

    def output_bounds(self, output_len: int) -> tuple[int, int]:
        return max(int(output_len * self.ratio), self.floor_output), output_len

    def lengths(self, n: int, input_len: int, output_len: int, seed: int
                ) -> list[tuple[int, int]]:
        """(prompt, output) of each request in the client's list order (= send order), an
        output of 0 sent as 1 (the simulator needs a token)."""
        draw = LegacyNumpy(seed)
        t = self.template_tokens
        ilo, ihi = self.input_bounds(input_len)
        olo, ohi = self.output_bounds(output_len)
        ins = draw.randint(ilo - t, ihi - t + 1, n)
        outs = draw.randint(olo, ohi + 1, n)
        return [(max(1, i + t), max(1, o)) for i, o in zip(ins, outs, strict=True)]


RandomLengths = VllmRandom | BoundedBelow


def _sglang(ratio: float, release: str | None) -> BoundedBelow:
    """SGLang's bench_serving: 0.5.7's floors (1, 1), before 0.5.7 (1, 0) (module docstring)."""
    old = release is not None and version_key(release) < version_key("0.5.7")
    return BoundedBelow(name="sglang", ratio=ratio, floor_input=1, floor_output=0 if old else 1)


def _vllm(ratio: float, _release: str | None) -> RandomLengths:
    return VllmRandom(ratio=ratio)


def _bounded(name: str) -> Callable[[float, str | None], RandomLengths]:
    return lambda ratio, _release: BoundedBelow(name=name, ratio=ratio)


# Each --range-ratio-convention's client (CONVENTIONS, in order), built from (ratio, SGLang
# release). The conventions name benchmark clients, not engines.
_CLIENTS: dict[str, Callable[[float, str | None], RandomLengths]] = dict(zip(
    CONVENTIONS, (_vllm, _bounded(CONVENTIONS[1]), _sglang, _bounded(CONVENTIONS[3])),
    strict=True))


def client_lengths(convention: str, ratio: float, *, sglang_release: str | None = None
                   ) -> RandomLengths:
    """The client of `--range-ratio-convention` at `--random-range-ratio` (sglang: 0.5.7's
    floors unless `sglang_release` is older)."""
    client = _CLIENTS.get(convention)
    if client is None:
        raise unknown_choice("--range-ratio-convention", CONVENTIONS, convention)
    return client(ratio, sglang_release)


def mean_lengths(lengths: Sequence[tuple[int, int]]) -> tuple[float, float]:
    """The mean prompt and output length of drawn requests."""
    n = len(lengths)
    return sum(i for i, _ in lengths) / n, sum(o for _, o in lengths) / n
