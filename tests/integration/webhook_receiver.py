"""A real HTTP server standing in for the operators' webhook: it checks each notice's
signature as docs/stock-warnings.md tells a receiver to, by hand (not with our sender's library)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.services import LOOPBACK


def signature(secret: str, message_id: str, timestamp: str, body: bytes) -> str:
    """`v1,` + base64 of HMAC-SHA256 over `id.timestamp.body`, keyed by the secret's bytes."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(signed.digest()).decode()


class Receiver:
    """Listens on `port` until closed; keeps the notices whose signature verified, and counts
    those refused (401)."""

    def __init__(self, port: int, secret: str) -> None:
        self.accepted: list[dict[str, Any]] = []
        self.timestamps: list[int] = []
        self.refused = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                given = self.headers.get("webhook-signature", "")
                expected = signature(
                    secret, self.headers["webhook-id"], self.headers["webhook-timestamp"], body
                )
                if not any(hmac.compare_digest(expected, s) for s in given.split(" ")):
                    receiver.refused += 1
                    self.send_response(401)
                else:
                    receiver.accepted.append(json.loads(body))
                    receiver.timestamps.append(int(self.headers["webhook-timestamp"]))
                    self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer((LOOPBACK, port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
