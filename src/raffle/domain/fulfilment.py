"""What a prize that is not points or chances leaves behind: a coupon code from a pool, an
access grant to content, or a shipment of goods to the player's address."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from raffle.domain.errors import IllegalState, InvalidFields, RaffleError

# Pool names and codes are printed, typed and pasted: visible characters only, no spaces.
_TOKEN = re.compile(r"^[\x21-\x7e]+$")
POOL_NAME_MAX = 64
CODE_MAX = 128
CONTENT_ID_MAX = 64
MAX_CODES_PER_IMPORT = 10_000  # a request, and its transaction, stay small


class CodePoolEmpty(RaffleError):
    """No free code is left in the pool: the delivery fails and operators see it."""

    code = "code_pool_empty"


class InvalidCodes(RaffleError):
    code = "invalid_codes"


class PrizeNotFound(RaffleError):
    """No such prize of the acting user (another user's order reads the same: no IDOR)."""

    code = "prize_not_found"


class IllegalShipment(IllegalState):
    """A shipment step that does not apply to the shipment's current state."""

    code = "illegal_shipment_state"


class InvalidAddress(InvalidFields):
    """A shipping address with problems, each named by its field."""

    code = "invalid_address"


def check_pool_name(name: str) -> str | None:
    """Why `name` cannot name a code pool, or None when it can."""
    if not name or len(name) > POOL_NAME_MAX or not _TOKEN.match(name):
        return f"a pool name is 1-{POOL_NAME_MAX} visible characters without spaces"
    return None


def check_codes(codes: list[str]) -> list[tuple[int, str]]:
    """The problems of a list of codes, by position: bad codes and repeats."""
    problems, seen = [], set()
    for i, code in enumerate(codes):
        if not _TOKEN.match(code) or len(code) > CODE_MAX:
            problems.append((i, f"a code is 1-{CODE_MAX} visible characters without spaces"))
        elif code in seen:
            problems.append((i, f"code {code!r} is listed twice"))
        seen.add(code)
    return problems


@dataclass(frozen=True, slots=True)
class CodePool:
    """Coupon codes, each handed out at most once, to one raffle order."""

    name: str
    codes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PoolStats:
    name: str
    total: int
    handed: int

    @property
    def free(self) -> int:
        return self.total - self.handed


@dataclass(frozen=True, slots=True)
class AccessGrant:
    """The user may open the content; `order_id` is what granted it (a raffle order)."""

    user_id: str
    content_id: str
    order_id: str
    granted_at: datetime


class ShipmentState(StrEnum):
    AWAITING_ADDRESS = "awaiting_address"  # delivery created it; the player owes an address
    READY = "ready"  # addressed: operators may ship it
    SHIPPED = "shipped"


@dataclass(frozen=True, slots=True)
class Address:
    """Where a physical prize goes. Checked on creation: every field's problem at once."""

    name: str  # the recipient
    phone: str
    region: str  # province, city, district
    line: str  # street, building, flat
    postcode: str = ""

    def __post_init__(self) -> None:
        problems = [(f, m) for f, m in _address_problems(self) if m]
        if problems:
            raise InvalidAddress(problems)


_PHONE = re.compile(r"^\+?[0-9][0-9 -]{4,22}[0-9]$")
_POSTCODE = re.compile(r"^[0-9A-Za-z -]{0,16}$")


def _address_problems(a: Address) -> list[tuple[str, str | None]]:
    def text(value: str, most: int) -> str | None:
        if not value.strip():
            return "must not be blank"
        if len(value) > most:
            return f"at most {most} characters"
        if any(not c.isprintable() for c in value):
            return "no control characters"
        return None

    return [
        ("name", text(a.name, 64)),
        ("phone", None if _PHONE.match(a.phone) else "digits, spaces or '-', 6-24 long"),
        ("region", text(a.region, 128)),
        ("line", text(a.line, 255)),
        ("postcode", None if _POSTCODE.match(a.postcode) else "letters, digits, ' ', '-'"),
    ]


@dataclass(frozen=True, slots=True)
class Shipment:
    """The fulfilment of one physical prize, one per raffle order."""

    order_id: str
    user_id: str
    award_id: int
    state: ShipmentState
    created_at: datetime
    updated_at: datetime
    address: Address | None = None
    tracking: str | None = None  # the carrier's number, given when shipped

    @classmethod
    def awaiting(cls, order_id: str, user_id: str, award_id: int, at: datetime) -> Shipment:
        return cls(order_id, user_id, award_id, ShipmentState.AWAITING_ADDRESS, at, at)

    def check_addressable(self) -> None:
        if self.state is ShipmentState.SHIPPED:
            raise IllegalShipment("the prize has shipped: its address cannot change", self.state)

    def check_shippable(self) -> None:
        if self.state is not ShipmentState.READY:
            raise IllegalShipment(f"only a ready shipment ships; this is {self.state}", self.state)
