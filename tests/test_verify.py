"""`kvplan verify` on CPU: the real paged cache against the prediction, small specs and budgets.

CUDA-only checks carry `@pytest.mark.cuda` and skip without a GPU.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

import kvplan.analysis.device.alloc as alloc_mod
import kvplan.analysis.device.decode as decode_mod
import kvplan.analysis.device.verify as verify_mod
from kvplan._util.errors import DeviceError, InputError
from kvplan._util.units import GiB, MiB
from kvplan.analysis.device.probe import CPU_GRANULARITY_BYTES
from kvplan.analysis.device.verify import DeviceMemory, resolve_budget, verify, workspace_bytes
from kvplan.capacity.plan import plan_capacity
from kvplan.cli.verify_cmd import verify_cmd
from kvplan.engines.base import PlanInputs
from kvplan.model.spec import ModelSpec
from kvplan.present.render import to_markdown
from kvplan.present.verify_view import verify_view
from kvplan.sources.resolve import load_spec
from kvplan.sources.spec_yaml import parse_spec

torch = pytest.importorskip("torch")
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("verify")(verify_cmd)
app.command("noop")(lambda: None)  # two commands: `verify` stays a subcommand
runner = CliRunner()


def _spec(attention: dict, layers: int = 4, name: str = "tiny") -> ModelSpec:
    data = {"name": name, "source": "test", "num_hidden_layers": layers, "hidden_size": 256,
            "vocab_size": 1000, "attention": attention, "mlp": {"intermediate_size": 512}}
    return parse_spec(data, path=f"{name}.yaml", spec_id=name)


GQA = _spec({"kind": "gqa", "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 32})
MLA = _spec({"kind": "mla", "num_attention_heads": 8, "kv_lora_rank": 64, "qk_rope_head_dim": 16,
             "qk_nope_head_dim": 32, "v_head_dim": 32}, name="tiny-mla")
HYBRID = _spec({"kind": "gqa", "num_attention_heads": 8, "num_key_value_heads": 4,
                "head_dim": 32, "sliding_window": 64, "sliding_window_pattern": 2},
               layers=6, name="tiny-hybrid")
SPLIT_KV = _spec({"kind": "mha", "num_attention_heads": 4, "num_key_value_heads": 4,
                  "head_dim": 48, "v_head_dim": 32}, name="tiny-split")

SPEC_YAML = """name: Tiny GQA 20
source: test
num_hidden_layers: 20
hidden_size: 256
vocab_size: 1000
attention: {kind: gqa, num_attention_heads: 8, num_key_value_heads: 2, head_dim: 32}
mlp: {intermediate_size: 512}
"""


def _check_common(r, budget: int) -> None:
    # The allocator-overhead check: the tensors are exactly kvplan's own plan, byte for byte
    # (both sides are kvplan's rules: torch adds nothing hidden; not agreement with an engine).
    assert r.tensor_bytes == r.predicted_bytes
    assert r.predicted_bytes <= budget
    assert r.search_bytes <= budget
    assert r.decode_output_finite
    assert r.decode_step_seconds > 0
    assert r.freed_ok and r.live_tensors_after_free == 0
    # The budget is a hard limit on the peak, decode temporaries included.
    assert r.peak_bytes <= budget + CPU_GRANULARITY_BYTES and r.peak_ok


def test_gqa_allocates_the_predicted_bytes_and_rss_agrees() -> None:
    budget = 64 * MiB + 12_345
    r = verify(GQA, device="cpu", context=256, budget_bytes=budget, block_size=16)
    plan = plan_capacity(GQA, PlanInputs(context=256, block_size=16,
                                         kv_budget_bytes=budget - workspace_bytes(budget)))
    assert r.predicted_num_blocks == plan.num_blocks
    assert r.predicted_bytes == plan.num_blocks * 4 * 16 * 2 * 2 * 32 * 2  # blocks x slots x page
    _check_common(r, budget)
    assert abs(r.measured_bytes - r.predicted_bytes) <= 0.10 * r.predicted_bytes + 4 * MiB
    assert r.allocator_overhead_bytes == r.measured_bytes - r.tensor_bytes
    # Only the budget limits: the searched maximum is the prediction, give or take a block.
    assert r.measured_num_blocks == r.predicted_num_blocks
    assert r.measured_max_concurrency == pytest.approx(
        r.measured_num_blocks / r.blocks_per_request)
    assert r.measured_token_capacity == r.measured_num_blocks * 16
    assert (r.decode_batch, r.decode_context) == (8, 256)  # capped at 8 on CPU
    assert r.absorbed_vs_naive_max_rel_error is None
    assert r.device == "cpu" and r.mem_fraction is None


def test_mla_naive_and_absorbed_agree() -> None:
    r = verify(MLA, device="cpu", context=256, budget_bytes=4 * MiB)
    _check_common(r, 4 * MiB)
    assert "latent [16, 80] bfloat16" in r.slot_shape
    assert r.absorbed_vs_naive_max_rel_error is not None
    assert r.absorbed_vs_naive_max_rel_error < r.absorbed_vs_naive_tolerance == 1e-4
    assert r.absorbed_vs_naive_ok
    assert r.mla_naive_seconds > 0 and r.mla_absorbed_seconds > 0


def test_absorbed_equals_naive_directly() -> None:
    """The two MLA forms on hand-made tensors (fp32 and bf16 tolerances)."""
    g = torch.Generator().manual_seed(1)
    h, c, dn, dr, dv, b, n = 4, 64, 32, 16, 24, 2, 40
    for dtype, tol in ((torch.float32, 1e-4), (torch.bfloat16, 2e-2)):
        w = decode_mod.MLAWeights(
            w_uk=(torch.randn(h, c, dn, generator=g) / c ** 0.5).to(dtype),
            w_uv=(torch.randn(h, c, dv, generator=g) / c ** 0.5).to(dtype), rank=c, rope=dr)
        cache = torch.randn(b, n, c + dr, generator=g).to(dtype)
        qn = torch.randn(b, h, dn, generator=g).to(dtype)
        qr = torch.randn(b, h, dr, generator=g).to(dtype)
        for i in range(b):
            naive = decode_mod.mla_naive(qn[i], qr[i], cache[i].split(7), w).float()
            absorbed = decode_mod.mla_absorbed(qn[i], qr[i], [cache[i]], w).float()
            assert naive.shape == (h, dv)
            assert float((naive - absorbed).abs().max() / naive.abs().max()) < tol


def test_mla_naive_temporaries_do_not_scale_with_the_weights() -> None:
    """The naive form's temporaries per chunk are its K_nope [H, t, dn] and V [H, t, dv]
    (16 x 16 x 128 x 4 B = 128 KiB each here), not copies of the 4 MiB up-projection weights:
    `torch.einsum("tc,hcd->thd", ...)` permuted every weight into [rank, H * d] order on each
    chunk, which put DeepSeek-V3.2's decode step over its workspace."""
    dev = verify_mod.make_device("cpu")
    if not dev.peak_is_exact:
        pytest.skip("this kernel cannot reset the RSS high-water mark")
    g = torch.Generator().manual_seed(2)
    h, c, dn, dr, dv, t = 16, 512, 128, 64, 128, 16
    w = decode_mod.MLAWeights(w_uk=torch.randn(h, c, dn, generator=g),
                              w_uv=torch.randn(h, c, dv, generator=g), rank=c, rope=dr)
    cache = torch.randn(8 * t, c + dr, generator=g)
    qn, qr = torch.randn(h, dn, generator=g), torch.randn(h, dr, generator=g)
    decode_mod.mla_naive(qn, qr, cache.split(t), w)  # warm-up: BLAS, thread pool
    dev.baseline()
    decode_mod.mla_naive(qn, qr, cache.split(t), w)
    assert dev.peak_usage() < w.w_uk.nbytes // 2  # 2 MiB: K, V and scores are 0.3 MiB


@pytest.mark.parametrize(("model", "kv_dtype", "budget_mib", "context"), [
    # Before the fix: 262.6-266.4 MiB peaks against a 260 MiB limit.
    ("deepseek-v3.2", "fp8", 256, 4096),
    # Before the fix: 133.1 MiB against 132 MiB (269.8 MiB against 260 MiB at 256 MiB, 4,096).
    ("deepseek-v2-lite", "fp8", 128, 2048),
])
def test_mla_decode_step_keeps_the_budget_at_long_context(model, kv_dtype, budget_mib,
                                                          context) -> None:
    """The known overshoot, from a fresh process as a user runs it (a test process's heap,
    already grown by earlier tests, would hide a temporary's growth)."""
    proc = subprocess.run(
        [sys.executable, "-m", "kvplan", "verify", model, "--device", "cpu", "--kv-dtype",
         kv_dtype, "--budget-gib", str(budget_mib / 1024), "--context", str(context),
         "--format", "json"], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["budget_bytes"] == budget_mib * MiB
    assert data["decode_context"] == context and data["decode_output_finite"]
    assert data["measured_num_blocks"] == data["predicted_num_blocks"]
    assert data["tensor_bytes"] == data["predicted_bytes"]
    assert data["absorbed_vs_naive_ok"]
    assert data["peak_bytes"] <= budget_mib * MiB + CPU_GRANULARITY_BYTES and data["peak_ok"]


def test_head_attention_matches_a_dense_reference() -> None:
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 8, 16, generator=g), torch.randn(2, 10, 2, 16, generator=g),
               torch.randn(2, 10, 2, 8, generator=g))
    out = torch.stack([decode_mod.attend_heads(q[i], zip(k[i].split(3), v[i].split(3),
                                                         strict=True)) for i in range(2)])
    kr, vr = k.repeat_interleave(4, dim=2), v.repeat_interleave(4, dim=2)  # GQA: 4 q per kv
    ref = torch.nn.functional.scaled_dot_product_attention(
        q[:, :, None], kr.transpose(1, 2), vr.transpose(1, 2))[:, :, 0]
    assert torch.allclose(out, ref, atol=1e-5)


def test_hybrid_sliding_window_groups_share_slots() -> None:
    r = verify(HYBRID, device="cpu", context=256, budget_bytes=4 * MiB)  # context > window
    # 3 full + 3 sliding layers: vLLM makes 2 groups of 3 sharing 3 raw tensors.
    assert (r.num_groups, r.group_size) == (2, 3)
    _check_common(r, 4 * MiB)
    assert r.predicted_bytes == r.predicted_num_blocks * r.page_bytes * 3


def test_k_and_v_allocated_apart_when_their_dims_differ() -> None:
    r = verify(SPLIT_KV, device="cpu", context=128, budget_bytes=4 * MiB)
    assert "k [16, 4, 48] bfloat16 + v [16, 4, 32] bfloat16" in r.slot_shape
    _check_common(r, 4 * MiB)


@pytest.mark.parametrize("kv_dtype", ["fp32", "fp16", "fp8", "int8", "int4", "nvfp4"])
@pytest.mark.parametrize("spec", [GQA, MLA], ids=["gqa", "mla"])
def test_every_kv_dtype(spec, kv_dtype) -> None:
    r = verify(spec, device="cpu", context=128, kv_dtype=kv_dtype, budget_bytes=2 * MiB)
    _check_common(r, 2 * MiB)
    if spec is MLA:
        assert r.absorbed_vs_naive_ok


def test_less_than_one_request_runs_a_shorter_one() -> None:
    # 4 layers x 16 tokens x 256 B = 16 KiB per block; 20 blocks fit, a request needs 64.
    budget = 20 * 16 * 1024 + workspace_bytes(20 * 16 * 1024 + 1 * MiB)
    r = verify(GQA, device="cpu", context=1024, budget_bytes=budget)
    assert r.predicted_num_blocks >= 20 and r.predicted_max_concurrency < 1
    assert r.decode_batch == 1 and r.decode_context <= r.measured_num_blocks * 16
    assert r.decode_output_finite and r.freed_ok


def test_interrupt_frees_every_tensor(monkeypatch) -> None:
    real, calls = verify_mod.decode_step, []

    def boom(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the measured run's step, after the warm-up's
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(verify_mod, "decode_step", boom)
    with pytest.raises(KeyboardInterrupt):
        verify(GQA, device="cpu", context=128, budget_bytes=4 * MiB)
    assert verify_mod.last_run_refs  # tensors were allocated ...
    assert all(ref() is None for ref in verify_mod.last_run_refs)  # ... and are gone


def test_budget_rules() -> None:
    cpu = DeviceMemory(device="cpu", device_name="x", total_bytes=16 * GiB, free_bytes=2 * GiB)
    assert resolve_budget(cpu, budget_bytes=None)[0] == GiB // 2  # 25% of available
    roomy = DeviceMemory(device="cpu", device_name="x", total_bytes=64 * GiB,
                         free_bytes=32 * GiB)
    assert resolve_budget(roomy, budget_bytes=None)[0] == GiB  # capped at 1 GiB
    with pytest.raises(InputError, match="available memory"):
        resolve_budget(cpu, budget_bytes=2 * GiB)
    gpu = DeviceMemory(device="cuda:0", device_name="g", total_bytes=80 * GiB,
                       free_bytes=79 * GiB)
    budget, how = resolve_budget(gpu, budget_bytes=None, mem_fraction=0.5)
    assert budget == 40 * GiB - 1 * GiB and "mem_fraction" in how
    with pytest.raises(InputError, match="nothing is free"):
        resolve_budget(DeviceMemory(device="cuda:0", device_name="g", total_bytes=80 * GiB,
                                    free_bytes=30 * GiB), budget_bytes=None, mem_fraction=0.5)
    with pytest.raises(InputError, match="mem-fraction"):
        resolve_budget(gpu, budget_bytes=None, mem_fraction=0.0)


def test_view_has_every_row() -> None:
    r = verify(MLA, device="cpu", context=256, budget_bytes=2 * MiB)
    md = to_markdown(verify_view(r))
    for label in ("KV cache bytes", "num_blocks", "max_concurrency", "decode step",
                  "MLA absorbed vs naive", "freed"):
        assert f"| {label}" in md


# --- through typer -------------------------------------------------------------------------


def test_cli_json(write_spec) -> None:
    path = write_spec(SPEC_YAML)  # 20 layers: the progress bar path (stderr, transient)
    result = runner.invoke(app, ["verify", str(path), "--device", "cpu", "--budget-gib",
                                 "0.01", "--context", "256", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("device", "device_name", "total_bytes", "budget_bytes", "predicted_bytes",
                "measured_bytes", "predicted_num_blocks", "measured_num_blocks",
                "predicted_max_concurrency", "measured_max_concurrency",
                "decode_step_seconds", "absorbed_vs_naive_max_rel_error", "freed_ok"):
        assert key in data
    assert data["schema_version"] == 1
    assert result.stderr == ""  # the progress bar is transient: nothing left on stderr
    assert data["budget_bytes"] == int(0.01 * GiB)
    assert data["tensor_bytes"] == data["predicted_bytes"]
    # The comparison named for what it is; planned_* are the plan, predicted_* their aliases.
    assert data["check"].startswith("allocator overhead")
    for name in ("bytes", "num_blocks", "token_capacity", "max_concurrency"):
        assert data[f"planned_{name}"] == data[f"predicted_{name}"]


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_cli_formats_mla(fmt) -> None:
    result = runner.invoke(app, ["verify", "deepseek-v2-lite", "--device", "cpu",
                                 "--budget-gib", "0.005", "--context", "64",
                                 "--block-size", "64", "-f", fmt], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "absorbed" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--device", "tpu"], "--device: expected cuda, cuda:N, cpu or auto, got 'tpu'"),
     (["--device", "cuda:x"], "--device: expected cuda:N"),
     (["--device", "cpu", "--budget-gib", "0.000001"], "too small for one block"),
     (["--device", "cpu", "--budget-gib", "100000"], "available memory"),
     (["--device", "cpu", "--kv-dtype", "nvfp4", "--budget-gib", "0.01", "--odd"],
      "head_dim (40) must be a multiple of 16")],
)
def test_cli_bad_input_exits_2_with_one_line(args, message, write_spec) -> None:
    model = "llama-3.1-8b"
    if "--odd" in args:
        args = [a for a in args if a != "--odd"]
        model = str(write_spec(SPEC_YAML.replace("head_dim: 32", "head_dim: 40")))
    result = runner.invoke(app, ["verify", model, *args])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kvplan: error: ")
    assert message in lines[0]


def test_cli_cuda_without_cuda_exits_2(monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for device in ("cuda", "cuda:1"):
        result = runner.invoke(app, ["verify", "gpt2", "--device", device])
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1
        assert "no CUDA device is available" in result.stderr
        assert "use --device cpu" in result.stderr


def test_cli_module_does_not_import_torch() -> None:
    code = ("import sys\nimport kvplan.cli.verify_cmd, kvplan.analysis.device, "
            "kvplan.present.verify_view\n"
            "print('torch' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip() == "False"


# --- CUDA ----------------------------------------------------------------------------------


@pytest.mark.cuda
@cuda
def test_cuda_verify_small_budget() -> None:
    r = verify(MLA, device="cuda", context=512, budget_bytes=64 * MiB)
    assert r.device.startswith("cuda:")
    assert r.tensor_bytes == r.predicted_bytes
    assert r.cuda_allocated_bytes == r.predicted_bytes  # 80 x 2 B x 16 x blocks: 512 B aligned
    assert r.cuda_reserved_bytes >= r.cuda_allocated_bytes
    assert r.measured_bytes >= r.cuda_reserved_bytes - 2 * MiB
    assert abs(r.measured_num_blocks - r.predicted_num_blocks) <= r.predicted_num_blocks // 20 + 2
    assert r.absorbed_vs_naive_ok and r.decode_output_finite
    assert r.freed_ok


@pytest.mark.cuda
@cuda
def test_cuda_gqa_bf16_decode() -> None:
    r = verify(GQA, device="cuda:0", context=1024, budget_bytes=128 * MiB)
    assert r.decode_compute_dtype == "bf16" and r.decode_output_finite
    assert r.tensor_bytes == r.predicted_bytes and r.freed_ok


@pytest.mark.parametrize("base", [GQA, MLA], ids=["gqa", "mla"])
def test_shared_layers_allocate_nothing(base) -> None:
    """CLA x2: half the layer slots, twice the blocks in the same budget; every layer still
    attends (shared layers read their source layer's cache)."""
    from kvplan.model.spec import with_share_every

    budget = 8 * MiB
    plain = verify(base, device="cpu", context=256, budget_bytes=budget)
    shared = verify(with_share_every(base, 2), device="cpu", context=256, budget_bytes=budget)
    _check_common(shared, budget)
    assert shared.group_size * 2 == plain.group_size
    assert shared.predicted_num_blocks in (2 * plain.predicted_num_blocks,
                                           2 * plain.predicted_num_blocks + 1)


def test_out_of_memory_is_a_one_line_device_error(monkeypatch) -> None:
    """An OOM outside the block search (here: while allocating the predicted pool) is reported,
    not a traceback, and everything taken is freed."""
    real = alloc_mod.raw_tensors

    def flaky(pages, num_blocks, device, refs):
        real(pages[:1], num_blocks, device, refs)  # some taken, then the rest fails
        raise MemoryError("simulated: out of memory")

    monkeypatch.setattr(verify_mod, "allocate",
                        lambda plan, nb, dev, held: alloc_mod.allocate(plan, nb, dev, held,
                                                                       alloc=flaky))
    with pytest.raises(DeviceError, match="out of memory outside the block search"):
        verify(GQA, device="cpu", context=256, budget_bytes=8 * MiB)
    assert all(ref() is None for ref in verify_mod.last_run_refs)


def test_decompressed_mla_allocated_as_vllm_caches_it() -> None:
    # MiniCPM3 in vLLM: per-head K and V of 96 dims (tests/test_cache_golden.py derives it).
    spec = load_spec("minicpm3-4b")
    r = verify(spec, device="cpu", context=128, budget_bytes=64 * MiB, block_size=16)
    _check_common(r, 64 * MiB)
    assert r.measured_num_blocks == r.predicted_num_blocks
    assert "latent" not in r.slot_shape and "96" in r.slot_shape
    assert r.absorbed_vs_naive_max_rel_error is None
