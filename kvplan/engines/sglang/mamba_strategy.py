"""SGLang's mamba radix-cache strategy, and so how many recurrent-state slots one running request
reserves (``_calculate_mamba_ratio``): the divisor of ``max_mamba_cache_size`` in the cap on
running requests (``max_num_reqs = min(max_num_reqs, max_mamba_cache_size // ratio)``).

Read from sgl-project/sglang, ``python/sglang/srt/``, in the PyPI wheels named:

- ``ratio = 1`` with ``--disable-radix-cache``; else ``MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO``
  (3) plus, with the ``extra_buffer`` strategy, the ping-pong track slots: 2 with the overlap
  schedule (``MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP``), 1 without or in the lazy variant
  (0.5.14 ``model_executor/model_runner_kv_cache_mixin.py``:55-58 and :274-293, the cap :999;
  0.5.15 the same file :75 and :293-312, the cap :1243; 0.5.16 ``mem_cache/
  kv_cache_configurator.py``:101-104 and :1572-1591, the cap :1636-1641; 0.5.23 the same file
  :227 and :3062-3084 with ``mem_cache/allocation_sizing.py``:11-19, 2 with overlap, and
  ``SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK`` off by default, ``environ.py``:1637). The extra slots are
  the request's own: ``HybridReqToTokenPool`` keeps ``mamba_ping_pong_track_buffer_size`` (2
  with the overlap schedule) slots per request row from the same ``MambaSlotAllocator``
  (0.5.16 ``mem_cache/memory_pool.py``:1136 and :1183-1216).
- Which strategy ``--mamba-radix-cache-strategy auto`` (the default; ``--mamba-scheduler-
  strategy`` before 0.5.14) becomes: to 0.5.13 always ``no_buffer`` ("TODO: when extra_buffer
  is more verified ...", ``server_args.py`` 0.5.9:874-877, 0.5.10:964-967, 0.5.11:1079-1082,
  0.5.12:1184-1187, 0.5.13:1225-1228); from 0.5.14 ``extra_buffer`` when the overlap schedule
  is on (the default) or the page is over 1 token and the architecture supports it with the
  linear-attention backend ``triton`` (the default), else ``no_buffer`` with the overlap
  schedule turned off (0.5.14 ``server_args.py`` ``_handle_mamba_radix_cache``:4380-4398,
  ``_support_mamba_cache_extra_buffer``:4338-4353; 0.5.15 ``arg_groups/overrides.py``
  :982-995 and :1038-1046; 0.5.16 the same file :1133-1156 and :1190-1198; 0.5.23 :403-449 and
  :477-486). So at the defaults a Qwen3.5 / Qwen3-Next running request reserves 5 slots from
  0.5.14, 3 before. Releases 0.5.17 - 0.5.22 are not read: the rule is the same at 0.5.16 and
  0.5.23, and kvplan takes it for them too, with 0.5.16's architecture list.

Not modelled: ``--disable-overlap-schedule`` (a `simulate` option, not one `estimate` sizes: 4
slots then where the page is over 1 token, else ``no_buffer``'s 3), the explicit
``--mamba-radix-cache-strategy`` / ``extra_buffer_lazy`` flags and a non-``triton``
``--linear-attn-backend`` (kvplan takes SGLang's defaults).
"""

from __future__ import annotations

from kvplan._util.versions import version_key

NO_BUFFER_SLOTS = 3  # MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
OVERLAP_TRACK_SLOTS = 2  # MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP (ping-pong, overlap on)
EXTRA_BUFFER_AUTO_SINCE = (0, 5, 14)  # "auto" -> extra_buffer (module docstring)
# The architectures SGLang's extra_buffer strategy supports, with the first release read that
# lists each: 0.5.14 server_args.py:4339-4350 (the same ten in 0.5.15 overrides.py:982-995);
# KimiLinear added by 0.5.16 (overrides.py:1135); the text-only Qwen3.5 entries and the newer
# families are first read at 0.5.23 (overrides.py:403-434).
EXTRA_BUFFER_ARCHS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys((
        "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
        "Qwen3NextForCausalLM", "InternS2PreviewForConditionalGeneration",
        "MiniCPMV4_6ForConditionalGeneration", "BailingMoeV2_5ForCausalLM",
        "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM", "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM"), (0, 5, 14)),
    "KimiLinearForCausalLM": (0, 5, 16),
    **dict.fromkeys((
        "Qwen3_5MoeForCausalLM", "Qwen3_5ForCausalLM", "Qwen4ExpForConditionalGeneration",
        "MiniCPMV4_7ForConditionalGeneration", "BailingMoeV3ForCausalLM",
        "BailingMoeV3VLForConditionalGeneration", "Glm5NextForConditionalGeneration",
        "NemotronH_Omni_Reasoning_V3", "KimiK3ForConditionalGeneration"), (0, 5, 23)),
}


def extra_buffer(version: str | None, architectures: tuple[str, ...] | list[str]) -> bool:
    """Whether SGLang `version`'s default strategy is extra_buffer for a model whose config
    names `architectures` (the first is the one SGLang reads; radix cache and overlap on)."""
    if not architectures or version_key(version) < EXTRA_BUFFER_AUTO_SINCE:
        return False
    since = EXTRA_BUFFER_ARCHS.get(architectures[0])
    return since is not None and version_key(version) >= since


def mamba_slots_per_request(version: str | None, architectures: tuple[str, ...] | list[str],
                            *, radix_cache: bool) -> int:
    """``_calculate_mamba_ratio`` at SGLang's defaults: 1 without the radix cache, 3 with
    no_buffer, 3 + 2 with extra_buffer and the overlap schedule."""
    if not radix_cache:
        return 1
    if extra_buffer(version, architectures):
        return NO_BUFFER_SLOTS + OVERLAP_TRACK_SLOTS
    return NO_BUFFER_SLOTS
