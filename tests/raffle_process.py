"""`raffle` itself as a process under test: the installed command and waiting for it to answer."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

RAFFLE = Path(sys.executable).parent / "raffle"


def wait_until_serving(base: str, process: subprocess.Popen[Any], seconds: float = 60) -> None:
    """Until `base`/api/health answers 200; fails if the process exits or time runs out."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert process.poll() is None, "raffle exited"
        assert time.monotonic() < deadline, f"raffle did not answer within {seconds:.0f} s"
        time.sleep(0.2)


def log_lines(text: str) -> list[dict[str, Any]]:
    """The JSON lines of a server's log (RAFFLE_LOG_FORMAT=json); other lines (a traceback
    printed before logging was set up) are left out."""
    lines = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            if isinstance(entry := json.loads(line), dict):
                lines.append(entry)
    return lines


def server_errors(text: str) -> list[dict[str, Any]]:
    """The request lines of a server's log that answered 5xx."""
    return [
        line
        for line in log_lines(text)
        if line.get("event") == "request" and int(line.get("status", 0)) >= 500
    ]
