"""Prize images made from uploaded bytes: the type read from the content, metadata left
behind, a JPEG turned upright, sizes bounded before decoding."""

from __future__ import annotations

import hashlib
import io

import pytest
from PIL import Image, PngImagePlugin

from raffle.adapters.prize_images import MAX_SIDE, prepare
from raffle.domain.prize_images import ImageTooLarge, InvalidImage


def _saved(picture: Image.Image, kind: str, **options: object) -> bytes:
    out = io.BytesIO()
    picture.save(out, kind, **options)
    return out.getvalue()


def test_a_pngs_text_chunks_are_left_behind() -> None:
    info = PngImagePlugin.PngInfo()
    info.add_text("Author", "operator@example.com")
    sent = _saved(Image.new("RGBA", (20, 10), (1, 2, 3, 128)), "PNG", pnginfo=info)
    image = prepare(sent)
    assert b"operator@example.com" not in image.data
    assert (image.media_type, image.width, image.height) == ("image/png", 20, 10)
    assert image.id == hashlib.sha256(image.data).hexdigest()
    assert Image.open(io.BytesIO(image.data)).getpixel((0, 0)) == (1, 2, 3, 128)


def test_a_jpeg_is_turned_upright_and_its_exif_dropped() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: rotate 90° to show
    image = prepare(_saved(Image.new("RGB", (40, 10)), "JPEG", exif=exif.tobytes()))
    assert (image.width, image.height) == (10, 40)
    assert not Image.open(io.BytesIO(image.data)).getexif()


def test_an_animated_gif_keeps_its_first_frame() -> None:
    frames = [Image.new("P", (8, 8), i) for i in (1, 2, 3)]
    sent = _saved(frames[0], "GIF", save_all=True, append_images=frames[1:], comment=b"hi")
    image = prepare(sent)
    kept = Image.open(io.BytesIO(image.data))
    assert image.media_type == "image/gif"
    assert getattr(kept, "n_frames", 1) == 1
    assert b"hi" not in image.data


@pytest.mark.parametrize(
    "data",
    [
        b"GIF89a but not really",
        b"<svg xmlns='http://www.w3.org/2000/svg'/>",
        _saved(Image.new("RGB", (4, 4)), "BMP"),  # an image, not one the board shows
        _saved(Image.new("1", (MAX_SIDE + 1, 1)), "PNG"),  # refused from its header
    ],
)
def test_anything_else_is_an_invalid_image(data: bytes) -> None:
    with pytest.raises(InvalidImage):
        prepare(data)


def test_too_many_bytes_are_refused_before_reading() -> None:
    with pytest.raises(ImageTooLarge):
        prepare(b"\x89PNG" + bytes(2 * 1024 * 1024))
