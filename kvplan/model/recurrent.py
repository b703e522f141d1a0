"""The recurrent mixers of hybrid models, one frozen type per kind (Mamba1, Mamba2, Gated DeltaNet,
KDA, short conv, lightning attention), each answering its own questions: its weights, those held
in float32, its state work per token, its state's shapes and default dtype. Shapes follow vLLM's
MambaStateShapeCalculator; the parameter layouts the reference implementations (transformers'
modeling_<family>.py; vLLM's MambaMixer, MambaMixer2, GatedDeltaNet, KDA, ShortConv). Facts
that depend on the model family rather than the kind (Jamba's dt/B/C norms, OLMo-Hybrid's A_log
dtype) stay with the tables that name the families and come in as arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

# divide(n, tp, what) -> n // tp, refusing a tensor-parallel size that does not divide n.
Divide = Callable[[int, int, str], int]
# A state tensor: ("conv" | "ssm" | "kv", shape); "conv" is held in the conv (model) dtype, the
# others in the SSM state dtype.
StateShape = tuple[str, tuple[int, ...]]

# Tokens per chunk of the chunked Gated DeltaNet prefill: SGLang 0.5.6 / fla
# layers/attention/fla/chunk.py chunk_gated_delta_rule_fwd (chunk_local_cumsum(g,
# chunk_size=64); chunk_scaled_dot_kkt_fwd, recompute_w_u_fwd, chunk_fwd_o use BT = 64).
GDN_CHUNK_TOKENS = 64


@dataclass(frozen=True, kw_only=True)
class RecurrentSpec:
    """The recurrent mixer of hybrid models; shapes as vLLM's MambaStateShapeCalculator uses them.
    One subclass per kind (`RECURRENT_KINDS`); ``kind`` names it in outputs.

    ``ssm_dtype``: the dtype the config fixes for the SSM/recurrent state (Nemotron-H's
    ``mamba_ssm_cache_dtype``, default float32 in vLLM; Qwen3.5's ``mamba_ssm_dtype``); None:
    the conv state's dtype (the model dtype), except KDA whose recurrent state is float32.
    """

    kind: str
    conv_kernel: int = 0
    intermediate_size: int = 0
    state_size: int = 0
    n_groups: int = 1
    num_heads: int = 0
    head_dim: int = 0
    num_key_heads: int = 0
    num_value_heads: int = 0
    key_head_dim: int = 0
    value_head_dim: int = 0
    ssm_dtype: str | None = None
    conv_bias: bool = True
    dt_rank: int = 0  # mamba1 (0: ceil(hidden / 16))

    # The config fields the kind needs (see model_specs/README.md).
    needs: ClassVar[tuple[str, ...]] = ()
    # Extra state pages per request in vLLM's 'align' prefix-caching mode.
    checkpoint_pages: ClassVar[int] = 0

    def params(self, hidden_size: int, *, dt_bc_norms: bool = False) -> int:
        """One mixer's weights (elements). `dt_bc_norms`: the family normalises dt, B and C with
        weighted RMSNorms (Mamba1 only)."""
        raise NotImplementedError

    def float32_params(self, *, a_log_in_model_dtype: bool = False) -> int:
        """Of `params`, those vLLM 0.32 holds in float32 whatever the model dtype.
        `a_log_in_model_dtype`: the family builds Gated DeltaNet's A_log in the model dtype."""
        return 0

    def state_flops_per_token(self, phase: str = "decode") -> int:
        """The state work for one token, counted as the multiply-adds of a matmul."""
        raise NotImplementedError

    def default_ssm_dtype(self, conv_dtype: str) -> str:
        """The SSM state's dtype when the engine is given 'auto': the config's, else the conv
        state's (the model dtype)."""
        return self.ssm_dtype or conv_dtype

    def state_shapes(self, tp: int, num_spec: int, divide: Divide) -> tuple[StateShape, ...]:
        """One request's state tensors on one rank of `tp`, with `num_spec` speculative tokens."""
        raise NotImplementedError

    def _conv(self, dim: int, tp: int, num_spec: int, divide: Divide) -> StateShape:
        # vLLM keeps the last kernel - 1 inputs (+ one per speculative token), "SD" layout.
        return ("conv", (self.conv_kernel - 1 + num_spec, divide(dim, tp, "recurrent conv dim")))


@dataclass(frozen=True, kw_only=True)
class Mamba1(RecurrentSpec):
    kind: str = field(default="mamba1", init=False)
    needs: ClassVar[tuple[str, ...]] = ("intermediate_size", "state_size", "conv_kernel")

    def params(self, hidden_size: int, *, dt_bc_norms: bool = False) -> int:
        h, d, k = hidden_size, self.intermediate_size, self.conv_kernel
        dt_rank = self.dt_rank or -(-h // 16)
        # in_proj (x, z), conv (+bias), x_proj (dt, B, C), dt_proj (+bias), A_log, D, out; and
        # Jamba's RMSNorms of dt, B and C (vLLM 0.32 models/jamba.py:136 use_rms_norm=True,
        # layers/mamba/mamba_mixer.py:161-180 dt_layernorm / b_layernorm / c_layernorm).
        norms = dt_rank + 2 * self.state_size if dt_bc_norms else 0
        return (h * 2 * d + d * (k + int(self.conv_bias)) + d * (dt_rank + 2 * self.state_size)
                + dt_rank * d + d + d * self.state_size + d + d * h + norms)

    def float32_params(self, *, a_log_in_model_dtype: bool = False) -> int:
        # A, intermediate_size x state_size (layers/mamba/mamba_mixer.py:141-147).
        return self.intermediate_size * self.state_size

    def state_flops_per_token(self, phase: str = "decode") -> int:
        # B x outer product and C.h over d_inner x d_state.
        return 2 * 2 * self.intermediate_size * self.state_size

    def state_shapes(self, tp: int, num_spec: int, divide: Divide) -> tuple[StateShape, ...]:
        # conv (kernel - 1, d_inner / tp); ssm (d_inner / tp, d_state). No speculative rows.
        d = divide(self.intermediate_size, tp, "mamba intermediate size")
        return (("conv", (self.conv_kernel - 1, d)), ("ssm", (d, self.state_size)))


@dataclass(frozen=True, kw_only=True)
class Mamba2(RecurrentSpec):
    kind: str = field(default="mamba2", init=False)
    needs: ClassVar[tuple[str, ...]] = ("intermediate_size", "state_size", "conv_kernel",
                                        "n_groups", "num_heads", "head_dim")
    # Mamba2 keeps one prefill checkpoint (MambaMixer2.get_kv_cache_spec:
    # num_prefill_checkpoint_blocks=1).
    checkpoint_pages: ClassVar[int] = 1

    def params(self, hidden_size: int, *, dt_bc_norms: bool = False) -> int:
        h, d, k = hidden_size, self.intermediate_size, self.conv_kernel
        conv_dim = d + 2 * self.n_groups * self.state_size
        # in_proj (z, x, B, C, dt), depthwise conv (+bias), A_log, D, dt_bias, gated norm, out.
        return (h * (d + conv_dim + self.num_heads) + conv_dim * (k + int(self.conv_bias))
                + 3 * self.num_heads + d + d * h)

    def float32_params(self, *, a_log_in_model_dtype: bool = False) -> int:
        # A, one per head (layers/mamba/mamba_mixer2.py:480-485; D and dt_bias in the model
        # dtype).
        return self.num_heads

    def state_flops_per_token(self, phase: str = "decode") -> int:
        # B x outer product and C.h over heads x head_dim x d_state. The prefill keeps the
        # recurrent count (the SSD chunk terms need the config's chunk size, which the spec does
        # not carry).
        return 2 * 2 * self.num_heads * self.head_dim * self.state_size

    def state_shapes(self, tp: int, num_spec: int, divide: Divide) -> tuple[StateShape, ...]:
        # Groups are replicated so each rank has the groups its heads need
        # (extra_groups_for_head_shards): n_groups + (tp - n_groups) when tp does not divide.
        groups = self.n_groups if self.n_groups % tp == 0 else tp
        conv_dim = self.intermediate_size + 2 * groups * self.state_size
        return (self._conv(conv_dim, tp, num_spec, divide),
                ("ssm", (divide(self.num_heads, tp, "mamba heads"), self.head_dim,
                         self.state_size)))


@dataclass(frozen=True, kw_only=True)
class GatedDeltaNet(RecurrentSpec):
    kind: str = field(default="gated_delta_net", init=False)
    needs: ClassVar[tuple[str, ...]] = ("num_key_heads", "num_value_heads", "key_head_dim",
                                        "value_head_dim", "conv_kernel")

    def params(self, hidden_size: int, *, dt_bc_norms: bool = False) -> int:
        h, k = hidden_size, self.conv_kernel
        key = self.num_key_heads * self.key_head_dim
        value = self.num_value_heads * self.value_head_dim
        # in_proj_qkvz, in_proj_ba, conv over q/k/v, dt_bias, A_log, gated norm, out_proj.
        return (h * (2 * key + 2 * value) + h * 2 * self.num_value_heads + (2 * key + value) * k
                + 2 * self.num_value_heads + self.value_head_dim + value * h)

    def float32_params(self, *, a_log_in_model_dtype: bool = False) -> int:
        # A_log, one per value head (layers/mamba/gdn/qwen_gdn_linear_attn.py:555-560), except
        # in the families that build it in the model dtype.
        return 0 if a_log_in_model_dtype else self.num_value_heads

    def state_flops_per_token(self, phase: str = "decode") -> int:
        # S.k, the rank-1 update and S.q over value heads x d_v x d_k. prefill: the chunked (WY)
        # form (fla chunk.py, chunks of C = 64 tokens) adds per token and value head, besides
        # the three d_k x d_v products (v_new = u - W h, the state update K^T v_new, the
        # read-out Q h): the in-chunk K K^T (2 C d_k, chunk_scaled_dot_kkt_fwd), W = A (beta k)
        # and U = A (beta v) (2 C (d_k + d_v), recompute_w_u_fwd), the in-chunk Q K^T and its
        # product with v_new (2 C (d_k + d_v), chunk_fwd_o); solve_tril's 64 x 64 inverses
        # (O(C^2) per token) are left out.
        dk, dv = self.key_head_dim, self.value_head_dim
        state = 3 * 2 * dv * dk
        if phase == "prefill":
            state += 2 * GDN_CHUNK_TOKENS * (3 * dk + 2 * dv)
        return self.num_value_heads * state

    def state_shapes(self, tp: int, num_spec: int, divide: Divide) -> tuple[StateShape, ...]:
        conv_dim = 2 * self.num_key_heads * self.key_head_dim + (
            self.num_value_heads * self.value_head_dim)
        return (self._conv(conv_dim, tp, num_spec, divide),
                ("ssm", (divide(self.num_value_heads, tp, "linear value heads"),
                         self.value_head_dim, self.key_head_dim)))


@dataclass(frozen=True, kw_only=True)
class KimiDeltaAttention(RecurrentSpec):
    kind: str = field(default="kda", init=False)
    needs: ClassVar[tuple[str, ...]] = ("num_heads", "head_dim", "conv_kernel")

    def params(self, hidden_size: int, *, dt_bc_norms: bool = False) -> int:
        h, k = hidden_size, self.conv_kernel
        proj = self.num_heads * self.head_dim
        # q/k/v, short convs, f_a/f_b and g_a/g_b low-rank gates, beta, A_log, dt_bias, norm, o.
        return (3 * h * proj + 3 * proj * k + 2 * (h * self.head_dim + self.head_dim * proj)
                + h * self.num_heads + self.num_heads + proj + self.head_dim + proj * h)

    def float32_params(self, *, a_log_in_model_dtype: bool = False) -> int:
        # dt_bias (heads x head_dim), the q/k/v short convolutions (3 x heads x head_dim x
        # kernel, params_dtype float32) and A_log (one per head)
        # (layers/mamba/gdn/kimi_gdn_linear_attn.py:237-268).
        proj = self.num_heads * self.head_dim
        return proj + 3 * proj * self.conv_kernel + self.num_heads

    def state_flops_per_token(self, phase: str = "decode") -> int:
        # S.k, the rank-1 update and S.q over heads x head_dim x head_dim.
        return 3 * 2 * self.num_heads * self.head_dim * self.head_dim

    def default_ssm_dtype(self, conv_dtype: str) -> str:
        # KDA's recurrent state defaults to float32.
        return self.ssm_dtype or "float32"

    def state_shapes(self, tp: int, num_spec: int, divide: Divide) -> tuple[StateShape, ...]:
        conv_dim = 3 * self.num_heads * self.head_dim  # q, k and v, each heads x head_dim
        return (self._conv(conv_dim, tp, num_spec, divide),
                ("ssm", (divide(self.num_heads, tp, "KDA heads"), self.head_dim,
                         self.head_dim)))


@dataclass(frozen=True, kw_only=True)
class ShortConv(RecurrentSpec):
    kind: str = field(default="short_conv", init=False)
    needs: ClassVar[tuple[str, ...]] = ("intermediate_size", "conv_kernel")

    def params(self, hidden_size: int, *, dt_bc_norms: bool = False) -> int:
        d, h = self.intermediate_size, hidden_size
        return h * 3 * d + d * self.conv_kernel + d * h  # in_proj (B, C, x), conv, out_proj

    def state_flops_per_token(self, phase: str = "decode") -> int:
        return 2 * self.intermediate_size * self.conv_kernel  # kernel x width

    def state_shapes(self, tp: int, num_spec: int, divide: Divide) -> tuple[StateShape, ...]:
        return (self._conv(self.intermediate_size, tp, num_spec, divide),)


@dataclass(frozen=True, kw_only=True)
class LightningAttention(RecurrentSpec):
    kind: str = field(default="linear_attention", init=False)
    needs: ClassVar[tuple[str, ...]] = ("num_heads", "head_dim")

    def params(self, hidden_size: int, *, dt_bc_norms: bool = False) -> int:
        # q, k, v, output gate and out projections.
        proj = self.num_heads * self.head_dim
        return 4 * hidden_size * proj + proj * hidden_size

    def state_flops_per_token(self, phase: str = "decode") -> int:
        return 3 * 2 * self.num_heads * self.head_dim * self.head_dim

    def state_shapes(self, tp: int, num_spec: int, divide: Divide) -> tuple[StateShape, ...]:
        # Lightning attention's KV state (heads / tp, head_dim, head_dim) in the state dtype.
        return (("kv", (self.num_heads // tp, self.head_dim, self.head_dim)),)


RECURRENT_KINDS: dict[str, type[RecurrentSpec]] = {
    cls.kind: cls for cls in (Mamba1, Mamba2, GatedDeltaNet, KimiDeltaAttention, ShortConv,
                              LightningAttention)
}
# Recurrent state kinds and the fields each needs (see model_specs/README.md).
RECURRENT_FIELDS: dict[str, tuple[str, ...]] = {k: c.needs for k, c in RECURRENT_KINDS.items()}
