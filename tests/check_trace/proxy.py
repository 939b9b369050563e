"""A loopback proxy in front of a real S3 server that delays and drops answers, and writes an access log.

Every request is forwarded to the server (so every write the server accepts applies); then, drawn from
a seeded stream, its answer is passed back at once, passed back late (a delay that may outlast the
client's attempt timeout: the client gives up, the write applied), or dropped (the connection closed
without an answer: outcome unknown). Each request the server answered is one line of the access log,
in the simple format docs/traces.md describes ({"op", "key", "status", "etag", "if_match",
"if_none_match"}), keys without the bucket and the prefix: the log a server would keep, here kept by
the proxy since neither moto nor SeaweedFS writes S3 server access logs to a file.

Only loopback: it listens on 127.0.0.1 and forwards to the server's loopback URL.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

try:  # under pytest, tests/ is on the path; run as a module from the checkout, the repository is
    from conformance.faultproxy import FaultProxy
except ImportError:
    from tests.conformance.faultproxy import FaultProxy


class DelayDropProxy:
    def __init__(self, upstream: str, bucket: str, prefix: str, log_path: str, seed: int = 0,
                 p_delay: float = 0.05, p_drop: float = 0.02, delay_ms: tuple[int, int] = (100, 800)) -> None:
        parts = urlsplit(upstream)
        if parts.hostname not in ("127.0.0.1", "localhost"):
            raise ValueError(f"the proxy forwards to loopback only, not {upstream!r}")
        self._host, self._port = parts.hostname, parts.port
        self.bucket, self.prefix = bucket, prefix
        self.rng = random.Random(seed)
        self.p_delay, self.p_drop, self.delay_ms = p_delay, p_drop, delay_ms
        self.enabled = True
        self._lock = threading.Lock()
        self._log = open(log_path, "w", encoding="utf-8", buffering=1)
        self.counts = {"forwarded": 0, "delayed": 0, "dropped": 0}
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_PUT = do_DELETE = do_HEAD = do_POST = _any

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:
                pass  # a client that gave up on a delayed answer closed its connection: nothing to say

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._log.close()

    def _fate(self) -> tuple[str, float]:
        with self._lock:
            if not self.enabled:
                return "forward", 0.0
            x = self.rng.random()
            if x < self.p_drop:
                return "drop", 0.0
            if x < self.p_drop + self.p_delay:
                return "delay", self.rng.uniform(*self.delay_ms) / 1000
            return "forward", 0.0

    def _op_key(self, method: str, path: str) -> tuple[str, str] | None:
        parts = urlsplit(path)
        segs = unquote(parts.path).lstrip("/").split("/", 1)
        if not segs or segs[0] != self.bucket:
            return None
        if method == "GET" and "list-type" in parts.query:
            q = parse_qs(parts.query)
            key = q.get("prefix", [""])[0]
            op = "LIST"
        else:
            key = segs[1] if len(segs) > 1 else ""
            op = method
        if not key.startswith(self.prefix):
            return None
        return op, key[len(self.prefix):]

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        fate, delay = self._fate()
        conn = http.client.HTTPConnection(self._host, self._port, timeout=30)
        try:
            headers = {k: v for k, v in h.headers.items() if k.lower() not in ("connection", "expect")}
            conn.request(h.command, h.path, body=body or None, headers=headers)
            r = conn.getresponse()
            status, rheaders, payload = r.status, r.getheaders(), r.read()
        finally:
            conn.close()
        ok = self._op_key(h.command, h.path)
        if ok is not None and ok[0] in ("PUT", "DELETE", "GET", "LIST"):
            etag = next((v for k, v in rheaders if k.lower() == "etag"), None)
            line = {"op": ok[0], "key": ok[1], "status": status, "etag": etag,
                    "if_match": h.headers.get("If-Match"), "if_none_match": h.headers.get("If-None-Match")}
            with self._lock:
                self._log.write(json.dumps(line) + "\n")
        with self._lock:
            self.counts["forwarded"] += 1
        if fate == "drop":
            with self._lock:
                self.counts["dropped"] += 1
            h.close_connection = True  # no answer: the client's read ends on a closed connection
            return
        if fate == "delay":
            with self._lock:
                self.counts["delayed"] += 1
            time.sleep(delay)
        try:
            FaultProxy.relay(h, status, rheaders, payload)
        except OSError:
            pass  # the client gave up on a delayed answer
