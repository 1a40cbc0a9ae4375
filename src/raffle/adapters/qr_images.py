"""QR codes drawn from their content with segno: SVG for pages, PNG for everything else."""

from __future__ import annotations

import io

import segno

SCALE = 6  # pixels (SVG units) per module: about 200 px for a URL, scannable off a screen
BORDER = 2  # modules of quiet zone


def svg(content: str) -> bytes:
    out = io.BytesIO()
    segno.make(content, error="m", micro=False).save(out, kind="svg", scale=SCALE, border=BORDER)
    return out.getvalue()


def png(content: str) -> bytes:
    out = io.BytesIO()
    segno.make(content, error="m", micro=False).save(out, kind="png", scale=SCALE, border=BORDER)
    return out.getvalue()
