"""Shapes of the prize pool: a prize's card as shown, its fields as set, an uploaded image."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from raffle.domain.limits import MAX_COUNT
from raffle.domain.prize_cards import (
    GRID_CELLS,
    IMAGE_URL_MAX,
    LEVEL_NAME_MAX,
    MAX_LEVEL,
    MAX_VALUE_CENTS,
    TEXT_MAX,
    PrizeCard,
    is_image_id,
)
from raffle.domain.prize_images import PrizeImage
from raffle.domain.strategy import StrategyPrize
from raffle.entrypoints.http.examples import CARD, PRIZE_IMAGE, Example, examples_of

IMAGES = "/api/prize-images"
IMAGE_ID = PRIZE_IMAGE

FIELDS_IN: Example = {"level": 1, "level_name": "一等奖", "image": IMAGE_ID, "cell": 2}
SETTINGS: Example = {"strategy_id": 100006, "award_id": 109, "enabled": True, "card": CARD}
IMAGE: Example = {
    "id": IMAGE_ID,
    "media_type": "image/png",
    "width": 512,
    "height": 512,
    "bytes": 48213,
    "url": f"{IMAGES}/{IMAGE_ID}",
}


def image_url(image: str) -> str | None:
    """Where a browser reads a card's image: ours for an uploaded one, else its URL."""
    if not image:
        return None
    return f"{IMAGES}/{image}" if is_image_id(image) else image


class CardOut(BaseModel):
    model_config = examples_of(CARD)

    level: int | None = Field(description="1 for the first prize (一等奖); null: none.")
    level_name: str
    image: str = Field(description="An uploaded image's id, an https URL, or empty.")
    image_url: str | None = Field(description="Where to read the image; null: none.")
    description: str
    win_tips: str = Field(description="What the winner is told.")
    priority: int = Field(description="Lower first on the board.")
    cell: int | None = Field(description=f"The nine-grid cell 1..{GRID_CELLS}; null: any.")
    value_cents: int | None

    @classmethod
    def of(cls, c: PrizeCard) -> CardOut:
        return cls(
            level=c.level, level_name=c.level_name, image=c.image, image_url=image_url(c.image),
            description=c.description, win_tips=c.win_tips, priority=c.priority, cell=c.cell,
            value_cents=c.value_cents,
        )  # fmt: skip


class PrizeFieldsIn(BaseModel):
    """The fields to set; those left out keep their value."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [FIELDS_IN]})

    enabled: bool | None = Field(
        None, description="Off: out of the odds, its rate to the fallback (not while running)."
    )
    level: Annotated[int, Field(ge=1, le=MAX_LEVEL)] | None = None
    level_name: Annotated[str, Field(max_length=LEVEL_NAME_MAX)] | None = None
    image: Annotated[str, Field(max_length=IMAGE_URL_MAX)] | None = Field(
        None, description="An uploaded image's id, an https URL, or empty for none."
    )
    description: Annotated[str, Field(max_length=TEXT_MAX)] | None = None
    win_tips: Annotated[str, Field(max_length=TEXT_MAX)] | None = None
    priority: Annotated[int, Field(ge=-MAX_COUNT, le=MAX_COUNT)] | None = None
    cell: Annotated[int, Field(ge=1, le=GRID_CELLS)] | None = None
    value_cents: Annotated[int, Field(ge=0, le=MAX_VALUE_CENTS)] | None = None

    def card(self) -> dict[str, Any]:
        """The card's fields given, a null text or priority as its empty value."""
        given = self.model_dump(exclude_unset=True, exclude={"enabled"})
        empty = {"level_name": "", "image": "", "description": "", "win_tips": "", "priority": 0}
        return {k: empty[k] if v is None and k in empty else v for k, v in given.items()}


class PrizeSettingsOut(BaseModel):
    model_config = examples_of(SETTINGS)

    strategy_id: int
    award_id: int
    enabled: bool
    card: CardOut

    @classmethod
    def of(cls, strategy_id: int, p: StrategyPrize) -> PrizeSettingsOut:
        return cls(
            strategy_id=strategy_id, award_id=p.award_id, enabled=p.enabled,
            card=CardOut.of(p.card),
        )  # fmt: skip


class ImageOut(BaseModel):
    model_config = examples_of(IMAGE)

    id: str = Field(description="Set it as a prize's `image`.")
    media_type: str
    width: int
    height: int
    bytes: int
    url: str

    @classmethod
    def of(cls, i: PrizeImage) -> ImageOut:
        return cls(
            id=i.id, media_type=i.media_type, width=i.width, height=i.height, bytes=len(i.data),
            url=f"{IMAGES}/{i.id}",
        )  # fmt: skip
