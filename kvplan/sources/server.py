"""Reading a running inference server: its HTTP endpoints (JSON and Prometheus text), with
bounded waits. What the endpoints mean is each engine's business (kvplan.engines.*.live); this
module only fetches and parses.

Every failure to reach the server is one `ServerError` (exit 2) naming the URL and the reason,
raised within the deadline: a refused connection at once, a server that accepts but never
answers when the deadline passes. The first unreachable endpoint ends the reading (the others
would wait as long again). A 404 is an answer (the endpoint is absent in that engine or
version), not a failure.
"""

from __future__ import annotations

import json
import math
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kvplan._util.errors import InputError

DEFAULT_TIMEOUT_S = 3.0
"""The whole reading's deadline, all endpoints together (`kvplan check --timeout`)."""

MAX_BODY_BYTES = 32 << 20
"""A /metrics page beyond 32 MiB is not a server's (vLLM's runs to a few hundred KiB)."""


class ServerError(InputError):
    """The server could not be read: refused, timed out, not HTTP, not the expected format."""


def finite(value: float | None, where: str) -> float | None:
    """A number a server stated for a quantity kvplan reads (a count, a size, a fraction), or
    None where it stated none; NaN or an infinity is refused naming `where`. Neither vLLM nor
    SGLang prints one for these (their Prometheus gauges and cache-config labels are counts and
    sizes; their JSON is written with allow_nan=False), and `int()` of one was an internal error
    (fuzz58)."""
    if value is not None and not math.isfinite(value):
        raise ServerError(f"{where}: expected a finite number, got {value!r}")
    return value


@dataclass(frozen=True, kw_only=True)
class Reply:
    """One endpoint's answer: the HTTP status and the body (decoded as UTF-8)."""

    status: int
    text: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True, kw_only=True)
class Sample:
    """One Prometheus sample: its labels and value."""

    labels: Mapping[str, str]
    value: float


@dataclass(frozen=True, kw_only=True)
class ServerReplies:
    """What a server answered, endpoint by endpoint (absent: not asked)."""

    url: str
    replies: Mapping[str, Reply] = field(default_factory=dict)

    def json(self, path: str) -> Any:
        """The endpoint's JSON body; None when absent, not 2xx or not JSON."""
        reply = self.replies.get(path)
        if reply is None or not reply.ok:
            return None
        try:
            return json.loads(reply.text)
        except ValueError:
            return None

    def text(self, path: str) -> str | None:
        reply = self.replies.get(path)
        return reply.text if reply is not None and reply.ok else None


def normalize_url(url: str) -> str:
    """The server's base URL: http:// added when no scheme is given, no trailing slash; one line
    on anything that is not an http(s) URL with a host."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServerError(f"URL: expected http://HOST:PORT, got {url!r}")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise ServerError(f"URL: bad port in {url!r}") from None
    return text.rstrip("/")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError):
        exc = exc.reason if isinstance(exc.reason, BaseException) else exc
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return "no answer within the timeout"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return "unknown host"
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())[:200]


def fetch(url: str, paths: Iterable[str], *, timeout_s: float = DEFAULT_TIMEOUT_S
          ) -> ServerReplies:
    """GET each path under `url` within `timeout_s` seconds in all. Raises ServerError (one
    line) when the server cannot be reached or a read times out."""
    base = normalize_url(url)
    deadline = time.monotonic() + timeout_s
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    replies: dict[str, Reply] = {}
    for path in paths:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ServerError(f"{base}: no answer within {timeout_s:g} s")
        request = urllib.request.Request(base + path, headers={"Accept": "*/*"})
        try:
            with opener.open(request, timeout=left) as response:
                body = response.read(MAX_BODY_BYTES + 1)
                status = response.status
        except urllib.error.HTTPError as exc:
            replies[path] = Reply(status=exc.code, text="")
            continue
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = _reason(exc).replace("the timeout", f"{timeout_s:g} s")
            raise ServerError(f"{base}{path}: cannot read the server ({reason})") from None
        if len(body) > MAX_BODY_BYTES:
            raise ServerError(f"{base}{path}: answer over {MAX_BODY_BYTES >> 20} MiB")
        replies[path] = Reply(status=status, text=body.decode("utf-8", errors="replace"))
    return ServerReplies(url=base, replies=replies)


def parse_metrics(text: str, *, where: str = "/metrics") -> dict[str, list[Sample]]:
    """Prometheus text exposition as {sample name: samples} (a counter's samples keep their
    ``_total`` / ``_created`` names), parsed by prometheus_client."""
    from prometheus_client.parser import text_string_to_metric_families

    samples: dict[str, list[Sample]] = {}
    try:
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                samples.setdefault(s.name, []).append(
                    Sample(labels=dict(s.labels), value=float(s.value)))
    except (ValueError, TypeError, IndexError) as exc:
        first = " ".join(str(exc).split())[:120]
        raise ServerError(f"{where}: not Prometheus text ({first})") from None
    return samples
