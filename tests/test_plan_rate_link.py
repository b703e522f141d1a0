"""`plan --rate --link NAME` (issue 30, planrate64b): the fabric between nodes that a collective
over several NVLink domains crosses, named from the one catalogue `plan --disagg --link` reads
(kvplan/hardware/kv_links.json; kvplan.hardware.kv_links.KvLink.scale_out maps a link onto a
collective link: its per-GPU bandwidth, the NCCL call latency of the interconnects.json preset
its `collective` field names)."""

from __future__ import annotations

import json
from functools import partial

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.rate_search import TrialTask, run_trial
from kvplan.analysis.simulate.workload import WorkloadOptions, requests_from
from kvplan.cli.app import app
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.interconnect import INTERCONNECTS
from kvplan.hardware.kv_links import DEFAULT_FABRIC, get_kv_link, scale_out_link
from kvplan.perf.layout import Layout, SpanningLink, link
from kvplan.sources.resolve import load_model

MIB = 2**20
H100 = get_gpu("H100-80GB")


def test_the_default_fabric_is_the_ib_ndr_preset_planrate64_priced() -> None:
    # kv_links ib-ndr: 400 Gb/s = 50e9 B/s x 1 rail x 0.9 achieved = 45e9 B/s; latency: the
    # interconnects.json ib-ndr preset's 25 us (one NCCL call), not the link's 10 us RDMA read.
    fabric = scale_out_link()
    assert DEFAULT_FABRIC == "ib-ndr" and fabric.name == "ib-ndr"
    assert (fabric.bytes_per_s, fabric.latency_s) == (45e9, pytest.approx(25e-6))
    assert (fabric.bytes_per_s, fabric.latency_s) == (INTERCONNECTS["ib-ndr"].bytes_per_s,
                                                      INTERCONNECTS["ib-ndr"].latency_s)
    assert Layout().scale_out == fabric
    assert get_kv_link("ib-ndr").latency_s == pytest.approx(10e-6)  # the KV transfer's, unchanged


def test_roce_400_over_two_hosts_by_hand() -> None:
    # TP 16 over 2 hosts of 8 H100s, 1 MiB (the hierarchical all-reduce, kvplan.perf.layout):
    #   in the domain  nvlink4 10 + 2 x 7/8 x 2^20 / 360e9 s        = 10 + 5.0972 us
    #   across         roce-400: 400 Gb/s x 0.8 = 40e9 B/s, 30 us (interconnects.json
    #                  roce-400g's latency): 30 + 2 x 1/2 x (2^20 / 8) / 40e9 s = 30 + 3.2768 us
    #   -> 48.3740 us (ib-ndr: 43.0100, test_plan_rate_span).
    lay = Layout(tp=16, node_gpus=8, scale_out=scale_out_link("roce-400"))
    ar = link(lay, H100, 16)
    assert isinstance(ar, SpanningLink) and ar.name == "roce-400"
    assert ar.all_reduce_s(16, MIB) * 1e6 == pytest.approx(48.3740, abs=1e-4)
    # The EP all-to-all over the hosts takes the fabric whole: 40e9 B/s, 30 us.
    assert (ar.bytes_per_s, ar.latency_s) == (40e9, pytest.approx(30e-6))


def test_rails_scale_the_fabric_bandwidth() -> None:
    # ib-hdr: 200 Gb/s = 25e9 B/s x 0.9 = 22.5e9 a rail; 2 rails 45e9, ib-ndr's: the same
    # 43.0100 us for 1 MiB over TP 16 on 2 hosts; one rail: across 25 + 2^20 / 8 / 22.5e9 s =
    # 25 + 5.8254 us -> 10 + 5.0972 + 30.8254 = 45.9226 us.
    two = Layout(tp=16, node_gpus=8, scale_out=scale_out_link("ib-hdr", 2))
    one = Layout(tp=16, node_gpus=8, scale_out=scale_out_link("ib-hdr"))
    assert link(two, H100, 16).all_reduce_s(16, MIB) * 1e6 == pytest.approx(43.0100, abs=1e-4)
    assert link(one, H100, 16).all_reduce_s(16, MIB) * 1e6 == pytest.approx(45.9226, abs=1e-4)


@pytest.mark.parametrize("name", ["efa-p5", "nvlink4", "pcie5"])
def test_a_link_without_a_collective_preset_is_refused(name: str) -> None:
    with pytest.raises(InputError, match=f"--link {name}: not a fabric between nodes"):
        scale_out_link(name)


def test_unknown_link_and_bad_rails_are_refused() -> None:
    with pytest.raises(InputError, match="--link: unknown link 'ib-xdr'"):
        scale_out_link("ib-xdr")
    with pytest.raises(InputError, match="--rails: must be >= 1"):
        scale_out_link("ib-ndr", 0)


def test_a_layout_over_hosts_is_slower_on_a_slower_fabric() -> None:
    # Qwen3-8B TP 2 over 2 hosts of one H100 each: every all-reduce crosses the fabric, so its
    # decode steps (TPOT) are slower on roce-200 (20e9 B/s, 30 us) than on ib-ndr (45e9, 25 us).
    spec = load_model("qwen3-8b")[0]
    options = WorkloadOptions(num_requests=8, rate=4.0, input_len=256, output_len=16)

    def tpot(fabric: str) -> float:
        task = TrialTask(spec=spec, requests=partial(requests_from, options), tp=2, dp=1,
                         gpu="H100-80GB", context=4096, slo_ttft_ms=None, slo_tpot_ms=1e9,
                         key="p50", estimate_options={}, node_gpus=1,
                         scale_out=scale_out_link(fabric))
        metrics = run_trial(task).trial.metrics
        assert metrics is not None
        return metrics.tpot_ms["p50"]

    assert tpot("roce-200") > tpot("ib-ndr")


runner = CliRunner()


@pytest.mark.parametrize("args", [
    ["plan", "qwen3-8b", "--rate", "1", "--slo-tpot-ms", "50", "--link", "efa-p5"],
    ["plan", "qwen3-8b", "--rate", "1", "--slo-tpot-ms", "50", "--link", "nope"],
    ["plan", "qwen3-8b", "--concurrency", "4", "--link", "roce-400"],
    ["plan", "qwen3-8b", "--concurrency", "4", "--rails", "2"],
])
def test_cli_refusals_are_one_line(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "Traceback" not in result.output and "--link" in result.output


def test_cli_rate_names_the_fabric_in_json() -> None:
    # One node: no layout crosses the fabric, the answer is ib-ndr's; the JSON names the link
    # only where --link gave another (the default output stays byte-identical).
    base = ["plan", "qwen3-8b", "--rate", "1", "--slo-tpot-ms", "200", "--num-requests", "8",
            "--input-len", "128", "--output-len", "8", "--jobs", "1", "--executor", "local",
            "--format", "json"]
    plain = json.loads(runner.invoke(app, base).output)
    named = json.loads(runner.invoke(app, base + ["--link", "roce-400"]).output)
    assert "link" not in plain["search"] and named["search"]["link"] == "roce-400"
    assert plain["gpus"] == named["gpus"] == 1
    assert plain["trials"] == named["trials"]


def test_simulate_takes_the_fabric_too() -> None:
    # Llama-3.1-70B TP 16 on H100s spans two 8-GPU NVLink domains: every all-reduce crosses
    # the fabric. --link ib-ndr is the default, byte for byte; roce-200 (20e9 B/s, 30 us) makes
    # each decode step slower; EFA is refused in one line.
    args = ["simulate", "llama-3.1-70b", "--gpu", "H100-80GB", "--tp", "16", "--concurrency",
            "8", "--num-requests", "16", "--input-len", "512", "--output-len", "32",
            "--format", "json"]
    plain, ib, roce = (runner.invoke(app, args + extra) for extra in (
        [], ["--link", "ib-ndr"], ["--link", "roce-200"]))
    assert plain.exit_code == ib.exit_code == roce.exit_code == 0
    assert plain.output == ib.output
    assert (json.loads(roce.output)["tpot_ms"]["p50"]
            > json.loads(plain.output)["tpot_ms"]["p50"])
    refused = runner.invoke(app, args + ["--link", "efa-p5"])
    assert refused.exit_code == 2 and "--link efa-p5: not a fabric" in refused.output


@pytest.mark.parametrize("extra", [["--link", ""], ["--link", "IB-NDR\x00"], ["--rails", "0"],
                                   ["--rails", "-3"]])
def test_hostile_fabric_options_are_refused(extra: list[str]) -> None:
    result = runner.invoke(app, ["plan", "qwen3-8b", "--rate", "1", "--slo-tpot-ms", "50",
                                 *extra])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_a_huge_rail_count_prices_without_hanging() -> None:
    # 10^12 rails of ib-ndr: 45e9 x 10^12 B/s, the across term ~0; the latency stays 25 us:
    # TP 16 over 2 hosts, 1 MiB: 10 + 5.0972 + 25 + ~0 = 40.0972 us.
    lay = Layout(tp=16, node_gpus=8, scale_out=scale_out_link("ib-ndr", 10**12))
    assert link(lay, H100, 16).all_reduce_s(16, MIB) * 1e6 == pytest.approx(40.0972, abs=1e-4)
