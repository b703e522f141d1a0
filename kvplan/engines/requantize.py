"""The load-time re-quantization rule vLLM and SGLang share (SGLang's is vLLM's, adapted).

`ModelConfig._verify_quantization` (vLLM config/model.py of 0.32 and 0.27.1, config.py of
0.10.0; SGLang configs/model_config.py of 0.4.5 and 0.5.14) takes a quantized checkpoint's
quant_method, after the override classes may claim it, and raises "Quantization method specified
in the model config (X) does not match the quantization method specified in the `quantization`
argument (Y)" where the two differ. So a quantized checkpoint is never re-quantized at load time:
kvplan refuses every --quantization other than the checkpoint's own method. Each engine passes
its own method reading (kvplan.engines.<engine>.quant_methods) and the file it follows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import UnmodelledError

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec


def refuse_requantization(spec: ModelSpec, load_quantization: str | None, method: str, *,
                          engine: str, source: str) -> None:
    """Refuse, in one line, `--quantization load_quantization` on a checkpoint quantized with
    `method` ("" where its config names none) by `engine` (its name as printed), quoting its
    error from `source` (the file and function); nothing where no --quantization is given or
    it is the checkpoint's own method."""
    if load_quantization is None or method == load_quantization:
        return
    where = (f"{spec.path}: quantization_config" if spec.quantization_file is None
             else f"{spec.path}: {spec.quantization_file}")
    raise UnmodelledError(
        f"--quantization {load_quantization}: {where}: the checkpoint is already quantized "
        f"({method or 'no quant_method'}) and {engine} does not re-quantize it: 'Quantization "
        f"method specified in the model config ({method or None}) does not match the "
        f"quantization method specified in the `quantization` argument ({load_quantization})' "
        f"({source}): drop --quantization")
