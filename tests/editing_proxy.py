"""A loopback HTTP proxy in front of the sandbox that rewrites listing answers (tests only).

Every request goes on to the sandbox unchanged (method, path, signed headers, body) over real
HTTP; the answer to ``GET /api/v1/dictionary`` is passed through ``edit`` first, so a test can
play a service whose listing is partial, repeats rows, or is a gateway's page.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

Edit = Callable[[dict[str, Any]], "dict[str, Any] | bytes"]

_FORWARDED = ("Content-Type", "accessKey", "nonce", "signature", "Authorization")


class EditingProxy:
    """``url`` forwards to ``target``; listings pass through ``edit`` (a dict, or raw bytes)."""

    def __init__(self, target: str, edit: Edit) -> None:
        self.target = urlsplit(target)
        self.edit = edit
        self.listings = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                conn = http.client.HTTPConnection(proxy.target.hostname, proxy.target.port)
                headers = {k: self.headers[k] for k in _FORWARDED if self.headers.get(k)}
                conn.request(self.command, self.path, body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                conn.close()
                if self.command == "GET" and self.path.rstrip("/").endswith("/dictionary"):
                    proxy.listings += 1
                    edited = proxy.edit(json.loads(data))
                    data = edited if isinstance(edited, bytes) else json.dumps(edited).encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PUT = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> EditingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def entries(data: dict[str, Any]) -> list[dict[str, Any]]:
    return data["data"]["entries"]


def with_entries(data: dict[str, Any], kept: list[dict[str, Any]]) -> dict[str, Any]:
    return {**data, "data": {**data["data"], "entries": kept}}
