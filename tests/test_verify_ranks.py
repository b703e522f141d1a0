"""verify's new layouts, ranks and search branches on CPU (small budgets: each test is quick)."""

from __future__ import annotations

import pytest

from kvplan.cli.common import load_spec
from kvplan.device.alloc import search_blocks
from kvplan.device.probe import CpuDevice
from kvplan.errors import DeviceError
from kvplan.units import MiB

torch = pytest.importorskip("torch")


class FakeDevice(CpuDevice):
    """Usage is what the test says: the pool's bytes times an overhead, plus what was added."""

    def __init__(self, *, pool: int, overhead: float = 1.0, oom_after: int | None = None):
        super().__init__()
        self.pool, self.overhead, self.added, self.oom_after = pool, overhead, 0, oom_after

    def usage(self) -> int:
        return int(self.pool * self.overhead) + self.added


def test_search_overhead_branch_shrinks_the_pool() -> None:
    dev = FakeDevice(pool=100 * 1000, overhead=1.05)  # 100 blocks of 1,000 B measure 105,000

    def shrink(blocks: int) -> None:
        dev.pool = blocks * 1000

    out = search_blocks(dev, pool_blocks=100, block_bytes=1000, budget=100_500,
                        shrink_pool=shrink, add_blocks=lambda n: [])
    assert out.pool_blocks < 100 and "allocator overhead" in out.limit
    assert dev.usage() <= 100_500


def test_search_oom_branch_is_a_measured_limit() -> None:
    dev = FakeDevice(pool=10_000)
    calls = {"n": 0}

    def add(n: int) -> list[int]:
        calls["n"] += 1
        if calls["n"] > 2:
            raise MemoryError("simulated")
        dev.added += n * 1000
        return [n]

    out = search_blocks(dev, pool_blocks=10, block_bytes=1000, budget=1_000_000,
                        shrink_pool=lambda n: None, add_blocks=add)
    assert out.limit == "an out-of-memory error" and out.blocks > 10


def test_search_refuses_when_nothing_fits() -> None:
    dev = FakeDevice(pool=1000, overhead=50.0)
    with pytest.raises(DeviceError):
        search_blocks(dev, pool_blocks=1, block_bytes=1000, budget=10,
                      shrink_pool=lambda n: None, add_blocks=lambda n: [])


@pytest.mark.parametrize(("model", "budget_mib", "context", "tp"),
                         [("qwen3-next-80b-a3b", 160, 512, 1),
                          ("nemotron-nano-9b-v2", 160, 512, 4),  # rank 0 of TP 4: its shard
                          ("deepseek-v3.2", 48, 256, 1), ("llama-4-scout", 64, 512, 1)])
def test_every_layout_measures_its_prediction_within_budget(model, budget_mib, context,
                                                            tp) -> None:
    from kvplan.device.verify import verify

    r = verify(load_spec(model), device="cpu", context=context, budget_bytes=budget_mib * MiB,
               max_decode_batch=1, tp=tp)
    assert r.tensor_bytes == r.predicted_bytes
    assert r.measured_num_blocks == r.predicted_num_blocks
    assert r.peak_bytes <= r.budget_bytes + 4 * MiB and r.peak_ok
    assert r.decode_batch == 1 and r.decode_output_finite and r.freed_ok


def test_fp8_ds_mla_rows_and_indexer_keys() -> None:
    from kvplan.device.verify import verify

    r = verify(load_spec("deepseek-v3.2"), device="cpu", context=256, kv_dtype="fp8",
               budget_bytes=32 * MiB, max_decode_batch=1)
    assert "ds_mla [64, 656] uint8" in r.slot_shape and "indexer [64, 132] uint8" in r.slot_shape
    assert r.measured_num_blocks == r.predicted_num_blocks and r.decode_output_finite


def test_tp2_ranks_on_gloo_agree_on_the_minimum() -> None:
    from kvplan.device.ranks import verify_ranks

    r = verify_ranks(load_spec("qwen3-next-80b-a3b"), tp=2, pp=1, device="cpu", context=256,
                     budget_bytes=96 * MiB, max_decode_batch=1)
    assert [x["rank"] for x in r.ranks] == [0, 1]
    for x in r.ranks:
        assert x["measured_num_blocks"] == x["predicted_num_blocks"]
    assert r.measured_num_blocks == min(x["measured_num_blocks"] for x in r.ranks)
