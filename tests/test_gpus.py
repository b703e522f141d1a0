"""GPU presets: sane figures, GB vs GiB, case-insensitive lookup, clear error for unknown names."""

from __future__ import annotations

import pytest

from kvplan.errors import InputError
from kvplan.gpus import GPUS, get_gpu
from kvplan.units import GiB

REQUIRED = (
    "A100-40GB", "A100-80GB", "H100-80GB", "H100-PCIe", "H20",
    "H200", "B200", "L40S", "RTX-4090", "MI300X",
)


def test_required_presets_present_and_keyed_by_name():
    assert set(REQUIRED) <= set(GPUS)
    for key, gpu in GPUS.items():
        assert gpu.name == key


@pytest.mark.parametrize("name", sorted(GPUS))
def test_every_preset_has_positive_figures(name):
    gpu = GPUS[name]
    assert gpu.full_name and gpu.source
    assert gpu.memory_bytes > 0
    assert gpu.hbm_bytes_per_s > 0
    assert gpu.peak_bf16_flops_per_s > 0
    assert gpu.peak_fp8_flops_per_s is None or gpu.peak_fp8_flops_per_s > 0
    assert gpu.total_bytes > 0
    for value in (gpu.memory_bytes, gpu.hbm_bytes_per_s, gpu.peak_bf16_flops_per_s):
        assert isinstance(value, int)


@pytest.mark.parametrize("name", sorted(GPUS))
def test_reported_total_is_below_capacity_and_sourced(name):
    gpu = GPUS[name]
    if gpu.reported_total_bytes is None:
        assert gpu.reported_total_source == ""
        assert gpu.total_bytes == gpu.memory_bytes
    else:
        assert gpu.reported_total_source
        # The driver keeps some memory back, but never more than ~8% (L40S ECC is 1/16).
        assert 0.9 * gpu.memory_bytes < gpu.reported_total_bytes < gpu.memory_bytes
        assert gpu.total_bytes == gpu.reported_total_bytes


def test_h100_reported_total_matches_vllm_log():
    gpu = get_gpu("H100-80GB")
    assert gpu.memory_bytes == 80 * GiB == 85_899_345_920
    assert gpu.reported_total_bytes == int(79.19 * GiB)
    assert f"{gpu.total_bytes / GiB:.2f}" == "79.19"


def test_a100_flag_and_fp8():
    for name, gpu in GPUS.items():
        assert gpu.is_a100 == name.startswith("A100")
        assert (gpu.peak_fp8_flops_per_s is None) == gpu.is_a100


def test_dense_fp8_is_twice_dense_bf16_on_hopper():
    # Guards against mixing a sparse figure into one field and a dense one into the other.
    for name in ("H100-80GB", "H100-PCIe", "H200", "H20"):
        gpu = GPUS[name]
        assert gpu.peak_fp8_flops_per_s == 2 * gpu.peak_bf16_flops_per_s


@pytest.mark.parametrize("spelling", ["H100-80GB", "h100-80gb", "H100-80gb", "  h100-80GB "])
def test_get_gpu_is_case_insensitive(spelling):
    assert get_gpu(spelling) is GPUS["H100-80GB"]


def test_get_gpu_unknown_lists_known_names():
    with pytest.raises(InputError) as info:
        get_gpu("V100")
    message = str(info.value)
    assert message.startswith("--gpu: unknown GPU 'V100'")
    for name in REQUIRED:
        assert name in message
