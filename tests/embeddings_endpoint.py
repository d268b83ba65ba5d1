"""A loopback OpenAI-compatible embeddings endpoint (``POST /v1/embeddings``) for the builtin engine's paid-API
providers, which cannot be reached here: each text becomes a bag of its words hashed into 64 dimensions, so a query
for a token is nearest to the chunk that holds it. Only the provider is replaced; OpenClaw runs for real."""

from __future__ import annotations

import hashlib
import http.server
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

DIMS = 64


def _vector(text: str) -> list[float]:
    v = [0.0] * DIMS
    for word in re.findall(r"[A-Za-z0-9-]+", text.upper()):
        v[hashlib.sha256(word.encode()).digest()[0] % DIMS] += 1.0
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        texts = req.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        delay = getattr(self.server, "delay_s", None)
        if delay is not None and (seconds := delay()) > 0:  # a provider that answers late (or never, for the caller)
            time.sleep(seconds)
        body = json.dumps({"object": "list", "model": req.get("model", "m"),
                           "data": [{"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(texts)],
                           "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the caller gave up on a late answer
            pass

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def embeddings_endpoint(delay_s: Callable[[], float] | None = None) -> Iterator[str]:
    """Serve on a free loopback port for the ``with`` block; yields the ``baseUrl`` (``http://127.0.0.1:N/v1``).
    ``delay_s``, asked on each request, is how long to wait before answering (a slow provider)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads, server.block_on_close = True, False  # a late answer never holds the test's end
    server.delay_s = delay_s  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
