"""sglprefill68 (issue 30): kvplan's SGLang prefill step for DeepSeek-V3 / R1 FP8 TP 8 H200
against the engine-timed prefills (tests.benches.sglprefill68_anchors), and how kvplan's step
grows with the new tokens, op by op.

The step is the simulator's (the row's MixedStepCost.seconds with no decodes, the function
SGLang's prefill batch is priced with), on sgl200ttft68's engine (row 289's setup: DeepSeek-R1
FP8 H200 TP 8, SGLang 0.5.9's rules); the split is kvplan.perf.roofline.step_time's by_op for
one prompt of the same tokens with the same common arguments.

DECISION RULE (committed before any held-out replay here; the anchors are the launch fit's
rows, shaped). Arm: the eager launch as the async stream (kvplan.perf.launch_model "stream",
launchfit53's counterfactual: SGLang's prefill forward has no host sync, so the CPU runs ahead
under long kernels), its one constant refitted by launch_models (89 us on today's tree, the
4 fit rows), against today's "sum" at PREFILL_LAUNCH_FIT; everything else as sgl200ttft68's
client arm (aiconfig_agg_runs.CLIENT_WORKLOAD on). Counterfactual only: no default changes.
Sets: sgl200ttft68's 33 held-out DeepSeek-R1 FP8 H200 TP 8 SGLang 0.5.9 rows (split_name
"DeepSeek H200 held out"); its 6 shaped rows apart; the 4 anchors (shaped).
Met if, on the 33 held out: median |TPOT err| falls by at least 5 points (20.5 % -> under
15.5 %) AND median |TTFT err| gets no worse by more than 5 points (16.7 % -> at most 21.7 %).
Reported per set whatever it gives (sum -> stream), with the anchors' kvplan / logged.

Run: python -m tests.benches.sglprefill68 [ops | replay]
"""

from __future__ import annotations

from kvplan.perf.roofline import step_time
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import sglh200_68
from tests.benches.disagg_rows import stated_concurrency
from tests.benches.sglprefill68_anchors import ANCHORS

SWEEP = (128, 512, 1024, 2048, 4096, 8192, 16384, 32768)  # one prompt of this many tokens


def cost(version: str = "0.5.9"):
    row = next(r for r in sglh200_68.agg_rows() if r["id"] in sglh200_68.SHAPED
               and stated_concurrency(r) == 4)
    return agg.row_setup(row, version).cost


def step_ms(c, prompts: int, prompt: int) -> float:
    return c.seconds(decode_contexts=[], chunks=[(0, prompt)] * prompts) * 1e3


def by_op_ms(c, tokens: int) -> dict[str, float]:
    st = step_time(c.spec, c.gpu, tokens=tokens, context=tokens, requests=1, phase="prefill",
                   logits=1, **c._common)
    return {k: v * 1e3 for k, v in st.by_op.items()}


def main() -> None:
    c = cost()
    print("anchors (kvplan 0.5.9 rules / engine-timed):")
    for a in ANCHORS:
        k = step_ms(c, a.prompts, a.prompt)
        print(f"  {a.label} [{a.role}, {a.release}]: {a.new_tokens} tokens, logged "
              f"{a.measured_ms:.1f} ms, kvplan {k:.1f} ms, kvplan / logged {k / a.measured_ms:.2f}")
    print("sweep (one prompt): tokens, simulator step ms, step_time ms, ms per 1k tokens")
    prev = None
    for t in SWEEP:
        s = step_ms(c, 1, t)
        ops = by_op_ms(c, t)
        print(f"  {t}: {s:.1f} / {sum(ops.values()):.1f}"
              + (f", marginal {(s - prev[1]) / (t - prev[0]) * 1e3:.1f} ms / 1k" if prev else ""))
        prev = (t, s)
    lo, hi = by_op_ms(c, 1024), by_op_ms(c, 8192)
    print("op split, ms at 1,024 -> 8,192 tokens (x growth):")
    for k in sorted(hi, key=lambda k: -hi[k]):
        print(f"  {k}: {lo.get(k, 0):.1f} -> {hi[k]:.1f}"
              + (f" (x{hi[k] / lo[k]:.1f})" if lo.get(k) else ""))


if __name__ == "__main__":
    main()
