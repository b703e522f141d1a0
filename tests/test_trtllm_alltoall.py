"""TensorRT-LLM's MoE all-to-all workspace under attention DP (kvplan.engines.trtllm.moe_alltoall:
CutlassFusedMoE.select_alltoall_method_type and MoeAlltoAll.calculate_required_workspace_size,
the 1.2 line), hand numbers from DeepSeek-V3's config (hidden_size 7,168, num_experts_per_tok 8)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.engines.trtllm.moe_alltoall import (
    alltoall_method,
    one_sided_aux_bytes,
    one_sided_workspace_bytes,
)

runner = CliRunner()
MIB2 = 2 * 1024 * 1024


def test_one_sided_workspace_deepseek_v3_ep8() -> None:
    # aux (calculateOffsets): 8 + 2 x 8 x 4 = 72 -> 128, + 32 = 160 -> 256, + 32 = 288 -> 384,
    # + 8,192 x 8 x 4 = 262,528 (128-aligned), + 262,144 = 524,672.
    assert one_sided_aux_bytes(8, 8192) == 524_672
    # + dispatch 8 x 8,192 x 7,168 x 2 B = 939,524,096; + 2 x 8 x 8,192 x 8 x 4 = 2 x 2,097,152;
    # + combine 939,524,096: 1,883,767,168 B = 898.25 x 2 MiB -> 899 x 2 MiB.
    assert one_sided_workspace_bytes(ep=8, top_k=8, max_num_tokens=8192, hidden=7168) \
        == 899 * MIB2 == 1_885_339_648


def test_one_sided_workspace_deepseek_v3_ep32_generator_decode() -> None:
    # A DEP-32 generation server at the generator's max_num_tokens 256 (max_batch_size 256):
    # aux 8 + 256 = 264 -> 384, + 128 = 512, + 128 = 640, + 8,192 = 8,832, + 8,192 = 17,024;
    # + 32 x 256 x 7,168 x 2 = 117,440,512 -> 117,457,536; + 2 x 262,144 -> 117,981,824;
    # + 117,440,512 = 235,422,336 B = 112.26 x 2 MiB -> 113 x 2 MiB.
    assert one_sided_aux_bytes(32, 256) == 17_024
    assert one_sided_workspace_bytes(ep=32, top_k=8, max_num_tokens=256, hidden=7168) \
        == 113 * MIB2


def test_alltoall_method_follows_cutlass_selection() -> None:
    blackwell = (10, 0)
    assert alltoall_method(dp_attention=True, tp=8, ep=8, capability=blackwell,
                           nvlink=True) == "NVLinkOneSided"
    # No attention DP; MoE TP (EP 1 at TP 8: moe_tp 8); Hopper; SM 12.x; no NVLink.
    assert alltoall_method(dp_attention=False, tp=8, ep=8, capability=blackwell,
                           nvlink=True) == "NotEnabled"
    assert alltoall_method(dp_attention=True, tp=8, ep=1, capability=blackwell,
                           nvlink=True) == "NotEnabled"
    assert alltoall_method(dp_attention=True, tp=8, ep=8, capability=(9, 0),
                           nvlink=True) == "NotEnabled"
    assert alltoall_method(dp_attention=True, tp=8, ep=8, capability=(12, 0),
                           nvlink=True) == "NotEnabled"
    assert alltoall_method(dp_attention=True, tp=8, ep=8, capability=blackwell,
                           nvlink=False) == "NotEnabled"


def _reserve(*args: str) -> dict:
    result = runner.invoke(app, ["estimate", "deepseek-v3", "--engine", "trtllm", "--tp", "8",
                                 "--enable-expert-parallel", "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_estimate_adds_the_workspace_outside_torch() -> None:
    # B200 (10.0), DEP 8, TRT-LLM's default max_num_tokens 8,192: the reserve grows by the
    # workspace alone (1.756 GiB), named in the non-torch rule.
    dp = _reserve("--gpu", "B200", "--dp-attention")
    tp = _reserve("--gpu", "B200")
    assert dp["reserve_bytes"] - tp["reserve_bytes"] == 1_885_339_648
    assert "all-to-all workspace 1.76" in dp["reserve_breakdown"]["non_torch"]["rule"]
    # H200 (9.0): NotEnabled, nothing added.
    assert _reserve("--gpu", "H200", "--dp-attention")["reserve_bytes"] \
        == _reserve("--gpu", "H200")["reserve_bytes"]
