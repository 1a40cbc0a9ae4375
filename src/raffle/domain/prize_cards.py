"""A prize's card (seed 004 奖品池): how the board, my prizes and the console show it."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from raffle.domain.errors import InvalidConfig, RaffleError
from raffle.domain.limits import MAX_COUNT

MAX_LEVEL = 99  # 一等奖 is level 1; nobody publishes a ninety-ninth prize
GRID_CELLS = 8  # the nine-grid's ring around the Draw button, cells 1..8 clockwise from top left
LEVEL_NAME_MAX = 32
TEXT_MAX = 255  # description and win tips: the seed's varchar(255)
IMAGE_URL_MAX = 512
MAX_VALUE_CENTS = 10**12  # ten billion yuan: a BIGINT column, and no prize is worth more
IMAGE_ID_LENGTH = 64  # an uploaded image is named by the SHA-256 of its stored bytes, in hex


@dataclass(frozen=True, slots=True)
class PrizeCard:
    """What a player and an operator see of a prize; nothing here changes the odds."""

    level: int | None = None  # 1 for the first prize (一等奖); None: no level
    level_name: str = ""  # the level as the campaign says it, e.g. "一等奖"
    image: str = ""  # "", an uploaded image's id (`is_image_id`) or an https URL
    description: str = ""
    win_tips: str = ""  # what the winner is told (seed 004 award_tips)
    priority: int = 0  # lower first (seed 004: 值越低优先级越高), then the strategy's order
    cell: int | None = None  # the nine-grid cell 1..GRID_CELLS; None: the next free one
    value_cents: int | None = None  # what the prize is worth (seed 004 money, 单位分)

    def __post_init__(self) -> None:
        if self.level is not None and not 1 <= self.level <= MAX_LEVEL:
            raise InvalidConfig(f"level must be 1 to {MAX_LEVEL}, got {self.level}", ("level",))
        _bounded(self.level_name, LEVEL_NAME_MAX, "level_name")
        _bounded(self.description, TEXT_MAX, "description")
        _bounded(self.win_tips, TEXT_MAX, "win_tips")
        if problem := image_problem(self.image):
            raise InvalidConfig(problem, ("image",))
        if not -MAX_COUNT <= self.priority <= MAX_COUNT:
            raise InvalidConfig(f"priority must be within ±{MAX_COUNT}", ("priority",))
        if self.cell is not None and not 1 <= self.cell <= GRID_CELLS:
            raise InvalidConfig(f"cell must be 1 to {GRID_CELLS}, got {self.cell}", ("cell",))
        if self.value_cents is not None and not 0 <= self.value_cents <= MAX_VALUE_CENTS:
            raise InvalidConfig(
                f"value_cents must be 0 to {MAX_VALUE_CENTS}, got {self.value_cents}",
                ("value_cents",),
            )

    @property
    def uploaded_image(self) -> str | None:
        """The id of the uploaded image the card shows, if it shows one."""
        return self.image if is_image_id(self.image) else None


def is_image_id(text: str) -> bool:
    return len(text) == IMAGE_ID_LENGTH and all(c in "0123456789abcdef" for c in text)


def image_problem(image: str) -> str | None:
    """Why `image` cannot be a card's image (none, an uploaded image's id, or an https URL
    of a host), or None when it can."""
    if not image or is_image_id(image):
        return None
    if len(image) > IMAGE_URL_MAX:
        return f"an image URL has at most {IMAGE_URL_MAX} characters"
    try:
        parts = urlsplit(image)
    except ValueError:
        return "the image is neither an uploaded image nor a URL"
    if parts.scheme != "https":
        return "an image URL must be https:// (a page served over https shows no other)"
    if not parts.hostname or parts.username is not None or any(c.isspace() for c in image):
        return "an image URL names a host, with no spaces and no user name"
    return None


def grid_problems(cards: list[PrizeCard]) -> list[InvalidConfig]:
    """Two prizes of one strategy placed in the same nine-grid cell, located by prize."""
    taken: dict[int, int] = {}
    found = []
    for i, card in enumerate(cards):
        if card.cell is None:
            continue
        if card.cell in taken:
            found.append(
                InvalidConfig(
                    f"cell {card.cell} is taken by prize {taken[card.cell] + 1} of the list",
                    ("prizes", i, "cell"),
                )
            )
        taken.setdefault(card.cell, i)
    return found


def _bounded(text: str, most: int, field: str) -> None:
    if len(text) > most:
        raise InvalidConfig(f"{field} has at most {most} characters", (field,))


class UnknownPrize(RaffleError):
    """The strategy has no prize of that award."""

    code = "unknown_prize"
