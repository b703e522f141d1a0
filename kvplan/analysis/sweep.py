"""`kvplan sweep`: the same numbers as `kvplan estimate`, over a grid of contexts, batches, KV
dtypes, attention schemes, GPUs, TP degrees and memory fractions.

Pure: option parsing (no pandas) and grid evaluation into a pandas DataFrame (pandas and numpy
are imported inside functions only, so `kvplan estimate` never loads them). Tables, JSON and CSV
text are made by ``kvplan.present.sweep_view``; files and plots written by ``kvplan.cli.sweep_cmd``.

Exactness. Every figure equals what ``kvplan.kv.cache.estimate`` and
``kvplan.capacity.plan.plan_capacity`` give for the same point (tests hold a sample of points
against them). The grid is not evaluated point by point: for each (scheme, KV dtype, GPU, TP,
memory fraction) ``plan_capacity`` runs once and its context-independent pieces (weights,
reserve, KV budget, page, group size, num_blocks, token capacity) are kept; only the per-request
block needs and the per-sequence bytes depend on the context, and those are the same integer
functions of the cache kinds (``kvplan.kv.kinds``: ``RankCaches.sequence_bytes``, each engine
pool's ``pages_per_request``) evaluated with numpy over all contexts at once. Batch only
multiplies bytes and is broadcast.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kvplan._util.dtypes import DTYPES
from kvplan._util.errors import InputError
from kvplan._util.progress import report
from kvplan._util.units import GiB
from kvplan._util.validate import MAX_SIZE
from kvplan.analysis.compare import check_gqa_groups, scheme_variants
from kvplan.analysis.inputs import build_inputs, platform_fields
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import DEFAULT_ENGINE, Engine, PlanInputs
from kvplan.engines.context import above_max_context, context_refusal
from kvplan.engines.kv_dtype import ENGINE_AUTO, run_kv_dtype
from kvplan.hardware.gpus import GPU, get_gpu
from kvplan.kv.cache import check_token_sized, check_tp, rank_caches
from kvplan.model.attention import HeadAttention, LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.flops import MLAForm, with_attention
from kvplan.sources.machine import available_memory_bytes

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

SCHEMES = ("native", "mha", "gqa", "mqa", "mla")
MAX_RANGE_VALUES = 100_000  # values one range may expand to
# Bounds set before any work (issue 32; examples/errors.md). A sweep written as CSV or JSON is
# streamed, CHUNK_ROWS rows at a time, whatever its size: it is bounded by time, MAX_POINTS by
# default (about 14 minutes of CSV at the 24,000 rows/s measured below). A table, Markdown,
# parquet or a plot holds every row at once: the bound is the memory available to the process
# (kvplan.sources.machine) x HELD_MEMORY_SHARE / the output's bytes per point. --max-points goes
# past both.
MAX_POINTS = 20_000_000
CHUNK_ROWS = 65_536
HELD_MEMORY_SHARE = 0.5
# Peak memory per point of a sweep held whole: /usr/bin/time's maximum RSS of `kvplan sweep
# llama-3.1-8b --gpu H100 -c 1..50000:+1 -b 1..B:+1 -f FORMAT` at B = 10 and 40 (500,000 and
# 2,000,000 points), the difference in RSS over the difference in points, rounded up: table
# 486,220 -> 1,648,368 KiB (793 B a point), Markdown 1,562,640 -> 6,084,940 KiB (3,087 B).
# Parquet and plots were not measured: they get the largest measured figure. (Streamed CSV at
# the same sizes: 190,708 and 203,964 KiB in all, flat; 2,000,000 rows in 83 s.)
HELD_POINT_BYTES = {"table": 800, "markdown": 3_200}
HELD_POINT_BYTES_OTHER = max(HELD_POINT_BYTES.values())
_INT64_MAX = (1 << 63) - 1

# Columns of the DataFrame, in order. Sizes are per GPU (rank) at the point's TP degree.
DIMENSIONS = ("model", "scheme", "kv_dtype", "context", "batch", "gpu", "tp", "mem_fraction",
              "engine", "block_size")
SIZE_COLUMNS = ("bytes_per_token", "bytes_per_sequence", "bytes_per_batch")
CAPACITY_COLUMNS = ("weights_bytes", "reserve_bytes", "kv_budget_bytes", "num_blocks",
                    "token_capacity", "blocks_per_request", "max_concurrency", "max_requests",
                    "fits_batch")
COLUMNS = DIMENSIONS + SIZE_COLUMNS + CAPACITY_COLUMNS


# ---------------------------------------------------------------------------------------------
# Option parsing: comma lists of values and ranges. Pure Python.

_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20}
_NUMBER = re.compile(r"^([0-9]{1,30}(?:\.[0-9]{1,30})?)([km]?)$", re.IGNORECASE)
_RANGE = re.compile(r"^(.+?)\.\.([^:]+)(?::(.*))?$")
_INT_HINT = "an integer like 4096, 4k (x1024) or 1m (x1024^2), or a range like 1k..128k:x2"


def parse_size(option: str, text: str) -> int:
    """One positive integer with an optional k (1024) or m (1024^2) suffix: "32k" -> 32768.
    A decimal is accepted when it names a whole number ("1.5k" -> 1536)."""
    m = _NUMBER.match(text.strip())
    if not m:
        raise InputError(f"{option}: bad value {text.strip()!r} (expected {_INT_HINT})")
    digits, suffix = m.groups()
    scale = _SUFFIX[suffix.lower()]
    if "." in digits:
        whole, frac = digits.split(".")
        numerator = int(whole + frac) * scale
        denominator = 10 ** len(frac)
        if numerator % denominator:
            raise InputError(f"{option}: {text.strip()!r} is not a whole number")
        value = numerator // denominator
    else:
        value = int(digits) * scale
    if value < 1:
        raise InputError(f"{option}: values must be >= 1, got {text.strip()!r}")
    if value > MAX_SIZE:
        raise InputError(f"{option}: {text.strip()!r} is too large (at most {MAX_SIZE:,})")
    return value


def _expand_range(option: str, item: str, m: re.Match[str]) -> list[int]:
    start, stop = parse_size(option, m.group(1)), parse_size(option, m.group(2))
    step = m.group(3)
    if step is None or not step.strip():
        raise InputError(f"{option}: range {item!r} needs a step: {m.group(1)}..{m.group(2)}:x2 "
                         f"(multiply) or {m.group(1)}..{m.group(2)}:+N (add)")
    if start > stop:
        raise InputError(f"{option}: range {item!r} is empty (start > stop)")
    step = step.strip()
    op, amount_text = step[:1].lower(), step[1:]
    if op not in ("x", "*", "+"):
        raise InputError(f"{option}: range step {step!r} must be xN (multiply) or +N (add)")
    if op == "+":
        try:
            amount = parse_size(option, amount_text)
        except InputError:
            amount = 0
    else:
        # ASCII digits only: str.isdigit() accepts '²', which int() then refuses.
        amount = int(amount_text) if re.fullmatch(r"[0-9]{1,6}", amount_text.strip()) else 0
    if (op == "+" and amount < 1) or (op != "+" and amount < 2):
        raise InputError(f"{option}: range step {step!r} does not progress (need xN with N >= 2 "
                         "or +N with N >= 1)")
    values: list[int] = []
    value = start
    while value <= stop:
        values.append(value)
        if len(values) > MAX_RANGE_VALUES:
            raise InputError(f"{option}: range {item!r} has more than {MAX_RANGE_VALUES:,} values")
        value = value + amount if op == "+" else value * amount
    return values


def _items(option: str, text: str) -> list[str]:
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise InputError(f"{option}: empty value in {text!r} (give a comma-separated list)")
    return items


def _unique(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(values))


def parse_int_list(option: str, text: str) -> tuple[int, ...]:
    """"1k,4k,32k", "1k..128k:x2" (geometric), "1k..8k:+1k" (arithmetic) or a mix, in order,
    duplicates dropped. Every value >= 1."""
    values: list[int] = []
    for item in _items(option, text):
        m = _RANGE.match(item)
        values.extend(_expand_range(option, item, m) if m else [parse_size(option, item)])
    return _unique(values)


def parse_fraction_list(option: str, text: str) -> tuple[float, ...]:
    """"0.8,0.9": each in (0, 1]."""
    values = []
    for item in _items(option, text):
        try:
            f = float(item)
        except ValueError:
            raise InputError(f"{option}: bad value {item!r} (expected a fraction like 0.9)"
                             ) from None
        if not 0 < f <= 1 or math.isnan(f):
            raise InputError(f"{option}: must be in (0, 1], got {item!r}")
        values.append(f)
    return _unique(values)


def _parse_choices(option: str, text: str, known: Sequence[str], what: str) -> tuple[str, ...]:
    values = []
    for item in _items(option, text):
        if item.lower() not in known:
            raise InputError(f"{option}: unknown {what} {item!r} (known: {', '.join(known)})")
        values.append(item.lower())
    return _unique(values)


def parse_dtype_list(option: str, text: str) -> tuple[str, ...]:
    """KV dtypes; `auto` (ENGINE_AUTO) is the engine's own for each model (`run_kv_dtypes`)."""
    return _parse_choices(option, text, (ENGINE_AUTO, *DTYPES), "dtype")


def parse_scheme_list(option: str, text: str) -> tuple[str, ...]:
    return _parse_choices(option, text, tuple(SCHEMES), "scheme")


def parse_gpu_list(option: str, text: str) -> tuple[str, ...]:
    values = []
    for item in _items(option, text):
        try:
            values.append(get_gpu(item).name)
        except InputError as exc:  # get_gpu says "--gpu: ..."; name the option we were given
            raise InputError(f"{option}:{str(exc).split(':', 1)[1]}") from None
    return _unique(values)


# ---------------------------------------------------------------------------------------------
# The grid and its evaluation.


@dataclass(frozen=True, kw_only=True)
class SweepGrid:
    """The axes of a sweep. Empty `gpus`: sizes only (capacity columns empty). Empty
    `mem_fractions`: the engine's default (SGLang's depends on TP)."""

    contexts: tuple[int, ...] = (4096,)
    batches: tuple[int, ...] = (1,)
    kv_dtypes: tuple[str, ...] = (ENGINE_AUTO,)  # ENGINE_AUTO: the engine's, per model
    schemes: tuple[str, ...] = ("native",)
    gpus: tuple[str, ...] = ()
    tps: tuple[int, ...] = (1,)
    mem_fractions: tuple[float, ...] = ()
    engine: Engine = DEFAULT_ENGINE
    block_size: int | None = None  # None: the engine's default
    groups: int = 8  # GQA KV heads for the "gqa" scheme
    # True: contexts above a model's maximum (kvplan.engines.context) are left out of its rows,
    # as the engines refuse to start with them (`kvplan sweep` without --allow-long-context);
    # False: every context computed, as `estimate` computes one.
    skip_long_contexts: bool = False
    # vLLM's platform and the CPU host's AMX, as estimate's --platform and --cpu-amx (None: the
    # GPU preset's platform, else cuda; the host unknown).
    platform: str | None = None
    cpu_amx: bool | None = None
    engine_version: str | None = None  # as estimate's --engine-version (None: the newest modelled)

    @property
    def platform_options(self) -> dict[str, Any]:
        return platform_fields(self.platform, self.cpu_amx)

    def sizing_inputs(self, *, context: int, kv_dtype: str, tp: int, gpu: GPU | None = None,
                      **fields: Any) -> PlanInputs:
        """The inputs `estimate` sizes the KV with (kvplan.analysis.inputs.estimate_inputs):
        the engine, its version, the platform fields and the GPU preset's, so that the served
        spec (the engine's rules for this release and device) is estimate's."""
        return build_inputs(context=context, gpu=gpu, engine=self.engine,
                            engine_version=self.engine_version, kv_dtype=kv_dtype,
                            block_size=self.block_size, tp=tp, **self.platform_options,
                            **fields)

    @property
    def resolved_block_size(self) -> int:
        return self.block_size or self.engine.rules.default_block_size(
            PlanInputs(context=1, engine=self.engine, engine_version=self.engine_version,
                       **self.platform_options))

    @property
    def num_points(self) -> int:
        """Points of the grid as asked: a bound (`auto` may name a dtype also listed)."""
        return (len(self.contexts) * len(self.batches) * len(self.kv_dtypes) * len(self.schemes)
                * max(1, len(self.gpus)) * len(self.tps) * max(1, len(self.mem_fractions)))


def scheme_spec(spec: ModelSpec, scheme: str, *, groups: int = 8) -> tuple[str, ModelSpec]:
    """(label, spec) for a scheme: "native" is the model as is; the others are `kvplan compare`'s
    rewrites (kvplan.analysis.compare.scheme_variants), MLA in its absorbed form."""
    if scheme == "native":
        return "native", spec
    variants = scheme_variants(spec, groups=groups)
    wanted = {"mha": "MHA", "gqa": f"GQA-{groups}", "mqa": "MQA", "mla": "MLA (absorbed)"}[scheme]
    for label, attention, form in variants:
        if label == wanted and form in (None, MLAForm.absorbed):
            assert isinstance(attention, (HeadAttention, LatentAttention))
            return ("gqa-" + str(groups) if scheme == "gqa" else scheme,
                    with_attention(spec, attention))
    check_gqa_groups(spec, groups)
    raise AssertionError(f"scheme {scheme!r}: no variant")  # pragma: no cover


def run_kv_dtypes(spec: ModelSpec, grid: SweepGrid) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The KV dtypes the grid's engine runs `spec` (as published, whatever the scheme) at for
    the grid's --kv-dtype list, each once (`auto` resolved by run_kv_dtype, as `estimate`
    resolves it), and the lines saying the checkpoint chose one."""
    gpus = [get_gpu(g) for g in grid.gpus] or [None]
    version = grid.engine_version
    runs = [run_kv_dtype(grid.engine, spec, dtype, version, gpus[0]) for dtype in grid.kv_dtypes]
    for gpu in gpus[1:]:
        if [run_kv_dtype(grid.engine, spec, dtype, version, gpu)[0]
                for dtype in grid.kv_dtypes] != [dtype for dtype, _ in runs]:
            raise InputError(f"--kv-dtype auto: {grid.engine.value} runs this model at another "
                             f"KV dtype on {gpu.name} than on {gpus[0].name}: give --kv-dtype "
                             "or one GPU type")
    return (_unique([dtype for dtype, _ in runs]),
            _unique([note for _, note in runs if note is not None]))


def check_points(points: int, *, held: str | None, max_points: int | None = None,
                 available_bytes: int | None = None) -> None:
    """Refuse, before any work, a grid past its bound (see MAX_POINTS): one line with the bound
    and how to go past it. `held`: the output that holds every row at once ("table",
    "markdown", "parquet", "plot", "dataframe"); None for a streamed CSV/JSON."""
    if max_points is not None:
        if points > max_points:
            raise InputError(f"the grid has {points:,} points, more than --max-points "
                             f"{max_points:,}")
        return
    if held is not None and available_bytes is not None:
        each = HELD_POINT_BYTES.get(held, HELD_POINT_BYTES_OTHER)
        bound = int(available_bytes * HELD_MEMORY_SHARE) // each
        if points > bound:
            raise InputError(
                f"the grid has {points:,} points; {held} output holds them all in memory "
                f"(about {each:,} B each) and half the {available_bytes / GiB:.1f} GiB "
                f"available holds {bound:,}: write CSV or JSON, which is streamed (-f csv, "
                "-o FILE.csv), or pass --max-points N to try anyway")
    if points > MAX_POINTS:
        raise InputError(f"the grid has {points:,} points; at most {MAX_POINTS:,} by default "
                         "(about 14 minutes of CSV here): pass --max-points N to go past")


def skipped_contexts(spec: ModelSpec, grid: SweepGrid) -> tuple[int, ...]:
    """The grid's contexts a sweep of `spec` leaves out: those above the model's maximum when
    the grid skips them."""
    if not grid.skip_long_contexts:
        return ()
    return tuple(c for c in grid.contexts if above_max_context(spec, c, grid.engine))


def _grid_for(spec: ModelSpec, grid: SweepGrid) -> SweepGrid:
    """`grid` without the contexts `spec` cannot start with; none left: refused (one line)."""
    skipped = skipped_contexts(spec, grid)
    if not skipped:
        return grid
    kept = tuple(c for c in grid.contexts if c not in skipped)
    if not kept:
        raise InputError(context_refusal(spec, min(skipped), grid.engine))
    return replace(grid, contexts=kept)


def evaluate_models(specs: Sequence[ModelSpec], grid: SweepGrid, *,
                    max_points: int | None = None, held: str = "dataframe") -> pd.DataFrame:
    """Several models over the same grid: their rows one after the other (column `model`)."""
    import pandas as pd

    check_points(grid.num_points * len(specs), held=held, max_points=max_points,
                 available_bytes=available_memory_bytes())
    frames = [evaluate(spec, grid, max_points=max_points, held=held) for spec in specs]
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def evaluate(spec: ModelSpec, grid: SweepGrid, *, max_points: int | None = None,
             held: str = "dataframe") -> pd.DataFrame:
    """One row per grid point, in the order scheme, kv_dtype, gpu, tp, mem_fraction, context,
    batch (outermost first); columns `COLUMNS`. A grid past the memory available is refused
    before any work (`check_points`)."""
    check_token_sized(spec, "sweep")
    import numpy as np

    grid = _grid_for(spec, grid)
    check_points(grid.num_points, held=held, max_points=max_points,
                 available_bytes=available_memory_bytes())
    parts = list(_row_blocks(spec, grid, chunk_rows=None))
    return _frame({name: np.concatenate([p[name] for p in parts]) for name in COLUMNS}, grid)


def iter_frames(specs: Sequence[ModelSpec], grid: SweepGrid, *,
                chunk_rows: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
    """The rows of `evaluate_models`, in the same order, as DataFrames of at most `chunk_rows`
    rows each: what a streamed writer holds at once, whatever the grid's size."""
    for spec in specs:
        for block in _row_blocks(spec, _grid_for(spec, grid), chunk_rows=chunk_rows):
            yield _frame(block, grid)


def _frame(data: dict[str, Any], grid: SweepGrid) -> pd.DataFrame:
    import pandas as pd

    df = pd.DataFrame(data, columns=list(COLUMNS))
    for name in ("model", "scheme", "kv_dtype", "gpu", "engine"):
        df[name] = df[name].astype(object)
    if not grid.gpus:
        for name in CAPACITY_COLUMNS:
            dtype_name = {"max_concurrency": "Float64", "fits_batch": "boolean"}.get(name, "Int64")
            df[name] = pd.array([pd.NA] * len(df), dtype=dtype_name)
        df["mem_fraction"] = pd.array([pd.NA] * len(df), dtype="Float64")
        df["gpu"] = None
    return df


def _row_blocks(spec: ModelSpec, grid: SweepGrid, *, chunk_rows: int | None
                ) -> Iterator[dict[str, Any]]:
    """Columns (numpy arrays) of consecutive rows: one block per configuration (scheme, KV
    dtype, TP, GPU), cut into pieces of at most `chunk_rows` rows when given."""
    import numpy as np

    if not (grid.contexts and grid.batches and grid.kv_dtypes and grid.schemes and grid.tps):
        raise InputError("every sweep axis needs at least one value")
    if grid.mem_fractions and not grid.gpus:
        raise InputError("--mem-fraction: needs --gpu (capacity is only planned for a device)")
    bs = grid.resolved_block_size
    if bs < 1:
        raise InputError(f"--block-size: must be >= 1, got {bs}")
    contexts = np.asarray(grid.contexts, dtype=np.int64)
    batches = np.asarray(grid.batches, dtype=np.int64)
    n_c = len(contexts)
    max_batch = max(grid.batches)
    gpus: list[GPU | None] = [get_gpu(g) for g in grid.gpus] or [None]
    fractions: list[float | None] = list(grid.mem_fractions) or [None]

    kv_dtypes, _ = run_kv_dtypes(spec, grid)
    blocks = len(grid.schemes) * len(kv_dtypes) * len(grid.tps) * len(gpus)
    done = 0
    for scheme in grid.schemes:
        label, scheme_sized = scheme_spec(spec, scheme, groups=grid.groups)
        rules = grid.engine.rules
        for dtype in kv_dtypes:
            for tp in grid.tps:
                # As the engine caches it for this release and KV dtype, from the same inputs
                # as `estimate` (SGLang: IndexCache's indexer layers by release).
                inputs = grid.sizing_inputs(context=int(contexts[0]), kv_dtype=dtype, tp=tp)
                sized = rules.served_spec(scheme_sized, inputs)
                check_tp(sized, tp)
                # The page a sequence is held in, as `estimate` (EngineRules.sequence_block_size:
                # vLLM's raised for recurrent state, SGLang's 64 for DeepSeek's sparse attention).
                eff_bs = rules.sequence_block_size(sized, inputs)
                # The same per-kind rules as `estimate` (kvplan.kv.kinds), over every context.
                caches = rank_caches(sized, kv_dtype=dtype, tp=tp)
                per_seq = np.asarray(caches.sequence_bytes(contexts, eff_bs), dtype=np.int64)
                per_seq = per_seq + np.zeros(n_c, dtype=np.int64)
                # Exactness guard: the largest figure, in Python ints, must fit int64.
                largest = int(caches.sequence_bytes(max(grid.contexts), eff_bs)) * max_batch
                if largest > _INT64_MAX:
                    raise InputError(f"--context/--batch: {largest:,} bytes per batch overflows "
                                     "64-bit integers; use smaller values")
                for gpu in gpus:
                    report(f"sweep: {spec.id}", done, blocks)
                    done += 1
                    # As the engine caches it on this GPU (vLLM: DeepSeek's sparse attention's
                    # fp8 row on SM 10.x), as `estimate --gpu`.
                    # The block too is the engine's on this GPU (vLLM: dense MLA's backend by
                    # compute capability and KV dtype, kvplan.engines.vllm.block_size).
                    on_gpu, gpu_caches, gpu_seq, gpu_bs = sized, caches, per_seq, eff_bs
                    if gpu is not None:
                        on_gpu_inputs = grid.sizing_inputs(context=int(contexts[0]),
                                                           kv_dtype=dtype, tp=tp, gpu=gpu)
                        on_gpu = rules.served_spec(scheme_sized, on_gpu_inputs)
                        gpu_bs = rules.sequence_block_size(on_gpu, on_gpu_inputs)
                    if on_gpu != sized or gpu_bs != eff_bs:
                        gpu_caches = rank_caches(on_gpu, kv_dtype=dtype, tp=tp)
                        gpu_seq = np.asarray(gpu_caches.sequence_bytes(contexts, gpu_bs),
                                             dtype=np.int64) + np.zeros(n_c, dtype=np.int64)
                    # Every memory fraction at once: one plan per GPU, budgets as arrays.
                    cap = _capacity(on_gpu, contexts, grid, dtype=dtype, tp=tp, gpu=gpu,
                                    fractions=fractions)
                    values = {"model": spec.id, "scheme": label, "kv_dtype": dtype,
                              "gpu": None if gpu is None else gpu.name, "tp": tp,
                              "engine": grid.engine.value, "block_size": gpu_bs,
                              "bytes_per_token": gpu_caches.bytes_per_token}
                    n_f = 1 if cap.mem_fractions is None else len(cap.mem_fractions)
                    total = n_f * n_c * len(batches)
                    step = total if chunk_rows is None else chunk_rows
                    for lo in range(0, total, step):
                        yield _rows(lo, min(total, lo + step), contexts=contexts,
                                    batches=batches, per_seq=gpu_seq, cap=cap, values=values)


@dataclass(frozen=True, kw_only=True)
class _Capacity:
    """One GPU's capacity over every memory fraction (arrays over fractions; `blocks_per_request`
    over contexts). `mem_fractions` None: no GPU, capacity columns empty."""

    mem_fractions: Any = None  # float64 array, one per fraction
    weights_bytes: int = 0
    reserve_bytes: int = 0
    kv_budget_bytes: Any = None  # int64 array over fractions
    num_blocks: Any = None  # int64 array over fractions
    token_capacity: Any = None  # int64 array over fractions
    blocks_per_request: Any = None  # int64 array over contexts
    request_cap: Any = None  # the engine's cap (SGLang max_running_requests), fractions x contexts


def budget_bytes(engine: Engine, total: int, fractions: Any, weights: int, reserve: int) -> Any:
    """The engine's KV budget (kvplan.engines.<name>.budget: the rule plan_capacity calls) over
    an array of memory fractions."""
    import numpy as np

    return engine.budget.kv_bytes(total, np.asarray(fractions, dtype=np.float64), weights,
                                  reserve)


def _capacity(sized: ModelSpec, contexts: Any, grid: SweepGrid, *, dtype: str, tp: int,
              gpu: GPU | None, fractions: list[float | None]) -> _Capacity:
    import numpy as np

    if gpu is None:
        return _Capacity()
    inputs = grid.sizing_inputs(context=int(contexts[0]), kv_dtype=dtype, tp=tp, gpu=gpu,
                                mem_fraction=fractions[0])
    # One exact plan per configuration; weights and reserve depend neither on the context nor
    # on the memory fraction, so the budgets of all fractions follow from this one plan.
    plan = plan_capacity(sized, inputs)
    stage = plan.stages[0]
    # An engine that overrides a given fraction runs its own whatever was asked (SGLang 0.5.3's
    # 0.8 for DeepSeek's sparse attention, kvplan.engines.sglang.dsa_settings).
    forced = fractions[0] is not None and plan.mem_fraction != fractions[0]
    resolved = np.asarray([plan.mem_fraction if f is None or forced else f
                           for f in fractions], dtype=np.float64)
    budgets = budget_bytes(grid.engine, gpu.total_bytes, resolved, stage.weights_bytes,
                           stage.reserve_bytes)
    # The engine's own pool (kvplan.engines.<name>.engine: grid_pages), over every context.
    pages = grid.engine.rules.grid_pages(sized, inputs, stage, contexts)
    need = np.asarray(pages.pages_per_request, dtype=np.int64)
    num_blocks = np.maximum(0, budgets) // pages.bytes_per_slot
    token_capacity = num_blocks // pages.num_groups * pages.block_size
    # The engine's own cap on running requests (SGLang's), as plan_capacity caps max_requests.
    cap = grid.engine.rules.request_cap(stage, budgets, contexts)
    # The plan at the first fraction is the reference: the arrays must reproduce it exactly.
    assert (int(budgets[0]), int(num_blocks[0]), int(token_capacity[0])) == (
        stage.kv_budget_bytes, stage.num_blocks, stage.token_capacity)
    return _Capacity(mem_fractions=resolved, weights_bytes=stage.weights_bytes,
                     reserve_bytes=stage.reserve_bytes, kv_budget_bytes=budgets,
                     num_blocks=num_blocks, token_capacity=token_capacity,
                     blocks_per_request=need, request_cap=cap)


def _rows(lo: int, hi: int, *, contexts: Any, batches: Any, per_seq: Any, cap: _Capacity,
          values: dict[str, Any]) -> dict[str, Any]:
    """Rows lo..hi-1 of one configuration's block, in the order memory fractions outer, then
    contexts, batches inner: row i is fraction i // (n_c n_b), context (i // n_b) % n_c,
    batch i % n_b."""
    import numpy as np

    n_c, n_b = len(contexts), len(batches)
    i = np.arange(lo, hi, dtype=np.int64)
    n = hi - lo
    f, c, b = i // (n_c * n_b), (i // n_b) % n_c, i % n_b
    out: dict[str, Any] = {}
    for name, value in values.items():
        out[name] = np.full(n, value, dtype=object if isinstance(value, str)
                            or value is None else np.int64)
    batch = batches[b]
    seq = per_seq[c]
    out["context"], out["batch"] = contexts[c], batch
    out["bytes_per_sequence"], out["bytes_per_batch"] = seq, seq * batch
    if cap.mem_fractions is None:
        out["mem_fraction"] = np.full(n, np.nan)
        for name in CAPACITY_COLUMNS:
            out[name] = np.zeros(n, dtype=np.int64)
        return out
    out["mem_fraction"] = cap.mem_fractions[f]
    for name in ("weights_bytes", "reserve_bytes"):
        out[name] = np.full(n, getattr(cap, name), dtype=np.int64)
    for name in ("kv_budget_bytes", "num_blocks", "token_capacity"):
        out[name] = getattr(cap, name)[f]
    need = cap.blocks_per_request[c]
    # plan_capacity: usable = num_blocks (no shared prefix); max(0.0, usable / own) and
    # max(0, usable // own). int64 / int64 in numpy is float64 division of exactly represented
    # operands (< 2^53), the same correctly rounded quotient as Python's int / int.
    usable = cap.num_blocks[f]
    requests = np.maximum(0, usable // need)
    if cap.request_cap is not None:
        n_f = len(cap.mem_fractions)
        requests = np.minimum(requests, np.broadcast_to(cap.request_cap, (n_f, n_c))[f, c])
    out["blocks_per_request"] = need
    out["max_concurrency"] = np.maximum(0.0, usable / need)
    out["max_requests"] = requests
    out["fits_batch"] = requests >= batch
    return out
