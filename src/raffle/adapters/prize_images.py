"""Uploaded bytes made a prize image: type read from the content, bounded, metadata left out."""

from __future__ import annotations

import hashlib
from io import BytesIO

from PIL import Image, ImageOps, UnidentifiedImageError

from raffle.domain.prize_images import MEDIA_TYPES, ImageTooLarge, InvalidImage, PrizeImage

MAX_BYTES = 2 * 1024 * 1024  # an upload; a prize picture is a few hundred KiB
# Checked from the header before any pixel is decoded: Pillow's own bomb guard warns first
# and fails only at twice its limit, ours refuses at once.
MAX_SIDE = 4096
JPEG_QUALITY = 90


def prepare(data: bytes) -> PrizeImage:
    """The image `data` holds, encoded anew in its own type: EXIF (GPS, camera), XMP and text
    chunks stay behind, a JPEG is turned upright first, a GIF keeps its first frame.
    Raises ImageTooLarge past MAX_BYTES, InvalidImage for anything else it cannot show."""
    if len(data) > MAX_BYTES:
        raise ImageTooLarge(
            f"an image has at most {MAX_BYTES // 1024} KiB, got {len(data) // 1024}"
        )
    try:
        with Image.open(BytesIO(data), formats=list(MEDIA_TYPES)) as opened:
            kind = opened.format or ""
            if opened.width > MAX_SIDE or opened.height > MAX_SIDE:
                raise InvalidImage(f"an image is at most {MAX_SIDE}×{MAX_SIDE} pixels")
            opened.load()
            picture = _clean(opened, kind)
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError):
        raise InvalidImage("not a PNG, JPEG, WebP or GIF image") from None
    stored = _encode(picture, kind)
    return PrizeImage(
        id=hashlib.sha256(stored).hexdigest(),
        media_type=MEDIA_TYPES[kind],
        data=stored,
        width=picture.width,
        height=picture.height,
    )


def _clean(opened: Image.Image, kind: str) -> Image.Image:
    picture = ImageOps.exif_transpose(opened) if kind == "JPEG" else opened.copy()
    # Encoders read some defaults from `info` (a GIF's comment, a PNG's ICC profile): only
    # what draws the pixels is kept.
    picture.info = {k: v for k, v in opened.info.items() if k in ("transparency",)}
    return picture


def _encode(picture: Image.Image, kind: str) -> bytes:
    out = BytesIO()
    if kind == "JPEG":
        rgb = picture if picture.mode in ("RGB", "L") else picture.convert("RGB")
        rgb.save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
    elif kind == "WEBP":
        picture.save(out, "WEBP", quality=JPEG_QUALITY)
    else:
        picture.save(out, kind, optimize=True)
    return out.getvalue()
