"""Run under vLLM's python: copy a Gemma-4 wrapper's config.json into OUT_DIR with a word-level
tokenizer holding Gemma-4's special tokens at the config's ids and a processor_config.json of
the image / video / audio processors' defaults, so that Gemma4Processor starts and
tests/oracle/vllm_weight_bytes.py (WEIGHT_BYTES_TOKENIZER=1) measures the towers built.

    $VLLM_ORACLE_PYTHON tests/oracle/gemma4_processor_files.py CONFIG_DIR OUT_DIR
"""

import json
import shutil
import sys
from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast


def main(src: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "config.json", out / "config.json")
    c = json.loads((src / "config.json").read_text())
    vocab = {"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3,
             "<|image>": c["boi_token_id"], "<image|>": c["eoi_token_id"],
             "<|image|>": c["image_token_id"], "<|audio|>": c["audio_token_id"],
             "<|audio>": c["boa_token_id"], "<audio|>": c["eoa_token_id"],
             "<|video|>": c["video_token_id"], "<turn|>": 106}
    for i, ch in enumerate("abcdefghijklmnopqrstuvwxyz "):
        vocab[ch] = 200 + i
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
        unk_token="<unk>",
        extra_special_tokens={"image_token": "<|image|>", "boi_token": "<|image>",
                              "eoi_token": "<image|>", "audio_token": "<|audio|>",
                              "boa_token": "<|audio>", "eoa_token": "<audio|>"},
    ).save_pretrained(out)
    processor = {"processor_class": "Gemma4Processor",
                 "image_processor": {"image_processor_type": "Gemma4ImageProcessor"},
                 "video_processor": {"video_processor_type": "Gemma4VideoProcessor"},
                 "feature_extractor": {"feature_extractor_type": "Gemma4AudioFeatureExtractor"},
                 "image_seq_length": 280, "audio_seq_length": 750}
    (out / "processor_config.json").write_text(json.dumps(processor, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
