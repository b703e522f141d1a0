"""`plan --rate` with vLLM pipelines (kvplan.analysis.simulate.rate_search.pipeline_shapes): TP =
the GPUs of a node x PP = nodes, tried only when no TP engine within a node holds the model,
after the layouts without PP of the same GPU count."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kvplan.analysis.simulate.rate_search import Shape, TrialTask, _layouts, pipeline_shapes
from kvplan.cli import app
from kvplan.sources.resolve import load_model

runner = CliRunner()


def _plan(*args: str) -> dict:  # type: ignore[type-arg]
    r = runner.invoke(app, ["plan", "llama-3.1-8b", "--num-requests", "40", "--input-len",
                            "3000", "--output-len", "16", "--context", "4096", *args,
                            "-f", "json"])
    assert r.exit_code in (0, 3), r.output
    return json.loads(r.stdout)


def test_layouts_put_pipelines_after_the_same_count() -> None:
    # TP 1 or 2 up to 2 GPUs, pipelines TP 1 x PP 2: at 2 GPUs TP 1 x 2, TP 2, then TP 1 x PP 2.
    shapes = list(_layouts((1, 2), 2, 8, pipelines=((1, 2),)))
    assert shapes == [Shape(tp=1, dp=1), Shape(tp=1, dp=2), Shape(tp=2, dp=1),
                      Shape(tp=1, dp=1, pp=2)]
    assert list(_layouts((1, 2), 2, 8)) == shapes[:3]  # none asked: the search as before


def test_picks_a_pipeline_where_no_node_holds_the_model() -> None:
    """Llama-3.1-8B (16 GB of bf16 weights) on RTX-5080s (16 GB), one GPU a node, two nodes, 4
    req/s of 3,000 in / 16 out: TP 1 holds no KV pool (refused: the one fewer GPU fails), so
    TP 1 x PP 2 is searched. At 2 GPUs the TP 2 engine over both nodes (its all-reduces over
    ib-ndr, 64 MB a chunk) misses p90 TTFT 1,900 ms (2,062.6 ms simulated), the pipeline (one
    send a chunk) meets it (1,733.6 ms): the answer is TP 1 x PP 2."""
    data = _plan("--gpu", "RTX-5080", "--gpus-per-node", "1", "--nodes", "2", "--rate", "4",
                 "--slo-ttft-ms", "1900")
    assert data["search"]["pipelines"] == [{"tp": 1, "pp": 2}]
    assert data["gpus"] == 2 and data["layout"]["pp"] == 2 and data["layout"]["tp"] == 1
    assert data["best"]["pp"] == 2 and data["best"]["meets"]
    one_fewer = data["one_fewer"]
    assert one_fewer["gpus"] == 1 and one_fewer["refused"]
    span = [t for t in data["trials"] if t["tp"] == 2]
    assert span and not span[0]["meets"] and span[0]["ttft_ms_p90"] > 1900
    for command in data["launch"]["commands"]:  # one a node, each with the stages
        argv = command["argv"]
        assert argv[argv.index("--pipeline-parallel-size") + 1] == "2"


def test_no_pipeline_where_a_node_holds_the_model() -> None:
    """The same stream on H100s (TP 1 holds the model): no pipeline is searched and no trial
    has stages, whatever the nodes."""
    data = _plan("--gpu", "H100-80GB", "--gpus-per-node", "2", "--nodes", "2", "--rate", "1",
                 "--slo-ttft-ms", "5000")
    assert "pipelines" not in data["search"]
    assert all("pp" not in t for t in data["trials"]) and data["layout"]["pp"] == 1


def test_only_vllm_pipelines_are_searched() -> None:
    spec = load_model("llama-3.1-8b")[0]
    task = TrialTask(spec=spec, requests=list, tp=1, dp=1, gpu="RTX-5080", context=4096,
                     slo_ttft_ms=1900, slo_tpot_ms=None, key="p90", estimate_options={})
    assert pipeline_shapes(task, (1,), 1, 3) == ((1, 2), (1, 3))
    assert pipeline_shapes(task, (1,), 1, 1) == ()  # one node: nothing to pipeline over
    sglang = TrialTask(spec=spec, requests=list, tp=1, dp=1, gpu="RTX-5080", context=4096,
                       slo_ttft_ms=1900, slo_tpot_ms=None, key="p90",
                       estimate_options={"engine": "sglang"})
    assert pipeline_shapes(sglang, (1,), 1, 3) == ()
