"""aggflags67: InferenceX's launch-script flags vs the aggregated replay
(tests.benches.aiconfig_agg_scripts)."""

from __future__ import annotations

import pytest

from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_agg_scripts as scripts
from tests.benches import aiconfig_sglang_flags as sgl
from tests.benches.aiconfig_agg_scripts_extract import flags_of
from tests.test_aiconfig_agg_env import captured_inputs


def _with_script(path: str, commit: str, conc: int | None = None) -> dict[str, str]:
    return next(r for r in scripts.replayable_inferencex()
                if (path, commit) in scripts.scripts_of(r)
                and (conc is None or scripts._env(r)["CONC"] == str(conc)))


def test_every_script_flag_kvplan_reads_is_passed() -> None:
    rows = scripts.replayable_inferencex()
    assert not [(r["id"], t["name"]) for r in rows for t in scripts.unpassed(r)]
    # The table's kvplan-read lines are all of an option the replay passes or the layout.
    read = {t["kvplan"] for t in scripts.table() if t["kvplan"]}
    assert read <= scripts.PASSED | scripts.SET_BY_BENCH


def test_rows_without_a_script_are_counted_not_guessed() -> None:
    none = [r for r in scripts.replayable_inferencex() if not scripts.scripts_of(r)]
    assert len(none) == 170
    assert all("wip=True" in r["silicon_data_source"] for r in none)


def test_extractor_branches_by_hand() -> None:
    text = "\n".join([
        'if [[ $CONC -ge 16 ]]; then', '  RECV=30', 'elif [[ $TP -eq 4 ]]; then', '  RECV=20',
        'else', '  RECV=10', 'fi',
        'python3 -m sglang.launch_server --tp $TP \\',
        '--scheduler-recv-interval $RECV --disable-radix-cache > log 2>&1 &'])
    got = flags_of(text)
    assert got[0] == (2, "var", "RECV", "30", "( [[ $CONC -ge 16 ]] )")
    assert got[1][4] == "! ( [[ $CONC -ge 16 ]] ) && ( [[ $TP -eq 4 ]] )"
    assert got[2][4] == "! ( [[ $CONC -ge 16 ]] ) && ! ( [[ $TP -eq 4 ]] )"
    assert got[3:] == [(8, "flag", "--tp", "$TP", ""),
                       (9, "flag", "--scheduler-recv-interval", "$RECV", ""),
                       (9, "flag", "--disable-radix-cache", "", "")]
    for conc, tp, want in (("32", "8", True), ("8", "4", False), ("8", "8", False)):
        known = {"CONC": conc, "TP": tp}
        assert scripts._holds(got[0][4], known) is want
    assert scripts._holds(got[1][4], {"CONC": "8", "TP": "4"}) is True
    assert scripts._holds(got[2][4], {"CONC": "8", "TP": "8"}) is True
    assert scripts._holds(got[2][4], {"CONC": "8"}) is None  # TP unknown


def test_arithmetic_by_hand() -> None:
    known = {"CONC": "4", "ISL": "1024", "MAX_NUM_TOKENS": "1152"}
    # --max-num-batched-tokens "$((ISL * 2 ))" at ISL 1,024: 2,048.
    assert scripts._eval('"$((ISL * 2 ))"', known) == "2048"
    # $(( ($CONC+$ISL+64+63)/64*64 )) at C 4, ISL 1,024: 1,155 // 64 = 18, x 64 = 1,152.
    assert scripts._eval("$(( ($CONC+$ISL+64+63)/64*64 ))", known) == "1152"
    # $(( MAX_NUM_TOKENS > 8192 ? MAX_NUM_TOKENS : 8192 )): 1,152 is below, so 8,192.
    assert scripts._eval("$(( MAX_NUM_TOKENS > 8192 ? MAX_NUM_TOKENS : 8192 ))", known) == "8192"
    assert scripts._eval("${PORT:-8888}", known) == "8888"
    assert scripts._eval("$UNSET", known) is None


@pytest.mark.parametrize(("conc", "interval"), [(8, 10), (16, 30), (64, 30)])
def test_sglang_recv_interval_from_the_script(conc: int, interval: int) -> None:
    # qwen3.5_fp8_b200.sh at 6a5dad463:32-36: 30 from CONC 16, else 10.
    row = _with_script("benchmarks/single_node/qwen3.5_fp8_b200.sh", "6a5dad463", conc)
    assert scripts.script_options(row)["scheduler_recv_interval"] == interval


def test_the_branch_the_run_took() -> None:
    # dsr1_fp8_h200.sh at 41aff0afc:30-48: --max-running-requests 512 at 1,024 / 1,024, else 256.
    for row in scripts.replayable_inferencex():
        if ("benchmarks/single_node/dsr1_fp8_h200.sh", "41aff0afc") in scripts.scripts_of(row):
            want = 512 if (row["isl"], row["osl"]) == ("1024", "1024") else 256
            assert scripts.script_options(row)["max_num_seqs"] == want


def test_agrees_with_the_sglang_deepseek_reading_by_hand() -> None:
    rows = [r for r in sgl.studied() if scripts.scripts_of(r)]
    assert len(rows) == 121
    for r in rows:
        f = sgl.script_flags(r)
        assert not isinstance(f, str)
        got = scripts.script_options(r)
        assert (got["chunked_prefill_size"], got["max_num_seqs"], got["mem_fraction"],
                got.get("scheduler_recv_interval", 1), got.get("max_prefill_tokens"),
                got.get("kv_dtype") == "fp8", got["prefix_caching"]) == (
            f.chunked_prefill_size, f.max_running_requests, f.mem_fraction_static,
            f.recv_interval, f.max_prefill_tokens, f.kv_fp8, False), r["id"]


def test_row_setup_passes_the_script() -> None:
    row = _with_script("benchmarks/single_node/qwen3.5_fp8_b200.sh", "6a5dad463", 64)
    sim = agg.row_setup(row, agg.release(row) or "")
    assert sim.sglang is not None and sim.sglang.recv_interval == 30
    assert sim.sglang.max_running_requests == 128
    before = agg.SCRIPT_FLAGS
    agg.SCRIPT_FLAGS = False
    try:
        off = agg.row_setup(row, agg.release(row) or "")
    finally:
        agg.SCRIPT_FLAGS = before
    assert off.sglang is not None and off.sglang.recv_interval == 1


def test_trtllm_attention_dp_balance_from_the_script() -> None:
    # dsr1_fp4_b200_trt.sh at 6eecc0e66:62-68: under DP_ATTENTION true, attention_dp_config
    # batching_wait_iters 0, enable_balance true, timeout_iters 60.
    row = next(r for r in scripts.replayable_inferencex()
               if ("benchmarks/dsr1_fp4_b200_trt.sh", "6eecc0e66") in scripts.scripts_of(r)
               and agg.layout(r)[1] > 1)
    got = scripts.script_options(row)
    assert (got["adp_balance"], got["adp_timeout_iters"], got["adp_batching_wait_iters"]) == (
        True, 60, 0)
    assert scripts._env(row)["TP"] == str(agg.layout(row)[0] * agg.layout(row)[1])
    sim = agg.row_setup(row, agg.release(row) or "")
    assert sim.trtllm is not None and sim.trtllm.adp_balance is not None
    assert (sim.trtllm.adp_balance.timeout_iters, sim.trtllm.adp_balance.batching_wait_iters) \
        == (60, 0)


def test_table_kvplan_column_is_reads() -> None:
    # The committed table's `kvplan` column is READS' (regenerate the CSV when READS changes).
    assert all(t["kvplan"] == scripts.kvplan_reads(t["kind"], t["name"])
               for t in scripts.table())
    pairs = {(t["script"], t["commit"]) for t in scripts.table()}
    assert {pc for r in scripts.replayable_inferencex() for pc in scripts.scripts_of(r)} == pairs
    assert len(pairs) == 51


def test_row_setup_hands_vllm_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    # minimaxm2.5_fp8_b200.sh at bddbf4031:46-52: --gpu-memory-utilization 0.90, --max-model-len
    # $MAX_MODEL_LEN (ISL + OSL + 200), --block-size=32, --kv-cache-dtype fp8,
    # --max-num-batched-tokens $((ISL * 2)), --no-enable-prefix-caching.
    row = _with_script("benchmarks/single_node/minimaxm2.5_fp8_b200.sh", "bddbf4031")
    isl, osl = int(row["isl"]), int(row["osl"])
    seen = captured_inputs(row, monkeypatch)
    assert {k: seen[k] for k in ("mem_fraction", "context", "block_size", "kv_dtype",
                                 "max_num_batched_tokens", "prefix_caching")} == {
        "mem_fraction": 0.9, "context": isl + osl + 200, "block_size": 32, "kv_dtype": "fp8",
        "max_num_batched_tokens": 2 * isl, "prefix_caching": False}


def test_flags_carried_by_variables_are_layout_or_unread() -> None:
    # A launch line's bare $EP / $PARALLEL_ARGS / $EXTRA_ARGS is not a flag line of the table:
    # the flags such a variable holds are the layout (the row's), an all-reduce fusion (not
    # read) or the eval-only context (EVAL_ONLY false on these runs).
    import re

    for t in scripts.table():
        if t["kind"] != "var" or "EVAL" in t["name"]:
            continue
        for flag in re.findall(r"(?<![\w-])--[A-Za-z][\w.-]*", t["value"]):
            if t["name"] == "PYTHONNOUSERSITE":  # `PYTHONNOUSERSITE=1 mpirun ...`: a launch
                continue
            assert scripts.kvplan_reads("flag", flag) in ("", scripts.LAYOUT), (t, flag)
