"""The sim-to-real study's offload runs (tests/data/sim_to_real/runs.json "offload_runs", frozen at
commit 674ffd2): each is the study's own run with its recorded settings, and they are simulated as
decided before their evaluation (runs.json "offload"): kvplan's weights per GPU less the
--cpu-offload-gb GiB vLLM 0.15.1 moves to the host, so a KV budget larger by exactly that."""

from __future__ import annotations

import csv
from dataclasses import replace

import pytest

from kvplan._util.units import GiB
from kvplan.capacity.plan import plan_capacity
from tests.benches.sim_to_real import DATA, METRICS, load_records, load_runs, run_inputs

# The study's model ids (error_records.csv `model`) of the configs the runs name.
STUDY_MODEL = {
    "tests/data/configs/codellama-34b-instruct.json": "codellama/CodeLlama-34b-Instruct-hf",
    "tests/data/configs/llama-2-70b.json": "meta-llama/Llama-2-70b-hf",
    "tests/data/configs/mixtral-8x7b.json": "mistralai/Mixtral-8x7B-v0.1",
    "llama-3.1-8b": "meta-llama/Llama-3.1-8B-Instruct",
}


def _study_rows() -> dict[int, dict[str, str]]:
    """exp_id -> one of the study's records for it (the settings repeat on every row)."""
    with (DATA / "error_records.csv").open() as f:
        return {int(row["exp_id"]): row for row in csv.DictReader(f)}


def test_the_offload_set_is_every_cpu_offload_run_of_the_study() -> None:
    _, runs = load_runs(offload=True)
    study = _study_rows()
    assert sorted(r.id for r in runs) == sorted(
        i for i, row in study.items() if row["cpu_offload"] == "True")
    assert len(runs) == 9 and sum(len(r.stages) for r in runs) == 15


def test_each_offload_run_has_the_settings_the_study_records() -> None:
    _, runs = load_runs(offload=True)
    study = _study_rows()
    # The workload templates as the first set's runs give them (13 general, 14 codegen,
    # 15 roleplay): identical in every campaign folder of that workload.
    _, first = load_runs()
    template = {study[r.id]["workload"]: r.workload for r in first if r.id in (13, 14, 15)}
    for run in runs:
        row = study[run.id]
        assert row["experiment_folder"].rsplit("/", 1)[-1] == run.folder
        assert STUDY_MODEL[run.model] == row["model"]
        assert (row["hardware"], int(row["tp"]), int(row["max_num_batched_tokens"]),
                float(row["gpu_mem_util"])) == ("H100", run.tp, run.max_num_batched_tokens,
                                                run.gpu_memory_utilization)
        assert run.workload == template[row["workload"]]
        assert run.cpu_offload_gb == 4.0 and run.vllm == "0.15.1"


def test_every_offload_stage_has_its_measured_figures() -> None:
    _, runs = load_runs(offload=True)
    records = load_records()
    for run in runs:
        for stage in range(-1, len(run.stages)):
            assert all("measured" in records[(run.id, stage, m)] for m in METRICS)


@pytest.mark.parametrize("study_id", [2, 6, 9, 24])
def test_the_kv_budget_grows_by_the_offloaded_gib(study_id: int) -> None:
    # One run per model: the plan with --cpu-offload-gb 4 holds 4 GiB less weights and 4 GiB
    # more KV budget per GPU than the same settings without the flag (the reserve unchanged).
    _, runs = load_runs(offload=True)
    (run,) = [r for r in runs if r.id == study_id]
    spec, offloaded = run_inputs(run)
    _, plain = run_inputs(replace(run, cpu_offload_gb=0.0))
    assert offloaded.capacity is not None and plain.capacity is not None
    with_flag = plan_capacity(spec, offloaded.capacity)
    without = plan_capacity(spec, plain.capacity)
    assert without.weights_bytes - with_flag.weights_bytes == 4 * GiB
    assert with_flag.reserve_bytes == without.reserve_bytes
    assert with_flag.kv_budget_bytes - without.kv_budget_bytes == 4 * GiB
    assert with_flag.num_blocks > without.num_blocks


def test_the_dense_tp_breakdown_charges_vllm_0151s_all_reduce() -> None:
    """The TP all-reduce column of tests/benches/tp_breakdown.py (the page's split of the dense
    TP miss), worked by hand from vLLM 0.15.1's dispatch: a buffer under 8 MiB takes the custom
    all-reduce (distributed/device_communicators/custom_all_reduce.py:245 `inp_size <
    self.max_size`, max_size = min(all_reduce_utils.py:35-36 64 / 32 MiB, 8 MiB) = 8 MiB at 2 /
    4 ranks on SM 9.0), one-shot at 2 ranks, at 4 ranks one-shot under 512 KiB and two-shot
    from it (csrc/custom_all_reduce.cuh REDUCE_CASE). H100 NVLink 4: t1 = 5.718 us, t2 = 13.10 us
    (test_costmodel's medians of vLLM PR 24111's in-graph timings), peers read at 360 GB/s.
    Two all-reduces per layer (after o_proj and down_proj, vLLM models/llama.py)."""
    from tests.benches import tp_breakdown

    _, offloaded = load_runs(offload=True)
    runs = {r.id: r for r in load_runs()[1] + offloaded}
    split = {(r.label.split(" ")[0], r.step): r for r in tp_breakdown.rows(runs, run_inputs)}
    t1, t2, b = 5.718e-6, 13.10e-6, 360e9
    decode = 24 * 8192 * 2  # 24 tokens x hidden 8,192 x 2 B = 393,216 B (< 512 KiB)
    chunk = 490 * 8192 * 2  # 24 + 466 tokens: 8,028,160 B, >= 512 KiB and < 8 MiB (8,388,608)
    code, llama = "2-codellama-34b-tp2-codegen", "6-llama-2-70b-tp4-codegen"
    step, mixed = "24 decodes", "24 decodes + a 466-token chunk"
    # CodeLlama-34B TP 2, 48 layers x 2 = 96 one-shot all-reduces: 6.810 us each (0.654 ms);
    # with the chunk 5.718 + 22.300 = 28.018 us each (2.690 ms).
    assert split[(code, step)].ms["TP all-reduce"] == pytest.approx(
        96 * (t1 + decode / b) * 1e3, rel=1e-3)
    assert split[(code, mixed)].ms["TP all-reduce"] == pytest.approx(
        96 * (t1 + chunk / b) * 1e3, rel=1e-3)
    # Llama-2-70B TP 4, 80 layers x 2 = 160: one-shot 5.718 + 3 x 1.092 = 8.995 us (1.439 ms);
    # with the chunk two-shot 13.10 + 1.5 x 22.300 = 46.55 us (7.449 ms).
    assert split[(llama, step)].ms["TP all-reduce"] == pytest.approx(
        160 * (t1 + 3 * decode / b) * 1e3, rel=1e-3)
    assert split[(llama, mixed)].ms["TP all-reduce"] == pytest.approx(
        160 * (t2 + 1.5 * chunk / b) * 1e3, rel=1e-3)
    assert split[(llama, mixed)].ms["TP all-reduce"] == pytest.approx(7.449, abs=0.002)
