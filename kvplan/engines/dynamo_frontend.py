"""How the frontend in front of a disaggregated deployment picks each role's worker, for the
simulation (kvplan.analysis.simulate.disagg_sim, `random_workers`).

Dynamo's frontend routes round-robin unless --router-mode says otherwise
(components/src/dynamo/frontend/main.py as GitHub's index stores it, the early-2026 line with
--request-plane / --event-plane: `--router-mode` choices round-robin / random / kv, default
DYN_ROUTER_MODE or "round-robin"; "Router, defaulting to round-robin"): by count, not by load.
srt-slurm, which launches the InferenceX disaggregated runs, starts on a multi-node job nginx
on the head node in front of up to 10 Dynamo frontends, one per other node
(NVIDIA/srt-slurm cc158081 src/srtctl/cli/mixins/frontend_stage.py
`_compute_frontend_topology`; core/schema.py FrontendConfig: enable_multiple_frontends True,
num_additional_frontends 9), nginx cycling over them (templates/nginx.conf.j2: an upstream
of the frontends, round-robin, `worker_processes auto`, each worker process its own cycle), and
each frontend keeps its own round-robin over the workers. The TensorRT-LLM recipes read
(recipes/trtllm/*, `frontend: type: "dynamo"`) pass the frontend no router arguments. A
request's worker is then set by several independent counters, none of which sees a worker's
load: kvplan draws it uniformly, the nearest rule that needs no count it cannot know (how many
frontends and nginx processes there were, where their counters stood).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class FrontendRouting:
    by_load: bool  # False: each role's worker drawn uniformly in the simulation
    source: str


DYNAMO_SRT_SLURM = FrontendRouting(
    by_load=False,
    source="Dynamo frontend --router-mode default round-robin, behind srt-slurm's nginx over "
           "up to 10 frontends (cc158081 frontend_stage.py)")


# Where the client's first token comes from when Dynamo 1.2.1's decode workers run without a
# connector (dynnocon67, kvplan.analysis.simulate.disagg_local (c)). Read in the ai-dynamo 1.2.1
# wheel's Python: the prefill handler runs the prompt with max_tokens = min_tokens = 1 and
# do_remote_decode (dynamo/vllm/handlers.py:2619-2641) and yields that one token with its
# disaggregated_params to its caller (:2685-2718); the decode handler takes the prefill_result's
# kv_transfer_params (:2245-2260, :2373-2377) and streams its own engine's output under the
# client's sampling parameters (:2225-2243, build_sampling_params :2368-2371). Which of the two
# the client sees first is decided in the frontend's PrefillRouter, compiled Rust in the wheel:
# not read at 1.2.1. kvplan takes the prefill's token (True), as prospdis67 did from the docs'
# Time To Second Token (181 / 195 ms at 8,000 tokens against kvplan's 199 ms decode-layout
# prefill; 758 / 831 ms at 26,000 against 748 ms: the second token follows the decode's own
# prefill). A reading of measured data, not of the code: it shaped prospdis66's points.
DYNAMO_FIRST_TOKEN_AT_PREFILL = True
