"""Hugging Face Hub ids as MODEL (``kvplan estimate Qwen/Qwen3-32B``), through huggingface_hub.

What is read, in order:

1. config.json from the local Hugging Face cache (``HF_HUB_CACHE`` / ``HF_HOME``), else from the
   Hub (one small download into that cache);
2. hf_quant_config.json beside it (ModelOpt 0.29 and older; read as the quantization config when
   config.json has none, as vLLM does): from the cache, else not asked for when the cache
   records that the repo has none, else one download (a 404 is no error, and is recorded);
3. the safetensors headers: from the cached snapshot when every weight file is there, else from
   the Hub by HTTP range requests (``get_safetensors_metadata``: the first 100 kB of each file,
   plus the rest of a header when longer). The weights themselves are never downloaded.

``HF_HUB_OFFLINE=1`` keeps kvplan off the network: config.json must be in the cache, and without
cached weight files the weights come from the architecture (with a warning); hf_quant_config.json
is read when the cached snapshot holds it. ``HF_ENDPOINT``,
``HF_TOKEN`` and the cache variables are huggingface_hub's own; they are read when kvplan calls
it, so they can be set per run.

Every request is bounded in time (kvplan.sources.hub_http: ``--hub-timeout``, one retry at most).
Private, gated or missing repos are one-line errors naming the id (exit 2), and so is an id when
the Hub is out of reach (no name resolution, connection refused: nothing here can read it; the
line suggests the closest bundled ids or a folder); a Hub that answers an error or nothing in
time is a runtime failure (exit 1). A damaged cache or a cache variable naming a file is said as
such. huggingface_hub is imported only here, only for Hub ids, so that other MODEL arguments
stay fast.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from kvplan._util.errors import KvplanError, SpecError
from kvplan._util.progress import phase
from kvplan.sources.checkpoint import (
    FROM_CONFIG_NOTE,
    INDEX_FILE,
    check_entry,
    check_whole,
    from_headers,
    read_checkpoint,
)
from kvplan.sources.files import parse_json, path_kind, shown_path
from kvplan.sources.hf_config import load_config
from kvplan.sources.hf_files import QUANT_FILE
from kvplan.sources.hub_http import HubGaveUp, bounded_hub, gave_up

if TYPE_CHECKING:
    from kvplan.model.checkpoint import CheckpointWeights
    from kvplan.model.spec import ModelSpec

# huggingface_hub's repo-id rule (utils/_validators.py, validate_repo_id): one "/", names of
# letters, digits, "-", "_", "." up to 96 characters, no "--" or ".." and no leading/trailing
# "-" or ".".
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")


class HubUnreachable(KvplanError):
    """The Hub could not be reached (network, timeout, server error): a runtime failure."""

    exit_code = 1


def is_hub_id(model: str) -> bool:
    """Whether MODEL reads as ``owner/name``. The caller asks only after bundled ids and local
    paths have failed to resolve."""
    return (_REPO_ID.match(model) is not None and "--" not in model and ".." not in model
            and not model.endswith((".", "-")) and not model.lower().endswith(
                (".json", ".yaml", ".yml")))


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def _client_kwargs() -> dict[str, Any]:
    # Read at call time (huggingface_hub reads its constants once, at import).
    out: dict[str, Any] = {}
    cache = os.environ.get("HF_HUB_CACHE")
    if not cache and os.environ.get("HF_HOME"):
        cache = str(Path(os.environ["HF_HOME"]) / "hub")
    if cache:
        out["cache_dir"] = cache
    token = os.environ.get("HF_TOKEN")
    if token is not None:
        out["token"] = token or False
    return out


def _endpoint() -> str | None:
    return os.environ.get("HF_ENDPOINT") or None


def _problem(model_id: str, exc: BaseException, *, online: bool = True, hint: str = "",
             headers: bool = False) -> KvplanError:
    """One line for a huggingface_hub failure, naming the id. `headers`: config.json was read
    (from the cache) and the safetensors headers were being fetched."""
    from huggingface_hub import errors as e

    where = _endpoint() or "huggingface.co"
    exc = gave_up(exc) or (_cause(exc) if isinstance(exc, e.LocalEntryNotFoundError) else None
                            ) or exc
    if isinstance(exc, HubGaveUp) and not exc.connected and headers:
        return SpecError(model_id, None, f"config.json is in the local cache, its weight files' "
                                         f"headers are not, and the Hub ({where}) is out of "
                                         f"reach ({exc.reason}); --weights-from config (or "
                                         "HF_HUB_OFFLINE=1) sizes weights from config.json")
    if isinstance(exc, HubGaveUp) and not exc.connected:
        # This machine cannot reach the Hub at all: MODEL names nothing kvplan can read here.
        return SpecError(model_id, None, f"not bundled, not a local path, and the Hub ({where}) "
                                         f"is out of reach ({exc.reason}); give a bundled id"
                                         f"{hint or ' (kvplan specs)'} or a folder holding its "
                                         "config.json")
    if isinstance(exc, HubGaveUp):
        status = (" (a server error: try again later)"
                  if exc.status is not None and exc.status >= 500 else "")
        return HubUnreachable(f"{model_id}: the Hugging Face Hub ({where}) {exc.reason}"
                              f"{status}")
    if isinstance(exc, e.FileMetadataError):
        # The Hub answered, but not as a Hub does (no ETag, no commit): said as such, never as
        # a Hub out of reach (issue 32).
        first = (str(exc).strip().splitlines() or [""])[0][:160]
        return HubUnreachable(f"{model_id}: the Hugging Face Hub ({where}) gave an answer "
                              f"huggingface_hub cannot use ({first})")
    if online and isinstance(exc, e.LocalEntryNotFoundError):
        # hf_hub_download's answer when the Hub cannot be reached and the cache lacks the file.
        return HubUnreachable(f"{model_id}: cannot reach the Hugging Face Hub "
                              f"({_endpoint() or 'huggingface.co'}) and config.json is not in "
                              "the local cache")
    if isinstance(exc, e.GatedRepoError):
        return SpecError(model_id, None, "gated repository on the Hugging Face Hub: accept its "
                                         "terms on huggingface.co and set HF_TOKEN")
    if isinstance(exc, e.RepositoryNotFoundError):
        return SpecError(model_id, None, "no such model on the Hugging Face Hub (or it is "
                                         "private: set HF_TOKEN), and not a bundled id or a "
                                         "local path")
    if isinstance(exc, e.RevisionNotFoundError):
        return SpecError(model_id, None, "revision not found on the Hugging Face Hub")
    if isinstance(exc, e.LocalEntryNotFoundError):
        return SpecError(model_id, "config.json", "not in the local Hugging Face cache and "
                                                  "HF_HUB_OFFLINE=1 (unset it to download)")
    if isinstance(exc, e.EntryNotFoundError):
        return SpecError(model_id, "config.json", "the repository has no config.json")
    if isinstance(exc, e.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            return SpecError(model_id, None, f"access refused by the Hugging Face Hub "
                                             f"(HTTP {status}): private or gated; set HF_TOKEN")
        return HubUnreachable(f"{model_id}: the Hugging Face Hub ({where}) answered HTTP "
                              f"{status}")
    if isinstance(exc, e.OfflineModeIsEnabled):
        return SpecError(model_id, None, "HF_HUB_OFFLINE=1 and not in the local cache")
    if isinstance(exc, OSError) and not type(exc).__module__.startswith("huggingface_hub"):
        # The cache folder itself: unwritable, a file where a folder should be, a full disk.
        reason = exc.strerror or type(exc).__name__
        name = shown_path(exc.filename) if exc.filename else _cache_dir_shown()
        return SpecError(model_id, None, f"the Hugging Face cache ({name}): {reason}")
    # Anything else the client raised (a cache entry it cannot parse, a value it rejects): what
    # it says, on one line, never a guess that the network is down.
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    return HubUnreachable(f"{model_id}: huggingface_hub failed: {type(exc).__name__}"
                          + (f": {first}" if first else ""))


def _cause(exc: BaseException) -> BaseException | None:
    """What hf_hub_download's LocalEntryNotFoundError wraps when the Hub did answer: a HubGaveUp
    (the transport's bounds) or a FileMetadataError (an answer without ETag or commit)."""
    from huggingface_hub import errors as e

    seen: set[int] = set()
    inner = exc.__cause__ or exc.__context__
    while inner is not None and id(inner) not in seen:
        seen.add(id(inner))
        found = gave_up(inner)
        if found is not None:
            return found
        if isinstance(inner, e.FileMetadataError):
            return inner
        inner = inner.__cause__ or inner.__context__
    return None


def _cache_dir_shown() -> str:
    kw = _client_kwargs()
    return shown_path(kw.get("cache_dir") or "~/.cache/huggingface/hub")


def _check_cache_env() -> None:
    """HF_HUB_CACHE / HF_HOME naming something that is not a folder: said as such (the client
    would fail deep inside, and the failure read as a Hub that cannot be reached)."""
    for var in ("HF_HUB_CACHE", "HF_HOME"):
        value = os.environ.get(var)
        if not value:
            continue
        kind = path_kind(Path(value))
        if kind not in (None, "dir"):
            raise SpecError(var, None, f"{shown_path(value)} is not a folder (the Hugging Face "
                                       "cache must be one)")


def _config_path(model_id: str, hint: str = "") -> Path:
    """config.json: from the cache first, else downloaded (unless offline)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    _check_cache_env()
    kw = _client_kwargs()
    try:
        return Path(hf_hub_download(model_id, "config.json", local_files_only=True, **kw))
    except LocalEntryNotFoundError as exc:
        if _offline():
            raise _problem(model_id, exc, online=False) from None
    except Exception as exc:  # every client failure becomes one line
        if not isinstance(exc, OSError) and not type(exc).__module__.startswith(
                "huggingface_hub"):
            # The client choked on what the cache holds (refs/main not text, a bad entry).
            first = (str(exc).strip().splitlines() or [""])[0][:120]
            entry = f"{_cache_dir_shown()}/models--{model_id.replace('/', '--')}"
            raise SpecError(model_id, None, f"its entry in the Hugging Face cache is damaged "
                                            f"({type(exc).__name__}: {first}); remove {entry}"
                            ) from None
        raise _problem(model_id, exc, online=False) from None
    try:
        return Path(hf_hub_download(model_id, "config.json", endpoint=_endpoint(), **kw))
    except Exception as exc:
        raise _problem(model_id, exc, hint=hint) from None


def _fetch_quant_file(model_id: str, revision: str | None) -> None:
    """Make sure the snapshot holding config.json also holds the repo's hf_quant_config.json
    when it has one, for kvplan.sources.hf_files.read_config to read beside config.json (as
    vLLM 0.32's get_config does: transformers_utils/repo_utils.py file_or_path_exists, the cache
    first, then the Hub). Nothing to do when the cache holds it, or records that the repo has
    none (huggingface_hub's .no_exist, written when the Hub answered 404), or HF_HUB_OFFLINE
    is set (vLLM offline reads the cached snapshot's folder alone: get_model_path); else one
    download, and a repo without the file (the usual case) is no error."""
    from huggingface_hub import hf_hub_download, try_to_load_from_cache
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    if _offline():
        return
    kw = _client_kwargs()
    try:
        cached = try_to_load_from_cache(model_id, QUANT_FILE, cache_dir=kw.get("cache_dir"),
                                        revision=revision)
    except Exception:  # noqa: BLE001 - a damaged entry: the download below says what it is
        cached = None
    if cached is not None:  # a path, or huggingface_hub's record that the repo has none
        return
    try:
        hf_hub_download(model_id, QUANT_FILE, revision=revision, endpoint=_endpoint(), **kw)
    except EntryNotFoundError as exc:
        if not isinstance(exc, LocalEntryNotFoundError):
            return  # the Hub answered 404 (RemoteEntryNotFoundError from 1.0): none
        _quant_file_problem(model_id, exc)
    except Exception as exc:
        _quant_file_problem(model_id, exc)


def _quant_file_problem(model_id: str, exc: Exception) -> NoReturn:
    """Raise the one line for a failed look for hf_quant_config.json."""
    found = gave_up(exc) or _cause(exc)
    if isinstance(found, HubGaveUp) and not found.connected:
        where = _endpoint() or "huggingface.co"
        raise SpecError(model_id, None, f"config.json is in the local cache, {QUANT_FILE} is "
                                        f"not (nor a record that the repo has none), and the "
                                        f"Hub ({where}) is out of reach ({found.reason}); "
                                        "HF_HUB_OFFLINE=1 reads the cached snapshot alone, as "
                                        "vLLM does offline") from None
    raise _problem(model_id, exc) from None


def _cached_weights(snapshot: Path, num_hidden_layers: int) -> CheckpointWeights | None:
    """The headers of a snapshot whose weight files are all in the cache, else None."""
    index = snapshot / INDEX_FILE
    if index.is_file():
        try:
            shards = set(parse_json(index.read_text(encoding="utf-8"), str(index))[
                "weight_map"].values())
        except (OSError, ValueError, KeyError, TypeError, AttributeError, SpecError):
            return None  # read_checkpoint says what is wrong, if the Hub's copy is no better
        if not shards or not all((snapshot / str(s)).is_file() for s in shards):
            return None
    elif not (snapshot / "model.safetensors").is_file():
        return None
    return read_checkpoint(snapshot, num_hidden_layers=num_hidden_layers)


def _remote_weights(model_id: str, revision: str | None,
                    num_hidden_layers: int) -> CheckpointWeights | None:
    """The headers by range requests (huggingface_hub's get_safetensors_metadata); None when
    the repo holds no safetensors weights."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import NotASafetensorsRepoError, SafetensorsParsingError

    kw = _client_kwargs()
    api = HfApi(endpoint=_endpoint(), token=kw.get("token"))
    try:
        meta = api.get_safetensors_metadata(model_id, revision=revision)
    except NotASafetensorsRepoError:
        return None
    except SafetensorsParsingError as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:160]
        raise SpecError(model_id, None, f"unreadable safetensors header: {first}") from None
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError) as exc:
        # huggingface_hub's parser met a header that is JSON but not a safetensors header (a
        # list, an entry that is not an object, NaN): the repository's file is bad, not kvplan.
        first = (str(exc).strip().splitlines() or [""])[0][:120]
        raise SpecError(model_id, None, f"unreadable safetensors header "
                                        f"({type(exc).__name__}: {first})") from None
    except Exception as exc:
        raise _problem(model_id, exc, headers=True) from None
    source = f"hf://{model_id}"
    headers: dict[str, dict[str, Any]] = {}
    for file, fm in meta.files_metadata.items():
        entries: dict[str, Any] = {}
        for name, info in fm.tensors.items():
            entry = {"dtype": info.dtype, "shape": list(info.shape),
                     "data_offsets": list(info.data_offsets)}
            check_entry(f"{source}/{file}", name, entry)
            entries[name] = entry
        headers[file] = entries
    weight_map = dict(meta.weight_map) if meta.sharded else None
    return check_whole(from_headers(source, headers, weight_map,
                                    num_hidden_layers=num_hidden_layers), num_hidden_layers)


def load_hub_model(model_id: str, *, hint: str = "", timeout_s: float | None = None,
                   weights_from: str = "checkpoint") -> tuple[ModelSpec, list[str]]:
    """A Hub repo's config.json as a ModelSpec carrying its checkpoint headers, plus warnings.
    Every Hub request together takes at most `timeout_s` seconds (kvplan.sources.hub_http);
    `hint` (" (did you mean ...?)") goes into the error when the Hub is out of reach."""
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        raise SpecError(model_id, None, "a Hugging Face id needs huggingface_hub "
                                        "(pip install huggingface_hub)") from None
    with bounded_hub(timeout_s):
        return _load(model_id, hint, weights_from)


def _load(model_id: str, hint: str, weights_from: str) -> tuple[ModelSpec, list[str]]:
    with phase(f"Hub: {model_id}: config.json"):
        config = _config_path(model_id, hint)
    # The cache keeps files under snapshots/<commit>/: pin the other files to that commit.
    revision = config.parent.name if re.fullmatch(r"[0-9a-f]{40}", config.parent.name) else None
    with phase(f"Hub: {model_id}: {QUANT_FILE}"):
        _fetch_quant_file(model_id, revision)
    spec, warnings = load_config(config)
    if weights_from == "config":
        warnings.append(FROM_CONFIG_NOTE)
        return replace(spec, id=model_id.rsplit("/", 1)[1], source=f"hf://{model_id}"), warnings
    ckpt = _cached_weights(config.parent, spec.num_hidden_layers)
    if ckpt is None and _offline():
        warnings.append("HF_HUB_OFFLINE=1 and the weight files are not in the cache: weights "
                        "from the architecture, not the checkpoint headers")
    elif ckpt is None:
        with phase(f"Hub: {model_id}: safetensors headers"):
            ckpt = _remote_weights(model_id, revision, spec.num_hidden_layers)
    spec = replace(spec, id=model_id.rsplit("/", 1)[1], source=f"hf://{model_id}",
                   checkpoint=ckpt)
    return spec, warnings


GENERATION_CONFIG_FILE = "generation_config.json"


def hub_generation_config(model_id: str, *, timeout_s: float | None = None) -> Path | None:
    """The repo's generation_config.json beside its config.json (`simulate --generation-config
    auto`, as vLLM's `generation_config="auto"` reads the model's own: transformers'
    GenerationConfig.from_pretrained on the repo): the snapshot holding config.json first,
    else one download pinned to that snapshot's commit (unless HF_HUB_OFFLINE); None when the
    repo has none (the Hub answered 404) or, offline, the snapshot lacks it."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    with bounded_hub(timeout_s):
        config = _config_path(model_id)
        beside = config.parent / GENERATION_CONFIG_FILE
        if path_kind(beside) == "file":
            return beside
        if _offline():
            return None
        revision = (config.parent.name if re.fullmatch(r"[0-9a-f]{40}", config.parent.name)
                    else None)
        try:
            return Path(hf_hub_download(model_id, GENERATION_CONFIG_FILE, revision=revision,
                                        endpoint=_endpoint(), **_client_kwargs()))
        except EntryNotFoundError as exc:
            if not isinstance(exc, LocalEntryNotFoundError):
                return None  # the Hub answered 404: the repo has none
            raise _generation_config_problem(model_id, exc) from None
        except Exception as exc:
            raise _generation_config_problem(model_id, exc) from None


def _generation_config_problem(model_id: str, exc: BaseException) -> KvplanError:
    """`_problem`'s line, except that a Hub out of reach is said of generation_config.json
    (config.json was found in the cache)."""
    from huggingface_hub import errors as e

    cause = gave_up(exc) or (_cause(exc) if isinstance(exc, e.LocalEntryNotFoundError) else None)
    if (isinstance(cause, HubGaveUp) and not cause.connected) or (
            cause is None and isinstance(exc, e.LocalEntryNotFoundError)):
        return SpecError(model_id, GENERATION_CONFIG_FILE, "not in its cached snapshot and the "
                         f"Hugging Face Hub ({_endpoint() or 'huggingface.co'}) is out of reach "
                         "(give the file's path to --generation-config)")
    return _problem(model_id, exc)
