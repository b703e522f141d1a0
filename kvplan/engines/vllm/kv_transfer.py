"""vLLM's hybrid KV-cache manager when a KV connector is set (`--kv-transfer-config`, every role
of `kvplan plan --disagg` on vLLM), by release. One rule, read by the allocator (the pool each
role sizes, kvplan.engines.vllm.alloc) and by the connectors (what the handover moves,
kvplan.engines.vllm.connectors), so the two agree.

Read from the PyPI wheels' vllm/config (2026-12-07, nixl011_65):

- 0.10.0 config.py:4664-4666, 0.10.1.1 config/__init__.py:3661-3663, 0.11.0 :506-508 ("Hybrid
  KV cache manager is not compatible with KV transfer"), 0.11.1 config/vllm.py:705-718 and
  0.12.0 :892-905 ("NOTE(Kuntai): turn HMA off for connector for now"): any kv_transfer_config
  turns the manager off, an explicit --no-disable-hybrid-kv-cache-manager too.
- 0.13.0 config/vllm.py:927-931, 0.14.1 :979-994, 0.21.0 :1342-1356 ("turn HMA off for
  connector unless specifically enabled"): off by default with any connector; an explicit
  --no-disable-hybrid-kv-cache-manager is kept.
- 0.22.0 config/vllm.py:1440-1470 (`supports_hma(connector_cls)`), 0.23.0 :1481-1486 and
  0.32.0 :2170-2190 (`KVConnectorFactory.supports_hma_config`): off only for a connector that
  does not subclass SupportsHMA. NixlConnector does from 0.18.0 (nixl_connector.py 0.18.0
  :316 `class NixlConnector(KVConnectorBase_V1, SupportsHMA)`; 0.17.1 :304 does not), so from
  0.22 NIXL keeps the manager; kvplan's other vLLM connector, Mooncake, is SupportsHMA from
  0.20.0 (mooncake/mooncake_connector.py 0.20.0:336), so it keeps it from 0.22 too. Before a
  connector's SupportsHMA release an explicit "on" stops vLLM at start-up (factory.py; refused
  in kvplan.engines.vllm.connectors; releases: kvplan.engines.vllm.connector_releases).

With the manager off, vllm/v1/core/kv_cache_utils.py `unify_hybrid_kv_cache_specs` (0.11.0
:1096-1134) makes every sliding-window and chunked-local layer a FullAttentionSpec (the window
kept for compute only): both roles allocate every layer for every token (alloc `_promote`), and
a recurrent-state hybrid does not start (alloc refuses it).
"""

from __future__ import annotations

from kvplan._util.versions import version_key

# Before it, an explicit "on" is overridden by a connector (0.12.0 config/vllm.py:892-905).
EXPLICIT_HYBRID_KEPT_SINCE = (0, 13)
# From it, a SupportsHMA connector keeps the manager on (0.22.0 config/vllm.py:1440-1470).
SUPPORTS_HMA_KEPT_SINCE = (0, 22)


def hybrid_manager_with_connector(asked: bool | None, version: str) -> bool | None:
    """The hybrid KV-cache manager as `--kv-transfer-config` leaves it for vLLM `version`
    (`asked`: --hybrid-kv-cache-manager on / off, None: auto) with a SupportsHMA connector
    (NixlConnector from 0.18.0): False where the connector turns it off, else `asked` (None:
    what the version does without a connector)."""
    key = version_key(version)
    if key < EXPLICIT_HYBRID_KEPT_SINCE:
        return False
    if key < SUPPORTS_HMA_KEPT_SINCE:
        return False if asked is None else asked
    return asked
