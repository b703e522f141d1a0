"""Which decode-phase forwards an engine replays from the CUDA graphs it captured, counted in the
engine's own unit (`DecodeGraphs`, EngineRules.decode_graphs): the `captured` that
kvplan.perf.roofline.step_time prices (SGLang's shared experts on a second stream,
kvplan.engines.sglang.shared_stream), one answer for `estimate` / `plan` (kvplan.perf.costmodel
CostInputs) and `simulate` (kvplan.perf.mixed_step MixedStepCost).

SGLang counts requests (read in the 0.5.7 and 0.5.9 wheels, python/sglang/srt/; 0.5.9's line
numbers, 0.5.7's in brackets). Each of its graph runners captures the batch sizes of
``server_args.cuda_graph_bs`` (from --cuda-graph-max-bs, server_args.py:1079-1107
`_generate_cuda_graph_batch_sizes`) and holds ``num_tokens_per_bs`` tokens a request; `can_run`
takes a batch whose ``forward_batch.batch_size`` (its requests) is at most ``max_bs =
max(capture_bs)``, whatever its tokens:
- the target's runner (model_executor/cuda_graph_runner.py:385-403 [:378-390]): a plain decode
  at 1 token a request; with EAGLE / NEXTN (MTP) its TARGET_VERIFY graph at
  ``num_tokens_per_bs = speculative_num_draft_tokens`` (:278-290 [:278-290]; topk 1: S + 1),
  so a verify of bs x (S + 1) tokens is replayed for bs <= max_bs;
- the draft's decode passes (speculative/eagle_draft_cuda_graph_runner.py:65-70, :139-153
  [:147-152]: ``num_tokens_per_bs = topk``) and its draft extend
  (eagle_draft_extend_cuda_graph_runner.py:69-75, :190-204 [:200]: S + 1 a request): the same
  capture_bs (get_batch_sizes_to_capture, cuda_graph_runner.py:190-222), the same test.
Every runner captures under `model_capture_mode()` (cuda_graph_runner.py:369 [:357],
eagle_draft_cuda_graph_runner.py:129, eagle_draft_extend_cuda_graph_runner.py:183 [:180]), which
is what DeepseekV2MoE.forward tests for its dual-stream path (models/deepseek_v2.py:567-580
[:804-812]); the NEXTN draft layer is built with the model's alt stream (models/
deepseek_nextn.py:99-120 [:101-121]) and decides its shared-expert fusion by the same rule
(determine_num_fused_shared_experts("DeepseekV3ForCausalLMNextN"), :205). The runners' batch
sizes are also capped at the request pool (cuda_graph_runner.py:194-214), which no running
batch exceeds, so `requests <= --cuda-graph-max-bs` is the whole test. With DP attention the
runners divide the gathered tokens by num_tokens_per_bs (:386-390): requests again.

vLLM counts tokens (its cudagraph_capture_sizes are token counts: a step is padded to the next
size, kvplan.perf.graph_padding via EngineRules.decode_graph_sizes) and no rule of vLLM's or
TensorRT-LLM's reads `captured`: they answer NO_DECODE_GRAPHS. With k draft tokens vLLM's
sizes follow the release (kvplan.engines.vllm.spec_graph_sizes: rounded up to multiples of
1 + k from 0.11.1, the ceiling min(max_num_seqs x (1 + k) x 2, 512) from 0.13.0, a
request-count grid x (1 + k) added from 0.29.0; the memory reserve counts the same list), and
TensorRT-LLM's captured batch sizes hold 1 + k tokens a request (kvplan.engines.trtllm.engine
`decode_graph_sizes`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, kw_only=True)
class DecodeGraphs:
    """The decode-phase forwards (a decode step; with speculative decoding the target's verify
    and the draft's passes) an engine replays from CUDA graphs, up to `max_requests` requests a
    batch (SGLang's unit: module docstring); 0: none priced as captured. `multi_token`: the
    graphs of a step of several tokens a request (SGLang's TARGET_VERIFY and draft-extend
    runners), which a simulated step holds as chunks; False: a step holding a chunk is an eager
    prefill (extend), never replayed."""

    max_requests: int = 0
    multi_token: bool = False

    def replays(self, requests: int, *, chunks: bool = False) -> bool:
        """Whether a forward of `requests` requests (`chunks`: some of them several tokens)
        replays a captured graph: can_run's batch_size <= max_bs."""
        return (self.multi_token or not chunks) and 0 < requests <= self.max_requests

    def verifying(self) -> DecodeGraphs:
        """The same batch sizes in the runners of S + 1 tokens a request (the target's verify,
        the draft extend: module docstring)."""
        return replace(self, multi_token=True)


NO_DECODE_GRAPHS = DecodeGraphs()
