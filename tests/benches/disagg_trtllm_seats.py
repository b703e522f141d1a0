"""Section 3j's seating lens (trtseat58, issue 29): how many requests each generation rank of a
measured TensorRT-LLM row decoded at once, from the measured numbers alone, beside every limit
that could seat fewer than the row's users.

- The implied seated count (Little's law on the closed loop): of a request's TTFT + (O - 1) x
  TPOT in flight, (O - 1) x TPOT is spent decoding, so C x (O - 1) x TPOT / (TTFT + (O - 1) x
  TPOT) requests decode at once, S per rank over the y generation servers' ranks (attention-DP
  ranks, else 1 a server). A generation rank that seats at most b requests while more wait
  holds S <= b (a seat is also held through the transfer and the first step, counted in TTFT).
- Beside S per rank: (a) the row's decode batch size (aiconfigurator's InferenceX adapter's C /
  (y x ranks), tests.benches.srt_slurm_recipes), (b) kvplan's decode pool per rank in requests
  at TensorRT-LLM's I + O reservation (GUARANTEED_NO_EVICT: kvplan.engines.trtllm.disagg_flow
  (c)), (c) the recipe's decode max_num_tokens (a generation step's tokens: one a request
  without MTP), (d) the recipe's cache-transceiver max_tokens_in_buffer, in whole prompts (the
  KV one transfer buffer holds: no seat), (e) the recipe's decode free_gpu_memory_fraction (it
  sizes (b)'s pool; kvplan's own default is used), and (f) the recipe's decode max_batch_size
  per rank (executor_request_queue.py, disagg_rows.recipe_decode_seats).
- Each candidate limit X predicts min(C per rank, X) seated; the summary gives S over that.

Measured numbers and recipe values only: no kvplan figure but (b); nothing fitted."""

from __future__ import annotations

from dataclasses import dataclass

from tests.benches import srt_slurm_recipes
from tests.benches.disagg_rows import (
    PREFIX,
    Replay,
    _why_not,
    layout,
    prospective_rows,
    replay_setup,
    stated_concurrency,
)

# A candidate limit "fits" a row where S lies within this share of the seats it predicts.
WITHIN = 0.10


@dataclass(frozen=True, kw_only=True)
class SeatRow:
    id: str
    concurrency: int
    ranks: int  # generation ranks over every generation server
    users_per_rank: float  # (a): C / ranks, the row's decode batch size
    seated: float  # S per rank (module docstring)
    pool: int  # (b)
    recipe: srt_slurm_recipes.SrtRecipe | None  # (c)-(f), the version in force
    later: srt_slurm_recipes.SrtRecipe | None  # a match that postdates the measurement

    @property
    def batch(self) -> int | None:  # (f)
        return self.recipe.decode.max_batch_size if self.recipe is not None else None


def implied_seated(concurrency: int, ttft_ms: float, tpot_ms: float, output_len: int) -> float:
    """Requests decoding at once in a closed loop of `concurrency` users (module docstring)."""
    decode_ms = (output_len - 1) * tpot_ms
    return concurrency * decode_ms / (ttft_ms + decode_ms)


def seat_rows(done: list[Replay]) -> list[SeatRow]:
    by_id = {PREFIX + r["id"]: r for r in prospective_rows()}
    out = []
    for r in done:
        row = by_id[r.id]
        conc = stated_concurrency(row)
        if conc is None:
            continue
        st = replay_setup(row)
        ranks = int(row["decode_num_workers"]) * st.req.decode.replicas
        lays = layout(row, "prefill"), layout(row, "decode")
        out.append(SeatRow(
            id=r.id, concurrency=conc, ranks=ranks, users_per_rank=conc / ranks,
            seated=implied_seated(conc, r.measured_ttft_ms, r.measured_tpot_ms,
                                  r.output_len) / ranks,
            pool=st.decode.requests // st.req.decode.replicas,
            recipe=srt_slurm_recipes.for_row(row, conc, *lays),
            later=srt_slurm_recipes.later(row, conc, *lays)))
    return out


def _median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _fit(rows: list[SeatRow], limit: str) -> str:
    """S over min(C per rank, X) for candidate `limit` over `rows`: median, and the share within
    WITHIN."""
    ratios = []
    for s in rows:
        x = {"a": s.users_per_rank, "b": float(s.pool),
             "f": float(s.batch) if s.batch is not None else None}[limit]
        if x is not None:
            ratios.append(s.seated / min(s.users_per_rank, x))
    if not ratios:
        return "no row"
    near = sum(abs(x - 1) <= WITHIN for x in ratios)
    return f"median {_median(ratios):.2f}, within {WITHIN:.0%} on {near} of {len(ratios)}"


def summary_lines(done: list[Replay]) -> list[str]:
    rows = seat_rows(done)
    matched = [s for s in rows if s.recipe is not None]
    bound = [s for s in matched if s.batch is not None and s.batch < s.users_per_rank]
    free = [s for s in matched if s.batch is not None and s.batch >= s.users_per_rank]
    later = [s for s in rows if s.later is not None]
    pool_bound = [s for s in rows if s.pool < s.users_per_rank]
    shown = "; ".join(f"{s.id.removeprefix(PREFIX)} {s.users_per_rank:,.0f} users a rank, "
                      f"batch {s.batch}, S {s.seated:.1f}"
                      for s in sorted(bound, key=lambda s: s.id))
    late = "; ".join(f"{s.id.removeprefix(PREFIX)} {s.users_per_rank:,.0f} a rank, batch "
                     f"{s.later.decode.max_batch_size}, S {s.seated:.1f}"
                     for s in sorted(later, key=lambda s: s.id) if s.later is not None)
    bufs = sorted({s.recipe.decode.max_tokens_in_buffer for s in matched
                   if s.recipe is not None})
    prompts = min((s.recipe.decode.max_tokens_in_buffer // _isl(s) for s in matched
                   if s.recipe is not None), default=0)
    # A generation step takes at most max_num_tokens tokens, one a request without MTP.
    short = [s for s in matched if s.recipe is not None
             and s.recipe.decode.max_num_tokens < s.recipe.decode.max_batch_size]
    short_text = "; ".join(
        f"{s.id.removeprefix(PREFIX)}: {s.recipe.decode.max_num_tokens} tokens against "
        f"{s.recipe.decode.max_batch_size} seats, {s.users_per_rank:,.0f} users a rank"
        for s in short if s.recipe is not None)
    none = sorted({_deployment(s) for s in rows if s.recipe is None and s.later is None})
    fracs = sorted({s.recipe.decode.free_gpu_memory_fraction for s in matched
                    if s.recipe is not None})
    streams = sorted({s.recipe.decode.stream_interval for s in matched
                      if s.recipe is not None and s.recipe.decode.stream_interval is not None})
    p_bs = sorted({s.recipe.prefill.max_batch_size for s in matched if s.recipe is not None})
    return [
        "Seats on the generation side (trtseat58; tests.benches.disagg_trtllm_seats, from the "
        "measured numbers alone): each row's requests decoding at once per generation rank by "
        "Little's law, S = C x (O - 1) x TPOT / (TTFT + (O - 1) x TPOT) over the ranks, beside "
        "what could seat fewer than the row's users. The rows are InferenceX runs "
        "(aiconfigurator 095f58a5 sdk/config_adapter/inferencex.py), whose decode batch size "
        "is the concurrency over the decode ranks (`_worker`: concurrency // (replicas x "
        "attention_dp)), not the engine's max_batch_size; the engine's is in the srt-slurm "
        "recipe InferenceX names for the run (SemiAnalysisAI/InferenceX 48f302cc "
        ".github/configs/nvidia-master.yaml; NVIDIA/srt-slurm recipes/trtllm, "
        "tests/data/disagg/srt_slurm_trtllm_recipes.json), matched here by GPU, precision, "
        "lengths, both roles' workers and layouts, the row's concurrency in the recipe's list "
        "and the version in force at the row's measured date.",
        "",
        f"- Matched to a recipe: {len(matched)} of {len(rows)} replayed rows; {len(later)} more "
        "match only a version committed after their measurement (not applied); the others "
        f"match none in the history read ({', '.join(none)}).",
        f"- (a) the row's decode batch size, C per rank (S over it: {_fit(rows, 'a')}): S "
        "never exceeds it, by construction; it is no engine setting.",
        f"- (b) kvplan's pool at the I + O reservation (S over min(C per rank, pool): "
        f"{_fit(rows, 'b')}); below the users a rank on {len(pool_bound)} rows.",
        f"- (f) the recipe's decode max_batch_size per rank (S over min(C per rank, batch): "
        f"{_fit(matched, 'f')}). Below the users a rank on {len(bound)} of the {len(matched)} "
        f"matched rows, where S over the batch is {_fit(bound, 'f')}: {shown}. At or above "
        f"them on {len(free)}: S over C per rank {_fit(free, 'a')}.",
        "- (c) the recipe's decode max_num_tokens (a step's tokens, one a request without "
        "MTP) is at least its max_batch_size on every matched row"
        + (f" but {len(short)} ({short_text}), where it is still above the users a rank"
           if short and all(s.recipe is not None and s.recipe.decode.max_num_tokens
                            >= s.users_per_rank for s in short)
           else f" but {len(short)} ({short_text})" if short else "")
        + ": no tighter; (d) its cache-transceiver max_tokens_in_buffer "
        f"({', '.join(f'{b:,}' for b in bufs)} tokens) holds at least {prompts} whole "
        "prompt(s), a transfer buffer and not a seat (trtdisttft55 read it); (e) its decode "
        f"free_gpu_memory_fraction ({', '.join(str(f) for f in fracs)}) sizes the pool (b), "
        "not a count. So the seat that binds is (f), per rank, as the engine applies it.",
        f"- Only a version after the measurement: {late or 'none'}.",
        f"- Also in the recipes and not applied (no rule here reads them): the context server's "
        f"max_batch_size {', '.join(str(b) for b in p_bs)} prompts a step (the replay keeps "
        "the row's 1, aiconfigurator's generator's), the generation server's "
        f"stream_interval {', '.join(str(x) for x in streams)}, and the client: every "
        "TensorRT-LLM recipe at 75f6e32a runs benchmark type sa-bench, not the aiperf "
        "whose TTFT ttftdef57 read (below).",
        *sglang_lines(),
    ]


def _isl(s: SeatRow) -> int:
    return s.recipe.isl if s.recipe is not None else 1


def _deployment(s: SeatRow) -> str:
    """..._1024x1024_c36_cfg303 -> dsr1 h200 fp8 cfg303 (card, precision and config)."""
    parts = s.id.removeprefix(PREFIX).split("_")
    return " ".join(p for p in (parts[1], parts[3], parts[-1]))


def sglang_lines() -> list[str]:
    """The same lens on the SGLang rows sections 3a-3i replay (replayable: `_why_not` empty),
    from their measured numbers alone: S per rank over the users a rank (C over the decode
    workers' DP-attention ranks; the ranks cancel: S over C)."""
    by_isl: dict[int, list[float]] = {}
    for row in prospective_rows():
        conc = stated_concurrency(row)
        if row["backend"] != "sglang" or _why_not(row, conc, prospective=True) or conc is None:
            continue
        seated = implied_seated(conc, float(row["silicon_ttft_ms"]),
                                float(row["silicon_tpot_ms"]), int(row["osl"]))
        by_isl.setdefault(int(row["isl"]), []).append(seated / conc)
    every = [x for xs in by_isl.values() for x in xs]
    if not every:
        return []
    low = 1 - 0.15
    parts = "; ".join(f"ISL {isl:,}: {len(xs)} rows, median {_median(xs):.2f}, below {low:.2f} "
                      f"on {sum(x < low for x in xs)}" for isl, xs in sorted(by_isl.items()))
    n_low = sum(x < low for x in every)
    return [f"- The same lens on the SGLang rows of sections 3a-3i ({len(every)} replayable "
            "rows, measured numbers only): S over the users a rank, a median "
            f"{_median(every):.2f} ({parts}; {n_low} below {low:.2f} in all). Their decode "
            "batch size is the same adapter's C over the ranks, so it is no engine setting "
            "there either; "
            "whether a seat limit explains the rows below was not checked: their srt-slurm "
            "SGLang recipes (--max-running-requests) were not read here.",
            ""]


def table_lines(done: list[Replay]) -> list[str]:
    out = ["| row | C | gen ranks | (a) C per rank | S per rank | (b) kvplan pool | (f) recipe "
           "batch | (c) max_num_tokens | (d) buffer tokens | (e) fraction | recipe |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in seat_rows(done):
        rec = s.recipe or s.later
        cells = ([f"{rec.decode.max_batch_size}" + ("" if s.recipe else " (later)"),
                  f"{rec.decode.max_num_tokens}", f"{rec.decode.max_tokens_in_buffer:,}",
                  f"{rec.decode.free_gpu_memory_fraction}", rec.cite] if rec is not None
                 else ["", "", "", "", ""])
        out.append(f"| {s.id.removeprefix(PREFIX)} | {s.concurrency} | {s.ranks} | "
                   f"{s.users_per_rank:,.1f} | {s.seated:,.1f} | {s.pool:,} | "
                   + " | ".join(cells) + " |")
    return out


if __name__ == "__main__":
    from tests.benches.disagg_rows import replay
    from tests.benches.disagg_trtllm import COHORT, full_rows

    full = set(full_rows())
    done = [r for r in (replay(x, prospective=True) for x in prospective_rows()
                        if PREFIX + x["id"] in full) if r.replayed and r.cohort == COHORT]
    print("\n".join([*summary_lines(done), *table_lines(done)]))
