"""What a bench row's requests sample with, as its harness and server made them (sampler63):
the row setting `sampling`, recorded in the row's JSON like `flashinfer_sampler`, read from the
client's code and the checkpoint's generation_config.json, never from the row's errors.

`sampling` is an object: `client`, the sampling keys (temperature / top_p / top_k) the client
sent in every request ({} where it sends none), and `generation_config`, the file under
tests/data/generation_configs holding the checkpoint's generation_config.json sampling keys.
vLLM 0.15's server fills each key the request leaves out from that file: ModelConfig's
`generation_config = "auto"` default reads the checkpoint's (vllm v0.15.0
vllm/config/model.py:261, as tests.benches.vllm200u63's FINDING read it), and the completion
endpoint takes request, then file, then the server's default
(kvplan.engines.vllm.sampler.SamplingParams.resolve). A row without `sampling`: its requests'
sampling is not known here (or the sampler is not read for its release: kvplan's is vLLM
0.15's only), and no replay charges the sampler for it.
"""

from __future__ import annotations

from pathlib import Path

from kvplan.engines.vllm.sampler import SamplingParams
from kvplan.sources.generation_config import read_generation_config

GEN = Path(__file__).resolve().parents[1] / "data" / "generation_configs"


def row_sampling(setting: dict | None) -> SamplingParams | None:  # type: ignore[type-arg]
    """The recorded `sampling` setting resolved as vLLM 0.15's server resolves a request; None
    where the row records none."""
    if setting is None:
        return None
    checkpoint = read_generation_config(GEN / f"{setting['generation_config']}.json")
    return SamplingParams.resolve(setting["client"], checkpoint)


def sampling_label(params: SamplingParams) -> str:
    """`greedy`, or `T t, top-p p[, top-k k]` (the benches' tables)."""
    if params.greedy:
        return "greedy"
    return (f"T {params.temperature:g}, top-p {params.top_p:g}"
            + (f", top-k {params.top_k}" if params.top_k else ""))
