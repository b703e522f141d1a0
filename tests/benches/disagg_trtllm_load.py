"""Section 3j's load counterfactual (trtdis57, issue 29): what request rate each measured
TensorRT-LLM row implies, beside what kvplan's roles can serve, to ask whether the measured
deployments were prefill-bound (a queue at the context servers) where kvplan's context servers
are much faster. A counterfactual table, not a fit: no rule or constant comes from it.

- The measured rate: Little's law over the row's closed loop (aiperf at a fixed concurrency C:
  each user's next request leaves when the last one ends), X = C / (TTFT + (O - 1) x TPOT).
  The same over kvplan's simulated TTFT and TPOT gives kvplan's rate.
- kvplan's prefill role: x context servers x ranks (attention-DP ranks, else 1) x the prompts
  a rank's step takes (the row's max_batch_size, 1 on every row, within max_num_tokens ISL +
  500: kvplan.engines.trtllm.disagg_flow (a)), over the time of that full step
  (PrefillBatching.step_ms at those prompts; the ranks step together).
- kvplan's decode role: y generation servers x ranks x n requests each, n the row's users per
  rank (C / (y x ranks) rounded up) within the rank's seats (disagg_rows.decode_max_seqs: the
  srt-slurm recipe's max_batch_size where matched, since trtseat58),
  each taking (O - 1) decode steps of kvplan's TPOT at n: the most requests a second the
  decode role ends with every request in flight decoding.
- The context server holds a prompt's KV blocks after its step until the transfer to the
  generation server completes (TensorRT-LLM py_executor.py, the 1.2 line: `_send_disagg_ctx_cache`
  frees the sequence slot as the send starts; the blocks go at `_terminate_disagg_ctx_finished_
  requests` once `check_context_transfer_status` sees it done), and its capacity scheduler
  (GUARANTEED_NO_EVICT) admits a prompt only with blocks free: a pool full of prompts awaiting
  transfer would throttle it. The transfer starts when the generation server takes the request
  in, before its first token, so a prompt's KV is held less than the measured TTFT; by Little's
  law each context rank then holds fewer than X x TTFT / ranks prompts, beside the whole prompts
  kvplan's pool for that rank holds.
- Were the measured system prefill-bound, its context servers would serve X and no more, each
  prompt taking slots / X of a server's time (slots = x x ranks x prompts a step): the
  per-prompt time that reading implies, beside kvplan's step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from tests.benches.disagg_rows import (
    BAND,
    PREFIX,
    Replay,
    decode_max_seqs,
    prospective_rows,
    replay_setup,
)

# What limits a TensorRT-LLM context server's rate at the rows' settings, read after the rows
# (trtdis57): nothing below caps it under kvplan's one prompt a rank a step, so no rule was
# written and SHAPED_BY holds nothing from it. The TensorRT-LLM files are the 1.2 line as
# GitHub's index stores them (ctx_in_transmission_requests a dict, batch_wait_timeout_iters,
# ExecutorRequestQueue(..., batch_wait_timeout_ms, is_disaggregated)), the nearest to
# 1.2.0rc6.post1 found; no tagged copy could be fetched, so functions are named, not lines.
READ_TEXT = (
    "What limits a TensorRT-LLM context server's rate at these rows' settings, read in code "
    "after the rows (trtdis57; no rule written, SHAPED_BY holds nothing from it):",
    "",
    "- The settings (aiconfigurator at 095f58a5, generator/rule_plugin/trtllm.rule:7, :10, :17, "
    ":20 and benchmark/trtllm.rule:3, :6, :13, :16, :18; backend_templates/trtllm/"
    "extra_engine_args.1.2.0rc6.post1.yaml.j2:16-22, :28, :33, :35-39, :47): the context "
    "server's max_batch_size 1, max_num_tokens ISL + 500 (+ 1,500 in the benchmark rule) "
    "rounded to 32, chunked prefill and the overlap scheduler off, attention DP where the "
    "role's DP size is above 1, KV at 0.80 of free memory without block reuse, "
    "cache_transceiver backend DEFAULT with max_tokens_in_buffer ISL + OSL + 500 (+ 1,500). "
    "No attention_dp_config, batch_wait_* or stream_interval key is written, so llm_args' "
    "AttentionDpConfig defaults hold: enable_balance False (its timeout_iters 50 and "
    "batching_wait_iters 10 unused without it).",
    "- Taking prompts in (tensorrt_llm/_torch/pyexecutor/executor_request_queue.py): each "
    "iteration `_fetch_new_requests_attention_dp` allgathers the ranks' active counts and "
    "takes from the waiting queue up to tp_size x max_num_active_requests less the active "
    "ones (`_get_from_waiting_queue`; max_num_active_requests is the engine's "
    "get_max_num_sequences(), max_batch_size 1 a rank), placed by "
    "`_schedule_attention_dp_requests`; `_fetch_and_process_requests` waits on the queue only "
    "when every rank is idle (timeout None, else 0) and `_get_from_request_queue` adds no wait "
    "at batch_wait_timeout_ms 0. A rank takes a new prompt at each iteration its seat is free: "
    "the simulation's rule.",
    "- Stepping (py_executor.py `_executor_loop`, the overlap scheduler off): a forward each "
    "iteration where `scheduled_batch.batch_size > 0 or (enable_attention_dp and tp_size > "
    "1)`, an idle rank padded with a generation dummy (`_pad_attention_dp_dummy_request`, only "
    "while some rank is active): the ranks step together, as the simulation's lockstep ranks "
    "at the busiest rank's step. `_schedule` holds context requests back only in "
    "`_balance_adp_requests` (enable_balance) or `_waiting_requests` (batch waiting, not under "
    "attention DP): neither runs here.",
    "- Holding the prompt until its transfer: `_send_disagg_ctx_cache` starts the send "
    "(respond_and_send_async) and frees the sequence slot; `_handle_responses` moves the "
    "finished context request from active_requests to ctx_in_transmission_requests (its seat "
    "free for the next iteration); its KV blocks stay until `check_context_transfer_status` "
    "(non-blocking after each step with context requests; blocking for one only where no "
    "request fits, `_prepare_and_schedule_batch` at num_fitting_reqs 0) marks it done and "
    "`_terminate_disagg_ctx_finished_requests` frees them. A prompt's blocks are held at most "
    "its TTFT: by Little's law under 1% of kvplan's context pool at the median row (above), "
    "at or over it on one H100 row only; the transceiver's one send buffer and one responder "
    "thread per rank (trtdisttft55) run a rank's sends one after another, each under a fifth "
    "of its step (disagg.transfer_seconds), so no send queue forms at a rank's one prompt a "
    "step.",
    "- Between the roles (Dynamo; trtgap54 and trtdisttft55 read it): the frontend sends to a "
    "prefill worker, then to a decode worker, round-robin by default; it adds latency to a "
    "request, not a cap on the context servers' rate.",
    "",
    "So at these settings a context rank serves one prompt a step, as kvplan has it, and the "
    "rates above show the measured context servers were not saturated where the TTFT gap is "
    "largest. The gap is a per-request delay elsewhere, counted in decode steps: at the "
    "generation server's intake (the decode request's arrival, `_prepare_disagg_gen_init`, the "
    "polled transfer: rule (b), read by trtgap54 and trtdisttft55, about one step) or in what "
    "the measured TTFT counts, which at light load grows with the output length asked for "
    "(above); neither read further here.",
    "")

# The share of kvplan's context-server capacity at and above which a measured rate counts as
# that capacity reached (a closed loop's rate flattens as it nears it), and below which the
# context servers are at most half busy; shown, not used to fit anything.
SATURATED = 0.9
HALF = 0.5
# A deployment's measured rate "tracks the decode side" from its lowest to its highest load
# where it rises at least this share of the rise in C / TPOT (module docstring).
TRACKS = 0.8
# A deployment's measured TTFT "holds a count of decode steps" where TTFT / TPOT at each of its
# loads but the highest lies within this share of their median.
STEADY = 0.25
# Users at or below which a row counts as lightly loaded (every replayed row's context servers
# below half of kvplan's capacity there).
LIGHT = 64


def little_rps(concurrency: int, ttft_ms: float, tpot_ms: float, output_len: int) -> float:
    """Requests a second a closed loop of `concurrency` users serves when each request is in
    flight TTFT + (O - 1) x TPOT (Little's law)."""
    return concurrency / ((ttft_ms + (output_len - 1) * tpot_ms) / 1e3)


def prefill_role_rps(slots: int, step_ms: float) -> float:
    """Prompts a second `slots` prompts a step (every context server's ranks together) serve
    when each full step takes `step_ms`."""
    return slots * 1e3 / step_ms


def decode_role_rps(ranks: int, per_rank: int, output_len: int, tpot_ms: float) -> float:
    """Requests a second `ranks` decode ranks (every generation server's) end, each running
    `per_rank` requests of O - 1 decode steps at `tpot_ms` a step."""
    return ranks * per_rank * 1e3 / ((output_len - 1) * tpot_ms)


@dataclass(frozen=True, kw_only=True)
class RoleRates:
    """One replayed row's rates (module docstring), requests or prompts a second."""

    measured_rps: float
    kvplan_rps: float
    prefill_rps: float  # kvplan's context servers, every step full
    decode_rps: float  # kvplan's generation servers, every request in flight decoding
    prefill_slots: int  # prompts a step over every context server's ranks
    prefill_step_ms: float  # kvplan's full context step
    pool_prompts: int  # whole prompts a context rank's KV pool holds (kvplan's sizing)
    prefill_ranks: int  # every context server's attention ranks
    measured_ttft_s: float

    @property
    def held_prompts(self) -> float:
        """Prompts each context rank holds the KV of at the measured rate were each held for
        its whole measured TTFT (module docstring): X x TTFT over the ranks."""
        return self.measured_rps * self.measured_ttft_s / self.prefill_ranks

    @property
    def load(self) -> float:
        """The measured rate over kvplan's context-server capacity."""
        return self.measured_rps / self.prefill_rps

    @property
    def implied_prompt_ms(self) -> float:
        """A prompt's time on a context server were the measured rate its capacity."""
        return self.prefill_slots * 1e3 / self.measured_rps


@cache
def _rows_by_id() -> dict[str, dict[str, str]]:
    return {PREFIX + x["id"]: x for x in prospective_rows()}


def role_rates(r: Replay) -> RoleRates | None:
    """The rates of a replayed prospective TensorRT-LLM row (module docstring); None where it
    was not replayed or a role's time is not modelled."""
    if r.ttft_ms is None or r.tpot_ms is None or r.concurrency is None:
        return None
    row = _rows_by_id()[r.id]
    st = replay_setup(row)
    b = st.batching
    if b is None:
        return None
    # The simulation's lockstep ranks per server (kvplan.analysis.disagg_ratio._simulated).
    p_ranks = int(row["prefill_num_workers"]) * st.prefill.layout.replicas
    d_ranks = int(row["decode_num_workers"]) * st.decode.layout.replicas
    prompts = max(1, min(b.max_seqs, b.token_budget // r.input_len))
    step = b.step_ms(prompts * r.input_len, prompts)
    per_rank = min(-(-r.concurrency // d_ranks), decode_max_seqs(row, st))
    tpot = st.tpot_ms(per_rank)
    if step is None or tpot is None:
        return None
    return RoleRates(
        measured_rps=little_rps(r.concurrency, r.measured_ttft_ms, r.measured_tpot_ms,
                                r.output_len),
        kvplan_rps=little_rps(r.concurrency, r.ttft_ms, r.tpot_ms, r.output_len),
        prefill_rps=prefill_role_rps(p_ranks * prompts, step),
        decode_rps=decode_role_rps(d_ranks, per_rank, r.output_len, tpot),
        prefill_slots=p_ranks * prompts, prefill_step_ms=step,
        pool_prompts=st.prefill.capacity.token_capacity // r.input_len, prefill_ranks=p_ranks,
        measured_ttft_s=r.measured_ttft_ms / 1e3)


def _median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _deployment(r: Replay) -> str:
    """A row's deployment and lengths without its load (..._1024x1024_c36_cfg303 ->
    ..._1024x1024_cfg303)."""
    return re.sub(r"_c\d+_", "_", r.id.removeprefix(PREFIX))


def load_lines(done: list[Replay], rates: dict[str, RoleRates] | None = None) -> list[str]:
    """The section's counterfactual (module docstring) over the replayed rows `done`; `rates`
    by row id where given (a test's hand-made rows), else `role_rates`."""
    got: dict[str, RoleRates] = {}
    for r in done:
        g = (rates or {}).get(r.id) or role_rates(r)
        if g is not None:
            got[r.id] = g
    rows = sorted((r for r in done if r.id in got), key=lambda r: r.id)
    out = ["Little's law on each row (trtdis57; a counterfactual, nothing fitted, no rule): the "
           "request rate the measured row implies (C / (TTFT + (O - 1) x TPOT)) beside kvplan's "
           "(the same over its simulated times), its context servers' most prompts a second "
           "(every step full: servers x ranks x the row's 1 prompt a step, over kvplan's step) "
           "and its generation servers' most requests a second at the row's users per rank "
           "(tests.benches.disagg_trtllm_load).", ""]
    if not rows:
        return [*out, "No replayed row.", ""]
    n = len(rows)
    sat = [r for r in rows if got[r.id].load >= SATURATED]
    idle = [r for r in rows if got[r.id].load < HALF]

    def ttft_ratio(group: list[Replay]) -> str:
        ratios = [r.ratios[0] for r in group if r.ratios is not None]
        return f"{_median(ratios):.2f}" if ratios else "-"

    x_ratio = [got[r.id].measured_rps / got[r.id].kvplan_rps for r in rows]
    share = [r.measured_ttft_ms / (r.measured_ttft_ms + (r.output_len - 1)
                                   * r.measured_tpot_ms) for r in rows]
    out.append(f"- The measured rate over kvplan's: median {_median(x_ratio):.2f} over {n} "
               f"rows ({sum(0.9 <= x <= 1.1 for x in x_ratio)} within 10%); the measured TTFT "
               f"is a median {_median(share):.1%} of a request's time in flight (largest "
               f"{max(share):.1%}), so the rate follows TPOT (kvplan's inside the band on "
               f"{sum(r.ratios is not None and BAND[0] <= r.ratios[1] <= BAND[1] for r in rows)}"
               f" of {n}) and says little of where the TTFT goes.")
    listed = "; ".join(f"{r.id.removeprefix(PREFIX)} {got[r.id].load:.2f} x" for r in sat)
    out.append(f"- Measured rate at or above {SATURATED} x kvplan's context-server capacity: "
               f"{len(sat)} of {n}" + (f" ({listed})" if sat else "")
               + f"; median TTFT ratio there {ttft_ratio(sat)}: where the measured context "
               "servers served as many prompts as kvplan's can or more, kvplan's are the slower "
               "(its TTFT above the measured), the opposite of the gap.")
    out.append(f"- Below {HALF} x that capacity: {len(idle)} of {n}, median TTFT ratio "
               f"{ttft_ratio(idle)}: kvplan's context servers at most half busy at the measured "
               "rate, yet the measured TTFT far above kvplan's.")
    full = sorted((r for r in rows if got[r.id].held_prompts >= got[r.id].pool_prompts),
                  key=lambda r: r.id)
    held = [got[r.id].held_prompts / got[r.id].pool_prompts for r in rows]
    out.append("- The context KV held while transfers wait (module docstring): at most X x "
               "TTFT / ranks prompts a context rank, against kvplan's pool at the row's "
               f"settings: a median {_median(held):.1%} of the pool, at or over it on "
               f"{len(full)} of {n}"
               + (" (" + "; ".join(f"{r.id.removeprefix(PREFIX)} {got[r.id].held_prompts:,.1f}"
                                   f" of {got[r.id].pool_prompts:,}" for r in full) + ")"
                  if full else "")
               + (": held blocks throttle no other row's context servers at the measured rates."
                  if full else ": held blocks do not throttle the context servers at the "
                  "measured rates."))
    groups: dict[str, list[Replay]] = {}
    for r in rows:
        groups.setdefault(_deployment(r), []).append(r)
    multi = sorted((k, sorted(v, key=lambda r: r.concurrency or 0)) for k, v in groups.items()
                   if len({r.concurrency for r in v}) > 1)
    rising: list[tuple[str, Replay, Replay]] = []
    flat: list[tuple[str, Replay, Replay]] = []
    for key, group in multi:
        lo, hi = group[0], group[-1]
        # The rise C / TPOT allows (the decode side alone, TTFT left out) against the rise the
        # measured rate shows.
        decode_rise = ((hi.concurrency or 1) / hi.measured_tpot_ms) / (
            (lo.concurrency or 1) / lo.measured_tpot_ms)
        if got[hi.id].measured_rps >= TRACKS * decode_rise * got[lo.id].measured_rps:
            rising.append((key, lo, hi))
        else:
            flat.append((key, lo, hi))
    shown = "; ".join(
        f"{key} c{lo.concurrency} -> c{hi.concurrency}: {got[lo.id].measured_rps:,.2f} -> "
        f"{got[hi.id].measured_rps:,.2f}/s, per-prompt time if prefill-bound "
        f"{got[lo.id].implied_prompt_ms:,.0f} -> {got[hi.id].implied_prompt_ms:,.0f} ms "
        f"(kvplan's step {got[hi.id].prefill_step_ms:,.0f})" for key, lo, hi in rising[:3])
    out.append(f"- Deployments measured at two or more loads: {len(multi)}; in {len(rising)} "
               f"of them the measured rate from the lowest to the highest load rises at least "
               f"{TRACKS} x as much as C / TPOT does (what the decode side alone allows)"
               + (f" ({shown})" if shown else "")
               + ". A closed loop queued at its context servers serves their capacity at "
               "every load above it: its rate would stay flat as users are added, and the "
               "per-prompt time a prefill-bound reading implies would not fall as it does. "
               "There the measured context servers were not the bottleneck; the measured TTFT "
               "is a delay that does not cap the rate (a wait spent somewhere other than a "
               "saturated context server's queue)."
               + (" The others: " + "; ".join(
                   f"{key} c{lo.concurrency} -> c{hi.concurrency}: "
                   f"{got[lo.id].measured_rps:,.2f} -> {got[hi.id].measured_rps:,.2f}/s, "
                   f"measured TTFT {lo.measured_ttft_ms:,.0f} -> {hi.measured_ttft_ms:,.0f} ms, "
                   f"{got[hi.id].load:.2f} x kvplan's context capacity at the highest"
                   for key, lo, hi in flat) + "." if flat else ""))
    steady = []
    for key, group in multi:
        below = [r.measured_ttft_ms / r.measured_tpot_ms for r in group[:-1]]
        mid = _median(below)
        if len(below) >= 2 and all(abs(x / mid - 1) <= STEADY for x in below):
            top = group[-1].measured_ttft_ms / group[-1].measured_tpot_ms
            steady.append(f"{key} {min(below):,.0f}-{max(below):,.0f} steps at "
                          f"c{group[0].concurrency}-c{group[-2].concurrency} ({top:,.0f} at "
                          f"c{group[-1].concurrency})")
    out.append(f"- The measured TTFT in the row's own decode steps (TTFT / TPOT), by deployment: "
               f"within {STEADY:.0%} of one count at every load but the highest in "
               f"{len(steady)} of the {sum(len(g) >= 3 for _, g in multi)} deployments measured "
               "at three or more loads" + (f" ({'; '.join(steady)})" if steady else "")
               + ": a delay that grows with the generation server's step, not with the "
               "context servers' load.")
    light: dict[tuple[int, int], list[float]] = {}
    for r in rows:
        if (r.concurrency or 0) <= LIGHT:
            light.setdefault((r.input_len, r.output_len), []).append(
                r.measured_ttft_ms / r.measured_tpot_ms)
    if light:
        by_len = "; ".join(f"ISL {i:,} / OSL {o:,}: median {_median(v):,.0f} over {len(v)} "
                           f"(from {min(v):,.0f} to {max(v):,.0f})"
                           for (i, o), v in sorted(light.items()))
        out.append(f"- The same count at {LIGHT} or fewer users, by lengths: {by_len}. At light "
                   "load a server's TTFT (a prefill without a queue, the transfer, one step) "
                   "does not depend on the output length asked for; rows that differ in it "
                   "differ here by hundreds of decode steps, as if the measured TTFT counted "
                   "generated tokens (a first token taken after the reasoning text, as aiperf's "
                   "time to first output token is, where its TTFT as documented is not). Which "
                   "metric and frontend settings the rows recorded is not stated; nothing in "
                   "the engine's code read here explains it.")
    out += ["", "| row | C | measured / kvplan req/s | kvplan prefill role prompts/s | "
            "measured / that | per-prompt ms if prefill-bound / kvplan step | kvplan decode "
            "role req/s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        g = got[r.id]
        out.append(f"| {r.id.removeprefix(PREFIX)} | {r.concurrency} | {g.measured_rps:,.2f} / "
                   f"{g.kvplan_rps:,.2f} | {g.prefill_rps:,.2f} | {g.load:.2f} | "
                   f"{g.implied_prompt_ms:,.0f} / {g.prefill_step_ms:,.0f} | "
                   f"{g.decode_rps:,.2f} |")
    return [*out, ""]
