"""`python -m tests.benches.disagg_bench > examples/disagg-bench.md`: kvplan plan --disagg against
public measurements (issue 29). Two parts, nothing fitted to either:

1. The KV one request hands over, against vLLM NixlConnector logs that print it ("Avg MB per
   transfer", tests/data/disagg/nixl_logs.json).
2. Predicted TTFT / TPOT against aiconfigurator's measured disaggregated rows with full worker
   layouts (tests/data/disagg/aiconfigurator_*.csv): the rows in kvplan's scope (vLLM, a model
   and checkpoint kvplan sizes), replayed at their own xPyD with
   kvplan.analysis.disagg_ratio.evaluate_xy (the closed-loop simulation at their stated
   concurrency), and the count of the rest with why.
3. The prospective set: every other aiconfigurator disaggregated row, frozen at commit c72d9db
   before the simulator was written; the rows each session first replays are chosen by a rule
   fixed before their results are seen (disagg_rows.COHORTS), reported apart from the rows a
   rule was since written for.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from kvplan.analysis.disagg import DisaggRequest, _candidate, handover_for
from kvplan.analysis.plan_types import Layout
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import get_kv_link
from kvplan.sources.resolve import load_model
from tests.benches.disagg_deepep import section as deepep_section
from tests.benches.disagg_lengths import section as lengths_section
from tests.benches.disagg_logits import section as logits_gather_section
from tests.benches.disagg_public import section as public_runs_section
from tests.benches.disagg_rows import (
    ADMISSION_COMMIT,
    BACKEND_COHORTS,
    DECODE_GATHER_COMMIT,
    FIRST_COHORT,
    INPUT_BUDGET_COMMIT,
    PREFIX,
    RECIPES,
    Replay,
    admits_all,
    predict,
    prefill_capacity,
    prospective_replays,
    prospective_rows,
    replay_table,
    replayed_with,
    replays,
    rows,
)
from tests.benches.disagg_sglang_recipe import section as sglang_recipe_section
from tests.benches.disagg_trtllm import section as trtllm_section
from tests.benches.disagg_why import section as why_section
from tests.benches.fitted_rows import SHAPED_BY
from tests.benches.honest import fitted_ids
from tests.benches.nixl_cpu_record import kvplan_inputs
from tests.benches.prospdis65_runs import replay_all as prospdis65_replay
from tests.benches.prospdis65_runs import section as prospdis65_section
from tests.benches.prospdis66_runs import replay_all as prospdis66_replay
from tests.benches.prospdis66_runs import section as prospdis66_section

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "disagg"
BAND = (0.75, 1.33)
TRTLLM_COHORT = BACKEND_COHORTS["trtllm"]
QWEN3_32B_VLLM = "qwen3_32b_qwen3_32b_h100_sxm_vllm_disagg_4000x1000_c_tp_epnone_2"


def _log_rows() -> list[str]:
    data = json.loads((DATA / "nixl_logs.json").read_text())
    out = ["| log | model | P / D TP | block | prompt tokens | logged MiB | kvplan MiB | |",
           "|---|---|---|---|---|---|---|---|"]
    held = 0
    for log in data["logs"]:
        if not log["held"]:
            out.append(f"| {log['id']} | not replayed: {log['why_not_held']} |||||||")
            continue
        held += 1
        spec, _ = load_model(str(ROOT / log["config"]))
        lo, hi = log["prompt_tokens"]["min"], log["prompt_tokens"]["max"]
        sizes = set()
        for prompt in sorted({lo, (lo + hi) // 2, hi}):
            req = DisaggRequest(prefill=Layout(tp=log["prefill_tp"]),
                                decode=Layout(tp=log["decode_tp"]), input_len=prompt,
                                output_len=16, gpu=get_gpu("H100"),
                                link=get_kv_link("ib-ndr"), kv_dtype=log["kv_dtype"],
                                extra={"block_size": log["block_size"]})
            decode = _candidate(spec, req, "decode", req.decode)
            h = handover_for(spec, req, decode)
            # `decimals`: a report that restates the value rounder (tests/test_disagg.py)
            sizes |= {round(b / 2**20, log.get("decimals", 3)) for b in h.transfer_bytes}
        got = ", ".join(f"{s:g}" for s in sorted(sizes))
        ok = sizes == {log["avg_mib_per_transfer"]}
        out.append(f"| {log['id']} | {spec.id} | {log['prefill_tp']} / {log['decode_tp']} | "
                   f"{log['block_size']} | {lo:,}-{hi:,} | {log['avg_mib_per_transfer']:g} | "
                   f"{got} | {'equal' if ok else 'MISS'} |")
    out += ["", f"{held} logs replayed, held out (no kvplan rule was written or changed after "
            "reading them; the rules come from vLLM 0.32.0's nixl/ source). "
            + data["searched"]]
    return out


def _transfer_mib(spec, prefill_tp: int, decode_tp: int, prompt: int, block: int,
                  kv_dtype: str, extra: dict | None = None) -> list[float]:
    """kvplan's transfer sizes in the log's unit (MiB rounded to 3 decimals, nixl/stats.py)."""
    req = DisaggRequest(prefill=Layout(tp=prefill_tp), decode=Layout(tp=decode_tp),
                        input_len=prompt, output_len=16, gpu=get_gpu("H100"),
                        link=get_kv_link("ib-ndr"), kv_dtype=kv_dtype,
                        extra={"block_size": block, **(extra or {})})
    h = handover_for(spec, req, _candidate(spec, req, "decode", req.decode))
    return [round(b / 2**20, 3) for b in h.transfer_bytes]


def _measured_here_rows() -> list[str]:
    """Section 1b: NIXL handovers run on this machine (tests/data/disagg/nixl_cpu/)."""
    out = ["| run | P / D TP | block | prompt tokens | logged MiB x transfers | kvplan MiB | |",
           "|---|---|---|---|---|---|---|"]
    n = equal = 0
    for run_json in sorted((DATA / "nixl_cpu").glob("*/run.json")):
        run = json.loads(run_json.read_text())
        spec, _ = load_model(str(run_json.parent / "config.json"))
        for r in run["requests"]:
            given = kvplan_inputs(run)
            got = _transfer_mib(spec, run["prefill_tp"], run["decode_tp"], r["prompt_tokens"],
                                run["block_size"], given.get("kv_dtype", "bf16"),
                                given["extra"])
            ok = set(got) == {r["avg_mib_per_transfer"]} and len(got) == r["transfers"]
            n, equal = n + 1, equal + ok
            out.append(f"| {run_json.parent.name} | {run['prefill_tp']} / {run['decode_tp']} | "
                       f"{run['block_size']} | {r['prompt_tokens']:,} | "
                       f"{r['avg_mib_per_transfer']:g} x {r['transfers']} | "
                       f"{', '.join(f'{g:g}' for g in got)} | {'equal' if ok else 'MISS'} |")
    return out + ["", f"{equal} of {n} equal (size and number of transfers)."]


def share(rows: list[Replay], test: Callable[[Replay], bool]) -> str:
    n = sum(test(r) for r in rows)
    return f"{n} of {len(rows)}" + (f" ({n / len(rows):.0%})" if rows else "")


def inside(i: int) -> Callable[[Replay], bool]:
    return lambda r: r.ratios is not None and BAND[0] <= r.ratios[i] <= BAND[1]


def _silicon_rows() -> list[str]:
    all_rows = replays()
    done = [r for r in all_rows if r.replayed]
    fits = fitted_ids()
    shaped = {row for s in SHAPED_BY for row in s.rows}
    held = [r for r in done if r.id not in fits]
    out = replay_table(done)

    unshaped = [r for r in held if r.id not in shaped]
    out += ["", f"Replayed: {len(done)} of {len(all_rows)} rows. Fitted: "
            f"{len(done) - len(held)} (no fitted constant names any of them). Held out: "
            f"{len(held)}; inside [{BAND[0]}, {BAND[1]}] on both TTFT and TPOT: "
            f"{share(held, lambda r: r.inside)}; TTFT alone {share(held, inside(0))}, TPOT "
            f"alone {share(held, inside(1))}. Of the held-out rows, "
            f"{len(held) - len(unshaped)} shaped a rule (written after they were read, "
            "below: no blind test of it) and "
            f"{len(unshaped)} did not; both inside on the unshaped ones: "
            f"{share(unshaped, lambda r: r.inside)}.", ""]
    out += [f"- shaped: {s.rule} ({s.commit}): {sum(r.id in s.rows for r in held)} rows"
            for s in SHAPED_BY if any(r.id in s.rows for r in held)]
    why = Counter(r.why_not for r in all_rows if not r.replayed)
    out += ["", "Not replayed:", ""]
    out += [f"- {n} x {reason}" for reason, n in sorted(why.items())]
    out.append("- the 1,585 SGLang / TensorRT-LLM rows: the prospective set, section 3")
    return out


def _counts(done: list[Replay]) -> list[str]:
    """Inside the band on both, TTFT and TPOT: over all and by model, GPU and engine."""
    out = [f"Inside [{BAND[0]}, {BAND[1]}] on both TTFT and TPOT: "
           f"{share(done, lambda r: r.inside)}; TTFT alone {share(done, inside(0))}, TPOT "
           f"alone {share(done, inside(1))}.", ""]
    by_engine: dict[str, list[Replay]] = {}
    for r in done:
        by_engine.setdefault(_engine_of(r), []).append(r)
    for name, group in sorted(by_engine.items()):
        out.append(f"- {name}: both {share(group, lambda r: r.inside)}; TTFT "
                   f"{share(group, inside(0))}; TPOT {share(group, inside(1))}")
    return out


def _prospective_rows() -> list[str]:
    """Section 3: the frozen prospective rows, by the session that first replayed them."""
    all_rows = prospective_replays()
    # The TensorRT-LLM cohort is reported in its own section (3j, tests/benches/disagg_trtllm).
    done = [r for r in all_rows if r.replayed and r.cohort != TRTLLM_COHORT]
    why = Counter(r.why_not for r in all_rows if not r.replayed)
    first = [r for r in done if r.cohort == FIRST_COHORT]
    new = [r for r in done if r.cohort != FIRST_COHORT]
    shaped = {row for s in SHAPED_BY for row in s.rows}
    rule = next(s for s in SHAPED_BY if s.commit == "bc725f6")
    out = [f"{len(all_rows):,} rows, frozen at commit c72d9db "
           "(tests/data/disagg/aiconfigurator_prospective_disagg.csv.gz) before the simulator "
           f"and its rules (bc0cfec) were written; replayed {len(done)}, in two cohorts "
           "(tests/benches/disagg_rows.py COHORTS).", "",
           f"### 3a. Prospective: {len(new)} rows first replayed after {rule.commit}", "",
           f"Blind: {rule.rule.split(', read from')[0]} ({rule.commit}). Chosen by a rule "
           "fixed before any of their results was seen: every frozen row the NVFP4 DeepSeek-R1 "
           "checkpoint (tests/data/disagg/deepseek-r1-nvfp4.json) makes replayable, i.e. all "
           "SGLang NVFP4 rows with full worker layouts and a stated concurrency (no other "
           "frozen row has both a full layout and an engine whose scheduler kvplan simulates). "
           f"Shaped rows among them: {sum(r.id in shaped for r in new)}.", "",
           *_counts(new), "",
           *_still_blind(new, shaped), "",
           *_counterfactual(new), "",
           f"### 3b. Shaped: {len(first)} rows first replayed after bc0cfec", "",
           "Read before the GEMM-type rule was written (their misses named it as a suspect): "
           f"shaped by it ({sum(r.id in rule.rows for r in first)} of {len(first)}), no blind "
           "test of it. They run FP8 (W8A8) GEMMs, which kvplan already priced at the FP8 "
           "peak, so the rule moves none of them.", "",
           *_counts(first), "",
           *_flow(done), "",
           *_admission(done), "",
           *_gather(done), "",
           *_decode_gather(done), "",
           *logits_gather_section(done), "",
           *_generator(done), "",
           *_input_budget(done), "",
           *sglang_recipe_section(done), "",
           *deepep_section(done), "",
           "| not replayed: why | rows |", "|---|---|"]
    out += [f"| {reason} | {n} |" for reason, n in sorted(why.items(), key=lambda x: -x[1])]
    out += ["", *_saturation(new, "3a"), "", *_saturation(first, "3b"), "",
            "Prospective rows (3a):", "", *replay_table(new), "", "Shaped rows (3b):", "",
            *replay_table(first), "", *trtllm_section(all_rows), "", *why_section(all_rows), "",
            *lengths_section(all_rows)]
    return out


def _flow(done: list[Replay]) -> list[str]:
    """Both cohorts with and without SGLang's disaggregated time side (63c3946), a rule every
    one of them shaped: the before and after, not a blind test."""
    rule = next(s for s in SHAPED_BY if s.commit == "63c3946")
    old = [r for r in replayed_with(done, flow=False) if r.replayed]
    n = sum(r.id in rule.rows for r in done)
    out = [f"### 3c. Shaped: SGLang's disaggregated time side ({rule.commit}), both cohorts", "",
           f"{rule.rule[0].upper()}{rule.rule[1:]}: {n} of these {len(done)} rows shaped it "
           "(all were read before it); no blind test of it. No frozen row that was not yet "
           "replayed becomes replayable with it (it changes times, not what kvplan sizes), so "
           "no new cohort was evaluated. The bootstrap (a prompt joins the prefill queue once "
           "the decode worker has preallocated its pages) and the decode side's admission by "
           "free pages: 3d (with them on, both sides of this line).", "",
           f"With it (above, both cohorts): both {share(done, lambda r: r.inside)}; TTFT "
           f"{share(done, inside(0))}; TPOT {share(done, inside(1))}.",
           f"Without it (the first token at the transfer's end, the prefill step formed when "
           f"the last ends, the least-loaded rank), computed beside it: both "
           f"{share(old, lambda r: r.inside)}; TTFT {share(old, inside(0))}; TPOT "
           f"{share(old, inside(1))}."]
    ratios = sorted(r.ratios[0] for r in done if r.ratios is not None)
    before = sorted(r.ratios[0] for r in old if r.ratios is not None)
    if ratios and before:
        out += [f"Median TTFT ratio (kvplan / measured): {before[len(before) // 2]:.2f} "
                f"without, {ratios[len(ratios) // 2]:.2f} with."]
    return out


def _admission(done: list[Replay]) -> list[str]:
    """Both cohorts with and without SGLang's decode-side admission (ADMISSION_COMMIT), a rule
    every one of them shaped: the before and after, not a blind test."""
    rule = next(s for s in SHAPED_BY if s.commit == ADMISSION_COMMIT)
    old = [r for r in replayed_with(done, admission=False) if r.replayed]
    n = sum(r.id in rule.rows for r in done)
    out = [f"### 3d. Shaped: SGLang's decode-side admission ({rule.commit}), both cohorts", "",
           f"{rule.rule[0].upper()}{rule.rule[1:]}: {n} of these {len(done)} rows shaped it "
           "(all were read before it); no blind test of it. It changes times, not what kvplan "
           "sizes: no frozen row not yet replayed becomes replayable, so no new cohort was "
           "evaluated. The rows state neither --max-running-requests, --mem-fraction-static "
           "nor the reservation: SGLang's defaults are taken (kvplan's decode pool at the "
           "row's layout, 512 reserved tokens).", "",
           f"With it (above, both cohorts): both {share(done, lambda r: r.inside)}; TTFT "
           f"{share(done, inside(0))}; TPOT {share(done, inside(1))}.",
           f"Without it (prompts prefilled as they come, the decode rank running at most the "
           f"requests of I + O tokens its KV holds), computed beside it: both "
           f"{share(old, lambda r: r.inside)}; TTFT {share(old, inside(0))}; TPOT "
           f"{share(old, inside(1))}."]
    fits = sum(admits_all(r) for r in done)
    c527 = next((r.ratios[0] for r in done if r.id.endswith("cfg527") and r.ratios), None)
    out += ["", f"At those defaults a decode rank's pool holds all its users' prompts plus 512 "
            f"reserved tokens each at once on {fits} of the {len(done)} rows (users over the "
            "decode ranks x (I + 512) within the pool's tokens), so there the admission holds "
            "no prompt back beyond the bootstrap's wait for the decode rank's next step "
            "boundary; the high-concurrency TTFT misses "
            + (f"(cfg527: kvplan {c527:.2f}x the measured) " if c527 is not None else "")
            + "are not the decode side's admission: kvplan's prefill serves more prompts a "
            "second than the rows' measured rate (the lines below 'Where 3a misses').", ""]
    out += _moved(done, old, (0,))
    return out


def _moved(done: list[Replay], old: list[Replay], which: tuple[int, ...]) -> list[str]:
    """The rows of `done` whose ratio `which` names (0 TTFT, 1 TPOT; any of them) moves by
    more than 5 % from the same row in `old` (the rule left out), each with both ratios."""
    names = ("TTFT", "TPOT")
    pairs = {r.id: r.ratios for r in old if r.ratios is not None}
    moved = [(r, pairs[r.id]) for r in done if r.ratios is not None and r.id in pairs
             and any(abs(r.ratios[i] / pairs[r.id][i] - 1) > 0.05 for i in which)]
    return [f"{' or '.join(names[i] for i in which)} moves by more than 5% on {len(moved)} of "
            f"{len(done)} rows:",
            *(f"- {r.id.removeprefix(PREFIX)}: TTFT ratio {b[0]:.2f} -> {r.ratios[0]:.2f}, "
              f"TPOT ratio {b[1]:.2f} -> {r.ratios[1]:.2f}" for r, b in moved if r.ratios)]


GATHER_COMMIT = "6084616"  # SGLang's prefill gather without DeepEP (kvplan.perf.roofline)


def _median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _gather(done: list[Replay]) -> list[str]:
    """Both cohorts with and without SGLang's prefill gather (GATHER_COMMIT), a rule every one
    of them shaped, and what else the prefill's cost was checked for (issue 29, disagg29)."""
    rule = next(s for s in SHAPED_BY if s.commit == GATHER_COMMIT)
    old = [r for r in replayed_with(done, gather=False) if r.replayed]
    n = sum(r.id in rule.rows for r in done)

    def med(rows: list[Replay]) -> str:
        return f"{_median([r.ratios[0] for r in rows if r.ratios]):.2f}"

    out = [f"### 3e. Shaped: SGLang's prefill gather without DeepEP ({rule.commit}), both "
           "cohorts", "",
           f"{rule.rule[0].upper()}{rule.rule[1:]}: {n} of these {len(done)} rows shaped it "
           "(all were read before it); no blind test of it. It changes times, not what kvplan "
           "sizes: no frozen row not yet replayed becomes replayable, so no new cohort was "
           "evaluated. The rows name no --moe-a2a-backend: SGLang's default (none) is taken "
           "(since sgldeepep59, 3l, the DeepEP roles of the rows matched to an srt-slurm "
           "recipe run DeepEP instead, with and without this rule); on SM 10.x its MoE runner "
           "defaults to flashinfer_trtllm for these checkpoints (server_args.py:1226-1234).",
           "",
           f"With it (above, both cohorts): both {share(done, lambda r: r.inside)}; TTFT "
           f"{share(done, inside(0))}; TPOT {share(done, inside(1))}; median TTFT ratio "
           f"{med(done)}.",
           f"Without it (the prefill's MLP layers as kvplan priced them before: an FP8 / bf16 "
           f"all-to-all of each rank's tokens x top-8 under EP, one all-reduce under DP "
           f"attention without EP), computed beside it: both {share(old, lambda r: r.inside)}; "
           f"TTFT {share(old, inside(0))}; TPOT {share(old, inside(1))}; median TTFT ratio "
           f"{med(old)}.", ""]
    out += _moved(done, old, (0,))
    out += ["", "What else a DeepSeek-R1 prefill worker was checked for against SGLang "
            "0.5.8.post1's code and the cards' datasheets (issue 29, disagg29), with no rule "
            "written (numbers at 6084616):", "",
            "- kvplan's step on one rank of cfg527's prefill worker (B200 DP4 EP4, NVFP4, "
            "chunk 4,096 tokens a rank): one 1,024-token prompt 181.7 ms (the eager launch "
            "129.9: 70 us a launched op, PREFILL_LAUNCH_FIT, fitted on TP-8 H200 prefills; the "
            "gather's all-reduces 15.9; attention projections 13.5; experts 12.8; the rest "
            "9.6); a full step of 4 prompts 294.1 ms (launch 129.9, gather 60.7, projections "
            "54.0, experts 26.6, attention 7.8, the kv_b up-projection 5.3, dense MLPs and "
            "shared expert 4.9, the rest 5.0). The worker's measured 15.6 prompts a second "
            "are 257 ms a prompt on each of its 4 ranks, as if each prompt paid most of a "
            "step alone; kvplan's step grows with its prompts only by their GPU time.",
            "- MLA's prefill as MHA: SGLang runs an extend step without speculative decoding as "
            "MHA over the up-projected K / V (trtllm_mla, the SM 10.x default for "
            "DeepseekV3ForCausalLM, server_args.py:1201-1210; models/deepseek_common/"
            "attention_backend_handler.py handle_attention_trtllm_mla -> MHA_CHUNKED_KV): "
            "q / k 192 and v 128 over 128 heads, 43.0 GFLOPs a layer for a 1,024-token prompt "
            "and 2,749 at 8,192 (absorbed: 146.2 and 9,347). kvplan prices the prefill so "
            "already (MLAForm.naive, with the kv_b up-projection of every prompt token: 34.4 "
            "and 274.9 GFLOPs a layer); the absorbed form is 3.4x the attention FLOPs, the "
            "other way from these misses. MHA_CHUNKED_KV up-projects a chunk's prefix again "
            "(an 8,192-token prompt in 2,048-token chunks: 12,288 more kv_b rows a layer, "
            "25.2 TFLOPs, about 16 ms at 0.7 of the bf16 peak against about 1,050 ms): not "
            "charged, under 2 %.",
            "- The chunk: --chunked-prefill-size 16,384 on cards of 160 GiB or more, // "
            "--dp-size under DP attention (4da0407), --max-prefill-tokens 16,384: the "
            "simulation's budget already (the latter binding where it equals the chunk, a "
            f"prompt after the first joining only below what is left of it: {INPUT_BUDGET_COMMIT}, "
            "3i). Two-batch and single-batch overlap are off by default "
            "(server_args.py:575-576) and the rows state neither; on, they hide communication "
            "(faster). Had the rows run DeepEP (not stated), its normal-mode dispatch sends a "
            "token once to each rank holding one of its experts, at most min(8, EP) copies, "
            "not kvplan's top-8: faster too.",
            "- Peaks: gpus.json's dense figures are the datasheets' sparse ones halved (B200 "
            "FP4 / FP8 / bf16 9,000 / 4,500 / 2,250 TFLOPS, GB200 10,000 / 5,000 / 2,500, GB300 "
            "15,000 / 5,000 / 2,500: NVIDIA's 15 PF dense NVFP4 a Blackwell Ultra GPU); no "
            "sparse figure is used. Unchanged.",
            "- The KV send: SGLang's fp8 MLA cache holds 576 B a token a layer (the 512 latent "
            "+ 64 rope values), x 61 layers = 35,136 B a token: 36.0 MB for a 1,024-token "
            "prompt, 288 MB for 8,192; at the measured rates (cfg527 15.6 1,024-token prompts "
            "a second, cfg655 5.2 8,192-token ones) 0.56 and 1.49 GB/s a worker, against "
            "InfiniBand NDR's 45 GB/s a GPU (NVLink on GB200 / GB300), sent off the "
            "scheduler's thread (kvplan.engines.sglang.connectors). Not binding.",
            "- The rows' launch flags are not public: aiconfigurator's silicon_sample.csv is "
            "'a 2026-04 dump of the internal benchmark DB' (docs/design/"
            "prediction_regression_gate_design.md at 095f58a5). Every replayed row states "
            "prefill_batch_size 1, which aiconfigurator's own generator writes as the prefill "
            "worker's --max-running-requests (generator/rule_plugin/sglang.rule `prefill "
            "max_batch_size`, config/backend_config_mapping.yaml); whether these runs took it "
            "is not stated, so kvplan keeps SGLang's default. The gap left (kvplan's prefill "
            "serving more prompts a second than measured) is unexplained by the code read. "
            "Read further below (3f, the prefill rate)."]
    return out


def _decode_gather(done: list[Replay]) -> list[str]:
    """Both cohorts with and without SGLang's decode gather (DECODE_GATHER_COMMIT), a rule
    every one of them shaped, and what aiconfigurator's code says of the prefill's launch
    (issue 29, disagg29)."""
    rule = next(s for s in SHAPED_BY if s.commit == DECODE_GATHER_COMMIT)
    old = [r for r in replayed_with(done, decode_gather=False) if r.replayed]
    n = sum(r.id in rule.rows for r in done)

    def med(rows: list[Replay]) -> str:
        return f"{_median([r.ratios[1] for r in rows if r.ratios]):.2f}"

    dp = sum(map(_prefill_dp, done))
    out = [f"### 3f. Shaped: SGLang's decode gather without DeepEP ({rule.commit}), both "
           "cohorts", "",
           f"{rule.rule[0].upper()}{rule.rule[1:]}: {n} of these {len(done)} rows shaped it "
           "(all were read before it); no blind test of it. It changes times, not what kvplan "
           "sizes: no frozen row not yet replayed becomes replayable, so no new cohort was "
           "evaluated. The rows name no --moe-a2a-backend and aiconfigurator's generator "
           "writes none (generator/config/backend_templates/sglang/cli_args.0.5.8.j2 at "
           "095f58a5 and at f90534bc, 2026-02-11): SGLang's default (none) is taken (the "
           "srt-slurm recipes' DeepEP roles excepted since sgldeepep59, 3l). SGLang's "
           "decode CUDA graphs are captured at MAX_LEN; kvplan times the ranks even (the "
           "busiest rank's batch on each).", "",
           f"With it (above, both cohorts): both {share(done, lambda r: r.inside)}; TTFT "
           f"{share(done, inside(0))}; TPOT {share(done, inside(1))}; median TPOT ratio "
           f"{med(done)}.",
           f"Without it (decode MLP layers as kvplan priced them before: an FP8 / bf16 "
           f"all-to-all of each rank's tokens x top-8 under EP, TP attention too; one "
           f"all-reduce on the MoE layers under DP attention without EP), computed beside it: "
           f"both {share(old, lambda r: r.inside)}; TTFT {share(old, inside(0))}; TPOT "
           f"{share(old, inside(1))}; median TPOT ratio {med(old)}.", ""]
    out += _moved(done, old, (1, 0))
    out += ["", "The prefill rate (issue 29, disagg29): whether the measured prefill workers "
            "ran one request at a time, read in ai-dynamo/aiconfigurator (095f58a5, and its "
            "history to the rows' measurement dates) and SGLang 0.5.5.post2 / 0.5.8.post1; no "
            "rule written:", "",
            "- The generator turns a prefill worker's batch size into --max-running-requests "
            "(generator/module_bridge.py `task_config_to_generator_config`: max_batch_size = "
            "the result's (p)bs; config/backend_config_mapping.yaml max_batch_size -> "
            "max-running-requests; backend_templates/sglang/cli_args.0.5.8.j2) and its SGLang "
            "rules set `prefill max_batch_size = (max_batch_size if max_batch_size else 1)` and "
            "--max-prefill-tokens ISL + 1,500 (generator/rule_plugin/benchmark/sglang.rule "
            "from its benchmark mode, 71bb3d00, 2026-01-30; rule_plugin/sglang.rule too at "
            "f90534bc, 2026-02-11, the day cfg527 was measured, and at 095f58a5).",
            "- SGLang divides --max-running-requests by --dp-size under DP attention and "
            "asserts the quotient above 0 (0.5.5.post2 managers/tp_worker.py:281-290; "
            "0.5.8.post1 model_executor/model_runner.py:558-566, managers/tp_worker.py:281): "
            "a DP-attention prefill worker given --max-running-requests 1 does not start "
            "('max_running_request is zero'). "
            f"{dp} of these {len(done)} rows have a DP-attention prefill worker, so they were "
            "not launched with the generator's flag as written; the rows' source records no "
            "launch command (silicon_data_source: a DB dump, config id, workflow run id), and "
            "aiconfigurator's config adapter writes prefill_batch_size 1 where a recipe "
            "declares no batch size, as an assumption (sdk/config_adapter/dynamo.py:648-652 at "
            "095f58a5: 'prefill batch size defaults to 1').",
            "- So the code read does not show the measured prefill workers ran one request at "
            "a time (nor at the generator's --max-prefill-tokens): kvplan keeps SGLang's "
            "defaults, and the prefill rate gap above stays unexplained."]
    return out


@functools.cache
def _prefill_dp_size() -> dict[str, int]:
    """Each prospective row's prefill DP-attention size, by replay id."""
    return {PREFIX + row["id"]: int(row["prefill_attention_dp_size"] or 1)
            for row in prospective_rows()}


def _prefill_dp(r: Replay) -> bool:
    """Whether the row's prefill workers run DP attention."""
    return _prefill_dp_size()[r.id] > 1


def _group_line(rows: list[Replay]) -> str:
    """Counts in band (both, TTFT, TPOT) and the median TTFT ratio of `rows`."""
    ratios = [r.ratios[0] for r in rows if r.ratios]
    return (f"both {share(rows, lambda r: r.inside)}; TTFT {share(rows, inside(0))}; "
            f"TPOT {share(rows, inside(1))}; median TTFT ratio "
            f"{_median(ratios) if ratios else math.nan:.2f}")


def _generator(done: list[Replay]) -> list[str]:
    """Both cohorts at SGLang's defaults and at aiconfigurator's generated prefill flags (not a
    rule: the rows' flags are not recorded, 3f), and what else a PD prefill worker does, read in
    SGLang (issue 29, prefill29b)."""
    gen = {r.id: r for r in replayed_with(done, generator=True) if r.replayed}
    new = [gen[r.id] for r in done if r.id in gen]
    tp_rows = [r for r in done if not _prefill_dp(r)]
    out = ["### 3h. Counterfactual: aiconfigurator's generated prefill flags (prefill29b), "
           "both cohorts", "",
           "Not a rule: kvplan keeps SGLang's defaults (the rows' launch flags are not "
           "recorded, 3f). The prefill at the flags aiconfigurator's generator writes for an "
           "SGLang prefill worker (generator/rule_plugin/sglang.rule at 095f58a5; "
           "tests/benches/disagg_rows.py generator_prefill): --max-prefill-tokens ISL + 1,500, "
           "which SGLang's PrefillAdder reads as a step of whole prompts while each is below "
           "what is left (0.5.8.post1 managers/schedule_policy.py:715-716, 732-735; "
           "0.5.5.post2 :584-585, 601-604): 2 prompts of 1,024 tokens a step, 1 of 8,192, "
           "within the chunk; and --max-running-requests 1 on the "
           f"{len(tp_rows)} rows whose prefill worker has TP attention (one prompt a step: "
           "0.5.8.post1 managers/scheduler.py:556-560, 2016-2018), the "
           f"{len(done) - len(tp_rows)} DP-attention ones keeping SGLang's default seats (it "
           "does not start with 1, 3f). Its 2 metadata buffers a worker (scheduler.py:910-912) "
           "would also hold a TP worker to 2 prompts between bootstrap and the KV sent: not "
           "modelled. Computed beside the rows, not used to set anything.", "",
           f"At SGLang's defaults (above, both cohorts): {_group_line(done)}.",
           f"At the generator's flags: {_group_line(new)}."]
    for name, test in (("TP-attention prefill", lambda r: not _prefill_dp(r)),
                       ("DP-attention prefill", _prefill_dp)):
        for isl in (1024, 8192):
            a = [r for r in done if test(r) and r.input_len == isl]
            b = [r for r in new if test(r) and r.input_len == isl]
            if a:
                out += [f"- {name}, ISL {isl:,}: defaults {_group_line(a)}; "
                        f"generator's flags {_group_line(b)}"]
    pairs = {r.id: r.ratios for r in done if r.ratios is not None}
    moved = [(r, pairs[r.id]) for r in new if r.ratios is not None and r.id in pairs
             and abs(r.ratios[0] / pairs[r.id][0] - 1) > 0.05]
    out += ["", f"TTFT moves by more than 5% on {len(moved)} of {len(done)} rows:"]
    out += [f"- {r.id.removeprefix(PREFIX)}: TTFT ratio {b[0]:.2f} -> {r.ratios[0]:.2f}, "
            f"TPOT ratio {b[1]:.2f} -> {r.ratios[1]:.2f}" for r, b in moved if r.ratios]
    out += ["", "What else a PD prefill worker does, read in SGLang 0.5.8.post1 (0.5.5.post2 "
            "the same where checked; issue 29, prefill29b), with no rule written:", "",
            "- Its loop: a prefill server keeps the overlap schedule (disaggregation_mode "
            "prefill turns off only CUDA graphs, server_args.py:2328-2341, piecewise graphs off "
            "by default, :579): event_loop_overlap_disagg_prefill "
            "(disaggregation/prefill.py:364-401) launches step k + 1 before it processes step "
            "k's result (kvplan's prefill lookahead, 3c), each step eager (kvplan's launch "
            "time, 3e). Each iteration polls the bootstrap queue (pop_bootstrapped, :227) and "
            "the sent prompts (process_disagg_prefill_inflight_queue, :524) with an all-reduce "
            "over the TP group's gloo (CPU) group: not priced.",
            "- The KV send: process_batch_result_disagg_prefill (:403) hands each finished "
            "prompt to send_kv_chunk (:652; chunks as they finish, :517, :629), which posts the "
            "transfer and returns (NIXL add_transfer_request, nixl/conn.py:562; Mooncake's "
            "transfer queue, mooncake/conn.py:978): the next step does not wait for it; the "
            "prompt keeps its pages until the poll says Success (3e: not binding at the "
            "measured rates).",
            "- The first token: the prefill samples it from one position a prompt (the last: "
            "layers/logits_processor.py:426-440); DeepSeek-R1's lm_head is 2 x 7,168 x "
            "129,280 = 1.85 GFLOPs a prompt, under 0.01 % of a 1,024-token prompt's.",
            "- The chunk and --max-prefill-tokens defaults, DeepEP and the MLA prefill kernels: "
            "3e and 3f. The TTFT's client: the rows' source records none (a DB dump, 3f); "
            "kvplan counts from the send to the first token on the decode side (3c)."]
    return out


def _input_budget(done: list[Replay]) -> list[str]:
    """Both cohorts with and without SGLang's prefill input budget (INPUT_BUDGET_COMMIT), a rule
    every one of them shaped (issue 29, pdload53): the before and after, not a blind test."""
    rule = next(s for s in SHAPED_BY if s.commit == INPUT_BUDGET_COMMIT)
    old = [r for r in replayed_with(done, input_budget=False) if r.replayed]
    n = sum(r.id in rule.rows for r in done)
    new_by = {r.id: r for r in done}
    out = [f"### 3i. Shaped: SGLang's prefill input budget ({rule.commit}), both cohorts", "",
           f"{rule.rule[0].upper()}{rule.rule[1:]}: {n} of these {len(done)} rows shaped it "
           "(all were read before it); no blind test of it. It changes times, not what kvplan "
           "sizes: no frozen row not yet replayed becomes replayable, so no new cohort was "
           "evaluated. Under DP attention the chunk (16,384 // --dp-size) binds first and the "
           "budget moves nothing; on the H200 (chunk 8,192) an 8,192-token prompt fills the "
           "chunk alone either way.", "",
           f"With it (above, both cohorts): {_group_line(done)}.",
           f"Without it (the chunk alone, the prompt crossing it cut to what is left), computed "
           f"beside it: {_group_line(old)}."]
    for name, test in (("TP-attention prefill", lambda r: not _prefill_dp(r)),
                       ("DP-attention prefill", _prefill_dp)):
        for isl in (1024, 8192):
            a = [r for r in old if test(r) and r.input_len == isl]
            b = [new_by[r.id] for r in a if r.id in new_by]
            if a:
                out += [f"- {name}, ISL {isl:,}: without {_group_line(a)}; "
                        f"with {_group_line(b)}"]
    out += ["", "Read: one 8,192-token prompt a step lowers kvplan's TTFT at low load (a "
            "prompt no longer waits for a second one's tokens: cfg535 / 481 / 569 at 4 in "
            "flight 1.14 / 1.02 / 1.00 -> about 0.8 / 0.74 / 0.74) and raises it where the "
            "prefill saturates (cfg489 / 575, 10 TP4 prefill workers at 2,048 in flight: 0.88 "
            "/ 0.99 -> 1.78 / 2.16). Those two rows' workers served 5.7 and 6.3 prompts of "
            "8,192 tokens a second each (Little's law over the measured times): 177 and 158 ms "
            "a prompt, against kvplan's 236 and 235 ms for one prompt alone (eager launches "
            "and GPU time added), while at 4 in flight the measured TTFT is about 1.3x "
            "kvplan's one prompt plus handover: the prefill's own time, not its batching, is "
            "what is left (the overlap loop launching step k + 1 while step k runs on the GPU "
            "is not priced: kvplan adds each step's launches to its GPU time).", ""]
    out += _moved(done, old, (0,))
    return out


def _still_blind(done: list[Replay], shaped: set[str]) -> list[str]:
    """The cohort less the rows a rule was since written for (SHAPED_BY): the blind test left."""
    blind = [r for r in done if r.id not in shaped]
    rules = sorted({s.commit for s in SHAPED_BY if any(r.id in s.rows for r in done)})
    return [f"Shaped since ({', '.join(rules) or 'none'}, SHAPED_BY): "
            f"{len(done) - len(blind)} of these {len(done)}; the {len(blind)} still blind: "
            f"both {share(blind, lambda r: r.inside)}; TTFT {share(blind, inside(0))}; TPOT "
            f"{share(blind, inside(1))}."]


def _counterfactual(done: list[Replay]) -> list[str]:
    """The same rows under the rule before bc725f6 (NVFP4 at bf16 math): what the rule did to
    the blind rows, measured once with it (not a tuning target)."""
    old = [r for r in replayed_with(done, fp4=False) if r.replayed]
    return [f"The same {len(old)} rows with the cards' FP4 peak removed (NVFP4 GEMMs at bf16 "
            "math and one kernel each, the rule before bc725f6), computed beside it, not used "
            f"to choose it: both {share(old, lambda r: r.inside)}; TTFT "
            f"{share(old, inside(0))}; TPOT {share(old, inside(1))}. The rule prices the "
            "prefill's expert and MLP GEMMs faster (lower TTFT, where kvplan was already "
            "below the measured at load) and adds an activation-quantization kernel to each "
            "W4A4 GEMM (higher TPOT at small batches, where it was already above)."]


def _saturation(done: list[Replay], name: str) -> list[str]:
    """The prospective rows' TTFT misses by load, and, where the measured TTFT is over a
    second, the prompts per second each prefill worker served (Little's law over the measured
    times) against one prompt alone on a worker in kvplan's cost model."""
    def share_low(rows: list[Replay]) -> str:
        return share(rows, lambda r: r.ratios is not None and r.ratios[0] < BAND[0])

    low = [r for r in done if r.concurrency is not None and r.concurrency <= 16]
    high = [r for r in done if r.concurrency is not None and r.concurrency >= 32]
    out = [f"Where {name} misses: TTFT below the band at 16 or fewer requests in flight "
           f"{share_low(low)}, at 32 or more {share_low(high)}; TPOT above the band at 16 or "
           f"fewer {share(low, lambda r: r.tpot_ms > BAND[1] * r.measured_tpot_ms)}. Where "
           "the measured TTFT is over a second, Little's law over the measured times "
           "(requests in flight / (TTFT + (O - 1) x TPOT), over the row's prefill workers) "
           "gives the rate each prefill worker served, beside kvplan's time for one prompt "
           "alone on one of the worker's ranks (a DP-attention worker runs one per rank at "
           "once, and the simulation batches prompts up to the chunked-prefill budget, so a "
           "worker serves more than 1,000 / that a second):", ""]
    over: list[float] = []
    for r in done:
        if r.concurrency is None or r.measured_ttft_ms <= 1000 or r.prefill_ms is None:
            continue
        workers = int(r.label.split("P ")[0])
        rate = r.concurrency / ((r.measured_ttft_ms + (r.output_len - 1)
                                 * r.measured_tpot_ms) / 1e3) / workers
        cap = prefill_capacity(r)
        what = "" if cap is None else (
            f"a full simulated step ({cap[0]} prompts on each of {cap[1]} ranks) takes"
            if cap[3] == 1 else f"one prompt in {cap[3]} chunked steps on each of {cap[1]} "
            "ranks takes")
        full = "" if cap is None else (
            f"; {what} {cap[2]:,.0f} ms: at most {cap[0] * cap[1] * 1e3 / cap[2]:,.1f} "
            f"prompts/s, {cap[0] * cap[1] * 1e3 / cap[2] / rate:,.1f} x the measured rate")
        if cap is not None:
            over.append(cap[0] * cap[1] * 1e3 / cap[2] / rate)
        out.append(f"- {r.id.removeprefix(PREFIX)}: {rate:,.2f} prompts/s of "
                   f"{r.input_len:,} tokens per worker ({1e3 / rate:,.0f} ms each); kvplan "
                   f"{r.prefill_ms:,.0f} ms for one alone on a rank{full}; TTFT "
                   f"{r.ttft_ms or 0:,.0f} vs {r.measured_ttft_ms:,.0f} ms measured")
    if over:
        over.sort()
        out += ["", f"kvplan's most prompts a second over the measured rate, these "
                f"{len(over)} rows: median {over[len(over) // 2]:,.2f}, from {over[0]:,.2f} "
                f"to {over[-1]:,.2f} (the measured rate is a floor of the worker's capacity "
                "where its TTFT shows no queue)."]
    return out


def _engine_of(r: Replay) -> str:
    """The rows' model, GPU and engine as their ids spell them (for the per-group counts)."""
    parts = r.id.removeprefix(PREFIX).split("_disagg_")[0].split("_")
    return " ".join(p for p in parts if not p.isdigit())


def _unstated_row() -> list[str]:
    """The gtl Qwen3-32B vLLM row: kvplan at the concurrency its decode_batch_size implies, and
    at one request per decode worker, beside the measurement (not counted)."""
    row = next(r for r in rows() if r["id"] == QWEN3_32B_VLLM)
    y = int(row["decode_num_workers"])
    lines = []
    for conc in (int(row["decode_batch_size"]) * y, y):
        ttft, tpot, _ = predict(row, conc)
        lines.append(f"- at {conc} in flight ({conc // y} per decode worker): TTFT "
                     + ("prefill saturated" if ttft is None else f"{ttft:,.1f} ms")
                     + f", TPOT {tpot:,.2f} ms")
    return [f"The vLLM Qwen3-32B row ({QWEN3_32B_VLLM}: 8 prefill workers of TP1, 2 decode "
            "workers of TP4, 4000/1000, measured TTFT 367.7 ms, TPOT 8.75 ms) states no "
            "concurrency. Its decode_batch_size, 224, is the decode engine's max batch "
            "(aiconfigurator's generator writes it as max_num_seqs), and the benchmark sweeps "
            "the concurrency (1, 2, 8, 16, 32, 64, 128, and 0.95 / 1 / 1.05 x 448). At 224 "
            "requests of mean context 4,500 per TP4 worker, a decode step reads 224 x 4,500 x "
            "32 KiB = 33 GB of fp8 KV per GPU (64 layers x 2 x 2 KV heads x 128 on each of 4 "
            "ranks), 9.9 ms at H100's 3.35 TB/s before any weight: the measured 8.75 ms TPOT "
            "cannot come from that batch, so the row ran at a lower point of the sweep, which "
            "one unknown. Not replayed (counted above); kvplan, for reference:", "", *lines]
def _residuals() -> list[str]:
    """Where TTFT misses: measured minus predicted at low load, and the prompts per second a
    saturated prefill worker really served (Little's law over the measured times)."""
    done = [r for r in replays() if r.replayed and r.ttft_ms is not None]
    lines = ["TTFT minus kvplan's at 16 or fewer requests in flight, by prompt length:"]
    for isl in sorted({r.input_len for r in done}):
        gaps = sorted(r.measured_ttft_ms - r.ttft_ms for r in done
                      if r.input_len == isl and r.concurrency is not None
                      and r.concurrency <= 16)
        if gaps:
            lines.append(f"- {isl:,} tokens: {gaps[0]:+,.0f} to {gaps[-1]:+,.0f} ms "
                         f"({len(gaps)} rows)")
    lines += ["", "The simulation packs the waiting prompts into one prefill step (vLLM takes "
              "them up to --max-num-batched-tokens, 16,384 in these recipes), so an eager "
              "prompt's launch time is paid once per step. Where the measured TTFT shows a "
              "saturated prefill worker (over a second), Little's law over the measured times "
              "(requests in flight / (TTFT + (O - 1) x TPOT)) gives the rate it served:"]
    for r in replays():
        if r.replayed and r.concurrency is not None and r.measured_ttft_ms > 1000:
            rate = r.concurrency / ((r.measured_ttft_ms + (r.output_len - 1)
                                     * r.measured_tpot_ms) / 1e3)
            lines.append(f"- {r.id.removeprefix(PREFIX)}: {rate:,.1f} prompts/s of "
                         f"{r.input_len:,} tokens ({1e3 / rate:,.1f} ms each; kvplan: "
                         f"{r.prefill_ms:,.1f} ms for one prompt alone on one of the "
                         "worker's ranks)")
    return lines


def main() -> None:
    lines = [
        "# kvplan plan --disagg against public measurements",
        "",
        "Generated by `python -m tests.benches.disagg_bench` (do not edit). The guide is "
        "[disagg.md](disagg.md).",
        "",
        "## 1. The KV handed over, against vLLM NixlConnector logs",
        "",
        "`Avg MB per transfer` is MiB (bytes / 2**20, rounded to 3 decimals: "
        "vllm/distributed/kv_transfer/kv_connector/v1/nixl/stats.py). kvplan's "
        "`transfer_bytes` (one per read a decode rank posts) at every prompt length the log "
        "allows:",
        "",
        *_log_rows(),
        "",
        "### 1b. Measured here with vLLM 0.32.0's CPU build (not public logs)",
        "",
        "No public log covers MLA or a prefill/decode TP mismatch, so these were produced on "
        "this project's own machine (2 CPU cores): vLLM 0.32.0's CPU build with NIXL 1.5.1 "
        "(UCX over TCP / shared memory), a prefill and a decode OpenAI server on 127.0.0.1 "
        "(NixlConnector, kv_buffer_device cpu), shrunken real configs with dummy weights, one "
        "request at a time (tests/benches/nixl_cpu_run.py; each run's commands, versions, "
        "config and log lines in tests/data/disagg/nixl_cpu/). The CPU attention backend "
        "takes blocks of a multiple of 32; the MLA runs were given no block size and read "
        "128-token blocks (the decode log's 'remote block size 128', the block ids the "
        "prefill server named). The rules were read from vLLM's source before these runs; "
        "none was changed after them. The decode server logs an idle interval's metrics at "
        "DEBUG (vllm/v1/metrics/loggers.py), so the runs log at DEBUG. Per layer kind "
        "(issue 29): the sliding-window run is the gemma-3-27b shrink with its window cut to "
        "512, so that a 1,500-token prompt runs past it; the prefill server named 17 blocks "
        "(cdiv(512, 32) + 1, nixl/base_scheduler.py blocks_per_sw) for each of the five "
        "sliding groups and 47 for the full group, and the decode read that many: NIXL sends "
        "the window's tail of a sliding layer, not every block. The fp8 run is given "
        "--kv-cache-dtype fp8 (per-tensor scales, kept beside the cache, not in its pages: the "
        "only fp8 the CPU backend takes). The hybrid run is the granite-4.0-h-micro shrink "
        "(18 Mamba2 layers, 2 attention) with VLLM_SSM_CONV_STATE_LAYOUT=DS, which NIXL "
        "asserts for Mamba (nixl/base_worker.py); vLLM raised its attention block to 1152 and "
        "kept the SSM state in float32 (platforms/cpu.py), so kvplan sizes it for the CPU "
        "platform (kvplan_platform in its run.json): one state slot per Mamba layer, 999 of "
        "the 1,000 tokens (the last is recomputed on decode). kvplan's number for each of "
        "these three was written down before its run.",
        "",
        *_measured_here_rows(),
        "",
        "## 2. TTFT and TPOT, against aiconfigurator's measured disaggregated rows",
        "",
        "Rows of https://github.com/ai-dynamo/aiconfigurator (commit 095f58a5, "
        "tools/accuracy_tracking/silicon_refs.csv and aic-core/.../silicon_sample.csv; "
        "tests/benches/disagg_rows.py), each replayed at its own prefill and decode worker "
        "counts, layouts and stated concurrency (`evaluate_xy` at a stated concurrency: the "
        "closed-loop simulation of both roles, kvplan.analysis.simulate.disagg_sim: the users "
        "resend when their last token arrives; each prefill rank batches the waiting prompts "
        "up to the engine's token budget per step, the step timed by the cost model for that "
        "many prompts; the handover ends on a simulated decode step's boundary, + 1.5 decode "
        "steps to the first token (vLLM's NIXL flow); TPOT from the simulated decode steps at "
        "their batch; the mean over every user's requests but the first and last). Kimi-K2.5 "
        "runs as its language "
        "model (tests/data/disagg/SOURCES.md). The vLLM Kimi-K2.5 rows run at their public "
        "recipes' layouts, which their fields misstate (DP ranks written as tp_size): "
        + RECIPES[("moonshotai/Kimi-K2.5", "gb200", "vllm", "697")].source + ".",
        "",
        *_silicon_rows(),
        "",
        *_residuals(),
        "",
        *_unstated_row(),
        "",
        "## 3. Prospective rows",
        "",
        "Every other disaggregated row aiconfigurator has at 095f58a5 (SGLang and TensorRT-LLM, "
        "tests/data/disagg/SOURCES.md), replayed by the same code as section 2 at the row's own "
        "fields (TP = tp_size x attention_dp_size, EP = moe_ep_size; no recipe is known for "
        "them), where kvplan sizes the checkpoint, simulates the engine's scheduler and the row "
        "states its concurrency; the others counted with why.",
        "",
        *_prospective_rows(),
        "",
        "## 4. Public disaggregated runs outside aiconfigurator (held out, prospective)",
        "",
        "Measured TTFT / TPOT with both roles' layouts from public issues and reports "
        "(tests/data/disagg/public_disagg_runs.json, committed before kvplan ran on it), "
        "replayed by the same code as sections 2 and 3 at each point's stated concurrency "
        "(tests/benches/disagg_public.py). `~`: the source rounds the number itself.",
        "",
        *public_runs_section(),
        "",
        "### 4b. Prospective: Anyscale's Ray Serve PD runs (prospdis65, frozen, first evaluated)",
        "",
        "gpt-oss-120b on vLLM 0.11.0 with NixlConnector over UCX, 11 runs / 61 points "
        "(tests/data/disagg/public_disagg_runs65.json: what each states, how it is read, what "
        "was found and left out), frozen before kvplan ran on them and replayed by the same "
        "code as section 4 (tests/benches/prospdis65_runs.py), with the points' own client "
        "(vllm bench serve: every request averaged, the first burst included; raypd65, shaped: "
        "written after the first timed evaluation was read; the runner's docstring decomposes "
        "what is left).",
        "",
        *prospdis65_section(*prospdis65_replay()),
        "",
        "### 4c. Prospective: Dynamo vLLM P/D runs on B200 (prospdis66, frozen; shaped since "
        "dynnocon67)",
        "",
        "NVIDIA Dynamo with vLLM 0.20.1 (vllm-runtime:1.2.1) and NixlConnector on GKE B200 "
        "nodes, genai-perf at concurrency 16 / 32: Llama-3.1-70B FP8 (one and two nodes) and "
        "DeepSeek-R1 (two nodes), 8 runs / 15 points (tests/data/disagg/"
        "public_disagg_runs66.json: what each states, how it is read, what was assumed; the "
        "search and its near misses: prospdis66_search.json), frozen before kvplan ran on them "
        "and replayed by the same code as section 4 (tests/benches/prospdis66_runs.py), with "
        "the decode workers without a KV connector and genai-perf's warm-up and measured "
        "requests as one closed loop (dynnocon67), each role at its YAML's launch flags "
        "(dynpool67: memory fraction, block size, token budget); every point shaped by both "
        "(the runner's docstring gives before -> after).",
        "",
        *prospdis66_section(*prospdis66_replay()),
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
