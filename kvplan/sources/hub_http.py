"""Time bounds on the Hugging Face Hub (`bounded_hub`): while kvplan reads a Hub id, every request
huggingface_hub makes goes through a transport that cuts its connect and read timeouts to what is
left of one total deadline (``--hub-timeout``, default `HUB_TIMEOUT_S`) and lets it be retried once
at most, and huggingface_hub's retry messages are kept off stderr.

Why a transport: huggingface_hub (``utils/_http.py``, ``_http_backoff_base``) retries a request
five times on a network error, a timeout or HTTP 408/429/5xx, sleeping 1, 2, 4, 8, 8 s, each with
a 10 s timeout: an offline machine waited 24 s for its one-line error, and a Hub that accepts the
connection and never answers hung for minutes. Its retries only catch its HTTP library's own
exceptions, so the transport ends a request's last try by raising `HubGaveUp` instead (not one of
them): the client gives up at once, after one retry and one 1 s wait at most.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

HUB_TIMEOUT_S = 10.0
"""Default of ``--hub-timeout``: the most seconds the Hub requests of one command take in all."""
CONNECT_TIMEOUT_S = 3.0
"""A connection not made in this time is not going to be (an unreachable host, a dropped SYN)."""
# What huggingface_hub retries on (utils/_http.py: _DEFAULT_RETRY_ON_STATUS_CODES), and how long
# it waits before its first retry (base_wait_time): a retry that cannot start before the deadline
# is not made.
_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_FIRST_RETRY_WAIT_S = 1.0
_MAX_TRIES = 2
# The most bytes one Hub answer may carry: kvplan reads config.json, index files and safetensors
# headers, never weights (a real model.safetensors.index.json is < 1 MiB; a header is capped at
# 100 MB by the safetensors format). An answer claiming more is cut off, not written to the cache.
MAX_ANSWER_BYTES = 128 << 20


class HubGaveUp(Exception):  # noqa: N818 - the name says what happened
    """A Hub request's last try failed. ``connected``: the Hub was reached (an HTTP error or a
    silence after connecting), else the network is out of reach (no name, no route, refused)."""

    def __init__(self, reason: str, *, connected: bool, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.connected, self.status = reason, connected, status


def _describe(exc: Exception, timeout_s: float) -> tuple[str, bool]:
    """(reason, connected) for an HTTP library error, by its class name (httpx's and httpx2's
    are the same): ConnectError, ConnectTimeout, ReadTimeout, RemoteProtocolError, ..."""
    name = type(exc).__name__
    if name == "ConnectTimeout":
        return f"no connection within {CONNECT_TIMEOUT_S:g} s", False
    if name == "ConnectError":
        text = str(exc).lower()
        if "name or service not known" in text or "nodename nor servname" in text or (
                "temporary failure in name resolution" in text) or "getaddrinfo" in text:
            return "host name not resolved", False
        if "refused" in text:
            return "connection refused", False
        return "cannot connect", False
    if "Timeout" in name:
        return f"gave no answer within {timeout_s:g} s (--hub-timeout)", True
    if name in ("RemoteProtocolError", "ReadError", "WriteError"):
        return "the connection broke off mid-answer", True
    return f"request failed ({name})", True


def gave_up(exc: BaseException, timeout_s: float | None = None) -> HubGaveUp | None:
    """An HTTP library error that reached kvplan without the transport's last-try conversion
    (a call huggingface_hub does not retry), as a HubGaveUp; None for any other exception."""
    if isinstance(exc, HubGaveUp):
        return exc
    if not type(exc).__module__.split(".")[0].startswith("httpx"):
        return None
    reason, connected = _describe(exc, HUB_TIMEOUT_S if timeout_s is None else timeout_s)
    return HubGaveUp(reason, connected=connected)


class _State:
    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.tries: dict[tuple[str, str], int] = {}
        self.lock = threading.Lock()

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def last_try(self, tries: int) -> bool:
        return tries >= _MAX_TRIES or self.left() <= _FIRST_RETRY_WAIT_S


_STREAM_TYPES: dict[type, type] = {}


def _bounded_stream(stream: Any, state: _State) -> Any:
    """`stream` read within the deadline and the size cap, as an instance of the HTTP library's
    own SyncByteStream (httpx2's client asserts that type); unchanged when it is not one."""
    base = next((c for c in type(stream).__mro__ if c.__name__ == "SyncByteStream"), None)
    if base is None:
        return stream
    if base not in _STREAM_TYPES:
        _STREAM_TYPES[base] = type("BoundedStream", (_BoundedStream, base), {})
    return _STREAM_TYPES[base](stream, state)


class _BoundedStream:
    """A response body read within the deadline and at most MAX_ANSWER_BYTES long (mixed with
    the library's SyncByteStream by `_bounded_stream`)."""

    def __init__(self, inner: Any, state: _State) -> None:
        self.inner, self.state, self.seen = inner, state, 0

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self.inner)
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            except Exception as exc:
                # A body broken off (the connection closed mid-answer): said once, not
                # retried into the deadline and reported as a silence.
                raise gave_up(exc, self.state.timeout_s) or exc from None
            self.seen += len(chunk)
            if self.state.left() <= 0:
                raise HubGaveUp(f"gave no answer within {self.state.timeout_s:g} s "
                                "(--hub-timeout)", connected=True)
            if self.seen > MAX_ANSWER_BYTES:
                raise HubGaveUp(f"sent an answer of more than {MAX_ANSWER_BYTES:,} bytes (kvplan "
                                "reads config.json, index files and headers only)",
                                connected=True)
            yield chunk

    def close(self) -> None:
        self.inner.close()


class _BoundedTransport:
    """Wraps the client's transport (duck-typed like httpx's BaseTransport)."""

    def __init__(self, inner: Any, state: _State) -> None:
        self.inner, self.state = inner, state

    def handle_request(self, request: Any) -> Any:
        state = self.state
        left = state.left()
        if left <= 0:
            raise HubGaveUp(f"gave no answer within {state.timeout_s:g} s (--hub-timeout)",
                            connected=True)
        key = (str(request.method), str(request.url))
        with state.lock:
            tries = state.tries[key] = state.tries.get(key, 0) + 1
        request.extensions = {**request.extensions, "timeout": {
            "connect": min(CONNECT_TIMEOUT_S, left), "read": left, "write": left, "pool": left}}
        try:
            response = self.inner.handle_request(request)
        except Exception as exc:
            if state.last_try(tries):
                reason, connected = _describe(exc, state.timeout_s)
                raise HubGaveUp(reason, connected=connected) from None
            raise
        if response.status_code in _RETRY_STATUSES and state.last_try(tries):
            response.close()
            raise HubGaveUp(f"answered HTTP {response.status_code}", connected=True,
                            status=response.status_code)
        claimed = response.headers.get("Content-Length", "")
        if str(request.method) == "GET" and claimed.isdigit() and int(claimed) > MAX_ANSWER_BYTES:
            response.close()
            raise HubGaveUp(f"sent an answer of {int(claimed):,} bytes (kvplan reads at most "
                            f"{MAX_ANSWER_BYTES:,})", connected=True)
        # The read timeout restarts with every byte: a Hub sending one byte a second kept a
        # 2 s --hub-timeout waiting for minutes (issue 32). The body is read against the
        # deadline and the size cap as well.
        if hasattr(response, "stream"):
            response.stream = _bounded_stream(response.stream, state)
        return response

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> _BoundedTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def bounded_hub(timeout_s: float | None = None) -> Iterator[None]:
    """Every huggingface_hub request inside the block: bounded as the module docstring says.
    The client factory and the library's log level are restored after it."""
    import huggingface_hub as hf
    from huggingface_hub.utils import _http

    log = logging.getLogger("huggingface_hub")
    level = log.level
    state = _State(HUB_TIMEOUT_S if timeout_s is None else timeout_s)
    previous = getattr(_http, "_GLOBAL_CLIENT_FACTORY", None) or getattr(
        _http, "default_client_factory", None)
    if previous is None or not hasattr(hf, "set_client_factory"):
        # huggingface_hub before 1.0 (requests, configure_http_backend): its own timeouts and
        # retries; kvplan still keeps the retry messages off stderr.
        log.setLevel(logging.ERROR)
        try:
            yield
        finally:
            log.setLevel(level)
        return

    def factory() -> Any:
        client = previous()
        # httpx keeps the transport and the proxy mounts in these attributes (Client.__init__);
        # a client without them is used as it is.
        if hasattr(client, "_transport"):
            client._transport = _BoundedTransport(client._transport, state)
        mounts = getattr(client, "_mounts", None)
        if isinstance(mounts, dict):
            for pattern, transport in list(mounts.items()):
                if transport is not None:
                    mounts[pattern] = _BoundedTransport(transport, state)
        return client

    log.setLevel(logging.ERROR)  # "Retrying in 1s [Retry 1/5]" and the like: kvplan says it once
    hf.set_client_factory(factory)
    try:
        yield
    finally:
        hf.set_client_factory(previous)
        log.setLevel(level)
