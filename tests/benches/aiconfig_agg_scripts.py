"""What InferenceX's launch scripts ran vs what the aggregated replay passes (aggflags67, issue
30): the table, the rule that resolves a script's value for a row, and the options the replay
passes since aggflags67 (`script_options`, read by aiconfig_agg_runs.row_setup where SCRIPT_ENV
and SCRIPT_FLAGS).

The table (tests/data/sim_to_real/inferencex_agg_script_flags.csv, written by
tests.benches.aiconfig_agg_scripts_extract from a clone of SemiAnalysisAI/InferenceX): every
server flag, heredoc YAML key (TensorRT-LLM's extra_llm_api_options, `vllm serve --config`'s
file), exported environment variable and variable assignment of each script at the commit each
replayable InferenceX row ran (inferencex_agg_script_rows.csv: row -> script, commit), with its
line, its value as written and the if / elif / else branch it sits in (`when`); `kvplan` names
the option of kvplan's estimate / simulate that reads it (READS; empty: none does). The row's
script: benchmarks/single_node/<model>_<precision>_<gpu>[_trt].sh (before 2026-02-19
benchmarks/<same>.sh, _docker.sh / _slurm.sh: both where both existed, their options agree on
every row) at the last commit touching it before the row's `measured=` time (a date alone: that
day's end; InferenceX sweeps on the merge that changes a script, so a same-day commit is taken
as the run's: the date-only rows of 31 (script, commit) pairs have one); none for a `wip=True`
row (a pull request's branch, not main's history: 170 rows, 105 of five B300 / nightly configs
whose script main did not hold yet and 65 MiniMax-M2.5 FP8 B200 rows; engine defaults stand).

Read by kvplan and passed (PASSED), by engine, as the tables' lines show them:
- vLLM: --kv-cache-dtype, --gpu-memory-utilization, --max-num-seqs, --max-num-batched-tokens,
  --block-size, --no-enable-prefix-caching, --max-model-len (in the script or its --config
  file), VLLM_MXFP4_USE_MARLIN (mxfp4_backend, as aiconfig_agg_env).
- SGLang: --kv-cache-dtype, --mem-fraction-static, --max-running-requests,
  --chunked-prefill-size, --max-prefill-tokens, --scheduler-recv-interval
  (kvplan.analysis.simulate.sglang_scheduler rule 3, SGLang 0.5.9 scheduler.py:1222-1227),
  --disable-radix-cache, --context-length, --mamba-ssm-dtype (ssm_dtype).
- TensorRT-LLM: --max_num_tokens, --max_batch_size, --max_seq_len, kv_cache_config.dtype /
  free_gpu_memory_fraction / enable_block_reuse, cuda_graph_config.max_batch_size /
  enable_padding (read by `estimate`'s reserve, kvplan.engines.trtllm.budget; `simulate
  --engine trtllm` steps are not padded to a graph, engine_setups._trtllm_setup),
  attention_dp_config enable_balance / timeout_iters / batching_wait_iters (TrtllmOptionsSim
  adp_balance: the attention-DP rows; added after the first evaluation, which missed it).
- The layout (--tensor-parallel-size, --ep-size, --expert-parallel-size, --data-parallel-size,
  --tp_size, --ep_size, enable_attention_dp): the row's (SET_BY_BENCH).
Flags a launch line takes from a variable ($EP, $PARALLEL_ARGS, $EXTRA_ARGS) are the layout or
an all-reduce fusion (the test checks; $EVAL_CONTEXT_ARGS only with EVAL_ONLY).
Not read by kvplan (no input; the table's empty `kvplan`): attention / MoE / GEMM backends and
their env switches (--attention-backend, --moe-runner-backend, moe_config.backend,
SGL_ENABLE_JIT_DEEPGEMM, VLLM_USE_FLASHINFER_MOE_*, ...), all-reduce fusions, SGLang
--cuda-graph-max-bs and vLLM --max-cudagraph-capture-size (kvplan sizes its graphs by the
engine's default rule: no option), TensorRT-LLM batch_wait_timeout_iters /
batch_wait_max_tokens_ratio (dsr1_fp8_b200_trt.sh's DELAY_BATCHING at 1,024 / 1,024 from C 64:
not passed: the library models them since trtpad67, kvplan.engines.trtllm.batch_wait, and
tests.benches.trtpad67_eval replays those 8 rows with them),
torch_compile_config, --compilation-config,
--stream-interval, --quantization (the checkpoint's), parsers, logging, ports.

How a value is resolved for a row (`variables`, `_eval`, `_holds`; frozen at aggflags67 BEFORE
any row was re-run with it): the workflow's variables as the row states them (`_env`: TP,
EP_SIZE, DP_ATTENTION, CONC, ISL, OSL, MAX_MODEL_LEN = ISL + OSL + 200, EVAL_ONLY false), then
each assignment above the line in order where its branch holds (tests `[[ $X -ge N ]]`, `==`,
`=`, joined by && / ||, `!`); literals, $X, ${X:-default}, $(( ... )) with one `?:`. A line in a
branch the row's run did not take is skipped; a value or branch that cannot be read is not
passed (`unpassed`: none on the replayable rows at aggflags67). Checked against
aiconfig_sglang_flags.script_flags (a reading by hand) on its 121 SGLang DeepSeek rows here:
equal on every one.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FLAGS_FILE = ROOT / "tests" / "data" / "sim_to_real" / "inferencex_agg_script_flags.csv"
ROWS_FILE = ROOT / "tests" / "data" / "sim_to_real" / "inferencex_agg_script_rows.csv"
INFERENCEX = "SemiAnalysisAI/InferenceX"

_STEM_MODEL = {"deepseek-ai/DeepSeek-R1": "dsr1", "deepseek-ai/DeepSeek-V3": "dsr1",
               "openai/gpt-oss-120b": "gptoss", "MiniMaxAI/MiniMax-M2.5": "minimaxm2.5",
               "moonshotai/Kimi-K2.5": "kimik2.5", "Qwen/Qwen3.5-397B-A17B": "qwen3.5",
               "zhipuai/GLM-5": "glm5"}

# (kind, name) -> the kvplan option that reads it (module docstring). LAYOUT: the row's layout.
LAYOUT = "layout (the row's)"
READS: dict[tuple[str, str], str] = {
    **{("flag", f): "kv_dtype" for f in ("--kv-cache-dtype",)},
    ("flag", "--gpu-memory-utilization"): "mem_fraction",
    ("flag", "--mem-fraction-static"): "mem_fraction",
    ("flag", "--max-num-seqs"): "max_num_seqs",
    ("flag", "--max-running-requests"): "max_num_seqs",
    ("flag", "--max_batch_size"): "max_num_seqs",
    ("flag", "--max-num-batched-tokens"): "max_num_batched_tokens",
    ("flag", "--max_num_tokens"): "max_num_batched_tokens",
    ("flag", "--block-size"): "block_size",
    ("flag", "--page-size"): "block_size",
    ("flag", "--no-enable-prefix-caching"): "prefix_caching",
    ("flag", "--enable-prefix-caching"): "prefix_caching",
    ("flag", "--disable-radix-cache"): "prefix_caching",
    ("flag", "--max-model-len"): "context",
    ("flag", "--context-length"): "context",
    ("flag", "--max_seq_len"): "context",
    ("flag", "--async-scheduling"): "async_scheduling",
    ("flag", "--no-async-scheduling"): "async_scheduling",
    ("flag", "--disable-overlap-schedule"): "async_scheduling",
    ("flag", "--enforce-eager"): "enforce_eager",
    ("flag", "--chunked-prefill-size"): "chunked_prefill_size",
    ("flag", "--max-prefill-tokens"): "max_prefill_tokens",
    ("flag", "--scheduler-recv-interval"): "scheduler_recv_interval",
    ("env", "VLLM_MXFP4_USE_MARLIN"): "mxfp4_backend",
    ("yaml", "kv_cache_config.dtype"): "kv_dtype",
    ("yaml", "kv_cache_config.free_gpu_memory_fraction"): "mem_fraction",
    ("yaml", "kv_cache_config.enable_block_reuse"): "prefix_caching",
    ("yaml", "cuda_graph_config.max_batch_size"): "cuda_graph_max_batch_size",
    ("yaml", "cuda_graph_config.enable_padding"): "cuda_graph_padding",
    ("yaml", "enable_chunked_prefill"): "enable_chunked_prefill",
    # TrtllmOptionsSim.adp_balance (kvplan.engines.trtllm.dp_balance.AdpBalance), with
    # attention DP only (aggflags67, after its first evaluation: missed there).
    ("yaml", "attention_dp_config.enable_balance"): "adp_balance",
    ("yaml", "attention_dp_config.timeout_iters"): "adp_timeout_iters",
    ("yaml", "attention_dp_config.batching_wait_iters"): "adp_batching_wait_iters",
    ("yaml", "disable_overlap_scheduler"): "async_scheduling",
    **{("flag", f): LAYOUT for f in (
        "--tensor-parallel-size", "--tp", "--tp-size", "-tp", "--tp_size", "--ep_size",
        "--ep-size", "--ep", "--enable-expert-parallel", "--data-parallel-size", "--dp",
        "--dp-size", "--enable-dp-attention", "--pipeline-parallel-size",
        "--expert-parallel-size")},
    ("flag", "--mamba-ssm-dtype"): "ssm_dtype",
    ("yaml", "enable_attention_dp"): LAYOUT,
}


def kvplan_reads(kind: str, name: str) -> str:
    """The kvplan option that reads the script's flag / key / variable ("" none); a YAML key
    with a dash is a `vllm serve --config` file's, read as the flag of that name."""
    if kind == "yaml" and "-" in name:
        return READS.get(("flag", f"--{name}"), "")
    return READS.get((kind, name), "")


def stem(row: dict[str, str]) -> str:
    """The script's name without .sh: <model>_<precision>_<gpu>[_trt]."""
    return (f"{_STEM_MODEL[row['model_path']]}_{row['precision']}_{row['system'].split('_')[0]}"
            + ("_trt" if row["backend"] == "trtllm" else ""))


def measured_at(row: dict[str, str]) -> str:
    """The row's `measured=` time for `git log --before` (a date alone: that day's end)."""
    m = re.search(r"measured=([0-9T:-]+)", row["silicon_data_source"])
    assert m, row["id"]
    when = m.group(1)
    return (when[:10] + "T23:59:59" if when.endswith("T00:00:00") else when) + "Z"


@cache
def replayable_inferencex() -> tuple[dict[str, str], ...]:
    """The InferenceX rows the aggregated bench replays (why_not empty), in file order."""
    from tests.benches import aiconfig_agg_runs as agg
    from tests.benches import aiconfig_harness as h

    return tuple(r for r in agg.rows()
                 if not agg.why_not(r) and h.provenance(r) == h.INFERENCEX_ROWS)


def row_scripts(repo: str, script_at: Callable[[str, str, str], tuple[tuple[str, str], ...]]
                ) -> dict[str, tuple[tuple[str, str], ...]]:
    """Row id -> ((script, commit), ...) read from the clone (the extractor's); () for a
    `wip=True` row (a work-in-progress run of a pull request's branch, whose script main's
    history does not hold at the row's time: not guessed)."""
    return {r["id"]: () if "wip=True" in r["silicon_data_source"]
            else script_at(repo, stem(r), measured_at(r)) for r in replayable_inferencex()}


@cache
def table() -> tuple[dict[str, str], ...]:
    with FLAGS_FILE.open() as f:
        return tuple(csv.DictReader(f))


@cache
def _scripts_of() -> dict[str, tuple[tuple[str, str], ...]]:
    out: dict[str, list[tuple[str, str]]] = {}
    with ROWS_FILE.open() as f:
        for r in csv.DictReader(f):
            out.setdefault(r["id"], []).append((r["script"], r["commit"]))
    return {k: tuple(v) for k, v in out.items()}


def scripts_of(row: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The (script, commit) pairs the row ran (two where a _docker / _slurm pair both existed;
    () where no script of its name existed at its date)."""
    return _scripts_of().get(row["id"], ())


@cache
def _lines_of(script: str, commit: str) -> tuple[dict[str, str], ...]:
    return tuple(t for t in table() if (t["script"], t["commit"]) == (script, commit))


def flags_of(row: dict[str, str]) -> list[dict[str, str]]:
    """The table's lines of the row's script(s)."""
    return [t for pc in scripts_of(row) for t in _lines_of(*pc)]


def _env(row: dict[str, str]) -> dict[str, str | None]:
    """The variables InferenceX's workflow gives a script for the row
    (.github/workflows/benchmark-tmpl.yml env: TP, EP_SIZE, DP_ATTENTION, CONC, ISL, OSL,
    MAX_MODEL_LEN, EVAL_ONLY), as the row states them; MAX_MODEL_LEN ISL + OSL + 200
    (utils/matrix_logic/generate_sweep_configs.py:254 at c50fd355d, :284 at 6c3acebfa);
    EVAL_ONLY false (benchmark-tmpl.yml:91 at 6c3acebfa: a throughput run, the rows')."""
    from tests.benches import aiconfig_agg_runs as agg
    from tests.benches.disagg_rows import stated_concurrency

    tp, dp, _, ep = agg.layout(row)
    isl, osl = int(row["isl"]), int(row["osl"])
    # Under attention DP the config's tp is the engine's TP (the DP ranks' GPUs: --tp_size 8
    # with enable_attention_dp for a row written TP 1 x DP 8, aiconfig_agg_dp_script).
    return {"CONC": str(stated_concurrency(row) or 0), "ISL": str(isl), "OSL": str(osl),
            "TP": str(tp * dp if dp > 1 else tp), "EP_SIZE": str(max(ep, 1)),
            "MAX_MODEL_LEN": str(isl + osl + 200),
            "DP_ATTENTION": "true" if dp > 1 else "false", "EVAL_ONLY": "false"}


_TOKEN = re.compile(r"\[\[(.*?)\]\]|\[\s(.*?)\s\]|&&|\|\||!|\(|\)")
_CMP = re.compile(r'^"?\$\{?(\w+)\}?"?\s+(-ge|-gt|-le|-lt|-eq|-ne|==|=|!=)\s+"?([\w.]+)"?$')
_OPS = {"-ge": int.__ge__, "-gt": int.__gt__, "-le": int.__le__, "-lt": int.__lt__,
        "-eq": int.__eq__, "-ne": int.__ne__}


def _compare(text: str, known: dict[str, str | None]) -> bool | None:
    """One `$X op Y` of a test; None where X is unknown or the test is another kind."""
    m = _CMP.match(text.strip())
    if m is None or known.get(m.group(1)) is None:
        return None
    x, op, y = known[m.group(1)], m.group(2), m.group(3)
    assert x is not None
    if op in ("==", "=", "!="):
        return (x == y) == (op != "!=")
    if y.lstrip("-").isdigit() and x.lstrip("-").isdigit():
        return bool(_OPS[op](int(x), int(y)))
    return None


def _test(inner: str, known: dict[str, str | None]) -> bool | None:
    """A [[ ... ]] / [ ... ] test: comparisons joined by && (binding tighter) and ||."""
    result: bool | None = False
    for alternative in inner.split("||"):
        parts = [_compare(p, known) for p in alternative.split("&&")]
        if any(p is None for p in parts):
            return None
        result = result or all(parts)
    return result


def _holds(cond: str, known: dict[str, str | None]) -> bool | None:
    """Whether a branch's condition as the extractor writes it holds: tests joined by && and
    || (left to right, as bash's lists), `!`, parentheses; None where a test cannot be read
    (an unknown variable, a test other than a comparison)."""
    tokens = [m.group(0) for m in _TOKEN.finditer(cond)]
    if "".join(tokens).replace(" ", "") != cond.replace(" ", ""):
        return None  # something the tokens do not cover

    def unary(i: int) -> tuple[bool | None, int]:
        t = tokens[i]
        if t == "!":
            v, j = unary(i + 1)
            return (None if v is None else not v), j
        if t == "(":
            v, j = expr(i + 1)
            return v, j + 1  # the ")"
        m = _TOKEN.fullmatch(t)
        assert m is not None
        return _test(m.group(1) if m.group(1) is not None else m.group(2), known), i + 1

    def expr(i: int) -> tuple[bool | None, int]:
        v, i = unary(i)
        while i < len(tokens) and tokens[i] in ("&&", "||"):
            op = tokens[i]
            w, i = unary(i + 1)
            if v is None or w is None:
                v = None
            else:
                v = (v and w) if op == "&&" else (v or w)
        return v, i

    try:
        value, end = expr(0)
    except IndexError:
        return None
    return value if end == len(tokens) else None


def _arith(expr: str, known: dict[str, str | None]) -> str | None:
    """bash $(( expr )) over known integer variables (/ truncates; one `a ? b : c`)."""
    names = set(re.findall(r"[A-Za-z_]\w*", expr))
    if any(known.get(n) is None or not str(known[n]).isdigit() for n in names):
        return None
    text = re.sub(r"\$?\{?([A-Za-z_]\w*)\}?", lambda t: str(known[t.group(1)]), expr)
    text = text.replace("/", "//")
    if "?" in text:
        m = re.fullmatch(r"(.+?)\?(.+?):(.+)", text)
        if m is None:
            return None
        text = f"(({m.group(2)}) if ({m.group(1)}) else ({m.group(3)}))"
    if not re.fullmatch(r"[\d\s+*/()<>=!%-]+|.*\bif\b.*\belse\b.*", text):
        return None
    return str(eval(text, {"__builtins__": {}}))  # noqa: S307 - digits and operators only


def _eval(value: str, known: dict[str, str | None]) -> str | None:
    """A value as bash gives it: a literal; $NAME, ${NAME}, ${NAME:-default}; $(( ... ));
    None where it names an unknown variable or is anything else."""
    v = value.strip()
    if len(v) > 1 and v[0] == v[-1] and v[0] in "\"'":
        v = v[1:-1]
    if "$" not in v:
        return v
    m = re.fullmatch(r"\$\{(\w+):-([^}]*)\}", v)
    if m:
        return known.get(m.group(1)) or m.group(2)
    m = re.fullmatch(r"\$\{?(\w+)\}?", v)
    if m:
        return known.get(m.group(1))
    m = re.fullmatch(r"\$\(\((.*)\)\)", v)
    if m:
        return _arith(m.group(1), known)
    return None


@cache
def _assignments(script: str, commit: str) -> tuple[dict[str, str], ...]:
    """The table's variable assignments of one script at one commit, by line."""
    return tuple(sorted((t for t in table() if t["kind"] == "var" and t["script"] == script
                         and t["commit"] == commit), key=lambda t: int(t["line"])))


def variables(row: dict[str, str], where: dict[str, str]) -> dict[str, str | None]:
    """The script's variables at the line of `where` (a table line) for the row: the
    workflow's (`_env`), then each assignment above it in order, where its branch `_holds`;
    a variable assigned in a branch that cannot be read becomes unknown (None)."""
    known = dict(_env(row))
    for t in _assignments(where["script"], where["commit"]):
        if int(t["line"]) >= int(where["line"]):
            break
        holds = _holds(t["when"], known) if t["when"] else True
        if holds is None:
            known[t["name"]] = None
        elif holds:
            known[t["name"]] = _eval(t["value"], known)
    return known


def resolve(value: str, row: dict[str, str], where: dict[str, str] | None = None
            ) -> str | None:
    """The value as the script gives it for the row (`_eval`), over the workflow's variables
    and, where the table line `where` is given, the script's own above it (`variables`)."""
    return _eval(value, _env(row) if where is None else variables(row, where))


_BOOL = {"true": True, "false": False}


def _value(option: str, kind: str, name: str, text: str) -> Any:
    """The kvplan value of a resolved script value."""
    # A bare flag is on; a --config key or YAML field says true or false.
    on = _BOOL.get(text.lower()) if text else True
    flag = name.removeprefix("--")
    if option == "prefix_caching":
        return on if flag in ("enable-prefix-caching", "kv_cache_config.enable_block_reuse") \
            else not on  # --no-enable-prefix-caching, --disable-radix-cache
    if option == "async_scheduling":
        return on if flag == "async-scheduling" else not on
    if option == "enforce_eager":
        return on
    if option == "kv_dtype":
        from kvplan.engines.kv_dtype import asked_kv_dtype

        return asked_kv_dtype(text)
    if option == "mem_fraction":
        return float(text)
    if option == "ssm_dtype":
        return text
    if option == "mxfp4_backend":
        return "marlin" if text == "1" else None
    if option in ("cuda_graph_padding", "enable_chunked_prefill", "adp_balance"):
        return on
    return int(text)


# The options the replay passes (aiconfig_agg_runs.row_setup); the rest of READS' are read by
# kvplan but set by the bench itself: the layout (the row's) and the context (ISL + OSL +
# CONTEXT_PAD: the rows' lengths never reach a script's --max-model-len).
PASSED = frozenset({"kv_dtype", "mem_fraction", "max_num_seqs", "max_num_batched_tokens",
                    "block_size", "prefix_caching", "chunked_prefill_size",
                    "max_prefill_tokens", "scheduler_recv_interval", "mxfp4_backend",
                    "context", "ssm_dtype", "cuda_graph_max_batch_size",
                    "cuda_graph_padding", "adp_balance", "adp_timeout_iters",
                    "adp_batching_wait_iters"})
SET_BY_BENCH = frozenset({LAYOUT})
# The attention-DP balance (adp_*), added after aggflags67's first evaluation; False: that
# evaluation's rule (tests.benches.aggflags67_eval's `balance` part replays both).
ADP_BALANCE = True


def script_options(row: dict[str, str]) -> dict[str, Any]:
    """The kvplan options the row's script sets that the replay passes (PASSED), resolved for
    the row (`variables`, `_eval`) on the branches its run took."""
    out: dict[str, Any] = {}
    for t in flags_of(row):
        option = t["kvplan"]
        if option not in PASSED or option.startswith("adp_") and not ADP_BALANCE:
            continue
        known = variables(row, t)
        if t["when"] and not _holds(t["when"], known):
            continue  # a branch the row's run did not take (None: unread, `unpassed`)
        text = _eval(t["value"], known) if t["value"] else ""
        if text is None or not text and option not in (
                "prefix_caching", "async_scheduling", "enforce_eager"):
            continue  # a value the resolver cannot give: not passed (`unpassed`)
        value = _value(option, t["kind"], t["name"], text)
        if value is not None:
            out[option] = value
    return out


def unpassed(row: dict[str, str]) -> list[dict[str, str]]:
    """The table's lines of the row's script that kvplan reads and the replay does not pass
    (a value it cannot resolve, or an option outside PASSED and SET_BY_BENCH)."""
    got = script_options(row)
    return [t for t in flags_of(row)
            if t["kvplan"] and t["kvplan"] not in SET_BY_BENCH and t["kvplan"] not in got
            and (not t["when"] or _holds(t["when"], variables(row, t)) is not False)]


# The record of tests.benches.aggflags67_eval's one run (rule frozen at 1975dc1a, subsets at
# c5db13a1, before either arm ran); printed after aiconfig_agg_env.FINDING by
# aiconfig_agg_runs.print_harness.
FINDING = (
    "aggflags67: since this change the page replays each InferenceX row (but wip=True runs, "
    "whose script main's history does not hold) with every flag kvplan reads as the row's "
    "launch script set it (tests/benches/aiconfig_agg_scripts.py; its table "
    "tests/data/sim_to_real/inferencex_agg_script_flags.csv holds every flag, YAML key, "
    "export and assignment of the 51 (script, commit) pairs, file:line): KV dtype (fp8 in "
    "most), memory fraction, max running requests, token budgets (vLLM --max-num-batched-"
    "tokens 2 x ISL in the MiniMax / Kimi scripts, TensorRT-LLM max_num_tokens max(8,192, "
    "C + ISL + 64 rounded up to 64)), block size, prefix caching off, the max model length, "
    "SGLang's --scheduler-recv-interval (30 from C = 16 where set, else 10), TensorRT-LLM's "
    "CUDA-graph batch and padding. Nothing fitted: the settings are the scripts'; no row "
    "shaped by it (the `shaped` rows are the ones earlier rules name). Before -> after on "
    "subsets chosen before either arm ran (tests/benches/aggflags67_eval.py; medians; both "
    "inside = TTFT and TPOT within the band): at the page's fixed lengths, every 12th such row "
    "(96; 90 replayed in both), both inside 30 -> 27, median |TTFT err| 42.3 -> 39.7 %, "
    "|TPOT err| 14.9 -> 13.7 %, TTFT ratio 1.41 -> 1.22, kvplan's refusals 6 -> 2 (held out, "
    "57: both inside 21 -> 21, |TTFT err| 41.3 -> 39.9 %; shaped, 33: 9 -> 6, 57.6 -> 39.5 "
    "%); by backend, TensorRT-LLM (16) TTFT ratio 2.12 -> 0.94 (max_num_tokens above the "
    "8,192-token prompt, as aggflags54 found) but TPOT ratio 1.29 -> 1.42, SGLang (25) TTFT "
    "ratio 1.86 -> 1.54, both inside 3 -> 5, refusals 4 -> 0 (the TP 4 scripts' memory "
    "fraction 0.95), vLLM (49) WORSE: both inside 24 -> 19, |TTFT err| 23.7 -> 39.5 % "
    "(TTFT ratio 1.20 -> 1.22; |TPOT err| 13.4 -> 10.7 %), the rows that move being those "
    "whose scripts set an fp8 KV cache and --max-num-batched-tokens 2 x ISL (MiniMax-M2.5, "
    "Kimi-K2.5 on B200 / B300: at ISL 8,192 two prompts a step where kvplan's default 8,192 "
    "took one, in the fixed lengths' lockstep queue; ablated after (aggvllm67, "
    "tests/benches/aggvllm67.py): the budget alone 24 -> 19 both inside, 23.7 -> 39.2 %, "
    "every flag but it 25 and 23.7 %; vLLM's scheduler admits prompts while the budget "
    "lasts as kvplan does, and under the client's workload the same 17 rows go 38.0 -> "
    "32.7 %: the fixed lengths' lockstep, not a misread rule). Under InferenceX's "
    "client workload (CLIENT_WORKLOAD), every 3rd of clientsec66's rows with a known "
    "script (17; 15 both): "
    "both inside 4 -> 6, |TTFT err| 42.6 -> 37.9 %, TTFT ratio 0.57 -> 0.62, TPOT ratio 1.04 "
    "-> 0.98, refusals 2 -> 0; SGLang (6) TTFT ratio 0.39 -> 0.68, both inside 1 -> 3 (the "
    "recv interval, memory fraction and budgets together, not ablated); vLLM (9) 0.61 -> 0.62 "
    "(held out, 12: both inside 2 -> 4, ratio 0.47 -> 0.60; shaped, 3: unchanged). It "
    "follows the scripts, so it is the page's default where a figure gets worse. Added "
    "after that run (83efd501, frozen before its rows ran): TensorRT-LLM's "
    "attention_dp_config (enable_balance, timeout_iters 60, batching_wait_iters 0), which "
    "the first rule missed; on every row it reaches (9; 6 replayed, all shaped by trtdp56's "
    "balance rule) no figure moves at the fixed lengths.")
