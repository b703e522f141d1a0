"""Invariants of the cache-size core, checked with hypothesis over random architectures."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kvplan import estimate, parse_spec, rank_caches
from kvplan._util.dtypes import DTYPES


def _spec(kind: str, *, heads: int, kv_heads: int, head_dim: int, layers: int,
          window: int | None = None):
    attention = {"kind": kind, "num_attention_heads": heads, "num_key_value_heads": kv_heads,
                 "head_dim": head_dim}
    if window is not None:
        attention |= {"sliding_window": window, "sliding_window_pattern": 2}
    data = {"name": "p", "source": "hypothesis", "num_hidden_layers": layers,
            "hidden_size": heads * head_dim, "vocab_size": 100,
            "attention": attention, "mlp": {"intermediate_size": 64}}
    return parse_spec(data, path="<hypothesis>", spec_id="p")


@st.composite
def architectures(draw):
    kv_heads = draw(st.integers(1, 16))
    group = draw(st.integers(1, 8))
    return {
        "heads": kv_heads * group,
        "kv_heads": kv_heads,
        "head_dim": draw(st.sampled_from([32, 64, 80, 96, 128, 256])),
        "layers": draw(st.integers(1, 128)),
    }


dtypes = st.sampled_from(sorted(DTYPES))


@given(arch=architectures(), kv_dtype=dtypes)
def test_mqa_le_gqa_le_mha(arch, kv_dtype) -> None:
    heads, kv = arch["heads"], arch["kv_heads"]
    dims = {"head_dim": arch["head_dim"], "layers": arch["layers"]}
    mha = _spec("mha", heads=heads, kv_heads=heads, **dims)
    mqa = _spec("mqa", heads=heads, kv_heads=1, **dims)
    gqa = _spec("gqa", heads=heads, kv_heads=kv, **dims)
    size = [rank_caches(s, kv_dtype=kv_dtype).bytes_per_token for s in (mqa, gqa, mha)]
    assert size[0] <= size[1] <= size[2]


@given(arch=architectures(), context=st.integers(1, 1 << 20), batch=st.integers(1, 4096),
       block=st.sampled_from([1, 8, 16, 32, 64, 128]), kv_dtype=dtypes)
def test_linear_in_batch(arch, context, batch, block, kv_dtype) -> None:
    spec = _spec("gqa", **arch)
    one = estimate(spec, context=context, batch=1, block_size=block, kv_dtype=kv_dtype)
    many = estimate(spec, context=context, batch=batch, block_size=block, kv_dtype=kv_dtype)
    assert many.bytes_per_batch == batch * one.bytes_per_sequence


@given(arch=architectures(), context=st.integers(1, 1 << 19), extra=st.integers(0, 1 << 12),
       block=st.sampled_from([1, 16, 64]), window=st.none() | st.integers(1, 8192))
def test_monotone_in_context(arch, context, extra, block, window) -> None:
    spec = _spec("gqa", window=window, **arch)
    a = estimate(spec, context=context, block_size=block)
    b = estimate(spec, context=context + extra, block_size=block)
    assert a.bytes_per_sequence <= b.bytes_per_sequence
    assert a.bytes_per_sequence_unpaged <= b.bytes_per_sequence_unpaged


@given(arch=architectures(), context=st.integers(1, 1 << 20),
       block=st.integers(1, 256), window=st.none() | st.integers(1, 8192))
def test_block_rounding_never_undercounts(arch, context, block, window) -> None:
    spec = _spec("gqa", window=window, **arch)
    est = estimate(spec, context=context, block_size=block)
    assert est.bytes_per_sequence >= est.bytes_per_sequence_unpaged
    # ...and wastes less than two blocks per layer (one for rounding, one for window alignment).
    assert est.bytes_per_sequence - est.bytes_per_sequence_unpaged < (
        2 * est.num_kv_layers * est.bytes_per_block_per_layer
    )
    if window is None:
        # Without windows the waste is under one block per layer.
        assert est.bytes_per_sequence - est.bytes_per_sequence_unpaged < est.bytes_per_block


@given(elements=st.integers(1, 1 << 16), name=dtypes)
def test_dtype_bytes_round_up_once(elements, name) -> None:
    dtype = DTYPES[name]
    assert dtype.bytes_for(elements) * 8 >= dtype.bits_for(elements)
    assert dtype.bytes_for(elements) * 8 - dtype.bits_for(elements) < 8


@given(threshold=st.integers(1, 10_000), start=st.integers(1, 50), limit=st.integers(1, 20_000))
def test_first_true(threshold, start, limit) -> None:
    from kvplan._util.search import first_true

    calls = []

    def pred(n: int) -> bool:
        calls.append(n)
        return n >= threshold

    got = first_true(pred, start=start, limit=max(start, limit))
    hi = max(start, limit)
    expected = max(threshold, start) if max(threshold, start) <= hi else None
    assert got == expected
    assert len(calls) <= 2 * hi.bit_length() + 4
