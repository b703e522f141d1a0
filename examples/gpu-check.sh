#!/usr/bin/env bash
# One-GPU check of `kvplan verify` (prepared; NOT yet run on a GPU). Under 5 minutes on one GPU:
# four models at --mem-fraction 0.9, results to examples/verify-<gpu>.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
GPU=$($PY -c "import torch; print(torch.cuda.get_device_name(0).replace(' ', '-'))")
OUT=examples/verify-${GPU}.md
{
  echo "# kvplan verify on ${GPU}"
  echo
  $PY -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)"
  for args in "deepseek-v2-lite" "llama-3.1-8b" "gemma-3-27b" "qwen3-next-80b-a3b --tp 1"; do
    echo
    echo "\`\`\`console"
    echo "\$ kvplan verify ${args} --device cuda --mem-fraction 0.9 --context 4096 -f markdown"
    echo "\`\`\`"
    timeout 70 $PY -m kvplan verify ${args} --device cuda --mem-fraction 0.9 --context 4096 \
      -f markdown || echo "(exit $?)"
  done
} | tee "$OUT"
