"""A campaign file's prize cards: the fields as written, and images by path read and stored."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import PurePosixPath
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from raffle.adapters.prize_images import prepare
from raffle.domain.errors import InvalidConfig, RaffleError
from raffle.domain.prize_cards import (
    IMAGE_URL_MAX,
    LEVEL_NAME_MAX,
    MAX_LEVEL,
    MAX_VALUE_CENTS,
    TEXT_MAX,
    PrizeCard,
    is_image_id,
)
from raffle.domain.prize_images import PrizeImage

IMAGES = "images"  # the folder of a packed campaign file that holds its prizes' images
PackedFiles = Callable[[str], bytes | None]  # a packed file's bytes by its path, None: absent


class PrizeCardIn(BaseModel):
    """A prize's card and switch, written beside its award, rate and stock."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    level: Annotated[int, Field(ge=1, le=MAX_LEVEL)] | None = None
    level_name: Annotated[str, Field(max_length=LEVEL_NAME_MAX)] = ""
    # An https URL, a path of an image packed with the file (`images/gold.png`), or an
    # uploaded image's id (an exported file's `images/<id>.png` reads as that id when the
    # file is not packed with it)
    image: Annotated[str, Field(max_length=IMAGE_URL_MAX)] = ""
    description: Annotated[str, Field(max_length=TEXT_MAX)] = ""
    win_tips: Annotated[str, Field(max_length=TEXT_MAX)] = ""
    priority: int = 0
    cell: int | None = None
    value_cents: Annotated[int, Field(ge=0, le=MAX_VALUE_CENTS)] | None = None


class ImageShelf:
    """The images a campaign file's prizes name by path, read from `files` and prepared."""

    def __init__(self, files: PackedFiles | None) -> None:
        self._files = files
        self.images: dict[str, PrizeImage] = {}

    def card(self, given: PrizeCardIn) -> PrizeCard:
        return PrizeCard(
            level=given.level,
            level_name=given.level_name,
            image=self._image(given.image),
            description=given.description,
            win_tips=given.win_tips,
            priority=given.priority,
            cell=given.cell,
            value_cents=given.value_cents,
        )

    def _image(self, text: str) -> str:
        if not text or is_image_id(text) or "://" in text:
            return text  # PrizeCard checks a URL
        data = self._files(text) if self._files else None
        if data is None:
            stem = PurePosixPath(text).stem
            if is_image_id(stem):
                return stem  # an uploaded image, checked against the stored ones as it loads
            raise InvalidConfig(f"no image file {text!r} packed with the campaign", ("image",))
        try:
            image = prepare(data)
        except RaffleError as error:
            raise InvalidConfig(f"{text}: {error.message}", ("image",)) from None
        self.images[image.id] = image
        return image.id


def written(enabled: bool, card: PrizeCard, images: Mapping[str, PrizeImage]) -> dict[str, Any]:
    """What a prize's line says of its card and switch: the fields not at their default, an
    uploaded image by its path in the packed file when `images` has it."""
    found: dict[str, Any] = {} if enabled else {"enabled": False}
    default = PrizeCard()
    for each in fields(PrizeCard):
        value = getattr(card, each.name)
        if value != getattr(default, each.name):
            found[each.name] = value
    if (uploaded := card.uploaded_image) and uploaded in images:
        found["image"] = f"{IMAGES}/{images[uploaded].file_name}"
    return found
