"""A loopback HTTP server replaying a recorded inference server (tests/data/servers/<name>/),
for `kvplan check`'s tests: 127.0.0.1, an ephemeral port, a daemon thread, stopped on exit.

Each fixture folder maps endpoints to files: /metrics -> metrics.txt, /version -> version.json,
/v1/models -> v1_models.json, /get_server_info -> get_server_info.json, /server_info ->
server_info.json; anything else is a 404, as on a server without that endpoint. `SOURCE.md` in
each folder says where the recording came from. `metrics` may be replaced by a sequence of
pages, served in turn (the last one repeated), for --watch / --once.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SERVERS = Path(__file__).parent / "data" / "servers"
FILES = {"/metrics": "metrics.txt", "/version": "version.json", "/v1/models": "v1_models.json",
         "/get_server_info": "get_server_info.json", "/server_info": "server_info.json"}


@contextmanager
def replay(name: str, *, metrics: Sequence[str] | None = None,
           files: Mapping[str, str] | None = None,
           served: list[str] | None = None) -> Iterator[str]:
    """Serve tests/data/servers/<name>/ on 127.0.0.1 (`files`: endpoint bodies replaced);
    yields the base URL. `served`, when given, gets each path as it is answered."""
    folder = SERVERS / name
    pages = list(metrics or [])

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path.split("?", 1)[0].rstrip("/") or "/"
            body = None
            if files and path in files:
                body = files[path].encode()
            elif path == "/metrics" and pages:
                body = (pages.pop(0) if len(pages) > 1 else pages[0]).encode()
            elif path in FILES and (folder / FILES[path]).is_file():
                body = (folder / FILES[path]).read_bytes()
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            kind = "text/plain; version=0.0.4" if path == "/metrics" else "application/json"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            if served is not None:
                served.append(path)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def silent_server() -> Iterator[str]:
    """A loopback socket that accepts connections and never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def closed_port() -> str:
    """A loopback URL whose port nothing listens on (bound, then released)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"
