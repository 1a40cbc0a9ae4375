"""Prize images operators upload: the stored picture and why one is refused."""

from __future__ import annotations

from dataclasses import dataclass

from raffle.domain.errors import RaffleError

# What the board can show in any browser; the stored image keeps its type (no conversion).
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


@dataclass(frozen=True, slots=True)
class PrizeImage:
    id: str  # SHA-256 of `data`, in hex: the same picture uploaded twice is stored once
    media_type: str
    data: bytes
    width: int
    height: int

    @property
    def file_name(self) -> str:
        """Its name in a packed campaign file's `images/` folder."""
        return f"{self.id}.{EXTENSIONS[self.media_type]}"


class InvalidImage(RaffleError):
    """Not a picture of a type the board shows, unreadable, or too many pixels."""

    code = "invalid_image"


class ImageTooLarge(RaffleError):
    code = "image_too_large"


class InvalidImageUrl(RaffleError):
    code = "invalid_image_url"


class UnknownImage(RaffleError):
    code = "unknown_image"
