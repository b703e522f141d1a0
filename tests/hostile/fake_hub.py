"""A misbehaving Hugging Face Hub on 127.0.0.1 (point HF_ENDPOINT at `url`): each mode answers
every request one way. Raw sockets, so that a mode can break HTTP itself.

- "silent": accepts the connection, reads the request, never answers;
- "slow": answers 200 with a body of one byte a second;
- "500": HTTP 500 with a JSON body;
- "truncated": 200 claiming 100,000 bytes, sends 10, closes;
- "oversized": 200 with a Content-Length of 2^40 bytes, then streams zeros (a config.json or
  header no reader may take whole);
- "no-etag": 200 without the ETag and commit headers every Hub answer carries.
Past the silent and 500 modes, a HEAD (huggingface_hub's metadata request) gets a plausible
answer with ETag and commit, so that the GET's body is what breaks.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

MODES = ("silent", "slow", "500", "truncated", "oversized", "no-etag")


def _answer(conn: socket.socket, mode: str, stop: threading.Event) -> None:
    with contextlib.suppress(OSError), conn:
        conn.settimeout(2.0)
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
        commit = (b"X-Repo-Commit: 0123456789abcdef0123456789abcdef01234567\r\n"
                  b'ETag: "0123"\r\n')
        head = data.startswith(b"HEAD ")
        if mode == "silent":
            stop.wait(60)
        elif mode == "500":
            body = b'{"error": "Internal Error"}'
            conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json"
                         b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body),
                                                                                      body))
        elif mode == "no-etag":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"
                         + (b"" if head else b"{}"))
        elif head:  # the metadata request: a plausible answer, the body is where it breaks
            conn.sendall(b"HTTP/1.1 200 OK\r\n" + commit + b"Content-Length: 100000\r\n"
                         b"Connection: close\r\n\r\n")
        elif mode == "truncated":
            conn.sendall(b"HTTP/1.1 200 OK\r\n" + commit + b"Content-Length: 100000\r\n"
                         b"Connection: close\r\n\r\n{\"archite")
        elif mode == "slow":
            conn.sendall(b"HTTP/1.1 200 OK\r\n" + commit + b"Content-Length: 1000\r\n\r\n")
            while not stop.is_set():
                conn.sendall(b" ")
                stop.wait(1.0)
        elif mode == "oversized":
            conn.sendall(b"HTTP/1.1 200 OK\r\n" + commit + b"Content-Length: 1099511627776\r\n"
                         b"\r\n")
            zeros = b"\0" * 65536
            while not stop.is_set():
                conn.sendall(zeros)


@contextlib.contextmanager
def fake_hub(mode: str) -> Iterator[str]:
    """The endpoint URL of a Hub that answers every request as `mode` says."""
    assert mode in MODES, mode
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=_answer, args=(conn, mode, stop), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(2)
        server.close()
        time.sleep(0)
