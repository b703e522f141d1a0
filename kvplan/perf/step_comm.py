"""A step's layouts and their collectives, as kvplan.perf.roofline.step_time prices them (its
comments that say "kvplan.perf.step_comm" point here), and the split lm_head's logits gather
under DP attention (`_logits_gather`). Split from kvplan.perf.roofline, which re-exports it.

Layouts (kvplan.perf.layout.Layout): `tp` splits attention, dense MLP and (without `ep`)
experts over ranks, with two all-reduces per layer; `dp_attention` gives each rank its own
requests, whole attention, and the dense MLPs (with the shared experts) and the lm_head where
the engine keeps them (`Efficiency.dp_attention_weights`, its EngineRules.dp_attention_weights):
whole on every rank (vLLM, TensorRT-LLM), or split over the TP group (SGLang 0.5.4
models/deepseek_v2.py:391-424, :601-615, :2862-2868), where a rank streams 1 / tp of their
weights and runs them on the tokens gathered from every DP rank (the lm_head on the gathered
rows: layers/logits_processor.py:576-582 `dp_gather_replicate`, 0.5.4), so their FLOPs per
rank are the gathered tokens x 2 x params / tp; `ep` spreads whole experts over ranks, with an
all-to-all dispatch (FP8, as DeepEP's low-latency kernels) and combine (bf16) per MoE layer
(an engine that runs it only under DP attention, `Efficiency.ep_all_to_all_needs_dp`: vLLM's
FusedMoE, TensorRT-LLM's fused MoE modules, reduces TP-attention EP in the TP all-reduce instead).
An engine whose prefill (extend) step runs its MLP layers without an all-to-all
(`Efficiency.prefill_mlp_all_reduce`: SGLang with --moe-a2a-backend none, its default, read in
0.5.8.post1) pays instead, under DP attention, two all-reduces over the TP group of every rank's
tokens in bf16 per layer with an MLP (dense or MoE): the gather (layers/dp_attention.py
`get_dp_padding_mode`: an extend batch takes SUM_LEN, `_dp_gather_via_all_reduce`: each rank
writes its slice of a zeroed buffer of the summed tokens and all-reduces it;
layers/communicator.py `_gather_hidden_states_and_residual`; the dense layers too, their MLP
being TP unless --moe-dense-tp-size 1, `_compute_mlp_mode`) and the output's
(models/deepseek_v2.py `DeepseekV2MoE.forward_normal` all-reduces `final_hidden_states` when
tp_size > 1 and not reduce-scattering, which only MAX_LEN does; `dp_scatter` then copies the
rank's rows back). With TP attention such an EP step has no all-to-all: the experts' partial sums
join the TP all-reduce after the layer. Its decode steps (`Efficiency.decode_mlp_gather`, read
in 0.5.5.post2 and 0.5.8.post1) gather the same way but padded to the most tokens a rank holds
(MAX_LEN: `get_default_mode_in_cuda_graph`, and `get_dp_padding_mode` when the ranks hold about
as many): `_dp_gather_via_all_gather` (attention TP 1: one NCCL all_gather_into_tensor of the
TP group) and, after the MLP, `dp_reduce_scatter_tensor` (one reduce_scatter_tensor) in place of
the output's all-reduce (deepseek_v2.py skips it under `use_reduce_scatter`,
communicator.py `should_use_reduce_scatter` / `_scatter_hidden_states`): each a ring half,
latency + (n - 1) / n x the gathered bytes / bandwidth; no all-to-all, TP attention as above.
With attention TP above 1 (SGLang --dp-size below --tp: `Layout.attn_tp` GPUs a rank) the
attention output is left partial and the gather sums it (communicator.py 0.5.6 :734-761
`dp_gather_partial`), so such a layer has no attention all-reduce of its own; at MAX_LEN
`_dp_gather_via_all_gather` first reduce-scatters the rank's tokens over its attention group
(0.5.6 :478-495) and `dp_reduce_scatter_tensor` all-gathers them back over it (:552-560), a ring
half each of the rank's own tokens.
The mode is the step's, not the rank's: where any rank's batch is an extend every rank gathers
at SUM_LEN (layers/dp_attention.py `get_dp_padding_mode`; kvplan.engines.sglang.dp_balance), a
decode rank beside it too, and only MAX_LEN reduce-scatters (communicator.py 0.5.6 :519-530
`should_use_reduce_scatter`; deepseek_v2.py 0.5.6 :816-819 all-reduces otherwise): the
simulator's SUM_LEN step takes the all-reduce form at the ranks' summed tokens on every rank
(roofline.step_time `sum_len`, `gathered`; sgldp64: before it, the MAX_LEN form).
The logits gather: an lm_head split over the TP group under DP attention (SGLang without
--enable-dp-lm-head) runs on every DP rank's rows and hands each rank back whole logits of its
own (layers/logits_processor.py, 0.5.8.post1 :845-946, 0.5.5.post2 :794-895 the same): the
rows' hidden states gathered by `dp_gather_replicate` at SUM_LEN (LogitsMetadata always takes
it, :198), one all-reduce of the summed buffer; the GEMM on them (above); the vocabulary shards
(the padded vocabulary / tp columns each, :258 `do_tensor_parallel_all_gather_dp_attn`, the
lm_head's dtype) joined by `tensor_model_parallel_all_gather` (distributed/parallel_state.py
:758-825: an all_gather_into_tensor, a ring half, then a movedim + reshape copy of the whole
[rows, vocabulary]), then `dp_scatter` of the rank's rows. In a decode CUDA graph the buffer
holds the captured batch x DP size rows (model_executor/cuda_graph_runner.py:589-596; the
captured batch is the least capture size >= the busiest rank's, :785-793): kvplan's ranks even,
rows x DP size. An extend (prefill) step does the same on its sampled rows (sgldp64): without
input logprobs LogitsProcessor.forward keeps each request's last token (`last_index` =
cumsum(extend_seq_lens) - 1: logits_processor.py 0.5.3 :276, 0.5.6 :412, 0.5.8.post1 :426,
0.5.9 :428), a chunked request's partial chunk included, and a rank counts that many rows
(`num_tokens_for_logprob` = sum(max(extend_len - logprob_start_len, 1)), the batch size:
managers/scheduler.py 0.5.3 :2166-2170, scheduler_dp_attn_mixin.py 0.5.6 :115-118,
0.5.8.post1 :148-159, 0.5.9 :150-153); the buffer `dp_gather_replicate` all-reduces is the
ranks' counts summed (`global_dp_buffer_len` = sum(global_num_tokens_for_logprob_cpu):
0.5.3 :201, 0.5.6 :219, 0.5.8.post1 :221, 0.5.9 :226; SUM_LEN, :178 / :196 / :198 / :202 ->
layers/dp_attention.py `_dp_gather` :504-511 `_dp_gather_via_all_reduce`), the same in
0.5.23 (:419, :443, :722). Priced on decode and prefill steps at `rows` x DP size (the ranks
even), or at the ranks' own rows summed where the simulator knows them
(roofline.step_time `gathered_logits`: kvplan.engines.sglang.dp_balance).
The TP logits gather (`_vocab_gather`, op `tp_logits_gather`): with the lm_head split over a
TP group of more than one GPU and no DP gather above (plain TP; attention TP under DP attention
where the lm_head follows it), every engine all-gathers the vocabulary shards of the step's
logit rows before sampling, prefill and decode alike (only the rows sampled: one a request, a
speculative step's verified tokens too). vLLM: LogitsProcessor._get_logits ->
`_gather_logits` (model_executor/layers/logits_processor.py 0.10.0 :89-101, :115; 0.15.0
:74-86, :98; 0.19.0 :75-87, :99) takes `tensor_model_parallel_all_gather` where
`current_platform.use_all_gather()` (platforms/interface.py: 0.10.0 :467-477, True under V1,
the default, envs.py :650-651, CUDA not overriding it; 0.15.0 :559-563 and 0.19.0 :614-618
return True), not the gather to rank 0; the all-gather is one all_gather_into_tensor then a
movedim + reshape copy (distributed/device_communicators/base_device_communicator.py 0.15.0
:139-162). SGLang: LogitsProcessor `do_tensor_parallel_all_gather` when the TP size is above 1
(layers/logits_processor.py 0.5.9 :261-263, `_get_logits` :831-835
`tensor_model_parallel_all_gather`; 0.5.8.post1 :255-256, :935); with --enable-dp-lm-head over
the attention-TP group (:254-257, :909-935). TensorRT-LLM: DecoderModelForCausalLM's lm_head
is a column-parallel LMHead with gather_output=True unless attention DP is on
(_torch/models/modeling_utils.py `DecoderModelForCausalLM.__init__`, main at 000a01de: under
attention DP a whole LMHead). Charged once a step over the lm_head's TP group.
A launch's own all-to-all (`Efficiency.moe_a2a`: SGLang's DeepEP, kvplan.engines.sglang.deepep)
replaces the MoE layers' gathers (timed by `MoeAllToAll.seconds`; dense layers gather if split).
Collectives inside one NVLink domain use the scale-up interconnect, beyond it the scale-out one;
the domain is an 8-GPU node, or a 72-GPU NVL72 rack for the GB200 / GB300 presets
(kvplan.hardware.interconnect.scale_up_gpus). A TP all-reduce on NVLink is the engines' custom
one-shot / two-shot kernel (vLLM / SGLang dispatch by world size and bytes; fixed parts measured
in CUDA graphs per NVLink generation, one-shot / two-shot: 5.7 / 13.1 us on H100, 7.0 / 19.0 us
on B300, 10 / 20 us unmeasured on A100), beyond 8 MiB or off NVLink an NCCL ring
(`Interconnect.all_reduce_s`).

Fused all-reduce + residual + RMSNorm: where an engine runs each TP all-reduce and the RMSNorm
after it as one kernel by default (kvplan.perf.engine_traits.AllReduceNormFusion; SGLang 0.5.6
for DeepseekV3ForCausalLM on SM 10.x and GptOssForCausalLM on Blackwell, from 0.5.7 also on SM
9.0 and for Glm4Moe / Qwen3Moe, one node, up to 2,048 tokens a step:
kvplan.engines.sglang.allreduce_fusion, picked by release in `engine_efficiency("sglang")`),
that norm costs no kernel floor in the step (and no op of an eager prefill): 2 x layers - 1 per
step, the first layer's input norm having no all-reduce before it. The all-reduce keeps its
time. Read from the engine's code, not fitted.
"""

from __future__ import annotations

from kvplan.hardware.interconnect import Interconnect
from kvplan.model.quant import round_up
from kvplan.model.spec import ModelSpec
from kvplan.perf.step_ops import _Step
from kvplan.weights.base import VOCAB_PADDING


def _logits_gather(s: _Step, spec: ModelSpec, ring: Interconnect, *, ranks: int, rows: int,
                   act_bytes: int) -> None:
    """The split lm_head's gathers under DP attention (module docstring, `logits gather`):
    `rows` = every DP rank's logit rows, through the lm_head on each of `ranks` GPUs."""
    # dp_gather_replicate at SUM_LEN: one all-reduce of the zeroed, summed buffer of rows.
    s.collective("logits_gather", ring.all_reduce_s(ranks, rows * spec.hidden_size * act_bytes))
    _vocab_gather(s, spec, ring, ranks=ranks, rows=rows, act_bytes=act_bytes, name="logits_gather")


def _vocab_gather(s: _Step, spec: ModelSpec, ring: Interconnect, *, ranks: int, rows: int,
                  act_bytes: int, name: str = "tp_logits_gather") -> None:
    """tensor_model_parallel_all_gather of `rows` rows' vocabulary shards over `ranks` GPUs (the
    lm_head's dtype, bf16): a ring all-gather of rows x the padded vocabulary, then one copy of
    it to row order (module docstring, `logits gather`; under plain TP: `TP logits gather`)."""
    logits_bytes = rows * round_up(spec.vocab_size, VOCAB_PADDING) * act_bytes
    s.collective(name, ring.latency_s + (ranks - 1) / ranks * logits_bytes / ring.bytes_per_s)
    s.op(name, flops=0.0, nbytes=2 * logits_bytes)
