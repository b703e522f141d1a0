"""vLLM's EAGLE / EAGLE-3 draft head as its own checkpoint's config.json builds it (`kvplan
simulate --spec-draft-config`, issue 30): the decoder layer(s) at the head's widths, the GEMMs
the head runs beyond them, and the lm_head's rows. Read in the vLLM 0.10.0 sdist (the specdec62
rows' release) and in 0.32.0 (the CPU build's sources); the shapes below are the same at both.

- EAGLE-1 (model_executor/models/llama_eagle.py; 0.10.0 :64-73 / 0.32.0 :99-117): the config's
  `num_hidden_layers` LlamaDecoderLayers of its widths (the first without input_layernorm) and
  ``fc = Linear(2 * hidden_size, hidden_size, bias=False)``, applied in EVERY forward to
  cat(embeds, hidden) (0.10.0 :81-83, 0.32.0 :129-130): a GEMM of K = 2h, N = h per token of
  every draft pass. Its lm_head is the target's (0.10.0 v1/spec_decode/eagle.py:378-384: shared
  for every method but eagle3; 0.32.0 v1/spec_decode/llm_base_proposer.py:1508-1543 shares it
  when the head has none or an identical one, else the head's own of its config's vocab_size
  rows): the target's vocabulary rows.
- EAGLE-3 (model_executor/models/llama_eagle3.py): the first decoder layer's qkv_proj takes
  cat(input_layernorm(embeds), hidden_norm(hidden)), K = 2h (0.10.0 :41-50 every layer of its
  one; 0.32.0 :80-96 layer 0 only, later layers K = h); the fc fuses the target's auxiliary
  hidden states, ``Linear(num_aux x target_hidden_size, hidden_size)`` (0.10.0 :109-116, num_aux
  3; 0.32.0 :209-248, num_aux_hidden_states or the eagle_config's layer ids or 3,
  target_hidden_size defaulting to hidden_size), run ONCE a step, by the proposer over the
  step's target tokens before the first pass (`combine_hidden_states`: 0.10.0 eagle.py:96-100,
  0.32.0 llm_base_proposer.py:550); the head's own lm_head of `draft_vocab_size` rows (0.10.0
  :187-194; 0.32.0 :312-316 defaults it to vocab_size, :328-332), never the target's (0.10.0
  eagle.py:381). 0.10.0 builds ONE layer whatever the config says (:103-108): a config of more
  is priced as it says (the releases after build them all).

The embedding is the target's (shared where the shapes match: 0.10.0 eagle.py:361-371); a
lookup is not charged. Not adjusted: the head's norms beyond one decoder layer's (EAGLE-1 has no
input_layernorm and no final norm, EAGLE-3 a hidden_norm and a final norm: a small kernel each),
the d2t mapping's logits write (its launches are `draft_launches`' in
kvplan.engines.vllm.spec_decode)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kvplan._util.errors import InputError
from kvplan.model.attention import HeadAttention
from kvplan.model.spec import ModelSpec
from kvplan.sources.draft_config import DraftConfig

# 0.10.0 llama_eagle3.py:109-116 fuses three auxiliary hidden states; 0.32.0 :210-215 defaults
# to three when the config names none.
EAGLE3_AUX_HIDDEN_STATES = 3


@dataclass(frozen=True, kw_only=True)
class HeadGemm:
    """One weight GEMM the head runs beyond its decoder layers: K x N weights (elements)."""

    name: str
    k: int
    n: int

    @property
    def params(self) -> int:
        return self.k * self.n

    def flops(self, tokens: int) -> int:
        """2 K N a token."""
        return 2 * self.k * self.n * tokens


@dataclass(frozen=True, kw_only=True)
class VllmEagleHead:
    """An EAGLE (`method` eagle) or EAGLE-3 head: `layers` (its decoder layers, vocab_size the
    lm_head's rows), `fc` (run every pass for EAGLE-1, once a step for EAGLE-3) and the extra
    K of EAGLE-3's first qkv_proj (`qkv_extra`, every pass)."""

    method: str
    layers: ModelSpec
    fc: HeadGemm
    fc_every_pass: bool
    qkv_extra: HeadGemm | None
    source: str

    @classmethod
    def of(cls, method: str, config: DraftConfig, target: ModelSpec) -> VllmEagleHead:
        """The head `config` describes for `target` under vLLM's `method` (module docstring)."""
        if method not in ("eagle", "eagle3"):
            raise InputError(f"simulate --spec-draft-config: read for vLLM's eagle and eagle3 "
                             f"heads only, not {method}")
        f: dict[str, Any] = config.fields
        h = config.layer.hidden_size
        att = config.layer.attention
        if not isinstance(att, HeadAttention):
            raise InputError(f"{config.shown}: expected a Llama head's attention")
        if method == "eagle":
            rows = target.vocab_size
            fc = HeadGemm(name="draft_fc", k=2 * h, n=h)
            qkv = None
        else:
            rows = f.get("draft_vocab_size") or f.get("vocab_size") or target.vocab_size
            aux = f.get("num_aux_hidden_states") or EAGLE3_AUX_HIDDEN_STATES
            fc = HeadGemm(name="draft_fc", k=aux * (f.get("target_hidden_size") or h), n=h)
            qkv_out = (att.num_attention_heads + 2 * att.num_key_value_heads) * att.head_dim
            qkv = HeadGemm(name="draft_qkv_embeds", k=h, n=qkv_out)
        layers = replace(config.layer, vocab_size=rows, weight_dtype=target.weight_dtype,
                         tie_word_embeddings=False)
        return cls(method=method, layers=layers, fc=fc, fc_every_pass=method == "eagle",
                   qkv_extra=qkv, source=config.shown)

    @property
    def lm_head_rows(self) -> int:
        return self.layers.vocab_size

    def extra_gemms(self, *, first: bool) -> tuple[HeadGemm, ...]:
        """The GEMMs beyond the decoder layers in the step's first draft pass (`first`) or in
        each later one: EAGLE-1's fc every pass; EAGLE-3's fc in the first, its qkv's embeds
        half in every pass."""
        fc = (self.fc,) if first or self.fc_every_pass else ()
        return fc + ((self.qkv_extra,) if self.qkv_extra is not None else ())

    def describe(self) -> str:
        """The drafter as the output names it."""
        att = self.layers.attention
        assert isinstance(att, HeadAttention)
        fc_when = "every pass" if self.fc_every_pass else "once a step"
        qkv = ", qkv over 2 x hidden" if self.qkv_extra is not None else ""
        return (f"{self.source}: {self.layers.num_hidden_layers} layer(s) of hidden "
                f"{self.layers.hidden_size}, {att.num_attention_heads}/"
                f"{att.num_key_value_heads} heads, MLP {self.layers.mlp.intermediate_size}"
                f"{qkv}, fc {self.fc.k} -> {self.fc.n} {fc_when}, lm_head "
                f"{self.lm_head_rows:,} rows")
