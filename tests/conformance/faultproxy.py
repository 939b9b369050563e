"""A fault-injecting HTTP proxy on 127.0.0.1, in front of a real S3 server (moto, SeaweedFS), to
measure what boto3 does with the answers a local server never gives: a 500 or 503, a 409
ConditionalRequestConflict, a connection closed after the write applied.

Every request the proxy receives is one attempt of the client (boto3 retries inside one call); the
proxy keeps them in `attempts` and gives each the next action of its plan that matches it (none
left: forwarded as is):

- ("forward",): the request goes to the server and its answer back to the client;
- ("answer", status, code): answered at once with an S3 error of that status and code, never
  forwarded (the write did not apply);
- ("apply_then_answer", status, code): forwarded (the write applies), the server's answer dropped,
  the client answered with that error instead;
- ("apply_then_close",): forwarded (the write applies), then the connection is closed without an
  answer.

Only loopback: it listens on 127.0.0.1 and forwards to the server's loopback URL.
"""

from __future__ import annotations

import http.client
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

ERROR_BODY = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>injected by the test '
              'proxy</Message><RequestId>faultproxy</RequestId></Error>')


@dataclass
class Attempt:
    """One HTTP request the client sent (an attempt), and what the proxy did with it."""

    method: str
    path: str
    if_match: str | None
    if_none_match: str | None
    action: str
    upstream_status: int | None = None  # the server's own answer, when forwarded


@dataclass
class Rule:
    """The next `times` attempts with this method whose path contains `path` get `action`."""

    method: str
    path: str
    action: tuple
    times: int = 1


@dataclass
class FaultProxy:
    upstream: str  # the real server's URL (loopback)
    plan: list[Rule] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        if parts.hostname not in ("127.0.0.1", "localhost"):
            raise ValueError(f"the proxy forwards to loopback only, not {self.upstream!r}")
        self._host, self._port = parts.hostname, parts.port
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_PUT = do_DELETE = do_HEAD = do_POST = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="faultproxy",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def rule(self, method: str, path: str, *action, times: int = 1) -> "FaultProxy":
        self.plan.append(Rule(method, path, tuple(action), times))
        return self

    def of(self, method: str, path: str) -> list[Attempt]:
        """The attempts of `method` on a path containing `path`."""
        return [a for a in self.attempts if a.method == method and path in a.path]

    def _action(self, method: str, path: str) -> tuple:
        with self._lock:
            for r in self.plan:
                if r.times > 0 and r.method == method and r.path in path:
                    r.times -= 1
                    return r.action
        return ("forward",)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        action = self._action(h.command, h.path)
        attempt = Attempt(h.command, h.path, h.headers.get("If-Match"), h.headers.get("If-None-Match"), action[0])
        with self._lock:
            self.attempts.append(attempt)
        if action[0] == "answer":
            self._error(h, action[1], action[2])
            return
        status, headers, payload = self._forward(h, body)
        attempt.upstream_status = status
        if action[0] == "apply_then_answer":
            self._error(h, action[1], action[2])
        elif action[0] == "apply_then_close":
            h.close_connection = True  # no answer at all: the client's read ends on a closed connection
        else:
            self.relay(h, status, headers, payload)

    @staticmethod
    def relay(h: BaseHTTPRequestHandler, status: int, headers: list, payload: bytes) -> None:
        """The server's answer passed on to the client as it came."""
        h.send_response(status)
        for k, v in headers:
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                h.send_header(k, v)
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(payload)

    def _forward(self, h: BaseHTTPRequestHandler, body: bytes) -> tuple[int, list, bytes]:
        conn = http.client.HTTPConnection(self._host, self._port, timeout=30)
        try:
            headers = {k: v for k, v in h.headers.items() if k.lower() not in ("connection", "expect")}
            conn.request(h.command, h.path, body=body or None, headers=headers)
            r = conn.getresponse()
            return r.status, r.getheaders(), r.read()
        finally:
            conn.close()

    @staticmethod
    def _error(h: BaseHTTPRequestHandler, status: int, code: str) -> None:
        payload = ERROR_BODY.format(code=code).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/xml")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)
